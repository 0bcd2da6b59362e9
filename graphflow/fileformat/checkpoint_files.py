"""The files of variable checkpoints on disk: which files form a checkpoint, opening one for reading
in either format, and the `checkpoint` state file that names a directory's latest checkpoints.

A checkpoint `<prefix>` is TensorFlow's V2 bundle (`<prefix>.index` + `<prefix>.data-*-of-*`,
`tf_bundle`), what `train.Saver` writes, or, from graphflow versions before it, `<prefix>.npz`
(one `.npy` array per variable). Both are read by `open_checkpoint` behind one interface
(`names`, `dtype`, `shape`, `get_tensor`).

The state file (`checkpoint`) is TensorFlow's: a `CheckpointState` protobuf in text format

    model_checkpoint_path: "model-300"
    all_model_checkpoint_paths: "model-200"
    all_model_checkpoint_paths: "model-300"
    all_model_checkpoint_timestamps: 1700000000.5 ...

paths relative to the directory when the checkpoints are in it. Older graphflow versions wrote a
JSON file (`{"format": "graphflow-checkpoint-state", ...}`), still read. Both are at most 4 MiB;
a malformed one, or one that is not a regular file (a FIFO, a device), is a `GraphFormatError`.
"""

import collections
import glob
import json
import os

from graphflow.fileformat import file_io
from graphflow.framework import dtypes
from graphflow.framework.errors import GraphFormatError

INDEX_SUFFIX = ".index"
NPZ_SUFFIX = ".npz"
JSON_STATE_FORMAT = "graphflow-checkpoint-state"
JSON_STATE_VERSION = 1
STATE_MAX_BYTES = 1 << 22

CheckpointState = collections.namedtuple(
    "CheckpointState", ["model_checkpoint_path", "all_model_checkpoint_paths",
                        "all_model_checkpoint_timestamps", "last_preserved_timestamp"],
    defaults=((), None))


# ------------------------------------------------------------------------ checkpoint files
def checkpoint_exists(checkpoint_prefix):
    """True if a complete checkpoint was saved under `checkpoint_prefix` (its `.index` is
    written last, so a present index means complete data files; or an older `.npz`)."""
    prefix = os.fspath(checkpoint_prefix)
    return os.path.isfile(prefix + INDEX_SUFFIX) or os.path.isfile(prefix + NPZ_SUFFIX)


def checkpoint_mtime(checkpoint_prefix):
    """When the checkpoint `checkpoint_prefix` was completed (its index's modification time), or
    None if there is none."""
    prefix = os.fspath(checkpoint_prefix)
    for suffix in (INDEX_SUFFIX, NPZ_SUFFIX):
        try:
            return os.stat(prefix + suffix).st_mtime
        except OSError:
            pass
    return None


def delete_checkpoint(prefix, extra_suffixes=()):
    """Remove the files of the checkpoint `prefix`: the index first (so what remains is never
    taken for a checkpoint), then its data shards, an older `.npz`, and `prefix + suffix` for
    each of `extra_suffixes` (e.g. ".meta")."""
    paths = [prefix + INDEX_SUFFIX]
    paths += sorted(glob.glob(glob.escape(prefix) + ".data-[0-9][0-9][0-9][0-9][0-9]-of-"
                                                    "[0-9][0-9][0-9][0-9][0-9]"))
    paths += [prefix + NPZ_SUFFIX] + [prefix + s for s in extra_suffixes]
    for path in paths:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


class _NpzCheckpoint:
    """A checkpoint graphflow wrote before it wrote TensorFlow's format: `<prefix>.npz`."""

    def __init__(self, path, limits):
        self._arrays = file_io.read_npz(path, f"checkpoint '{path}'", limits)

    def names(self):
        return sorted(self._arrays)

    def __contains__(self, name):
        return name in self._arrays

    def dtype(self, name):
        return dtypes.as_dtype(self._arrays[name].dtype)

    def shape(self, name):
        return tuple(self._arrays[name].shape)

    def get_tensor(self, name):
        return self._arrays[name]

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


def open_checkpoint(prefix, limits=None):
    """A reader of the checkpoint `prefix` (`names()`, `dtype(name)`, `shape(name)`,
    `get_tensor(name)`; a context manager), or None if no checkpoint is saved there."""
    prefix = os.fspath(prefix)
    limits = limits or file_io.DEFAULT_LIMITS
    if os.path.isfile(prefix + INDEX_SUFFIX):
        from graphflow.fileformat.tf_bundle import BundleReader  # protobuf loads on first use
        return BundleReader(prefix, limits)
    if os.path.isfile(prefix + NPZ_SUFFIX):
        return _NpzCheckpoint(prefix + NPZ_SUFFIX, limits)
    return None


