"""TF1's sparse segment reductions, `tf.sparse_segment_sum`, `tf.sparse_segment_mean` and
`tf.sparse_segment_sqrt_n`: rows of `data` picked by `indices`, reduced over `segment_ids`,
built from a gather and a segment sum (so their gradients are TF1's: the output gradient,
scaled by the segment's factor, summed back into the picked rows). Without `num_segments` the
result has one row per segment up to the last id (segment ids sorted), as TF1's."""

from graphflow.framework.graph import name_scope
from graphflow.ops import array_ops, math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.segment_ops import segment_sum


def _segment_sums(data, indices, segment_ids, num_segments):
    rows = array_ops.gather(data, indices)
    ids = convert_to_tensor(segment_ids)
    if ids.shape.ndims not in (None, 1):
        raise ValueError(f"segment_ids must be a vector, got shape {ids.shape}")
    ones = shape_ops.ones_like(ids, dtype=data.dtype)
    if num_segments is None:
        return segment_sum(rows, ids), segment_sum(ones, ids)
    return (array_ops.unsorted_segment_sum(rows, ids, num_segments),
            array_ops.unsorted_segment_sum(ones, ids, num_segments))


def _scaled(sums, counts, scale):
    factor = scale(math_ops.maximum(counts, shape_ops.ones_like(counts)))  # empty segments: 0
    rank = sums.shape.ndims
    if rank is None:
        factor = shape_ops.reshape(factor, shape_ops.concat(
            [shape_ops.shape(factor), shape_ops.ones_like(shape_ops.shape(sums))[1:]], 0))
    else:
        factor = shape_ops.reshape(factor, [-1] + [1] * (rank - 1))
    return sums / factor


def sparse_segment_sum(data, indices, segment_ids, name=None, num_segments=None):
    """`tf.sparse_segment_sum`: out[s] = sum of data[indices[j]] over j with segment_ids[j] == s."""
    with name_scope(name, "SparseSegmentSum", [data, indices, segment_ids]):
        data = convert_to_tensor(data, name="data")
        return _segment_sums(data, indices, segment_ids, num_segments)[0]


def sparse_segment_mean(data, indices, segment_ids, name=None, num_segments=None):
    """`tf.sparse_segment_mean`: the mean of each segment's picked rows (0 for an empty one)."""
    with name_scope(name, "SparseSegmentMean", [data, indices, segment_ids]):
        data = convert_to_tensor(data, name="data")
        sums, counts = _segment_sums(data, indices, segment_ids, num_segments)
        return _scaled(sums, counts, lambda c: c)


def sparse_segment_sqrt_n(data, indices, segment_ids, name=None, num_segments=None):
    """`tf.sparse_segment_sqrt_n`: each segment's sum of picked rows divided by the square root
    of its size (0 for an empty one)."""
    with name_scope(name, "SparseSegmentSqrtN", [data, indices, segment_ids]):
        data = convert_to_tensor(data, name="data")
        sums, counts = _segment_sums(data, indices, segment_ids, num_segments)
        return _scaled(sums, counts, math_ops.sqrt)


__all__ = ["sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n"]
