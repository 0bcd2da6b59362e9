"""Gradient rules for the array ops (shape_ops, slice_ops, array_ops).

Each rule is `grad(op, *output_grads) -> tuple` with one entry per input (None for integer
arguments such as shapes, indices and paddings) and builds ordinary graph ops, so every rule is
differentiable again: the helper ops the rules use (GatherGrad, StridedSliceGrad, TileGrad,
MirrorPadGrad) have rules of their own. Where shapes are static the rules use constants, so the
gradient's static shape is as precise as the forward one; otherwise they read shapes at run time.

Not differentiable (TF's NotDifferentiable): Shape, Size, Rank, Range, OneHot, ZerosLike,
OnesLike — their outputs are integers or do not depend on input values.
"""

import numpy as np

from graphflow.framework import dtypes
from graphflow.ops import array_ops as a
from graphflow.ops import math_ops as m
from graphflow.ops import shape_ops, slice_ops
from graphflow.ops.core_ops import constant
from graphflow.ops.grad_util import shape_of, unbroadcast
from graphflow.ops.indexed_slices import IndexedSlices
from graphflow.ops.registry import no_gradient, register_gradient
from graphflow.ops.static_value import constant_value

no_gradient("Shape", "Size", "Rank", "Range", "OneHot", "ZerosLike", "OnesLike")


def _shape_like(x, dtype):
    """shape_of(x) as an int tensor of `dtype` (to combine with int64 begins/paddings)."""
    s = shape_of(x)
    return s if s.dtype == dtype else m.cast(s, dtype)


# ---------------------------------------------------------------- reshaping
@register_gradient("Reshape")
def _reshape_grad(op, grad):
    return (a.reshape(grad, shape_of(op.inputs[0])), None)


@register_gradient("ExpandDims")
def _expand_dims_grad(op, grad):
    return (a.reshape(grad, shape_of(op.inputs[0])),)


@register_gradient("Squeeze")
def _squeeze_grad(op, grad):
    return (a.reshape(grad, shape_of(op.inputs[0])),)


@register_gradient("Transpose")
def _transpose_grad(op, grad):
    perm = op.attrs["perm"]
    if perm is None:
        return (a.transpose(grad),)
    return (a.transpose(grad, np.argsort(perm).tolist()),)


@register_gradient("BroadcastTo")
def _broadcast_to_grad(op, grad):
    return (unbroadcast(grad, op.inputs[0]), None)


@register_gradient("Fill")
def _fill_grad(op, grad):
    return (None, m.reduce_sum(grad))


@register_gradient("ReverseV2")
def _reverse_grad(op, grad):
    return (a.reverse(grad, op.attrs["axis"]),)


# ---------------------------------------------------------------- joining and splitting
def _axis_slice(axis, start, stop):
    """An index selecting [start:stop] along `axis` of a tensor of any (even unknown) rank."""
    part = slice(start, stop)
    if axis >= 0:
        return (slice(None),) * axis + (part,)
    return (Ellipsis, part) + (slice(None),) * (-axis - 1)


@register_gradient("ConcatV2")
def _concat_grad(op, grad):
    axis = op.attrs["axis"]
    ranks = {t.shape.ndims for t in op.inputs} - {None}
    if ranks and axis < 0:
        axis += ranks.pop()
    sizes = []
    for t in op.inputs:
        d = t.shape.dims[axis] if t.shape.dims is not None else None
        sizes.append(d if d is not None else a.shape(t)[axis])
    out, offset = [], 0
    for t, n in zip(op.inputs, sizes):
        end = offset + n
        g = grad[_axis_slice(axis, offset, end)]
        g.set_shape(t.shape)  # what a gradient of t must be; refines run-time offsets
        out.append(g)
        offset = end
    return tuple(out)


@register_gradient("Pack")
def _pack_grad(op, grad):
    return tuple(a.unstack(grad, num=len(op.inputs), axis=op.attrs["axis"]))


@register_gradient("Unpack")
def _unpack_grad(op, *grads):
    return (a.stack(list(grads), axis=op.attrs["axis"]),)


@register_gradient("Split")
def _split_grad(op, *grads):  # (sizes fed at run time, a second input, have no gradient)
    return (a.concat(list(grads), axis=op.attrs["axis"]),) + (None,) * (len(op.inputs) - 1)


