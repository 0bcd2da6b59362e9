"""Reading checkpoints written by `tf.train.Saver` outside a restore: `tf.train.list_variables`,
`load_variable`, `load_checkpoint` (a reader) and `init_from_checkpoint`, which makes chosen
variables start from a checkpoint's values (warm starts, fine-tuning). They read TensorFlow's V2
checkpoints (graphflow's own, and TensorFlow's: a partitioned variable reads as one tensor of its
full shape, its slices assembled) and the `.npz` checkpoints of older graphflow versions.

`init_from_checkpoint` replaces each chosen variable's initializer by an assign of the value read
from the checkpoint when the graph is built (a constant in the graph), so
`tf.global_variables_initializer()` loads it; as in TF1, the variable's own initial value is no
longer used.
"""

import os

from graphflow.fileformat.checkpoint_files import latest_checkpoint, open_checkpoint
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


_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


class CheckpointReader:
    """The values of one checkpoint (TF1's `NewCheckpointReader`): `get_tensor(name)`,
    `has_tensor(name)`, `get_variable_to_shape_map()`, `get_variable_to_dtype_map()`,
    `debug_string()`. Values are read from disk when asked for."""

    def __init__(self, ckpt_dir_or_file):
        prefix = _checkpoint_prefix(ckpt_dir_or_file)
        self._prefix = prefix
        self._reader = open_checkpoint(prefix)
        if self._reader is None:
            raise ValueError(f"Unsuccessful TensorSliceReader constructor: Failed to find any "
                             f"matching files for {prefix}")

    def has_tensor(self, name):
        return name in self._reader

    def get_tensor(self, name):
        if name not in self._reader:
            raise ValueError(f"Tensor {name} is not found in {self._prefix} checkpoint")
        return self._reader.get_tensor(name)

    def get_variable_to_shape_map(self):
        return {name: list(self._reader.shape(name)) for name in self._reader.names()}

    def get_variable_to_dtype_map(self):
        return {name: self._reader.dtype(name) for name in self._reader.names()}

    def debug_string(self):
        """One line per tensor, `name (dtype) [dims]`, as bytes (as TensorFlow's reader)."""
        lines = []
        for name in self._reader.names():
            dtype = self._reader.dtype(name).name
            dims = ",".join(str(d) for d in self._reader.shape(name))
            lines.append(f"{name} ({_TYPE_NAMES.get(dtype, dtype)}) [{dims}]\n")
        return "".join(lines).encode("utf-8")

    def close(self):
        self._reader.close()


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
    shape = reader.get_variable_to_shape_map()[tensor_name]
    dtype = reader.get_variable_to_dtype_map()[tensor_name]
    if not var.shape.is_compatible_with(TensorShape(shape)):
        raise ValueError(f"Shape of variable {var.name} ({var.shape}) doesn't match with shape of "
                         f"tensor {tensor_name} ({shape}) from checkpoint reader.")
    if dtype != var.dtype.base_dtype:
        raise ValueError(f"Variable {var.name} is {var.dtype.name} but tensor {tensor_name} of "
                         f"the checkpoint is {dtype.name}")
    value = reader.get_tensor(tensor_name)
    graph = var.graph
    with graph.name_scope(None), graph.control_dependencies(None), \
            graph.name_scope(var.op.name + "/"):
        init = var.assign(convert_to_tensor(value, dtype=var.dtype, name="checkpoint_value"),
                          name="init_from_checkpoint")
    var._initializer_op = init.op
    var._initial_value = init.op.inputs[0]


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """Make variables start from checkpoint values (TF1's rules): `assignment_map` (a dict, or a
    list of pairs to load one checkpoint tensor into several variables) maps

    - 'checkpoint_scope/': 'scope/' - every variable under 'scope/' loads
      'checkpoint_scope/<rest of its name>';
    - 'checkpoint_scope/name': 'scope/variable_name' - that variable loads that tensor;
    - 'name': variable - the given Variable loads that tensor;
    - '/': 'scope/' - every variable under 'scope/' loads the tensor named by the rest of its
      name at the checkpoint's root (and 'checkpoint_scope/': '/' every variable).

    Values load when the variables' initializers run (`tf.global_variables_initializer()`);
    shapes and dtypes are checked now."""
    reader = load_checkpoint(ckpt_dir_or_file)
    variable_map = reader.get_variable_to_shape_map()
    if isinstance(assignment_map, dict):
        assignment_map = assignment_map.items()
    by_name = {v.op.name: v for v in global_variables()}
    for tensor_name, current in sorted(assignment_map, key=lambda pair: pair[0]):
        var = current if isinstance(current, Variable) else by_name.get(current)
        if var is not None:
            if tensor_name not in variable_map:
                raise ValueError(f"Tensor {tensor_name} is not found in {ckpt_dir_or_file} "
                                 f"checkpoint {variable_map}")
            _set_initializer(var, reader, tensor_name)
            continue
        if not isinstance(current, str):
            raise ValueError(f"assignment_map values must be variables or names, got {current!r}")
        scope = current[:current.rindex("/")] if "/" in current else ""
        if not tensor_name.endswith("/"):
            raise ValueError(f"Assignment map with scope only name {scope} should map to scope "
                             f"only {tensor_name}. Should be 'scope/': 'other_scope/'.")
        for name in sorted(by_name):
            if scope and not name.startswith(scope + "/"):
                continue
            full = name[len(scope):]
            if current != "/":
                full = full[1:]
            if tensor_name != "/":
                full = tensor_name + full
            if full.endswith("/"):
                full = full[:-1]
            if full not in variable_map:
                raise ValueError(f"Tensor {full} ({name[len(scope) + 1:]} in {tensor_name}) is "
                                 f"not found in {ckpt_dir_or_file} checkpoint")
            _set_initializer(by_name[name], reader, full)


__all__ = ["list_variables", "load_variable", "load_checkpoint", "NewCheckpointReader",
           "init_from_checkpoint"]
