"""Gradient rules for the segment reductions (TF1's formulas); Bincount has none (TF1's
NotDifferentiable).

SegmentSum: each row gets its segment's gradient (a gather). SegmentMean: the same divided by the
segment's size. Max and min: the gradient goes to the rows equal to their segment's result, split
evenly between ties; the unsorted forms leave rows with negative ids at zero.
"""

from graphflow.framework import dtypes
from graphflow.ops import array_ops as a
from graphflow.ops import math_ops as m
from graphflow.ops import shape_ops
from graphflow.ops.registry import no_gradient, register_gradient
from graphflow.ops.segment_ops import segment_sum

no_gradient("Bincount")


def _expand_to(v, data, ids):
    """`v`, shaped like the segment ids, with size-1 dims appended up to `data`'s rank."""
    if data.shape.ndims is not None and ids.shape.ndims is not None:
        for _ in range(data.shape.ndims - ids.shape.ndims):
            v = shape_ops.expand_dims(v, -1)
        return v
    extra = m.subtract(shape_ops.rank(data), shape_ops.rank(ids))
    ones = shape_ops.ones(shape_ops.stack([extra]), dtypes.int32)
    return shape_ops.reshape(v, shape_ops.concat([shape_ops.shape(ids), ones], 0))


@register_gradient("SegmentSum")
def _segment_sum_grad(op, grad):
    return (a.gather(grad, op.inputs[1]), None)


@register_gradient("SegmentMean")
def _segment_mean_grad(op, grad):
    data, ids = op.inputs
    counts = segment_sum(shape_ops.ones_like(ids, dtype=grad.dtype), ids)
    per_row = _expand_to(a.gather(counts, ids), data, ids)
    return (a.gather(grad, ids) / per_row, None)


def _min_or_max_grad(op, grad):
    data, ids = op.inputs[:2]
    selected = m.equal(data, a.gather(op.outputs[0], ids))
    count = segment_sum(m.cast(selected, grad.dtype), ids)
    share = a.gather(grad / m.maximum(count, 1.0), ids)  # (empty segments: no row reads it)
    return (m.where(selected, share, shape_ops.zeros_like(data)), None)


for _type in ("SegmentMax", "SegmentMin"):
    register_gradient(_type)(_min_or_max_grad)


def _unsorted_min_or_max_grad(op, grad):
    data, ids, num = op.inputs
    zero = m.cast(0, ids.dtype)
    clipped = m.maximum(ids, zero)
    valid = _expand_to(m.greater_equal(ids, zero), data, ids)
    selected = m.logical_and(m.equal(data, a.gather(op.outputs[0], clipped)), valid)
    count = a.unsorted_segment_sum(m.cast(selected, grad.dtype), ids, num)
    share = a.gather(grad / m.maximum(count, 1.0), clipped)
    return (m.where(selected, share, shape_ops.zeros_like(data)), None, None)


for _type in ("UnsortedSegmentMax", "UnsortedSegmentMin"):
    register_gradient(_type)(_unsorted_min_or_max_grad)