# ------------------------------------------------------------------------ the state file
def write_state(directory, latest, all_paths, filename, timestamps=(), last_preserved=None):
    """Write the state file `directory/filename` (atomically) naming `latest` and `all_paths`."""
    from google.protobuf import text_format

    from graphflow.fileformat.tf_protos import CheckpointState as StateProto

    def rel(p):
        p = os.path.abspath(p)
        return os.path.relpath(p, directory) if os.path.dirname(p) == directory else p

    state = StateProto(model_checkpoint_path=rel(latest),
                       all_model_checkpoint_paths=[rel(p) for p in all_paths],
                       all_model_checkpoint_timestamps=list(timestamps))
    if last_preserved is not None:
        state.last_preserved_timestamp = last_preserved
    with file_io.atomic_write(os.path.join(directory, filename)) as f:
        f.write(text_format.MessageToString(state).encode("utf-8"))


def _parse_json_state(raw, what):
    try:
        state = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise GraphFormatError(f"{what} is not valid JSON: {exc}") from None
    if type(state) is not dict or state.get("format") != JSON_STATE_FORMAT:
        raise GraphFormatError(f"{what} is not a graphflow checkpoint index")
    if type(state.get("version")) is not int or state["version"] > JSON_STATE_VERSION:
        raise GraphFormatError(f"{what} has unsupported version {state.get('version')!r}")
    latest = state.get("model_checkpoint_path")
    all_paths = state.get("all_model_checkpoint_paths", [])
    if type(latest) is not str or type(all_paths) is not list or any(
            type(p) is not str for p in all_paths):
        raise GraphFormatError(f"{what} has malformed checkpoint paths")
    return latest, all_paths, (), None


def _parse_text_state(raw, what):
    from google.protobuf import text_format

    from graphflow.fileformat.tf_protos import CheckpointState as StateProto
    try:
        state = text_format.Parse(raw.decode("utf-8"), StateProto())
    except Exception as exc:  # text_format.ParseError, UnicodeDecodeError, ...
        raise GraphFormatError(f"{what} is not a checkpoint state file "
                               f"({type(exc).__name__}: {exc})") from None
    if not state.model_checkpoint_path:
        raise GraphFormatError(f"{what} names no model_checkpoint_path")
    return (state.model_checkpoint_path, list(state.all_model_checkpoint_paths),
            tuple(state.all_model_checkpoint_timestamps),
            state.last_preserved_timestamp or None)


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """`CheckpointState` from the directory's state file (relative paths joined with
    `checkpoint_dir`), or None if there is none."""
    checkpoint_dir = os.fspath(checkpoint_dir)
    path = os.path.join(checkpoint_dir, latest_filename or "checkpoint")
    what = f"checkpoint index '{path}'"
    if os.path.isdir(path):
        return None
    try:  # a regular file only, opened without blocking: a FIFO is an error, not a hang
        raw = file_io.read_regular_file(path, what, STATE_MAX_BYTES)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    parse = _parse_json_state if raw.lstrip()[:1] == b"{" else _parse_text_state
    latest, all_paths, stamps, preserved = parse(raw, what)

    def full(p):
        return p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)

    return CheckpointState(full(latest), [full(p) for p in all_paths], stamps, preserved)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the most recent checkpoint saved in `checkpoint_dir`, or None.

    When the state file names a checkpoint that is missing (deleted, or a crash), the newest
    kept checkpoint it lists that exists is used, else the newest complete checkpoint in the
    directory with the same name stem."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    for prefix in [state.model_checkpoint_path] + state.all_model_checkpoint_paths[::-1]:
        if checkpoint_exists(prefix):
            return prefix
    return _newest_on_disk(os.path.dirname(state.model_checkpoint_path) or checkpoint_dir,
                           _stem(os.path.basename(state.model_checkpoint_path)))


def _stem(basename):
    head, sep, step = basename.rpartition("-")
    return head if sep and step.isdigit() else basename


def _newest_on_disk(directory, stem):
    best = None
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    for name in names:
        suffix = next((s for s in (INDEX_SUFFIX, NPZ_SUFFIX) if name.endswith(s)), None)
        if name.startswith(".") or suffix is None:
            continue
        prefix = name[:-len(suffix)]
        if _stem(prefix) != stem:
            continue
        step = prefix.rpartition("-")[2]
        try:
            key = (int(step) if step.isdigit() else -1,
                   os.path.getmtime(os.path.join(directory, name)))
        except OSError:
            continue
        if best is None or key > best[0]:
            best = (key, os.path.join(directory, prefix))
    return None if best is None else best[1]


__all__ = ["CheckpointState", "checkpoint_exists", "checkpoint_mtime", "delete_checkpoint", "open_checkpoint",
           "write_state", "get_checkpoint_state", "latest_checkpoint"]
