"""`tf.gfile` (TF1 names: `Exists`, `GFile`, `ListDirectory`, `Glob`, `MakeDirs`, ...) and
`tf.io.gfile` (the later names: `exists`, `GFile`, `listdir`, `glob`, `makedirs`, ...) over the local
file system. graphflow reads local paths only; a 'gs://', 's3://' or 'hdfs://' path is an error."""

import glob as _glob
import os as _os
import shutil as _shutil

from graphflow.framework.errors import NotFoundError as _NotFoundError

_REMOTE = ("gs://", "s3://", "hdfs://", "http://", "https://")


def _path(name):
    path = _os.fsdecode(name)
    if path.startswith(_REMOTE):
        raise NotImplementedError(f"graphflow's gfile reads local files only, not {path}")
    return path


def _not_found(path):
    return _NotFoundError(None, None, f"{path}; No such file or directory")


class GFile:
    """`tf.gfile.GFile(name, mode='r')`: a file object (text in 'r'/'w' modes, bytes in 'rb'/'wb'),
    a context manager, iterable by line; `size()` gives the file's size."""

    def __init__(self, name, mode="r"):
        self.name = _path(name)
        self.mode = mode
        try:
            self._file = open(self.name, mode)
        except FileNotFoundError:
            raise _not_found(self.name) from None

    def read(self, n=-1):
        return self._file.read(n)

    def readline(self):
        return self._file.readline()

    def readlines(self):
        return self._file.readlines()

    def write(self, data):
        return self._file.write(data)

    def flush(self):
        self._file.flush()

    def seek(self, offset, whence=0):
        return self._file.seek(offset, whence)

    def tell(self):
        return self._file.tell()

    def size(self):
        return _os.path.getsize(self.name)

    def close(self):
        self._file.close()

    def __iter__(self):
        return iter(self._file)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class StatResult:
    """`tf.gfile.Stat(path)`: `length` (bytes), `mtime_nsec`, `is_directory`."""

    def __init__(self, path):
        st = _os.stat(path)
        self.length = st.st_size
        self.mtime_nsec = st.st_mtime_ns
        self.is_directory = _os.path.isdir(path)


def exists(path):
    return _os.path.exists(_path(path))


def isdir(path):
    return _os.path.isdir(_path(path))


def listdir(path):
    """The names (not paths) in a directory, as TF returns them (directories without a '/')."""
    path = _path(path)
    if not _os.path.isdir(path):
        raise _not_found(path)
    return sorted(_os.listdir(path))


def glob(pattern):
    return sorted(_glob.glob(_path(pattern)))


def makedirs(path):
    _os.makedirs(_path(path), exist_ok=True)


def mkdir(path):
    path = _path(path)
    try:
        _os.mkdir(path)
    except FileNotFoundError:
        raise _not_found(_os.path.dirname(path)) from None


def remove(path):
    path = _path(path)
    try:
        _os.remove(path)
    except FileNotFoundError:
        raise _not_found(path) from None


def rmtree(path):
    path = _path(path)
    if not _os.path.exists(path):
        raise _not_found(path)
    _shutil.rmtree(path)


def rename(src, dst, overwrite=False):
    src, dst = _path(src), _path(dst)
    if _os.path.exists(dst) and not overwrite:
        raise FileExistsError(f"{dst} already exists (pass overwrite=True)")
    _os.replace(src, dst)


def copy(src, dst, overwrite=False):
    src, dst = _path(src), _path(dst)
    if _os.path.exists(dst) and not overwrite:
        raise FileExistsError(f"{dst} already exists (pass overwrite=True)")
    _shutil.copyfile(src, dst)


def stat(path):
    path = _path(path)
    if not _os.path.exists(path):
        raise _not_found(path)
    return StatResult(path)


def walk(top, topdown=True, onerror=None):
    """(directory, subdirectory names, file names) for each directory under `top`."""
    for root, dirs, files in _os.walk(_path(top), topdown=topdown, onerror=onerror):
        yield root, sorted(dirs), sorted(files)


# TF1's names (tf.gfile.*)
Exists = exists
IsDirectory = isdir
ListDirectory = listdir
Glob = glob
MakeDirs = makedirs
MkDir = mkdir
Remove = remove
DeleteRecursively = rmtree
Rename = rename
Copy = copy
Stat = stat
Walk = walk
Open = GFile
FastGFile = GFile

V1_NAMES = ["GFile", "Open", "FastGFile", "Exists", "IsDirectory", "ListDirectory", "Glob",
            "MakeDirs", "MkDir", "Remove", "DeleteRecursively", "Rename", "Copy", "Stat", "Walk"]
V2_NAMES = ["GFile", "exists", "isdir", "listdir", "glob", "makedirs", "mkdir", "remove", "rmtree",
            "rename", "copy", "stat", "walk"]
__all__ = sorted(set(V1_NAMES) | set(V2_NAMES))
