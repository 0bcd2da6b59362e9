"""TF1's arithmetic on SparseTensors. `tf.sparse_tensor_dense_matmul` is TF1's op,
SparseTensorDenseMatMul (its gradient rule in sparse_grad.py). The others are built from
ordinary ops (gathers, segment sums, unique): `tf.sparse_reduce_sum` / `_sparse`,
`tf.sparse_reduce_max` / `_sparse`, `tf.sparse_add` (sparse + sparse with TF1's threshold,
sparse + dense), `tf.sparse_maximum` / `tf.sparse_minimum` and `tf.sparse_softmax`.

Each result is what TF1's kernel computes, summing in the same order (entries in their given
order); the gradients are those of the gathers and segment sums, which are TF1's rules: a value's
gradient is the output gradient where it landed."""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import array_ops, index_ops, math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.gradient_ops import stop_gradient
from graphflow.ops.registry import define, make_tensor, require_dtype, same_dtype
from graphflow.ops.segment_ops import unsorted_segment_max, unsorted_segment_min
from graphflow.ops.sort_ops import argsort, unique
from graphflow.ops.sparse_index import as_sparse, linear_index, static_rank, unravel
from graphflow.ops.sparse_tensor import SparseTensor, is_sparse
from graphflow.ops.static_value import shape_vector

_INT64 = dtypes.int64


def _matmul_infer(inputs, attrs):
    indices, values, shape, b = inputs
    require_dtype(indices, (dtypes.int64,), "a_indices")
    require_dtype(shape, (dtypes.int64,), "a_shape")
    same_dtype([values, b], "a_values and b")
    if indices.shape.ndims not in (None, 2) or values.shape.ndims not in (None, 1):
        raise ValueError(f"a_indices must be a matrix and a_values a vector, got shapes "
                         f"{indices.shape} and {values.shape}")
    if b.shape.ndims not in (None, 2) or (indices.shape.ndims == 2
                                          and indices.shape.dims[1] not in (None, 2)):
        raise ValueError(f"sparse_tensor_dense_matmul needs matrices: a_indices of shape "
                         f"{indices.shape}, b of shape {b.shape}")
    a_dims = shape_vector(shape) or [None, None]
    if len(a_dims) != 2:
        raise ValueError(f"a_shape must have 2 entries, got {a_dims}")
    if attrs["adjoint_a"]:
        a_dims = a_dims[::-1]
    b_dims = list(b.shape.dims) if b.shape.ndims == 2 else [None, None]
    if attrs["adjoint_b"]:
        b_dims = b_dims[::-1]
    if a_dims[1] is not None and b_dims[0] is not None and a_dims[1] != b_dims[0]:
        raise ValueError(f"cannot multiply A of shape {a_dims} by B of shape {b_dims}: inner "
                         f"dimensions differ")
    return [(b.dtype, TensorShape([a_dims[0], b_dims[1]]))]


define("SparseTensorDenseMatMul", _matmul_infer, attrs="adjoint_a:bool adjoint_b:bool",
       value_dependent_shape=True, onnx={"converter": "sparse_dense_matmul"})


def sparse_tensor_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """`tf.sparse_tensor_dense_matmul`: the product of a rank-2 SparseTensor `sp_a` and a dense
    matrix `b` (each transposed, and conjugated, when its adjoint flag is set). Each output row
    sums its entries' scaled rows of `b` in the entries' order, as TF1's kernel does."""
    sp = as_sparse(sp_a, "sp_a")
    with name_scope(name, "SparseTensorDenseMatMul", [sp.indices, sp.values, b]) as scope:
        b = convert_to_tensor(b, dtype=sp.dtype, name="b")
        if sp.get_shape().ndims not in (None, 2):
            raise ValueError(f"sparse_tensor_dense_matmul needs matrices: sp_a of rank "
                             f"{sp.get_shape().ndims}, b of shape {b.shape}")
        out = make_tensor("SparseTensorDenseMatMul",
                          (sp.indices, sp.values, sp.dense_shape, b),
                          {"adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b)},
                          name=scope.rstrip("/"))
        a_shape = sp.get_shape()
        if a_shape.ndims == 2:  # a sparse_placeholder's declared shape
            rows = a_shape.dims[1] if adjoint_a else a_shape.dims[0]
            out.set_shape(TensorShape([rows, None]))
        return out


def _axes(sp, axis, keepdims, reduction_axes, keep_dims, what):
    if axis is None:
        axis = reduction_axes
    keep = bool(keepdims if keepdims is not None else (keep_dims or False))
    if axis is None:
        return None, keep, None
    rank = static_rank(sp, what)
    axes = [int(axis)] if np.ndim(axis) == 0 else [int(a) for a in np.reshape(axis, -1)]
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"{what}: axis {a} is out of range for a SparseTensor of rank {rank}")
    return sorted({a % rank for a in axes}), keep, rank


