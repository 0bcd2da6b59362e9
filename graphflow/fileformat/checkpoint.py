"""Variable checkpoints: `train.Saver` (TF1's `tf.train.Saver`) and `train.latest_checkpoint`.

    saver = tf.train.Saver(max_to_keep=3)
    path = saver.save(sess, "ckpt/model", global_step=step)   # -> "ckpt/model-100"
    saver.restore(sess, tf.train.latest_checkpoint("ckpt"))

A checkpoint holds variable values (the graph is rebuilt by code, or read back from the
`<prefix>.meta` graph file `save` also writes, with `tf.train.import_meta_graph`) in TensorFlow's
V2 format (`tf_bundle`): `<prefix>.index` and `<prefix>.data-00000-of-00001`, one tensor per
variable keyed by its name (the variable op's name, e.g. 'dense/kernel', as TensorFlow keys it),
and a `checkpoint` state file in TensorFlow's text format naming the latest and the kept
checkpoints, so TensorFlow's `Saver.restore`, `latest_checkpoint` and `NewCheckpointReader` read
graphflow's checkpoints and graphflow reads TensorFlow's (partitioned and sharded ones included).
Checkpoints and state files written by older graphflow versions (`<prefix>.npz`, a JSON state
file) are still read. Every file is written atomically, the index after its data. Restoring
checks every value's presence, dtype and shape before changing any variable, reads with size
limits and checksums, and reports a damaged file as `GraphFormatError`.
"""

import os
import threading
import time
import warnings

import numpy as np

from graphflow.fileformat import checkpoint_files, file_io
from graphflow.fileformat.checkpoint_files import (  # noqa: F401 - the tf.train names
    CheckpointState,
    checkpoint_exists,
    delete_checkpoint,
    get_checkpoint_state,
    latest_checkpoint,
    open_checkpoint,
)
from graphflow.framework.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
)
from graphflow.framework.graph import GraphKeys, Operation, Tensor, get_default_graph
from graphflow.ops import registry
from graphflow.ops.state_ops import Variable


class SaverDef:
    """The checkpoint format versions `Saver(write_version=...)` takes (TF1's
    `tf.train.SaverDef.V1`/`V2`); graphflow writes V2."""

    LEGACY, V1, V2 = 0, 1, 2


class _Saveable:
    """One variable as the saver sees it: checkpoint key, op, dtype, static shape, state name;
    for a part of a partitioned variable also its `extents` ((offset, length) per dimension) in
    the `full_shape` saved under the key, and TensorFlow's shape-and-slice `spec` of them."""

    __slots__ = ("key", "op", "dtype", "shape", "shared_name", "extents", "full_shape", "spec")

    def __init__(self, key, op, slice_info=None):
        self.key = key
        self.op = op
        self.dtype = op.outputs[0].dtype
        self.shape = op.outputs[0].shape
        self.shared_name = op.attrs["shared_name"]
        self.extents = self.full_shape = None
        self.spec = ""
        if slice_info is not None:
            self.extents = tuple(zip(slice_info.var_offset, slice_info.var_shape))
            self.full_shape = tuple(slice_info.full_shape)
            self.spec = slice_info.spec


def _saver_items(var_list):
    """[(checkpoint key, variable op, save slice info or None)] of a Saver's var_list: a part of
    a partitioned variable (one with `_save_slice_info`; a PartitionedVariable gives all its
    parts) is saved as a slice under its full name (or the dict key naming it), as in TF."""
    named = var_list.items() if isinstance(var_list, dict) else ((None, v) for v in var_list)
    items = []
    for key, v in named:
        parts = v._get_variable_list() if hasattr(v, "_get_variable_list") else [v]
        for part in parts:
            op = _variable_op(part)
            info = getattr(part, "_save_slice_info", None)
            name = key if key is not None else (info.full_name if info is not None
                                                 else op.name)
            items.append((str(name), op, info))
    return items


