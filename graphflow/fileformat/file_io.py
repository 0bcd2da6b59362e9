"""Safe file input/output shared by graph files (`graphflow.save`) and checkpoints (`train.Saver`).

Writing is atomic: data goes to a temporary file in the destination's directory, is flushed to disk
and then renamed over the destination (`os.replace`), so a crash never leaves a half-written file
where the last good one was.

Reading treats every file as hostile: zip archives are checked (member names, declared sizes, total
size and compression ratio) before anything is decompressed, every read is bounded, and `.npy` data
is parsed header first — only supported numeric dtypes, a sane rank, and exactly as many bytes as the
header's shape needs — before the array is read with pickling disabled. Any problem with a file's
content raises `GraphFormatError`.
"""

import contextlib
import dataclasses
import errno
import io
import os
import re
import secrets
import stat
import zipfile

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.errors import GraphFormatError

_NPY_MAX_HEADER = 10_000


def _open_regular(path, what):
    """A file object on `path` opened without blocking, after checking it is a regular file."""
    fd = os.open(os.fspath(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_BINARY", 0))
    f = os.fdopen(fd, "rb", buffering=0)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        f.close()
        raise GraphFormatError(f"{what} is not a regular file")
    return f, info


def open_regular_file(path, what):
    """(an unbuffered binary file object, its fstat) of `path`, opened without blocking and
    checked on the descriptor to be a regular file: a FIFO or device is a GraphFormatError naming
    `what`, never a blocked open or an endless read; a missing file stays an OSError."""
    return _open_regular(path, what)


def check_regular_file(path, what, max_bytes):
    """The size of `path`, which must be a regular file of at most `max_bytes` bytes (checked on
    a descriptor opened without blocking, as `read_regular_file` does), for readers that open the
    file themselves; a FIFO, device or a file over the limit is a GraphFormatError naming `what`."""
    f, info = _open_regular(path, what)
    with f:
        if info.st_size > max_bytes:
            raise GraphFormatError(f"{what} is {info.st_size} bytes, more than the limit of "
                                   f"{max_bytes}")
    return info.st_size


def regular_file_starts_with(path, what, magic):
    """Whether regular file `path` starts with the bytes `magic` (a FIFO or device is a
    GraphFormatError naming `what`, never a blocked read)."""
    f, _ = _open_regular(path, what)
    with f:
        return f.read(len(magic)) == magic


def read_regular_file(path, what, max_bytes):
    """The bytes of `path`, which must be a regular file of at most `max_bytes` bytes.

    The file is opened without blocking (a FIFO or device never stalls the reader) and checked
    with fstat on the open descriptor (no race with a rename) before anything is read; exactly
    its size is read (no buffer of `max_bytes` is allocated), and a file that grows while read
    is refused. Faults are `GraphFormatError`s naming `what`; a missing file stays an OSError."""
    f, info = _open_regular(path, what)
    with f:
        if info.st_size > max_bytes:
            raise GraphFormatError(f"{what} is {info.st_size} bytes, more than the limit of "
                                   f"{max_bytes}")
        chunks, left = [], info.st_size + 1
        while left > 0:
            chunk = f.read(left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    data = b"".join(chunks)
    if len(data) > info.st_size:
        raise GraphFormatError(f"{what} grew while it was read")
    return data


@dataclasses.dataclass(frozen=True)
class Limits:
    """Bounds applied while reading a file; a file beyond any of them is rejected, not read.

    max_members: entries in one zip archive (the outer file, or the tensor `.npz` inside it).
    max_json_bytes: size of the graph's JSON document.
    max_tensor_bytes: total size of all tensor data.
    max_ratio, ratio_floor_bytes: a zip whose uncompressed size exceeds `ratio_floor_bytes` may not
        expand more than `max_ratio` times its size on disk (graphflow stores tensor data
        uncompressed, so its own files are far below this; a zip bomb is far above).
    max_ops: operations in one graph.  max_rank: dimensions of one tensor or shape.
    max_dim: size of one dimension.  max_nesting: depth of nested lists in one attr value.
    """

    max_members: int = 1_000_000
    max_json_bytes: int = 1 << 30
    max_tensor_bytes: int = 1 << 36
    max_ratio: int = 200
    ratio_floor_bytes: int = 1 << 26
    max_ops: int = 10_000_000
    max_rank: int = 64
    max_dim: int = 1 << 48
    max_nesting: int = 32


DEFAULT_LIMITS = Limits()
OPS_FLOOR = 10_000
FILE_BYTES_PER_OP = 2
JSON_FLOOR_BYTES = 1 << 20
# graphflow writes `graph.json` uncompressed, so its document is never larger than its file; a
# document that expands beyond the file (and beyond the floor) is refused by default.
JSON_BYTES_PER_FILE_BYTE = 1


def default_limits_for(path):
    """The default limits for the file at `path`, proportional to its size on disk:

    - its graph document (`graph.json`, decompressed) may hold at most
      max(JSON_FLOOR_BYTES, JSON_BYTES_PER_FILE_BYTE x file size) bytes, checked against the
      size the zip directory declares before anything is decompressed (and the entry must hold
      exactly that many bytes), so beyond 1 MiB the document is at most as large as the file
      (graphflow stores it uncompressed; a compressed one may not expand past the file's size);
    - its op count may not exceed max(OPS_FLOOR, file size / FILE_BYTES_PER_OP).

    Loading a document of J bytes takes at most about 32 J of memory at its peak (measured worst
    case ~27 J; see docs/security.md), plus the tensor data the file declares, so a load uses at
    most about 32x the file's size (beyond a 32 MiB floor) plus its declared tensor data."""
    try:
        size = os.path.getsize(os.fspath(path))
    except (OSError, TypeError, ValueError):
        return DEFAULT_LIMITS
    max_ops = min(DEFAULT_LIMITS.max_ops, max(OPS_FLOOR, size // FILE_BYTES_PER_OP))
    max_json = min(DEFAULT_LIMITS.max_json_bytes,
                   max(JSON_FLOOR_BYTES, JSON_BYTES_PER_FILE_BYTE * size))
    return dataclasses.replace(DEFAULT_LIMITS, max_ops=max_ops, max_json_bytes=max_json)

_SUPPORTED_NUMPY = {d.as_numpy_dtype: d for d in dtypes.ALL_DTYPES}


# ------------------------------------------------------------------------------------ writing
TEMP_SUFFIX = ".tmp"


@contextlib.contextmanager
def atomic_write(path):
    """`with atomic_write(path) as f:` — a binary file object whose content replaces `path` only
    when the block finishes without an exception (temp file + fsync + os.replace).

    Only a regular file (or a new name) is replaced: a device, FIFO or socket at `path` is an
    OSError before anything is written (renaming over `/dev/stdout` or a device node would
    replace it with a regular file). A symbolic link at `path` is replaced by the file, not
    followed."""
    path = os.fspath(path)
    _check_replaceable(path)
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}-{secrets.token_hex(6)}"
                                  f"{TEMP_SUFFIX}")
    f = open(tmp, "xb")
    try:
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


class StagedFile:
    """A file written beside `path` under `atomic_write`'s temp name, for writers that put several
    files in place together (a checkpoint's data shards, then its index): `open()` gives the file
    object, `finish()` flushes it to disk and closes it, `commit()` renames it over `path`,
    `discard()` removes whichever of the temp file or, once committed, `path` it left."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self.directory = os.path.dirname(os.path.abspath(self.path))
        self.temp = os.path.join(self.directory, f".{os.path.basename(self.path)}."
                                                 f"{os.getpid()}-{secrets.token_hex(6)}{TEMP_SUFFIX}")
        self.file = None
        self.committed = False

    def open(self):
        self.file = open(self.temp, "xb")
        return self.file

    def finish(self):
        f = self.file
        try:
            f.flush()
            os.fsync(f.fileno())
        finally:
            f.close()

    def commit(self):
        os.replace(self.temp, self.path)
        self.committed = True

    def discard(self):
        if self.file is not None:
            with contextlib.suppress(OSError):
                self.file.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path if self.committed else self.temp)


def fsync_directory(directory):
    """Make renames in `directory` durable where the platform allows it."""
    _fsync_directory(directory)


def _check_replaceable(path):
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode) or stat.S_ISDIR(mode)):
        raise OSError(errno.EINVAL, "not a regular file (a device, FIFO or socket): refusing to "
                      "replace it", path)


def remove_stale_temp_files(directory, basename_prefix):
    """Delete temp files `atomic_write` left in `directory` for targets whose name starts with
    `basename_prefix`, when the process that wrote them is gone (it was killed mid-write).
    Returns the removed paths."""
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    start = "." + basename_prefix
    for name in names:
        if not (name.startswith(start) and name.endswith(TEMP_SUFFIX)):
            continue
        pid_text, _, token = name[:-len(TEMP_SUFFIX)].rpartition(".")[2].partition("-")
        if not pid_text.isdigit() or len(token) != 12 or _process_alive(int(pid_text)):
            continue
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(directory, name))
            removed.append(os.path.join(directory, name))
    return removed


def _process_alive(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _fsync_directory(directory):
    """Make the rename itself durable where the platform allows it."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def check_array_writable(key, array):
    """Only arrays of graphflow dtypes are written (so no reader ever needs pickling)."""
    if not isinstance(array, np.ndarray) or array.dtype not in _SUPPORTED_NUMPY \
            or array.dtype.hasobject:
        kind = getattr(array, "dtype", type(array).__name__)
        raise TypeError(f"Cannot save tensor data '{key}' of type {kind}: only arrays of graphflow "
                        f"dtypes ({', '.join(d.name for d in dtypes.ALL_DTYPES)}) can be saved (tf.string "
                        "values only as graph constants, encoded explicitly)")


def npz_bytes(arrays):
    """An uncompressed `.npz` (a zip of `.npy` files, as `np.savez` writes) of {key: array}."""
    buf = io.BytesIO()
    write_npz(buf, arrays)
    return buf.getvalue()


def zip_entry(name, compress_type=zipfile.ZIP_STORED):
    """A zip entry with a fixed timestamp, so that saving the same data gives the same bytes."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = compress_type
    info.external_attr = 0o644 << 16
    return info


def write_npz(fileobj, arrays):
    with zipfile.ZipFile(fileobj, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for key, array in arrays.items():
            check_array_writable(key, array)
            with zf.open(zip_entry(key + ".npy"), "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asarray(array), allow_pickle=False)


# ------------------------------------------------------------------------------------ reading
class Archive:
    """A zip archive opened for bounded reading: `zip` (a ZipFile) and `members` ({name: ZipInfo}).
    Use as a context manager; closing it closes the underlying file."""

    def __init__(self, source, what, limits, container_bytes=None):
        if isinstance(source, (bytes, bytearray, memoryview)):
            size = len(source)
            self._file = io.BytesIO(source)
        else:
            # a regular file only, opened without blocking (a FIFO or device is a
            # GraphFormatError at once); a missing or unreadable path raises the usual OSError
            raw, info = _open_regular(source, what)
            self._file = io.BufferedReader(raw)
            size = info.st_size
        self.what = what
        self.limits = limits
        try:
            self.zip = zipfile.ZipFile(self._file)
        except Exception as exc:  # BadZipFile, or OSError/ValueError/EOFError on damaged directories
            self._file.close()
            raise GraphFormatError(f"{what} is not a valid zip archive (truncated or corrupted): "
                                   f"{type(exc).__name__}: {exc}") from None
        try:
            self.members = self._check_directory(max(size, container_bytes or 0, 1))
        except BaseException:
            self.close()
            raise

    def _check_directory(self, reference):
        what, limits = self.what, self.limits
        infos = self.zip.infolist()
        if len(infos) > limits.max_members:
            raise GraphFormatError(f"{what} has {len(infos)} entries, more than the limit of "
                                   f"{limits.max_members}")
        members = {}
        total = 0
        for info in infos:
            if info.filename in members:
                raise GraphFormatError(f"{what} contains the entry '{info.filename}' twice")
            if info.flag_bits & 0x1:
                raise GraphFormatError(f"{what}: entry '{info.filename}' is encrypted")
            members[info.filename] = info
            total += info.file_size
        if total > limits.ratio_floor_bytes and total > limits.max_ratio * reference:
            raise GraphFormatError(
                f"{what} declares {total} bytes of content in a {reference}-byte file (more than "
                f"{limits.max_ratio}x expansion): refusing to decompress a likely zip bomb")
        self.total_size = total
        return members

    def read(self, name, limit):
        """The bytes of entry `name`, never more than `limit`."""
        return read_member(self.zip, self.members[name], limit, self.what)

    def close(self):
        with contextlib.suppress(Exception):
            self.zip.close()
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_member(zf, info, limit, what):
    """The bytes of one zip entry, never more than `limit` (and exactly its declared size)."""
    if info.file_size > limit:
        raise GraphFormatError(f"{what}: entry '{info.filename}' declares {info.file_size} bytes, "
                               f"more than the limit of {limit}")
    try:
        with zf.open(info) as f:
            data = f.read(info.file_size + 1)
    except GraphFormatError:
        raise
    except Exception as exc:  # zipfile/zlib raise many types for damaged data
        raise GraphFormatError(f"{what}: entry '{info.filename}' is corrupted "
                               f"({type(exc).__name__}: {exc})") from None
    if len(data) != info.file_size:
        raise GraphFormatError(f"{what}: entry '{info.filename}' holds {len(data)} bytes but "
                               f"declares {info.file_size}")
    return data


# The header numpy itself writes, e.g. "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
# matched exactly so that the common case needs no general-purpose literal parser.
_NPY_HEADER = re.compile(r"\{'descr': '([<>|=][biuf][0-9]{1,2})', 'fortran_order': (True|False), "
                         r"'shape': \(((?:[0-9]{1,20}, )*(?:[0-9]{1,20},?)?)\), \} *\n")


def _npy_header(data):
    """(shape, fortran, dtype, data offset) of `.npy` bytes."""
    if data[:8] in (b"\x93NUMPY\x01\x00", b"\x93NUMPY\x02\x00"):
        start = 10 if data[6] == 1 else 12
        length = int.from_bytes(data[8:start], "little")
        m = _NPY_HEADER.fullmatch(data[start:start + length].decode("latin-1"))
        if m is not None:
            shape = tuple(int(d) for d in m.group(3).split(",") if d.strip())
            return shape, m.group(2) == "True", np.dtype(m.group(1)), start + length
    bio = io.BytesIO(data)  # anything else: numpy's own (literal-only) header reader
    version = np.lib.format.read_magic(bio)
    if version == (1, 0):
        header = np.lib.format.read_array_header_1_0(bio, max_header_size=_NPY_MAX_HEADER)
    elif version == (2, 0):
        header = np.lib.format.read_array_header_2_0(bio, max_header_size=_NPY_MAX_HEADER)
    else:
        raise ValueError(f"unsupported .npy format version {version}")
    return (*header, bio.tell())


def parse_npy(data, what, limits):
    """A read-only numpy array from `.npy` bytes; the header is validated before any allocation."""
    try:
        shape, fortran, dtype, offset = _npy_header(data)
    except Exception as exc:
        raise GraphFormatError(f"{what}: not valid .npy data ({type(exc).__name__}: {exc})") from None
    native = dtype.newbyteorder("=") if dtype.byteorder not in ("=", "|") else dtype
    if dtype.hasobject or native not in _SUPPORTED_NUMPY or dtype.fields is not None:
        raise GraphFormatError(f"{what}: dtype {dtype} is not a graphflow dtype (object and "
                               "structured arrays are refused; loading never unpickles)")
    check_shape(shape, what, limits)
    count = 1
    for d in shape:
        count *= d
    expected = count * dtype.itemsize
    available = len(data) - offset
    if expected != available:
        raise GraphFormatError(f"{what}: header declares shape {tuple(shape)} of {dtype} "
                               f"({expected} bytes) but the entry holds {available} bytes")
    # The header is validated: view the exact data bytes (no second parse, no pickle possible).
    array = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
    array = array.reshape(shape[::-1]).T if fortran else array.reshape(shape)
    if array.dtype != native:
        array = array.astype(native)
    if not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)
    array.flags.writeable = False
    return array


def check_shape(shape, what, limits):
    if not isinstance(shape, tuple) or len(shape) > limits.max_rank:
        raise GraphFormatError(f"{what}: shape {shape!r} is not a tuple of at most "
                               f"{limits.max_rank} dimensions")
    for d in shape:
        if type(d) is not int or d < 0 or d > limits.max_dim:
            raise GraphFormatError(f"{what}: shape {shape!r} has an invalid dimension {d!r}")


def read_npz(source, what, limits, container_bytes=None):
    """{key: read-only array} from `.npz` data (path or bytes), every entry validated."""
    with Archive(source, what, limits, container_bytes) as archive:
        if archive.total_size > limits.max_tensor_bytes:
            raise GraphFormatError(f"{what} declares {archive.total_size} bytes of tensor data, "
                                   f"more than the limit of {limits.max_tensor_bytes}")
        arrays = {}
        for name in archive.members:
            if not name.endswith(".npy"):
                raise GraphFormatError(f"{what}: unexpected entry '{name}' (only .npy arrays)")
            data = archive.read(name, limits.max_tensor_bytes)
            arrays[name[:-4]] = parse_npy(data, f"{what} entry '{name}'", limits)
    return arrays
