"""Reading checkpoints written by `tf.train.Saver` outside a restore: `tf.train.list_variables`,
`load_variable`, `load_checkpoint` (a reader) and `init_from_checkpoint`, which makes chosen
variables start from a checkpoint's values (warm starts, fine-tuning).

`init_from_checkpoint` replaces each chosen variable's initializer by an assign of the value read
from the checkpoint when the graph is built (a constant in the graph), so
`tf.global_variables_initializer()` loads it; as in TF1, the variable's own initial value is no
longer used.
"""

import os

from graphflow.fileformat import file_io
from graphflow.fileformat.checkpoint import latest_checkpoint
from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.state_ops import Variable, global_variables


def _checkpoint_prefix(ckpt_dir_or_file):
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        found = latest_checkpoint(path)
        if found is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory "
                             f"{path}")
        return found
    return path


class CheckpointReader:
    """The values of one checkpoint (TF1's `NewCheckpointReader`): `get_tensor(name)`,
    `has_tensor(name)`, `get_variable_to_shape_map()`, `get_variable_to_dtype_map()`."""

    def __init__(self, ckpt_dir_or_file):
        prefix = _checkpoint_prefix(ckpt_dir_or_file)
        data = prefix + ".npz"
        if not os.path.isfile(data):
            raise ValueError(f"Unsuccessful TensorSliceReader constructor: Failed to find any "
                             f"matching files for {prefix}")
        self._prefix = prefix
        self._arrays = file_io.read_npz(data, f"checkpoint '{data}'", file_io.DEFAULT_LIMITS)

    def has_tensor(self, name):
        return name in self._arrays

    def get_tensor(self, name):
        if name not in self._arrays:
            raise ValueError(f"Tensor {name} is not found in {self._prefix} checkpoint")
        return self._arrays[name]

    def get_variable_to_shape_map(self):
        return {name: list(a.shape) for name, a in self._arrays.items()}

    def get_variable_to_dtype_map(self):
        return {name: dtypes.as_dtype(a.dtype) for name, a in self._arrays.items()}


NewCheckpointReader = CheckpointReader


def load_checkpoint(ckpt_dir_or_file):
    """A `CheckpointReader` of the checkpoint (a prefix, or a directory's latest checkpoint)."""
    return CheckpointReader(ckpt_dir_or_file)


def load_variable(ckpt_dir_or_file, name):
    """The value of variable `name` in the checkpoint (a trailing ':0' is ignored)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file):
    """[(name, shape)] of every variable in the checkpoint, sorted by name."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return sorted(shapes.items())


def _set_initializer(var, reader, tensor_name):
    value = reader.get_tensor(tensor_name)
    if not var.shape.is_compatible_with(TensorShape(list(value.shape))):
        raise ValueError(f"Shape of variable {var.name} ({var.shape}) doesn't match with shape of "
                         f"tensor {tensor_name} ({list(value.shape)}) from checkpoint reader.")
    if dtypes.as_dtype(value.dtype) != var.dtype.base_dtype:
        raise ValueError(f"Variable {var.name} is {var.dtype.name} but tensor {tensor_name} of "
                         f"the checkpoint is {dtypes.as_dtype(value.dtype).name}")
    graph = var.graph
    with graph.name_scope(None), graph.control_dependencies(None), \
            graph.name_scope(var.op.name + "/"):
        init = var.assign(convert_to_tensor(value, dtype=var.dtype, name="checkpoint_value"),
                          name="init_from_checkpoint")
    var._initializer_op = init.op
    var._initial_value = init.op.inputs[0]


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """Make variables start from checkpoint values. `assignment_map` maps a checkpoint name to a
    variable (or its name), or a checkpoint scope 'old/' to a scope 'new/' (every variable under
    'new/' loads 'old/<rest of its name>'; '/' is the root on either side)."""
    reader = load_checkpoint(ckpt_dir_or_file)
    if isinstance(assignment_map, dict):
        assignment_map = assignment_map.items()
    by_name = {v.op.name: v for v in global_variables()}
    for tensor_name, current in assignment_map:
        var = current if isinstance(current, Variable) else by_name.get(current)
        if var is not None:
            if not reader.has_tensor(tensor_name):
                raise ValueError(f"Tensor {tensor_name} is not found in {ckpt_dir_or_file} "
                                 f"checkpoint {reader.get_variable_to_shape_map()}")
            _set_initializer(var, reader, tensor_name)
            continue
        if not isinstance(current, str):
            raise ValueError(f"assignment_map values must be variables or names, got {current!r}")
        if not tensor_name.endswith("/"):
            raise ValueError(f"Assignment map with scope only name {current} should map to scope "
                             f"only {tensor_name}. Should be 'scope/': 'other_scope/'.")
        scope = current[:current.rindex("/")] if "/" in current else ""
        for name in sorted(by_name):
            if scope and not name.startswith(scope + "/"):
                continue
            full = name[len(scope):]
            if current != "/":
                full = full[1:]
            if tensor_name != "/":
                full = tensor_name + full
            if not reader.has_tensor(full):
                raise ValueError(f"Tensor {full} (for variable {name}) is not found in "
                                 f"{ckpt_dir_or_file} checkpoint")
            _set_initializer(by_name[name], reader, full)


__all__ = ["list_variables", "load_variable", "load_checkpoint", "NewCheckpointReader",
           "init_from_checkpoint"]