def _groups(sp, axes, rank):
    """(group of each entry [N] int64, the kept dimensions' shape vector, kept axes)."""
    kept = [d for d in range(rank) if d not in axes]
    kept_shape = array_ops.gather(math_ops.cast(sp.dense_shape, _INT64), kept)
    kept_indices = array_ops.gather(sp.indices, kept, axis=1)
    return linear_index(kept_indices, kept_shape), kept_shape, kept


def _shaped(flat, sp, axes, rank, keep, kept):
    """A flat [prod(kept dims)] result reshaped to the reduced shape."""
    shape = math_ops.cast(sp.dense_shape, _INT64)
    if keep:
        target = math_ops.where(np.isin(np.arange(rank), axes), np.ones(rank, np.int64), shape)
    else:
        target = array_ops.gather(shape, kept)
    out = shape_ops.reshape(flat, target)
    static = sp.get_shape()
    if static.ndims is not None:
        out.set_shape(TensorShape([1 if d in axes else static.dims[d]
                                   for d in range(rank) if keep or d not in axes]))
    return out


def _reduce(sp_input, axis, keepdims, reduction_axes, keep_dims, segment, whole, what):
    sp = as_sparse(sp_input)
    axes, keep, rank = _axes(sp, axis, keepdims, reduction_axes, keep_dims, what)
    if axes is None:
        out = whole(sp.values)
        if keep:
            out = shape_ops.reshape(out, [1] * static_rank(sp, what))
        return out
    groups, kept_shape, kept = _groups(sp, axes, rank)
    flat = segment(sp.values, groups, math_ops.reduce_prod(kept_shape))
    return _shaped(flat, sp, axes, rank, keep, kept)


def _present_max(values, groups, n):
    """Max of each group's present values; 0 for a group without any (TF1's SparseReduceMax)."""
    top = unsorted_segment_max(values, groups, n)
    counts = array_ops.unsorted_segment_sum(shape_ops.ones_like(groups), groups, n)
    return math_ops.where(math_ops.greater(counts, 0), top, shape_ops.zeros_like(top))


def _max_of_present(values):
    groups = shape_ops.zeros_like(values, dtype=_INT64)
    return shape_ops.reshape(_present_max(values, groups, np.int64(1)), [])


def sparse_reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """`tf.sparse_reduce_sum`: the sum of `sp_input`'s values over `axis` (all of them when None),
    a dense tensor; `keepdims` keeps reduced dimensions with size 1."""
    with name_scope(None, "SparseReduceSum"):
        return _reduce(sp_input, axis, keepdims, reduction_axes, keep_dims,
                       array_ops.unsorted_segment_sum, math_ops.reduce_sum, "sparse_reduce_sum")


