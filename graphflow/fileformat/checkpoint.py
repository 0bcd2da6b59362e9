"""Variable checkpoints: `train.Saver` (TF1's `tf.train.Saver`) and `train.latest_checkpoint`.

    saver = tf.train.Saver(max_to_keep=3)
    path = saver.save(sess, "ckpt/model", global_step=step)   # -> "ckpt/model-100"
    saver.restore(sess, tf.train.latest_checkpoint("ckpt"))

A checkpoint holds variable values (the graph is rebuilt by code, or read back from the
`<prefix>.meta` graph file `save` also writes, with `tf.train.import_meta_graph`):
`<prefix>.npz`, one array per variable keyed by its name (the variable op's
name, e.g. 'dense/kernel'), plus a small JSON index file `checkpoint` in the same directory naming
the latest and the kept checkpoints, as TF1 does. Both are written atomically. Restoring checks
every value's presence, dtype and shape before changing any variable, reads with size limits and
no pickling, and reports a damaged file as `GraphFormatError`.
"""

import collections
import json
import os
import time

import numpy as np

from graphflow.fileformat import file_io
from graphflow.framework.errors import (
    FailedPreconditionError,
    GraphFormatError,
    InvalidArgumentError,
    NotFoundError,
)
from graphflow.framework.graph import GraphKeys, Operation, Tensor, get_default_graph
from graphflow.ops import registry

STATE_FORMAT = "graphflow-checkpoint-state"
STATE_VERSION = 1
_STATE_MAX_BYTES = 1 << 22
_DATA_SUFFIX = ".npz"

CheckpointState = collections.namedtuple("CheckpointState",
                                         ["model_checkpoint_path", "all_model_checkpoint_paths"])


class _Saveable:
    """One variable as the saver sees it: checkpoint key, op, dtype, static shape, state name."""

    __slots__ = ("key", "op", "dtype", "shape", "shared_name")

    def __init__(self, key, op):
        self.key = key
        self.op = op
        self.dtype = op.outputs[0].dtype
        self.shape = op.outputs[0].shape
        self.shared_name = op.attrs["shared_name"]


def _variable_op(item):
    as_element = getattr(item, "_as_graph_element", None)
    element = as_element() if as_element is not None else item
    op = element.op if isinstance(element, Tensor) else element
    if not isinstance(op, Operation) or not registry.lookup(op.type).variable:
        raise TypeError(f"Saver var_list entries must be Variables, got {item!r}")
    return op


