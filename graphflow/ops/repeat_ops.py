"""`tf.repeat` and `tf.is_tensor`, TF1's Python functions composed of existing ops.

repeat(input, repeats, axis): each slice of `input` along `axis` (of the flattened input when
axis is None) repeated `repeats` times: a scalar repeats every slice as often, a 1-D `repeats`
gives each slice its own count. As in TF it is a gather of the slice indices
[0, 0, 1, 2, 2, ...]: indices known at build time when `repeats` is, otherwise computed when the
graph runs (the index of each output position is the number of cumulative counts <= it, an
UpperBound over the cumsum of `repeats`). The gradient is the gather's (the repeated slices'
gradients summed back).
"""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor, name_scope
from graphflow.ops import array_ops, math_ops, shape_ops, sort_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.cumulative_ops import cumsum
from graphflow.ops.sparse_tensor import SparseTensor
from graphflow.ops.state_ops import Variable
from graphflow.ops.static_value import constant_value


def is_tensor(x):
    """`tf.is_tensor`: whether `x` is a graphflow tensor-like value (a Tensor, a Variable or a
    SparseTensor), not a Python or numpy value that would first need converting."""
    return isinstance(x, (Tensor, Variable, SparseTensor))


def repeat(input, repeats, axis=None, name=None):
    """`tf.repeat(input, repeats, axis=None)`: `input` with each slice along `axis` repeated
    (numpy's np.repeat). `repeats` is a scalar or a 1-D tensor with one count per slice."""
    with name_scope(name, "Repeat"):
        x = convert_to_tensor(input)
        repeats = convert_to_tensor(repeats)
        if not repeats.dtype.is_integer:
            raise TypeError(f"repeats must be integers, got {repeats.dtype.name}")
        if repeats.shape.ndims not in (None, 0, 1):
            raise ValueError(f"repeats must be a scalar or a vector, got shape {repeats.shape}")
        if axis is None:
            x = shape_ops.reshape(x, [-1])
            axis = 0
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("repeat needs an input of known rank")
        if not -rank <= axis < rank:
            raise ValueError(f"axis {axis} is out of range for an input of rank {rank}")
        axis %= rank
        size = x.shape.dims[axis]
        static = constant_value(repeats)
        if static is not None and size is not None:
            counts = np.broadcast_to(np.asarray(static, np.int64), (size,))
            if np.any(counts < 0):
                raise ValueError(f"repeats must be non-negative, got {static}")
            indices = convert_to_tensor(np.repeat(np.arange(size, dtype=np.int64), counts))
        else:
            counts = math_ops.cast(repeats, dtypes.int64)
            slices = math_ops.cast(shape_ops.shape(x)[axis], dtypes.int64)
            counts = counts + shape_ops.zeros(shape_ops.reshape(slices, [1]), dtypes.int64)
            ends = cumsum(counts)
            positions = array_ops.range(math_ops.reduce_sum(counts), dtype=dtypes.int64)
            indices = sort_ops.searchsorted(ends, positions, side="right", out_type=dtypes.int64)
        return array_ops.gather(x, indices, axis=axis)


__all__ = ["is_tensor", "repeat"]
