"""Partitioned variables (TF1's `tf.get_variable(..., partitioner=...)`): one logical variable
stored as several Variables, its slices along one axis, named `name/part_0`, `name/part_1`, ...

A partitioner is `partitioner(shape=TensorShape, dtype=DType) -> [partitions per dimension]`
(TF1's three: `fixed_size_partitioner`, `variable_axis_size_partitioner`,
`min_max_variable_partitioner`); at most one dimension may have more than one partition. The
slices' sizes follow TF1: the first `dim % n` slices are one longer. Each part records its place
in the whole (`SaveSliceInfo`: the full name and shape, the part's offset and shape), which
`tf.train.Saver` writes as TensorFlow does: one checkpoint key, the full name, with the full shape
and one slice per part, so checkpoints move between TF and graphflow in both directions.

A `PartitionedVariable` iterates over its parts (so `tf.nn.embedding_lookup` takes it as a list
of partitions) and converts to a tensor by concatenating them.
"""

import math

from graphflow.framework import dtypes
from graphflow.framework.graph import get_default_graph
from graphflow.framework.tensor_shape import TensorShape, as_shape
from graphflow.ops import shape_ops
from graphflow.ops.core_ops import convert_to_tensor, group
from graphflow.ops.slice_ops import slice as slice_
from graphflow.ops.state_ops import assign


class SaveSliceInfo:
    """Where a part lies in its partitioned variable (TF1's `Variable.SaveSliceInfo`)."""

    def __init__(self, full_name=None, full_shape=None, var_offset=None, var_shape=None):
        self.full_name = full_name
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)
        self.var_shape = list(var_shape)

    @property
    def spec(self):
        """TensorFlow's shape-and-slice string: 'full dims' then 'offset,length' per dim."""
        full = " ".join(str(d) for d in self.full_shape)
        slices = ":".join(f"{o},{s}" for o, s in zip(self.var_offset, self.var_shape))
        return f"{full} {slices}"

    @property
    def extents(self):
        """((start, length) per dimension)."""
        return tuple(zip(self.var_offset, self.var_shape))


def _element_size(dtype, bytes_per_string_element):
    dtype = dtypes.as_dtype(dtype)
    if dtype.base_dtype == dtypes.string:
        return bytes_per_string_element
    return dtype.size


def fixed_size_partitioner(num_shards, axis=0):
    """A partitioner of `num_shards` slices along `axis` (fewer when the axis is shorter)."""
    def _partitioner(shape, **unused_args):
        partitions = [1] * len(shape)
        partitions[axis] = min(num_shards, shape.dims[axis])
        return partitions
    return _partitioner


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16,
                                   max_shards=None):
    """A partitioner keeping each slice (along `axis`) under `max_shard_bytes`, with at least one
    row per slice and at most `max_shards` slices."""
    if axis < 0:
        raise ValueError("axis must be non-negative")
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive.")
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype):
        if not isinstance(shape, TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        if not isinstance(dtype, dtypes.DType):
            raise ValueError(f"dtype is not a DType: {dtype}")
        element_size = _element_size(dtype, bytes_per_string_element)
        partitions = [1] * shape.ndims
        bytes_per_slice = 1.0 * (shape.num_elements() / shape.dims[axis]) * element_size
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        axis_shards = int(math.ceil(1.0 * shape.dims[axis] / slices_per_shard))
        if max_shards:
            axis_shards = min(max_shards, axis_shards)
        partitions[axis] = axis_shards
        return partitions
    return _partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10,
                                 bytes_per_string_element=16):
    """A partitioner of as many slices along `axis` as keep each at least `min_slice_size`
    bytes, at most `max_partitions` (and at most the axis's length)."""
    def _partitioner(shape, dtype):
        if axis >= len(shape):
            raise ValueError(f"Can not partition variable along axis {axis} when shape is only "
                             f"{shape}")
        total_size_bytes = shape.num_elements() * _element_size(dtype, bytes_per_string_element)
        partitions = total_size_bytes / min_slice_size
        partitions_list = [1] * len(shape)
        partitions_list[axis] = max(1, min(shape.dims[axis], max_partitions,
                                           int(math.ceil(partitions))))
        return partitions_list
    return _partitioner


def slice_layout(name, shape, partitions):
    """(the partitioned axis, [(offset, shape) of each slice]) for `partitions` of `shape`."""
    if not isinstance(partitions, (list, tuple)) or len(partitions) != shape.ndims:
        raise ValueError(f"Partitioner for variable {name} returned {partitions!r}: expected "
                         f"one partition count per dimension of the shape {shape}")
    dims = shape.as_list()
    axis = 0
    for i, (p, d) in enumerate(zip(partitions, dims)):
        if not isinstance(p, int) or p < 1:
            raise ValueError(f"Partitioner for variable {name} returned {partitions!r}: "
                             "partition counts must be positive ints")
        if p > d:
            raise ValueError(f"Partitioner for variable {name} returned {partitions!r}: "
                             f"more partitions than the {d} elements of dimension {i}")
        if p > 1:
            if any(q > 1 for q in partitions[i + 1:]):
                raise ValueError(f"Can only slice a variable along one dimension: shape: "
                                 f"{dims}, partitioning: {list(partitions)}")
            axis = i
    count = partitions[axis]
    longer, base = dims[axis] % count, dims[axis] // count
    layout, offset = [], [0] * len(dims)
    for i in range(count):
        part = list(dims)
        part[axis] = base + (1 if i < longer else 0)
        layout.append((list(offset), part))
        offset[axis] += part[axis]
    return axis, layout


