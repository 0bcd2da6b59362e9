"""TF1's sparse functions that move or select a SparseTensor's entries, built from ordinary ops
(gathers, sorts, masks): `tf.sparse_reorder`, `tf.sparse_retain`, `tf.sparse.from_dense`,
`tf.sparse_placeholder`, `tf.sparse_merge`, and the row-major index arithmetic the other sparse modules share
(`linear_index`, `unravel`). They add no op types: their gradients are those of the gathers and
masks they build, which route each value's gradient to the entry it came from, as TF1's rules do."""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.framework.tensor_shape import TensorShape, as_shape
from graphflow.ops import array_ops, core_ops, cumulative_ops, index_ops, math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.sort_ops import argsort
from graphflow.ops.sparse_tensor import SparseTensor, SparseTensorValue
from graphflow.ops.static_value import constant_value

_INT64 = dtypes.int64


def as_sparse(value, what="sp_input"):
    """A SparseTensor from a SparseTensor or a SparseTensorValue; anything else is a TypeError."""
    if isinstance(value, (SparseTensor, SparseTensorValue)):
        return SparseTensor.from_value(value)
    raise TypeError(f"{what} must be a SparseTensor, got {type(value).__name__}")


def static_rank(sp, what):
    """The rank of `sp` known when the graph is built (from dense_shape's or indices' shape)."""
    for tensor, axis in ((sp.dense_shape, 0), (sp.indices, 1)):
        shape = tensor.shape
        if shape.ndims is not None and shape.dims[axis] is not None:
            return int(shape.dims[axis])
    raise ValueError(f"{what} needs a SparseTensor of known rank (its dense_shape's length)")


def strides(dense_shape):
    """Row-major strides of a shape vector (int64): the product of the dimensions after each."""
    return cumulative_ops.cumprod(math_ops.cast(dense_shape, _INT64), exclusive=True, reverse=True)


def linear_index(indices, dense_shape):
    """The row-major position of each index row [N, rank] in a dense tensor of `dense_shape`."""
    return math_ops.reduce_sum(math_ops.cast(indices, _INT64) * strides(dense_shape), axis=1)


def unravel(positions, dense_shape):
    """Index rows [N, rank] of row-major `positions` [N] in a dense tensor of `dense_shape`."""
    shape = math_ops.cast(dense_shape, _INT64)
    column = array_ops.expand_dims(math_ops.cast(positions, _INT64), 1)
    step = array_ops.expand_dims(strides(shape), 0)
    return math_ops.floormod(math_ops.floordiv(column, step), array_ops.expand_dims(shape, 0))


def gather_entries(sp, positions, dense_shape=None):
    """The SparseTensor of `sp`'s entries at `positions` (in that order)."""
    return SparseTensor(array_ops.gather(sp.indices, positions),
                        array_ops.gather(sp.values, positions),
                        sp.dense_shape if dense_shape is None else dense_shape)


def sparse_reorder(sp_input, name=None):
    """`tf.sparse_reorder`: the same SparseTensor with its entries in row-major order (the
    canonical order most sparse functions expect). Equal indices keep their order."""
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseReorder", [sp.indices, sp.values]):
        order = argsort(linear_index(sp.indices, sp.dense_shape))
        # the values permuted by gather_nd, whose gradient is dense: TF's SparseReorder gives its
        # values a dense gradient (a gather's would be an IndexedSlices)
        out = SparseTensor(array_ops.gather(sp.indices, order),
                           index_ops.gather_nd(sp.values, array_ops.expand_dims(order, 1)),
                           sp.dense_shape)
        out.set_shape(sp.get_shape())
        return out


def sparse_retain(sp_input, to_retain):
    """`tf.sparse_retain`: the entries of `sp_input` whose `to_retain` (bool [N]) is True; the
    dense shape is unchanged."""
    sp = as_sparse(sp_input)
    keep = convert_to_tensor(to_retain, dtype=dtypes.bool_)
    if keep.shape.ndims not in (None, 1):
        raise ValueError(f"sparse_retain: to_retain must be a vector, got shape {keep.shape}")
    n = sp.values.shape.dims[0] if sp.values.shape.ndims == 1 else None
    if n is not None and keep.shape.dims[0] is not None and keep.shape.dims[0] != n:
        raise ValueError(f"sparse_retain: to_retain has length {keep.shape.dims[0]}, but "
                         f"sp_input has {n} values")
    where = array_ops.reshape(math_ops.where(keep), [-1])
    out = gather_entries(sp, where)
    out.set_shape(sp.get_shape())
    return out