def _variable_op(item):
    if isinstance(item, Variable):  # its storage op (an eager variable's element is a read)
        return item.op
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
    sharded: one data file per device the variables are placed on (`<prefix>.data-0000i-of-0000n`)
        instead of one data file.
    write_version: `SaverDef.V2` (TensorFlow's V2 format, the default); V1 is deprecated in
        TensorFlow and writes V2 too, with a warning.
    """

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=SaverDef.V2, pad_step_number=False, save_relative_paths=False,
                 filename=None):
        if write_version not in (SaverDef.V1, SaverDef.V2):
            raise ValueError(f"Saver: write_version must be SaverDef.V1 or SaverDef.V2, got "
                             f"{write_version!r}")
        if write_version == SaverDef.V1:
            warnings.warn("TensorFlow's V1 checkpoint format is deprecated; graphflow writes the "
                          "V2 format (which TensorFlow reads too)", stacklevel=2)
        self._sharded = bool(sharded)
        if var_list is None and get_default_graph().eager:
            raise RuntimeError("When eager execution is enabled, `var_list` must specify a list "
                               "or dict of variables to save")
        if var_list is None:
            var_list = get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES)
        self._saveables = []
        seen = {}  # key -> {op: extents}
        for key, op, info in _saver_items(var_list):
            saveable = _Saveable(key, op, info)
            ops = seen.setdefault(key, {})
            if op in ops:
                continue
            if ops and (saveable.extents is None or None in ops.values()
                        or saveable.extents in ops.values()):
                raise ValueError(f"At least two variables have the same name: {key}")
            ops[op] = saveable.extents
            self._saveables.append(saveable)
        if not self._saveables and not allow_empty:
            raise ValueError("No variables to save")
        self._max_to_keep = max_to_keep
        self._keep_every_seconds = keep_checkpoint_every_n_hours * 3600.0
        self._last_preserved = time.time()
        self._next_keep_time = self._last_preserved + self._keep_every_seconds
        self._pad_step_number = pad_step_number
        self._last_checkpoints = []  # [(prefix, time saved)], oldest first
        self._meta_suffix = "meta"
        self.name = name

    @property
    def last_checkpoints(self):
        """Prefixes of the checkpoints this saver keeps, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def recover_last_checkpoints(self, checkpoint_paths):
        """Adopt existing checkpoints, oldest first (e.g. `get_checkpoint_state(d)
        .all_model_checkpoint_paths`), so they count against `max_to_keep` and are deleted in
        turn; each is taken as saved when its index was written (TF1). Missing ones are left out."""
        found = []
        for prefix in checkpoint_paths:
            saved_at = checkpoint_files.checkpoint_mtime(prefix)
            if saved_at is not None:
                found.append((os.fspath(prefix), saved_at))
        self._last_checkpoints = found

    def _check_session(self, sess):
        for s in self._saveables:
            if s.op.graph is not sess.graph:
                raise ValueError(f"Variable '{s.key}' is not in the session's graph")

    # ------------------------------------------------------------------------------ saving
    def save(self, sess, save_path, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False,
             save_debug_info=False):
        """Write the variables' values as the checkpoint `<save_path>[-<step>]` (TensorFlow's V2
        files `.index` and `.data-*`); returns that prefix. A missing parent directory is
        created (one level, as TensorFlow does). With `write_meta_graph` (TF1's default), the
        session's graph also goes to `<prefix>.meta` (TensorFlow's MetaGraphDef, with this
        saver's save/restore subgraph) for `tf.train.import_meta_graph`. In eager mode `sess`
        is None (the eager variables are saved) and no meta graph is written."""
        if sess is None and get_default_graph().eager:
            from graphflow.engine.eager import eager_variables
            sess, write_meta_graph = eager_variables(), False
        self._check_session(sess)
        if global_step is not None:
            step = global_step if isinstance(global_step, (int, np.integer)) else sess.run(
                global_step)
            step = int(step)
            save_path = f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"
        save_path = os.fspath(save_path)
        directory = os.path.dirname(os.path.abspath(save_path))
        if not os.path.isdir(directory):
            try:
                os.mkdir(directory)
            except FileExistsError:
                pass
            except OSError:
                raise ValueError(f"Parent directory of {save_path} doesn't exist, can't "
                                 "save.") from None
        values = sess.variable_values()
        arrays, slices = {}, {}
        for s in self._saveables:
            value = values.get(s.shared_name)
            if value is None:
                raise FailedPreconditionError(
                    None, s.op, f"Attempting to save the uninitialized variable '{s.key}'. Run "
                    "its initializer (tf.global_variables_initializer()) first.")
            if s.extents is None:
                arrays[s.key] = value
            else:
                slices.setdefault(s.key, (s.full_shape, []))[1].append((s.extents, value))
        # Crash-safe order: (1) the data files (temp + fsync + rename), then the index naming
        # them (likewise), and the .meta graph, (2) the state file naming the checkpoint
        # (atomically), (3) only then delete the checkpoints the state file no longer keeps.
        # A kill at any moment leaves a state file that names complete checkpoints; an error
        # (a full disk) leaves no file of this save and the saver's kept list as it was.
        file_io.remove_stale_temp_files(directory, "")
        _retry_removals(save_path)
        from graphflow.fileformat.tf_bundle import write_bundle  # protobuf loads on first save
        shard_of, num_shards = self._shards()
        kept, expired, next_keep, preserved = self._kept_after(save_path)
        written = []
        try:
            written += write_bundle(save_path, arrays, shard_of, num_shards,
                                    slices)[::-1]  # index first
            if write_meta_graph:
                from graphflow.fileformat.tf_meta_graph import write_saver_meta_graph
                write_saver_meta_graph(f"{save_path}.{meta_graph_suffix}", sess.graph, self)
                written.append(f"{save_path}.{meta_graph_suffix}")
            if write_state:
                checkpoint_files.write_state(directory, save_path, [p for p, _ in kept],
                                             latest_filename or "checkpoint",
                                             [t for _, t in kept], preserved)
        except BaseException:
            _remove_files(written)  # a checkpoint no state file names, of a failed save
            raise
        self._last_checkpoints, self._next_keep_time, self._last_preserved = (
            kept, next_keep, preserved)
        if write_meta_graph:
            self._meta_suffix = meta_graph_suffix
        for old in expired:
            delete_checkpoint(old, [f".{self._meta_suffix}"])
        return save_path

    def _shards(self):
        """{key: shard} and the shard count: one shard per device with `sharded=True`."""
        if not self._sharded:
            return {}, 1
        devices = sorted({s.op.device or "" for s in self._saveables})
        number = {d: i for i, d in enumerate(devices)}
        return {s.key: number[s.op.device or ""] for s in self._saveables}, max(len(devices), 1)

    def _kept_after(self, prefix):
        """What saving `prefix` as the newest checkpoint makes of the kept list, without changing
        it (that waits for the state file): (kept [(prefix, time)], prefixes to delete once the
        state file no longer names them, next keep-for-good time, last preserved time)."""
        now = time.time()
        kept = [(p, t) for p, t in self._last_checkpoints if p != prefix]
        kept.append((prefix, now))
        expired = []
        next_keep, preserved = self._next_keep_time, self._last_preserved
        while self._max_to_keep and len(kept) > self._max_to_keep:
            old, saved_at = kept.pop(0)
            if saved_at > next_keep:  # keep one checkpoint every N hours for good
                next_keep += self._keep_every_seconds
                preserved = saved_at
                continue
            expired.append(old)
        return kept, expired, next_keep, preserved

    # ------------------------------------------------------------------------------ restoring
    def restore(self, sess, save_path, limits=None):
        """Load the values saved under `save_path` (a prefix returned by `save`, TensorFlow's
        or graphflow's) into `sess`.

        Every value is checked (present, same dtype, compatible shape) against the index before
        any is read, and all are read (sizes and checksums checked) before any is written."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        if sess is None and get_default_graph().eager:
            from graphflow.engine.eager import eager_variables
            sess = eager_variables()
        self._check_session(sess)
        save_path = os.fspath(save_path)
        reader = open_checkpoint(save_path, limits)
        if reader is None:
            raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}")
        with reader:
            for s in self._saveables:
                if s.key not in reader:
                    raise NotFoundError(None, s.op,
                                        f"Key {s.key} not found in checkpoint {save_path}")
                dtype, shape = reader.dtype(s.key), reader.shape(s.key)
                if dtype != s.dtype.base_dtype:
                    raise InvalidArgumentError(
                        None, s.op, f"Checkpoint {save_path} holds '{s.key}' as {dtype.name}, "
                        f"but the variable is {s.dtype.name}")
                if s.extents is not None and tuple(shape) != s.full_shape:
                    raise InvalidArgumentError(
                        None, s.op, f"Checkpoint {save_path} holds '{s.key}' with shape "
                        f"{list(shape)}, but the partitioned variable has shape "
                        f"{list(s.full_shape)}")
                if s.extents is None and not s.shape.is_compatible_with(shape):
                    raise InvalidArgumentError(
                        None, s.op, f"Checkpoint {save_path} holds '{s.key}' with shape "
                        f"{list(shape)}, but the variable has shape {s.shape}")
            updates, whole = {}, {}
            for s in self._saveables:
                if s.extents is None:
                    updates[s.shared_name] = reader.get_tensor(s.key)
                    continue
                if s.key not in whole:  # (TF's slices or one tensor: the same full value)
                    whole[s.key] = reader.get_tensor(s.key)
                region = tuple(slice(o, o + n) for o, n in s.extents)
                updates[s.shared_name] = np.array(whole[s.key][region])
        sess.set_variable_values(updates)


# Files of this process's failed saves that could not be removed when the save failed: removed
# by the next save (of any Saver), unless that save writes them again.
_unremoved = set()
_unremoved_lock = threading.Lock()


def _remove_files(paths):
    """Remove `paths` (in order), remembering those that could not be removed."""
    for path in paths:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
        except OSError:
            with _unremoved_lock:
                _unremoved.add(path)


def _retry_removals(save_path):
    """Remove what earlier failed saves of this process left, except files of `save_path`
    (this save writes them again)."""
    with _unremoved_lock:
        if not _unremoved:
            return
        paths = sorted(_unremoved)
        _unremoved.clear()
    mine = save_path + "."
    _remove_files([p for p in paths if not p.startswith(mine)])


def recover_kept_checkpoints(saver, checkpoint_dir, latest_filename=None):
    """Make `saver`, when it keeps no checkpoint yet, keep those the state file of
    `checkpoint_dir` lists (what TF1's session manager does after restoring from a directory), so
    that a restarted program goes on deleting the oldest beyond `max_to_keep` instead of
    forgetting them on disk."""
    if saver is None or saver.last_checkpoints or not checkpoint_dir:
        return
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is not None:
        saver.recover_last_checkpoints(state.all_model_checkpoint_paths)


__all__ = ["Saver", "SaverDef", "latest_checkpoint", "get_checkpoint_state", "checkpoint_exists",
           "CheckpointState"]