def make_partitioned(name, shape, dtype, partitioner, make_part):
    """The PartitionedVariable `name` of the static `shape`: `make_part(part name, part shape,
    offset)` creates each part (a Variable), given its SaveSliceInfo here."""
    shape = as_shape(shape)
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable ({name}) must be fully defined, "
                         f"but instead was {shape}.")
    if shape.ndims < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    dtype = dtypes.as_dtype(dtype)
    partitions = partitioner(shape=shape, dtype=dtype)
    partitions = [int(p) for p in partitions] if isinstance(partitions, (list, tuple)) \
        else partitions
    _, layout = slice_layout(name, shape, partitions)
    parts = []
    for i, (offset, part_shape) in enumerate(layout):
        var = make_part(f"{name}/part_{i}", part_shape, offset)
        var._save_slice_info = SaveSliceInfo(name, shape.as_list(), offset, part_shape)
        parts.append(var)
    return PartitionedVariable(name, shape, dtype, parts, partitions)


def get_partitioned(store, name, shape, dtype, initializer, regularizer, reuse, trainable,
                    collections, validate_shape, partitioner, getter):
    """`get_variable` with a partitioner: the PartitionedVariable `name` of the variable store
    `store`, the existing one when the scope reuses, else new parts made by `getter` (the store's
    getter of single variables), each initialized with its slice of a value initializer (or with
    the initializer at its own shape)."""
    from_value = initializer is not None and not callable(initializer)
    if from_value:  # each part starts as its slice of the value
        initializer = convert_to_tensor(initializer, dtype=dtype)
        dtype = initializer.dtype
        if shape is not None and not as_shape(shape).is_compatible_with(initializer.shape):
            raise ValueError(f"Variable {name}: the initial value's shape "
                             f"{initializer.shape} differs from the shape {as_shape(shape)}")
        shape = initializer.shape if shape is None else shape
    shape = as_shape(shape)
    found = store.partitioned.get(name)
    if found is not None:
        if reuse is None:
            raise ValueError(f"Partitioned variable with name {name} already exists. Did you "
                             "mean to set reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
        if not shape.is_compatible_with(found.shape):
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified shape "
                             f"{shape} and found shape {found.shape}.")
        if dtype is not None and dtypes.as_dtype(dtype) != found.dtype:
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified dtype "
                             f"{dtypes.as_dtype(dtype).name} and found dtype "
                             f"{found.dtype.name}.")
        return found
    if reuse is True:
        raise ValueError(f"PartitionedVariable {name} does not exist, or was not created with "
                         "tf.get_variable(). Did you mean to set reuse=False or "
                         "reuse=tf.AUTO_REUSE in VarScope?")
    if name in store.variables:
        raise ValueError(f"A partitioner was set, but the variable {name} already exists "
                         "unpartitioned")

    def make_part(part_name, part_shape, offset):
        if from_value:
            with get_default_graph().name_scope(None):
                init, init_shape = slice_(initializer, offset, part_shape), None
        else:
            init, init_shape = initializer, part_shape
        return getter(part_name, shape=init_shape, dtype=dtype, initializer=init,
                      regularizer=regularizer, reuse=None, trainable=trainable,
                      collections=collections, validate_shape=validate_shape)
    found = make_partitioned(name, shape, dtype or dtypes.float32,
                                                   partitioner, make_part)
    store.partitioned[name] = found
    return found


class PartitionedVariable:
    """`tf.PartitionedVariable`: one variable kept as slices (`name/part_i`) along one axis."""

    def __init__(self, name, shape, dtype, variable_list, partitions):
        if not variable_list:
            raise ValueError(f"variable_list may not be empty: {name}")
        self._name = name
        self._shape = as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._variable_list = sorted(variable_list, key=lambda v: v._save_slice_info.var_offset)
        self._partitions = list(partitions)
        self._as_tensor = None

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self):
        num_partition_axes = len([p for p in self._partitions if p > 1])
        if num_partition_axes > 1:
            raise ValueError("Cannot get a length of a variable partitioned along more than "
                             "one axis")
        return len(self._variable_list)

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def graph(self):
        return self._variable_list[0].graph

    def _get_variable_list(self):
        return list(self._variable_list)

    def _get_partitions(self):
        return list(self._partitions)

    def _partition_axes(self):
        axes = [i for i, p in enumerate(self._partitions) if p > 1]
        return axes or [0]

    def _concat(self):
        """The whole value: the parts concatenated along the partitioned axis."""
        if len(self._variable_list) == 1:
            return convert_to_tensor(self._variable_list[0])
        with get_default_graph().name_scope(None):  # named as the variable (as in TF)
            return shape_ops.concat([convert_to_tensor(v) for v in self._variable_list],
                                    self._partition_axes()[0], name=self._name)

    def as_tensor(self):
        return self._concat()

    def __tf_tensor__(self, dtype=None, name=None):
        if dtype is not None and dtypes.as_dtype(dtype) != self._dtype:
            raise ValueError(f"Incompatible type conversion requested to type "
                             f"'{dtypes.as_dtype(dtype).name}' for variable of type "
                             f"'{self._dtype.name}'")
        return self._concat()

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """Assign the slices of `value` to the parts; returns the group of the assigns."""
        value = convert_to_tensor(value, dtype=self._dtype)
        writes = [assign(v, slice_(value, v._save_slice_info.var_offset,
                                   v._save_slice_info.var_shape), use_locking=use_locking)
                  for v in self._variable_list]
        return group(*writes, name=name)

    def __repr__(self):
        return (f"<graphflow.PartitionedVariable '{self._name}' shape={self._shape} "
                f"dtype={self._dtype.name} parts={len(self._variable_list)}>")


__all__ = ["fixed_size_partitioner", "variable_axis_size_partitioner",
           "min_max_variable_partitioner", "PartitionedVariable"]