class Saver:
    """`tf.train.Saver(var_list=None, max_to_keep=5, ...)`: saves and restores variable values.

    var_list: Variables (a list, or a dict {checkpoint key: Variable}); None = all global variables
        of the default graph at construction time.
    max_to_keep: how many recent checkpoints to keep (None or 0: keep all); older ones are deleted
        when a new one is saved, except one every `keep_checkpoint_every_n_hours`.
    pad_step_number: name checkpoints 'model-00000100' instead of 'model-100'.
    """

    def __init__(self, var_list=None, max_to_keep=5, keep_checkpoint_every_n_hours=10000.0,
                 name=None, allow_empty=False, pad_step_number=False):
        if var_list is None:
            var_list = get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES)
        if isinstance(var_list, dict):
            items = [(str(k), _variable_op(v)) for k, v in var_list.items()]
        else:
            items = [(op.name, op) for op in (_variable_op(v) for v in var_list)]
        self._saveables = []
        seen = {}
        for key, op in items:
            if key in seen:
                if seen[key] is op:
                    continue
                raise ValueError(f"At least two variables have the same name: {key}")
            seen[key] = op
            self._saveables.append(_Saveable(key, op))
        if not self._saveables and not allow_empty:
            raise ValueError("No variables to save")
        self._max_to_keep = max_to_keep
        self._keep_every_seconds = keep_checkpoint_every_n_hours * 3600.0
        self._next_keep_time = time.time() + self._keep_every_seconds
        self._pad_step_number = pad_step_number
        self._last_checkpoints = []  # [(prefix, time saved)], oldest first
        self._meta_suffix = "meta"
        self.name = name

    @property
    def last_checkpoints(self):
        """Prefixes of the checkpoints this saver keeps, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def recover_last_checkpoints(self, checkpoint_paths):
        """Adopt existing checkpoints (e.g. from `get_checkpoint_state`) so they are pruned too."""
        now = time.time()
        self._last_checkpoints = [(p, now) for p in checkpoint_paths
                                  if os.path.exists(p + _DATA_SUFFIX)]

    def _check_session(self, sess):
        for s in self._saveables:
            if s.op.graph is not sess.graph:
                raise ValueError(f"Variable '{s.key}' is not in the session's graph")

    # ------------------------------------------------------------------------------ saving
    def save(self, sess, save_path, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False):
        """Write the variables' values to `<save_path>[-<step>].npz`; returns that prefix. With
        `write_meta_graph` (TF1's default), the session's graph also goes to
        `<prefix>.meta` (a graphflow graph file without values) for `tf.train.import_meta_graph`."""
        self._check_session(sess)
        if global_step is not None:
            step = global_step if isinstance(global_step, (int, np.integer)) else sess.run(
                global_step)
            step = int(step)
            save_path = f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"
        save_path = os.fspath(save_path)
        directory = os.path.dirname(os.path.abspath(save_path))
        if not os.path.isdir(directory):
            raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
        values = sess.variable_values()
        arrays = {}
        for s in self._saveables:
            value = values.get(s.shared_name)
            if value is None:
                raise FailedPreconditionError(
                    None, s.op, f"Attempting to save the uninitialized variable '{s.key}'. Run "
                    "its initializer (tf.global_variables_initializer()) first.")
            arrays[s.key] = value
        # Crash-safe order: (1) the new data file (temp + fsync + rename) and its .meta graph,
        # (2) the index naming it (atomically), (3) only then delete the checkpoints (and their
        # .meta files) the index no longer keeps. A kill
        # at any moment leaves an index that names complete files.
        file_io.remove_stale_temp_files(directory, "")
        with file_io.atomic_write(save_path + _DATA_SUFFIX) as f:
            file_io.write_npz(f, arrays)
        if write_meta_graph:
            # the graph file writer sits a floor above (it runs sessions when loading)
            from graphflow.fileformat.serialization import save as save_graph
            save_graph(f"{save_path}.{meta_graph_suffix}", graph=sess.graph)
            self._meta_suffix = meta_graph_suffix
        expired = self._remember(save_path)
        if write_state:
            _write_state(directory, save_path, self.last_checkpoints,
                         latest_filename or "checkpoint")
        for old in expired:
            for path in (old + _DATA_SUFFIX, f"{old}.{self._meta_suffix}"):
                try:
                    os.remove(path)
                except FileNotFoundError:
                    pass
        return save_path

    def _remember(self, prefix):
        """Record `prefix` as the newest checkpoint; returns the prefixes to delete (after the
        index has been rewritten without them)."""
        now = time.time()
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != prefix]
        self._last_checkpoints.append((prefix, now))
        expired = []
        if not self._max_to_keep:
            return expired
        while len(self._last_checkpoints) > self._max_to_keep:
            old, saved_at = self._last_checkpoints.pop(0)
            if saved_at > self._next_keep_time:  # keep one checkpoint every N hours for good
                self._next_keep_time += self._keep_every_seconds
                continue
            expired.append(old)
        return expired

    # ------------------------------------------------------------------------------ restoring
    def restore(self, sess, save_path, limits=None):
        """Load the values saved under `save_path` (a prefix returned by `save`) into `sess`.

        All values are checked (present, same dtype, compatible shape) before any is written."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        self._check_session(sess)
        save_path = os.fspath(save_path)
        data_path = save_path + _DATA_SUFFIX
        if not os.path.isfile(data_path):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}")
        arrays = file_io.read_npz(data_path, f"checkpoint '{data_path}'",
                                  limits or file_io.DEFAULT_LIMITS)
        updates = {}
        for s in self._saveables:
            value = arrays.get(s.key)
            if value is None:
                raise NotFoundError(None, s.op, f"Key {s.key} not found in checkpoint {save_path}")
            if value.dtype != s.dtype.as_numpy_dtype:
                raise InvalidArgumentError(
                    None, s.op, f"Checkpoint {save_path} holds '{s.key}' as {value.dtype}, but the "
                    f"variable is {s.dtype.name}")
            if not s.shape.is_compatible_with(value.shape):
                raise InvalidArgumentError(
                    None, s.op, f"Checkpoint {save_path} holds '{s.key}' with shape "
                    f"{list(value.shape)}, but the variable has shape {s.shape}")
            updates[s.shared_name] = value
        sess.set_variable_values(updates)