def sparse_reduce_max(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """`tf.sparse_reduce_max`: the largest present value over `axis` (implicit zeros are not
    compared), 0 where no value is present; a dense tensor."""
    with name_scope(None, "SparseReduceMax"):
        return _reduce(sp_input, axis, keepdims, reduction_axes, keep_dims, _present_max,
                       _max_of_present, "sparse_reduce_max")


def _reduce_sparse(sp_input, axis, keepdims, reduction_axes, keep_dims, segment, what):
    sp = as_sparse(sp_input)
    axes, keep, rank = _axes(sp, axis, keepdims, reduction_axes, keep_dims, what)
    if axes is None:
        axes = list(range(static_rank(sp, what)))
        rank = len(axes)
    groups, kept_shape, kept = _groups(sp, axes, rank)
    present, slot = unique(groups, out_idx=_INT64)
    reduced = segment(sp.values, slot, shape_ops.size(present, out_type=_INT64))
    order = argsort(present)
    positions = array_ops.gather(present, order)
    values = array_ops.gather(reduced, order)
    shape = math_ops.cast(sp.dense_shape, _INT64)
    if keep:
        out_shape = math_ops.where(np.isin(np.arange(rank), axes), np.ones(rank, np.int64), shape)
    else:
        out_shape = kept_shape
    indices = unravel(positions, out_shape)
    return SparseTensor(indices, values, out_shape)


def sparse_reduce_sum_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None,
                             keep_dims=None):
    """`tf.sparse_reduce_sum_sparse`: `sparse_reduce_sum` as a SparseTensor holding one entry per
    group that has a present value, in row-major order."""
    with name_scope(None, "SparseReduceSumSparse"):
        return _reduce_sparse(sp_input, axis, keepdims, reduction_axes, keep_dims,
                              array_ops.unsorted_segment_sum, "sparse_reduce_sum_sparse")


def sparse_reduce_max_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None,
                             keep_dims=None):
    """`tf.sparse_reduce_max_sparse`: `sparse_reduce_max` as a SparseTensor (one entry per group
    that has a present value)."""
    with name_scope(None, "SparseReduceMaxSparse"):
        return _reduce_sparse(sp_input, axis, keepdims, reduction_axes, keep_dims,
                              unsorted_segment_max, "sparse_reduce_max_sparse")


def _union(a, b):
    """(union positions [M] sorted, slot of each of a's entries, of b's entries, M) for two
    SparseTensors of one dense shape."""
    if not a.get_shape().is_compatible_with(b.get_shape()):
        raise ValueError(f"Shapes {a.get_shape()} and {b.get_shape()} are incompatible")
    lin = shape_ops.concat([linear_index(a.indices, a.dense_shape),
                            linear_index(b.indices, a.dense_shape)], 0)
    present, slot = unique(lin, out_idx=_INT64)
    n_a = shape_ops.size(a.values, out_type=_INT64)
    return present, slot[:n_a], slot[n_a:], shape_ops.size(present, out_type=_INT64)


def _sparse_sparse_add(a, b, threshold):
    present, slot_a, slot_b, m = _union(a, b)
    values = shape_ops.concat([a.values, b.values], 0)
    slots = shape_ops.concat([slot_a, slot_b], 0)
    sums = array_ops.unsorted_segment_sum(values, slots, m)
    counts = array_ops.unsorted_segment_sum(shape_ops.ones_like(slots), slots, m)
    # TF1 drops a sum of two coinciding entries whose magnitude is below the threshold; an entry
    # of one operand alone is kept whatever its value
    thresh = convert_to_tensor(threshold, dtype=sums.dtype.real_dtype)
    keep = math_ops.logical_or(math_ops.less(counts, 2),
                               math_ops.greater_equal(math_ops.abs(sums), thresh))
    kept = array_ops.reshape(math_ops.where(keep), [-1])
    kept_positions = array_ops.gather(present, kept)
    order = array_ops.gather(kept, argsort(kept_positions))
    first = unsorted_segment_min(array_ops.range(shape_ops.size(slots, out_type=_INT64)),
                                 slots, m)
    indices = shape_ops.concat([math_ops.cast(a.indices, _INT64),
                                math_ops.cast(b.indices, _INT64)], 0)
    out = SparseTensor(array_ops.gather(indices, array_ops.gather(first, order)),
                       array_ops.gather(sums, order), a.dense_shape)
    out.set_shape(a.get_shape())
    return out