# ---------------------------------------------------------------- slicing
@register_gradient("Slice")
def _slice_grad(op, grad):
    x, begin, _ = op.inputs
    b = constant_value(begin)
    if b is not None and x.shape.is_fully_defined() and grad.shape.is_fully_defined():
        b = np.asarray(b).astype(np.int64)
        after = np.array(x.shape.dims) - b - np.array(grad.shape.dims)
        paddings = constant(np.stack([b, after], axis=1).astype(np.int32), name="paddings")
    else:
        after = _shape_like(x, begin.dtype) - begin - _shape_like(grad, begin.dtype)
        paddings = a.stack([begin, after], axis=1)
    return (a.pad(grad, paddings), None, None)


def _masks(op):
    return {k: op.attrs.get(k, 0) for k in slice_ops.MASKS}


@register_gradient("StridedSlice")
def _strided_slice_grad(op, grad):
    x, begin, end, strides = op.inputs
    dx = slice_ops.strided_slice_grad(_shape_like(x, begin.dtype), begin, end, strides, grad,
                                      **_masks(op))
    return (dx, None, None, None)


@register_gradient("StridedSliceGrad")
def _strided_slice_grad_grad(op, grad):
    _, begin, end, strides, _ = op.inputs
    return (None, None, None, None,
            slice_ops.strided_slice(grad, begin, end, strides, **_masks(op)))


# ---------------------------------------------------------------- gather and scatter
@register_gradient("GatherV2")
def _gather_grad(op, grad):
    """Along axis 0 (TF1's rule): an IndexedSlices of the gathered rows, `grad` reshaped to
    [number of indices] + params.shape[1:] at the flattened indices; other axes: dense."""
    params, indices = op.inputs
    if op.attrs["axis"] == 0 and op.attrs.get("batch_dims", 0) == 0:
        params_shape = shape_of(params)
        if indices.shape.ndims != 1 or grad.shape.ndims != params.shape.ndims:
            if indices.shape.is_fully_defined() and params.shape[1:].is_fully_defined():
                count = [indices.shape.num_elements()]
            else:
                count = shape_ops.expand_dims(shape_ops.size(indices), 0)
            indices = shape_ops.reshape(indices, count)
            grad = shape_ops.reshape(grad, shape_ops.concat([count, params_shape[1:]], 0))
        return (IndexedSlices(grad, indices, params_shape), None)
    return (a.gather_grad(grad, indices, shape_of(params), axis=op.attrs["axis"],
                          batch_dims=op.attrs.get("batch_dims", 0)), None)


@register_gradient("GatherGrad")
def _gather_grad_grad(op, grad):
    _, indices, _ = op.inputs
    return (a.gather(grad, indices, axis=op.attrs["axis"],
                     batch_dims=op.attrs.get("batch_dims", 0)), None, None)


@register_gradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op, grad):
    data, ids, _ = op.inputs
    zero = constant(np.zeros((), ids.dtype.as_numpy_dtype))
    gathered = a.gather(grad, m.maximum(ids, zero))  # rows of dropped (negative) ids are masked
    keep = m.cast(m.greater_equal(ids, zero), grad.dtype)
    if data.shape.ndims is not None and ids.shape.ndims is not None:
        for _ in range(data.shape.ndims - ids.shape.ndims):
            keep = a.expand_dims(keep, -1)
    else:
        extra = m.subtract(a.rank(data), a.rank(ids))
        keep = a.reshape(keep, a.concat([a.shape(ids), a.ones(a.stack([extra]), dtypes.int32)],
                                        0))
    return (gathered * keep, None, None)


# ---------------------------------------------------------------- tile and pad
@register_gradient("Tile")
def _tile_grad(op, grad):
    return (a.tile_grad(grad, op.inputs[1]), None)


@register_gradient("TileGrad")
def _tile_grad_grad(op, grad):
    return (a.tile(grad, op.inputs[1]), None)


@register_gradient("Pad")
def _pad_grad(op, grad):
    x, paddings, _ = op.inputs
    before = paddings[:, 0]
    dx = slice_ops.slice(grad, before, _shape_like(x, paddings.dtype))
    if x.shape.is_fully_defined():
        dx.set_shape(x.shape)
    d_value = m.reduce_sum(grad) - m.reduce_sum(dx)
    return (dx, None, d_value)


@register_gradient("MirrorPad")
def _mirror_pad_grad(op, grad):
    x, paddings = op.inputs
    return (a.mirror_pad_grad(grad, paddings, op.attrs["mode"]), None)


@register_gradient("MirrorPadGrad")
def _mirror_pad_grad_grad(op, grad):
    _, paddings = op.inputs
    return (a.pad(grad, paddings, mode=op.attrs["mode"]), None)