# ---------------------------------------------------------------------------- the index file
def _write_state(directory, latest, all_paths, filename):
    def rel(p):
        p = os.path.abspath(p)
        return os.path.relpath(p, directory) if os.path.dirname(p) == directory else p

    state = {"format": STATE_FORMAT, "version": STATE_VERSION,
             "model_checkpoint_path": rel(latest),
             "all_model_checkpoint_paths": [rel(p) for p in all_paths]}
    with file_io.atomic_write(os.path.join(directory, filename)) as f:
        f.write((json.dumps(state, indent=1) + "\n").encode("utf-8"))


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """`CheckpointState(model_checkpoint_path, all_model_checkpoint_paths)` from the directory's
    index file (paths joined with `checkpoint_dir`), or None if there is no index file."""
    path = os.path.join(checkpoint_dir, latest_filename or "checkpoint")
    try:
        with open(path, "rb") as f:
            raw = f.read(_STATE_MAX_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None
    what = f"checkpoint index '{path}'"
    if len(raw) > _STATE_MAX_BYTES:
        raise GraphFormatError(f"{what} is larger than {_STATE_MAX_BYTES} bytes")
    try:
        state = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise GraphFormatError(f"{what} is not valid JSON: {exc}") from None
    if type(state) is not dict or state.get("format") != STATE_FORMAT:
        raise GraphFormatError(f"{what} is not a graphflow checkpoint index")
    if type(state.get("version")) is not int or state["version"] > STATE_VERSION:
        raise GraphFormatError(f"{what} has unsupported version {state.get('version')!r}")
    latest = state.get("model_checkpoint_path")
    all_paths = state.get("all_model_checkpoint_paths", [])
    if type(latest) is not str or type(all_paths) is not list or any(
            type(p) is not str for p in all_paths):
        raise GraphFormatError(f"{what} has malformed checkpoint paths")

    def full(p):
        return p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)

    return CheckpointState(full(latest), [full(p) for p in all_paths])


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the most recent checkpoint saved in `checkpoint_dir`, or None.

    When the index names a data file that is missing (deleted, or a crash on an older graphflow),
    the newest kept checkpoint the index lists that exists is used, else the newest complete
    checkpoint in the directory with the same name stem. Data files are only ever renamed into
    place whole, so every `<prefix>.npz` found is complete."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    for prefix in [state.model_checkpoint_path] + state.all_model_checkpoint_paths[::-1]:
        if os.path.isfile(prefix + _DATA_SUFFIX):
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
        if name.startswith(".") or not name.endswith(_DATA_SUFFIX):
            continue
        prefix = name[:-len(_DATA_SUFFIX)]
        if _stem(prefix) != stem:
            continue
        step = prefix.rpartition("-")[2]
        path = os.path.join(directory, name)
        try:
            key = (int(step) if step.isdigit() else -1, os.path.getmtime(path))
        except OSError:
            continue
        if best is None or key > best[0]:
            best = (key, os.path.join(directory, prefix))
    return None if best is None else best[1]


def checkpoint_exists(checkpoint_prefix):
    """True if a checkpoint was saved under `checkpoint_prefix`."""
    return os.path.isfile(os.fspath(checkpoint_prefix) + _DATA_SUFFIX)


__all__ = ["Saver", "latest_checkpoint", "get_checkpoint_state", "checkpoint_exists",
           "CheckpointState"]