def sparse_add(a, b, threshold=None, thresh=None):
    """`tf.sparse_add`: a SparseTensor plus a SparseTensor (a SparseTensor in row-major order;
    sums of coinciding entries with magnitude below `threshold` are dropped), or a SparseTensor
    plus a dense tensor (a dense tensor). Two dense operands are a TypeError, as in TF1."""
    if threshold is None:
        threshold = 0 if thresh is None else thresh
    elif thresh is not None:
        raise ValueError("sparse_add: give threshold or thresh (its old name), not both")
    if not is_sparse(a) and not is_sparse(b):
        raise TypeError("sparse_add: at least one of a and b must be a SparseTensor")
    if is_sparse(a) and is_sparse(b):
        a, b = as_sparse(a, "a"), as_sparse(b, "b")
        with name_scope(None, "SparseAdd", [a.values, b.values]):
            b_values = convert_to_tensor(b.values, dtype=a.dtype)
            b = SparseTensor(b.indices, b_values, b.dense_shape)
            return _sparse_sparse_add(a, b, threshold)
    sp, dense = (as_sparse(a, "a"), b) if is_sparse(a) else (as_sparse(b, "b"), a)
    with name_scope(None, "SparseTensorDenseAdd", [sp.values, dense]):
        dense = convert_to_tensor(dense, dtype=sp.dtype)
        scattered = index_ops.scatter_nd(math_ops.cast(sp.indices, _INT64), sp.values,
                                         shape_ops.shape(dense, out_type=_INT64))
        return dense + scattered


def _elementwise(sp_a, sp_b, combine, name, default):
    a, b = as_sparse(sp_a, "sp_a"), as_sparse(sp_b, "sp_b")
    with name_scope(name, default, [a.values, b.values]):
        present, slot_a, slot_b, m = _union(a, b)
        a_full = array_ops.unsorted_segment_sum(a.values, slot_a, m)  # absent entries are 0
        b_full = array_ops.unsorted_segment_sum(convert_to_tensor(b.values, dtype=a.dtype),
                                                slot_b, m)
        order = argsort(present)
        out = SparseTensor(unravel(array_ops.gather(present, order), a.dense_shape),
                           array_ops.gather(combine(a_full, b_full), order), a.dense_shape)
        out.set_shape(a.get_shape())
        return out


def sparse_maximum(sp_a, sp_b, name=None):
    """`tf.sparse_maximum`: the element-wise maximum of two SparseTensors of one dense shape, over
    the union of their entries (an absent entry counts as 0), in row-major order."""
    return _elementwise(sp_a, sp_b, math_ops.maximum, name, "SparseSparseMaximum")


def sparse_minimum(sp_a, sp_b, name=None):
    """`tf.sparse_minimum`: the element-wise minimum of two SparseTensors (absent entries are 0)."""
    return _elementwise(sp_a, sp_b, math_ops.minimum, name, "SparseSparseMinimum")


def sparse_softmax(sp_input, name=None):
    """`tf.sparse_softmax`: softmax over the present entries of each innermost row (the entries
    sharing all but the last index); absent entries take no part and stay absent."""
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseSoftmax", [sp.indices, sp.values]):
        rank = static_rank(sp, "sparse_softmax")
        if rank < 2:
            raise ValueError(f"sparse_softmax needs a SparseTensor of rank >= 2, got rank {rank}")
        outer = array_ops.gather(sp.indices, list(range(rank - 1)), axis=1)
        rows = linear_index(outer, array_ops.gather(math_ops.cast(sp.dense_shape, _INT64),
                                                    list(range(rank - 1))))
        present, slot = unique(rows, out_idx=_INT64)
        m = shape_ops.size(present, out_type=_INT64)
        top = stop_gradient(unsorted_segment_max(sp.values, slot, m))
        e = math_ops.exp(sp.values - array_ops.gather(top, slot))
        total = array_ops.unsorted_segment_sum(e, slot, m)
        out = SparseTensor(sp.indices, e / array_ops.gather(total, slot), sp.dense_shape)
        out.set_shape(sp.get_shape())
        return out


__all__ = ["sparse_tensor_dense_matmul", "sparse_reduce_sum", "sparse_reduce_sum_sparse",
           "sparse_reduce_max", "sparse_reduce_max_sparse", "sparse_add", "sparse_maximum",
           "sparse_minimum", "sparse_softmax"]