def from_dense(tensor, name=None):
    """`tf.sparse.from_dense`: the SparseTensor of `tensor`'s non-zero (non-empty for strings)
    entries, in row-major order."""
    with name_scope(name, "dense_to_sparse", [tensor]):
        x = convert_to_tensor(tensor)
        zero = b"" if x.dtype == dtypes.string else np.zeros((), x.dtype.as_numpy_dtype)
        indices = math_ops.where(math_ops.not_equal(x, zero))
        out = SparseTensor(indices, index_ops.gather_nd(x, indices),
                           shape_ops.shape(x, out_type=_INT64))
        out.set_shape(x.shape)
        return out


def sparse_placeholder(dtype, shape=None, name=None):
    """`tf.sparse_placeholder`: a SparseTensor whose indices ([None, rank] int64), values ([None])
    and dense_shape are fed, with a `tf.SparseTensorValue` or an (indices, values, dense_shape)
    tuple for the SparseTensor itself. A given `shape` is dense_shape's default (None or -1
    dimensions are -1 there) and the SparseTensor's static shape."""
    def part(suffix):
        return None if name is None else f"{name}/{suffix}"
    if shape is None:
        rank = None
        dense_shape = core_ops.placeholder(_INT64, [None], name=part("shape"))
        static = TensorShape(None)
    else:
        static = as_shape(shape)
        if static.ndims is None:
            raise ValueError("sparse_placeholder: shape must have a known rank")
        rank = static.ndims
        default = np.array([-1 if d is None else d for d in static.dims], np.int64)
        dense_shape = core_ops.placeholder_with_default(
            convert_to_tensor(default, name=part("shape_default")), [rank], name=part("shape"))
    values = core_ops.placeholder(dtype, [None], name=part("values"))
    indices = core_ops.placeholder(_INT64, [None, rank], name=part("indices"))
    out = SparseTensor(indices, values, dense_shape)
    out.set_shape(static)
    return out


def sparse_merge(sp_ids, sp_values, vocab_size, name=None, already_sorted=False):
    """`tf.sparse_merge`: `sp_values`' values at new indices, each row's last index replaced by
    the id at the same place in `sp_ids` (or, for a list of id SparseTensors and a list of
    vocabulary sizes, by one index per list entry); the last dimension becomes `vocab_size`.
    Entries are put in row-major order unless `already_sorted`."""
    ids_list = list(sp_ids) if isinstance(sp_ids, (list, tuple)) else [sp_ids]
    sizes = list(vocab_size) if isinstance(vocab_size, (list, tuple)) else [vocab_size]
    if len(ids_list) != len(sizes):
        raise ValueError(f"sparse_merge: {len(ids_list)} SparseTensors of ids but "
                         f"{len(sizes)} vocabulary sizes")
    ids_list = [as_sparse(ids, "sp_ids") for ids in ids_list]
    values = as_sparse(sp_values, "sp_values")
    for ids in ids_list:
        if not ids.dtype.is_integer:
            raise TypeError(f"sparse_merge: sp_ids must hold integers, got {ids.dtype.name}")
    with name_scope(name, "SparseMerge", [values.values] + [ids.values for ids in ids_list]):
        columns = [values.indices[:, :-1]] + [
            array_ops.expand_dims(math_ops.cast(ids.values, _INT64), 1) for ids in ids_list]
        sizes = [math_ops.cast(convert_to_tensor(s), _INT64) for s in sizes]
        shape = shape_ops.concat([math_ops.cast(values.dense_shape, _INT64)[:-1]]
                                 + [shape_ops.reshape(s, [1]) for s in sizes], 0)
        merged = SparseTensor(shape_ops.concat(columns, 1), values.values, shape)
        known = [constant_value(s) for s in sizes]
        static = values.get_shape()
        if static.ndims is not None:
            merged.set_shape(TensorShape(
                list(static.dims[:-1]) + [None if k is None else int(k) for k in known]))
        return merged if already_sorted else sparse_reorder(merged)


__all__ = ["sparse_reorder", "sparse_retain", "from_dense", "sparse_placeholder", "sparse_merge"]
