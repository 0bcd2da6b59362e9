"""TF1's functions that change a SparseTensor's dense shape, built from ordinary ops:
`tf.sparse_reshape`, `tf.sparse_transpose`, `tf.sparse_concat` (with `expand_nonconcat_dim`),
`tf.sparse_slice`, `tf.sparse_split`, `tf.sparse_fill_empty_rows` and `tf.sparse_to_indicator`.
Entries keep their values (gathered, so a value's gradient returns to it); results are in
row-major order where TF1's are."""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import control_dependencies, name_scope
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import array_ops, math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor, identity
from graphflow.ops.logging_ops import Assert
from graphflow.ops.sort_ops import argsort
from graphflow.ops.sparse_index import (
    as_sparse,
    gather_entries,
    linear_index,
    sparse_reorder,
    static_rank,
    unravel,
)
from graphflow.ops.sparse_ops import sparse_to_dense
from graphflow.ops.sparse_tensor import SparseTensor
from graphflow.ops.static_value import constant_value

_INT64 = dtypes.int64


def _with_shape(sp, static):
    sp.set_shape(static)
    return sp


def sparse_reshape(sp_input, shape, name=None):
    """`tf.sparse_reshape`: the same entries in a dense shape of as many elements (one dimension
    may be -1, inferred), each at the row-major position it had; their order is unchanged."""
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseReshape", [sp.indices, sp.values]):
        new = math_ops.cast(convert_to_tensor(shape), _INT64)
        if new.shape.ndims != 1:
            raise ValueError(f"sparse_reshape: shape must be a vector, got shape {new.shape}")
        old = math_ops.cast(sp.dense_shape, _INT64)
        total = math_ops.reduce_prod(old)
        unknown = math_ops.equal(new, np.int64(-1))
        known = math_ops.reduce_prod(math_ops.where(unknown, shape_ops.ones_like(new), new))
        resolved = math_ops.where(unknown, shape_ops.fill(shape_ops.shape(new),
                                                          math_ops.floordiv(total, known)), new)
        static_new = constant_value(new)
        static_old = sp.get_shape()
        static = None
        if static_new is not None:
            dims = [int(d) for d in static_new]
            if dims.count(-1) > 1:
                raise ValueError(f"sparse_reshape: at most one dimension of shape may be -1, "
                                 f"got {dims}")
            if static_old.is_fully_defined():
                count = int(np.prod(static_old.as_list()))
                rest = int(np.prod([d for d in dims if d != -1]))
                if -1 in dims:
                    if rest == 0 or count % rest:
                        raise ValueError(f"sparse_reshape: cannot reshape a SparseTensor of "
                                         f"shape {static_old} into {dims}")
                    dims = [count // rest if d == -1 else d for d in dims]
                elif rest != count:
                    raise ValueError(f"sparse_reshape: cannot reshape a SparseTensor of shape "
                                     f"{static_old} ({count} elements) into {dims} ({rest})")
            static = TensorShape([None if d == -1 else d for d in dims])
        indices = unravel(linear_index(sp.indices, old), resolved)
        out = SparseTensor(indices, sp.values, resolved)
        return _with_shape(out, static) if static is not None else out


def sparse_transpose(sp_input, perm=None, name=None):
    """`tf.sparse_transpose`: dimensions permuted by `perm` (reversed when None), entries in
    row-major order of the result."""
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseTranspose", [sp.indices, sp.values]):
        rank = static_rank(sp, "sparse_transpose")
        perm = list(range(rank - 1, -1, -1)) if perm is None else \
            [int(p) for p in np.reshape(constant_value(convert_to_tensor(perm)), -1)]
        if sorted(perm) != list(range(rank)):
            raise ValueError(f"sparse_transpose: perm {perm} is not a permutation of "
                             f"{list(range(rank))}")
        moved = SparseTensor(array_ops.gather(sp.indices, perm, axis=1), sp.values,
                             array_ops.gather(sp.dense_shape, perm))
        static = sp.get_shape()
        if static.ndims is not None:
            moved.set_shape(TensorShape([static.dims[p] for p in perm]))
        return sparse_reorder(moved)


def sparse_concat(axis, sp_inputs, name=None, expand_nonconcat_dim=False, concat_dim=None,
                  expand_nonconcat_dims=None):
    """`tf.sparse_concat`: SparseTensors joined along `axis`, entries in row-major order. Their
    other dimensions must agree, unless `expand_nonconcat_dim`: then each is the largest."""
    if concat_dim is not None:
        axis = concat_dim
    if expand_nonconcat_dims is not None:
        expand_nonconcat_dim = expand_nonconcat_dims
    inputs = [as_sparse(s, "sp_inputs") for s in sp_inputs]
    if not inputs:
        raise ValueError("sparse_concat needs at least one SparseTensor")
    with name_scope(name, "SparseConcat", [s.values for s in inputs]):
        rank = static_rank(inputs[0], "sparse_concat")
        axis = int(axis)
        if not -rank <= axis < rank:
            raise ValueError(f"sparse_concat: axis {axis} is out of range for rank {rank}")
        axis %= rank
        statics = [s.get_shape() for s in inputs]
        if not expand_nonconcat_dim:
            for st in statics[1:]:
                for d in range(rank):
                    a, b = statics[0].dims[d] if statics[0].ndims else None, \
                        st.dims[d] if st.ndims else None
                    if d != axis and a is not None and b is not None and a != b:
                        raise ValueError(f"sparse_concat: dimension {d} differs between inputs "
                                         f"({statics[0]} and {st}); pass "
                                         f"expand_nonconcat_dim=True to take the largest")
        shapes = [math_ops.cast(s.dense_shape, _INT64) for s in inputs]
        unit = np.eye(rank, dtype=np.int64)[axis]
        offset = convert_to_tensor(np.int64(0))
        moved = []
        for s, shp in zip(inputs, shapes):
            moved.append(math_ops.cast(s.indices, _INT64) + offset * unit)
            offset = offset + shp[axis]
        if expand_nonconcat_dim:
            other = math_ops.reduce_max(shape_ops.stack(shapes), axis=0)
        else:
            other = shapes[0]
        out_shape = math_ops.where(unit.astype(bool), shape_ops.fill([rank], offset), other)
        values = shape_ops.concat([convert_to_tensor(s.values, dtype=inputs[0].dtype)
                                   for s in inputs], 0)
        joined = SparseTensor(shape_ops.concat(moved, 0), values, out_shape)
        static = _concat_static(statics, axis, rank, expand_nonconcat_dim)
        if static is not None:
            joined.set_shape(static)
        return sparse_reorder(joined)


def _concat_static(statics, axis, rank, expand):
    if any(st.ndims is None for st in statics):
        return None
    dims = []
    for d in range(rank):
        column = [st.dims[d] for st in statics]
        if d == axis:
            dims.append(None if None in column else sum(column))
        elif expand:
            dims.append(None if None in column else max(column))
        else:
            dims.append(next((c for c in column if c is not None), None))
    return TensorShape(dims)


def sparse_slice(sp_input, start, size, name=None):
    """`tf.sparse_slice`: the entries with start <= index < start + size, indices shifted by
    `start`; the dense shape is `min(start + size, dense_shape) - start` (at least 0)."""
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseSlice", [sp.indices, sp.values]):
        start = math_ops.cast(convert_to_tensor(start), _INT64)
        size = math_ops.cast(convert_to_tensor(size), _INT64)
        shape = math_ops.cast(sp.dense_shape, _INT64)
        indices = math_ops.cast(sp.indices, _INT64)
        end = math_ops.minimum(start + size, shape)
        inside = math_ops.logical_and(math_ops.greater_equal(indices, start),
                                      math_ops.less(indices, end))
        keep = math_ops.reduce_all(inside, axis=1)
        where = array_ops.reshape(math_ops.where(keep), [-1])
        kept = gather_entries(sp, where)
        out_shape = math_ops.maximum(end - start, np.int64(0))
        return SparseTensor(math_ops.cast(kept.indices, _INT64) - start, kept.values, out_shape)


class KeywordRequired:
    """The marker of TF1's `sparse_split`: its arguments must be passed by keyword."""

    def __repr__(self):
        return "KeywordRequired()"


_KEYWORD_REQUIRED = KeywordRequired()


def sparse_split(keyword_required=_KEYWORD_REQUIRED, sp_input=None, num_split=None, axis=None,
                 name=None, split_dim=None):
    """`tf.sparse_split`: `num_split` SparseTensors cut along `axis`; the first
    `dim % num_split` are one longer than the others."""
    if not isinstance(keyword_required, KeywordRequired):
        raise ValueError("sparse_split: keyword arguments are required (sp_input=, num_split=, "
                         "axis=)")
    if split_dim is not None:
        axis = split_dim
    if sp_input is None or num_split is None or axis is None:
        raise ValueError("sparse_split needs sp_input, num_split and axis")
    sp = as_sparse(sp_input)
    num_split = int(num_split)
    if num_split < 1:
        raise ValueError(f"sparse_split: num_split must be >= 1, got {num_split}")
    with name_scope(name, "SparseSplit", [sp.indices, sp.values]):
        rank = static_rank(sp, "sparse_split")
        axis = int(axis) % rank
        shape = math_ops.cast(sp.dense_shape, _INT64)
        dim = shape[axis]
        base = math_ops.floordiv(dim, np.int64(num_split))
        extra = math_ops.floormod(dim, np.int64(num_split))
        unit = np.eye(rank, dtype=np.int64)[axis]
        parts, begin = [], convert_to_tensor(np.int64(0))
        static = sp.get_shape()
        for i in range(num_split):
            length = base + math_ops.cast(math_ops.less(np.int64(i), extra), _INT64)
            start = begin * unit
            size = math_ops.where(unit.astype(bool), shape_ops.fill([rank], length), shape)
            part = sparse_slice(sp, start, size)
            if static.ndims is not None and static.dims[axis] is not None:
                n = static.dims[axis]
                dims = list(static.dims)
                dims[axis] = n // num_split + (1 if i < n % num_split else 0)
                part.set_shape(TensorShape(dims))
            parts.append(part)
            begin = begin + length
        return parts


def sparse_fill_empty_rows(sp_input, default_value, name=None):
    """`tf.sparse_fill_empty_rows`: (the SparseTensor with one entry `default_value` at
    [row, 0, ...] of each row holding no entry, in row order; the bool [rows] vector saying
    which rows were empty). Entries of one row keep their order."""
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseFillEmptyRows", [sp.indices, sp.values]):
        rank = static_rank(sp, "sparse_fill_empty_rows")
        default = convert_to_tensor(default_value, dtype=sp.dtype)
        if default.shape.ndims not in (None, 0):
            raise ValueError(f"sparse_fill_empty_rows: default_value must be a scalar, got shape "
                             f"{default.shape}")
        indices = math_ops.cast(sp.indices, _INT64)
        rows = array_ops.gather(indices, 0, axis=1)
        n_rows = math_ops.cast(sp.dense_shape, _INT64)[0]
        counts = array_ops.unsorted_segment_sum(shape_ops.ones_like(rows), rows, n_rows)
        empty = math_ops.equal(counts, 0)
        empty_rows = array_ops.reshape(math_ops.where(empty), [-1])
        n_empty = shape_ops.size(empty_rows, out_type=_INT64)
        new_indices = shape_ops.concat(
            [array_ops.expand_dims(empty_rows, 1),
             shape_ops.zeros(shape_ops.stack([n_empty, np.int64(rank - 1)]), _INT64)], 1)
        all_indices = shape_ops.concat([indices, new_indices], 0)
        all_values = shape_ops.concat([sp.values, shape_ops.fill(
            array_ops.expand_dims(n_empty, 0), default)], 0)
        order = argsort(array_ops.gather(all_indices, 0, axis=1))  # stable: rows keep their order
        out = SparseTensor(array_ops.gather(all_indices, order),
                           array_ops.gather(all_values, order), sp.dense_shape)
        out.set_shape(sp.get_shape())
        return out, empty


def sparse_to_indicator(sp_input, vocab_size, name=None):
    """`tf.sparse_to_indicator`: a dense bool tensor of `sp_input`'s shape with the last
    dimension replaced by `vocab_size`: out[i..., v] is True where row i... holds the id v."""
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseToIndicator", [sp.indices, sp.values]):
        rank = static_rank(sp, "sparse_to_indicator")
        ids = math_ops.cast(sp.values, _INT64)
        indices = shape_ops.concat([array_ops.gather(math_ops.cast(sp.indices, _INT64),
                                                     list(range(rank - 1)), axis=1),
                                    array_ops.expand_dims(ids, 1)], 1)
        shape = shape_ops.concat([math_ops.cast(sp.dense_shape, _INT64)[:-1],
                                  array_ops.expand_dims(math_ops.cast(
                                      convert_to_tensor(vocab_size), _INT64), 0)], 0)
        marks = shape_ops.fill(shape_ops.shape(ids), True)
        return sparse_to_dense(indices, shape, marks, False, validate_indices=False)


def sparse_expand_dims(sp_input, axis=None, name=None):
    """`tf.sparse.expand_dims`: a dimension of size 1 inserted at `axis` (-1, the end, when None;
    negative counts from the end of the result)."""
    sp = as_sparse(sp_input)
    with name_scope(name, "expand_dims", [sp.indices, sp.values]):
        rank = static_rank(sp, "sparse.expand_dims")
        axis = -1 if axis is None else int(axis)
        if not -rank - 1 <= axis <= rank:
            raise ValueError(f"sparse.expand_dims: axis {axis} is out of range for rank {rank}")
        axis %= rank + 1
        indices = math_ops.cast(sp.indices, _INT64)
        zeros = shape_ops.zeros_like(array_ops.gather(indices, [0], axis=1)) if rank else \
            shape_ops.zeros(shape_ops.stack([shape_ops.shape(indices, out_type=_INT64)[0],
                                             np.int64(1)]), _INT64)
        shape = math_ops.cast(sp.dense_shape, _INT64)
        out = SparseTensor(
            shape_ops.concat([indices[:, :axis], zeros, indices[:, axis:]], 1), sp.values,
            shape_ops.concat([shape[:axis], np.array([1], np.int64), shape[axis:]], 0))
        static = sp.get_shape()
        if static.ndims is not None:
            dims = list(static.dims)
            out.set_shape(TensorShape(dims[:axis] + [1] + dims[axis:]))
        return out


def sparse_eye(num_rows, num_columns=None, dtype=dtypes.float32, name=None):
    """`tf.sparse.eye`: the [num_rows, num_columns] identity matrix as a SparseTensor."""
    with name_scope(name, "eye", [num_rows, num_columns]):
        rows = math_ops.cast(convert_to_tensor(num_rows), _INT64)
        cols = rows if num_columns is None else math_ops.cast(convert_to_tensor(num_columns),
                                                               _INT64)
        diagonal = array_ops.range(math_ops.minimum(rows, cols))
        out = SparseTensor(shape_ops.stack([diagonal, diagonal], axis=1),
                           shape_ops.ones_like(diagonal, dtype=dtypes.as_dtype(dtype)),
                           shape_ops.stack([rows, cols]))
        known = [constant_value(rows), constant_value(cols)]
        out.set_shape(TensorShape([None if k is None else int(k) for k in known]))
        return out


def sparse_reset_shape(sp_input, new_shape=None):
    """`tf.sparse.reset_shape`: the same entries with dense shape `new_shape`, which must have
    the same rank and no smaller dimension (checked when it runs), or, when None, the smallest
    shape holding the indices (the largest index + 1 in each dimension)."""
    sp = as_sparse(sp_input)
    with name_scope(None, "SparseResetShape", [sp.indices, sp.values]):
        indices = math_ops.cast(sp.indices, _INT64)
        if new_shape is None:
            return SparseTensor(indices, sp.values, math_ops.reduce_max(indices, axis=0) + 1)
        shape = math_ops.cast(convert_to_tensor(new_shape), _INT64)
        if shape.shape.ndims != 1:
            raise ValueError(f"sparse.reset_shape: new_shape must be a vector, got shape "
                             f"{shape.shape}")
        old_static, new_static = sp.get_shape(), constant_value(shape)
        if new_static is not None and old_static.ndims is not None:
            if len(new_static) != old_static.ndims:
                raise ValueError(f"sparse.reset_shape: new_shape {[int(d) for d in new_static]} has rank "
                                 f"{len(new_static)}, the SparseTensor rank {old_static.ndims}")
            for d, (n, o) in enumerate(zip(new_static, old_static.dims)):
                if o is not None and n < o:
                    raise ValueError(f"sparse.reset_shape: new_shape {[int(d) for d in new_static]} is "
                                     f"smaller than the dense shape {old_static} in dimension "
                                     f"{d}")
        big_enough = math_ops.reduce_all(math_ops.greater_equal(
            shape, math_ops.cast(sp.dense_shape, _INT64)))
        check = Assert(big_enough, ["sparse.reset_shape: new_shape is smaller than the dense "
                                    "shape", shape, sp.dense_shape])
        with control_dependencies([check]):
            shape = identity(shape)
        out = SparseTensor(indices, sp.values, shape)
        if new_static is not None:
            out.set_shape(TensorShape([int(d) for d in new_static]))
        return out


__all__ = ["sparse_reshape", "sparse_transpose", "sparse_concat", "sparse_slice", "sparse_split",
           "sparse_fill_empty_rows", "sparse_to_indicator", "sparse_expand_dims", "sparse_eye",
           "sparse_reset_shape"]
