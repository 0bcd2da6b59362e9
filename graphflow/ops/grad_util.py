"""Shared helpers for gradient rules: undoing broadcasting and reductions on a gradient.

* `unbroadcast(grad, like)`: `grad` has the shape of a broadcast result; sum it over the broadcast
  axes so that it has the shape of the input `like`. Static fast path (plain `Sum` ops, or nothing)
  when both shapes are fully known; otherwise one `SumToShape(grad, tf.shape(like))` op that works
  with any unknown dims (`[None, 10] + [10]`).
* `restore_reduced_dims(grad, x, axis, keepdims)`: the gradient of a reduction of `x` reshaped to
  the keepdims shape, so that it broadcasts against `x`.
* `shape_of(x)`: a constant when `x`'s shape is static, else `tf.shape(x)`.
"""

import numpy as np

from graphflow.framework.graph import Tensor
from graphflow.ops import math_ops, shape_ops
from graphflow.ops.core_ops import constant
from graphflow.ops.gradient_ops import reduced_shape, sum_to_shape
from graphflow.ops.math_ops import normalize_axes


def shape_of(x, name="Shape"):
    """The shape of `x` as a 1-D int32 tensor: a constant when static, a `Shape` op otherwise."""
    if x.shape.is_fully_defined():
        return constant(np.array(x.shape.dims, dtype=np.int32), name=name)
    return shape_ops.shape(x, name=name)


def unbroadcast(grad, like):
    """Reduce `grad` (shaped like a broadcast result) back to the shape of the tensor `like`."""
    gs, ls = grad.shape, like.shape
    if gs.ndims is not None and ls.is_fully_defined():
        # static: like's shape says exactly which axes were added (leading) or stretched (1s)
        gd, ld = gs.dims, ls.dims
        if gd == ld:
            return grad
        lead = len(gd) - len(ld)
        if lead < 0:
            raise ValueError(f"cannot unbroadcast a gradient of shape {gs} to the higher-rank "
                             f"shape {ls} of {like.name}")
        stretched = [i for i, (g, d) in enumerate(zip(gd[lead:], ld)) if g != d]
        if any(ld[i] != 1 for i in stretched if gd[lead + i] is not None):
            raise ValueError(f"a gradient of shape {gs} does not broadcast from the shape {ls} of "
                             f"{like.name}")
        stretched = [i for i in stretched if ld[i] == 1]  # unknown grad dims: like's dim is known
        if lead:
            grad = math_ops.reduce_sum(grad, axis=list(range(lead)))
        if stretched:
            grad = math_ops.reduce_sum(grad, axis=stretched, keepdims=True)
        return grad
    return sum_to_shape(grad, shape_ops.shape(like))


def restore_reduced_dims(grad, x, axis, keepdims):
    """`grad` of `reduce_*(x, axis, keepdims)`, reshaped to the keepdims shape (reduced axes = 1)."""
    if keepdims:
        return grad
    if isinstance(axis, Tensor):  # axes read at run time
        return shape_ops.reshape(grad, reduced_shape(shape_ops.shape(x), axis))
    rank = x.shape.ndims
    if axis is None and grad.shape.ndims == 0:
        return grad  # a scalar broadcasts against anything
    axes = normalize_axes(axis, rank)
    if rank is None or axes is None:
        return shape_ops.reshape(grad, reduced_shape(shape_ops.shape(x), axis))
    if x.shape.is_fully_defined():
        dims = [1 if i in axes else d for i, d in enumerate(x.shape.dims)]
        return shape_ops.reshape(grad, dims)
    for a in axes:  # ascending: each insertion position is final
        grad = shape_ops.expand_dims(grad, a)
    return grad
