"""`tf.nn.embedding_lookup_sparse` and `tf.nn.safe_embedding_lookup_sparse`: one combined
embedding per row of a SparseTensor of ids (and optional weights), composed as TF1 composes them:
the unique ids' rows from `embedding_lookup`, then segment sums over the rows' ids ('sum', 'mean'
or 'sqrtn'). The safe variant flattens ids of any rank to rows, drops invalid ids (< 0) and, for
'mean' and 'sqrtn', non-positive weights, and gives empty rows the `default_id`'s embedding or
zeros. Gradients reach the embedding parameters through the gathers, as in TF1."""

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import array_ops, core_ops, math_ops, shape_ops, slice_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.segment_ops import segment_sum
from graphflow.ops.sort_ops import unique
from graphflow.ops.sparse_index import sparse_retain
from graphflow.ops.sparse_reshape import sparse_fill_empty_rows, sparse_reshape
from graphflow.ops.sparse_segment import sparse_segment_mean, sparse_segment_sqrt_n, sparse_segment_sum
from graphflow.ops.sparse_tensor import SparseTensor, SparseTensorValue
from graphflow.ops.static_value import constant_value
from graphflow.tf1.embedding_ops import embedding_lookup

_COMBINERS = ("mean", "sqrtn", "sum")


def _param_list(params, what):
    if params is None:
        raise ValueError(f"Missing {what}: None")
    if isinstance(params, tuple):
        params = list(params)
    elif not isinstance(params, list):
        params = [params]
    if not params:
        raise ValueError(f"Missing {what}: an empty list")
    return params


def _sparse(value, what):
    if isinstance(value, (SparseTensor, SparseTensorValue)):
        return SparseTensor.from_value(value)
    raise TypeError(f"{what} must be a SparseTensor, got {type(value).__name__}")


def _check_same_layout(sp_ids, sp_weights):
    for part in ("values", "indices", "dense_shape"):
        a, b = getattr(sp_ids, part).shape, getattr(sp_weights, part).shape
        if not a.is_compatible_with(b):
            raise ValueError(f"sp_ids.{part} has shape {a} but sp_weights.{part} has shape {b}")


def _broadcast_weights(weights, embeddings):
    """weights [N] reshaped to [N, 1, ...] to scale embeddings [N, d...]."""
    ones = shape_ops.fill(array_ops.expand_dims(shape_ops.rank(embeddings) - 1, 0), 1)
    shaped = shape_ops.reshape(weights, shape_ops.concat([shape_ops.shape(weights), ones], 0))
    if embeddings.shape.ndims is not None:
        shaped.set_shape(weights.shape.concatenate([1] * (embeddings.shape.ndims - 1)))
    return shaped


def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None,
                            combiner=None, max_norm=None):
    """Row i of the result combines the embeddings of row i's ids in `sp_ids` (a [batch, ...]
    SparseTensor of int ids, its rows in order), weighted by `sp_weights`' values (None: 1):
    'sum' their weighted sum, 'mean' divided by the weights' sum, 'sqrtn' by the square root of
    the squared weights' sum (combiner None is 'mean', TF1's default). The result has one row per
    row up to the last row holding an id."""
    if combiner is None:
        combiner = "mean"
    if combiner not in _COMBINERS:
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    params = _param_list(params, "params")
    sp_ids = _sparse(sp_ids, "sp_ids")
    if sp_weights is not None:
        sp_weights = _sparse(sp_weights, "sp_weights")
        _check_same_layout(sp_ids, sp_weights)
    with name_scope(name, "embedding_lookup_sparse", params + [sp_ids.values]) as scope:
        segment_ids = math_ops.cast(array_ops.gather(sp_ids.indices, 0, axis=1), dtypes.int32)
        ids, idx = unique(sp_ids.values)
        embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy,
                                      max_norm=max_norm)
        if embeddings.dtype == dtypes.float16:
            embeddings = math_ops.cast(embeddings, dtypes.float32)
        if sp_weights is None:
            combine = {"sum": sparse_segment_sum, "mean": sparse_segment_mean,
                       "sqrtn": sparse_segment_sqrt_n}[combiner]
            return combine(embeddings, idx, segment_ids, name=scope)
        weights = sp_weights.values
        if weights.dtype != embeddings.dtype:
            weights = math_ops.cast(weights, embeddings.dtype)
        rows = array_ops.gather(embeddings, idx)
        weights = _broadcast_weights(weights, rows)
        weighted = rows * weights
        if combiner == "sum":
            return segment_sum(weighted, segment_ids, name=scope)
        summed = segment_sum(weighted, segment_ids)
        if combiner == "mean":
            return _divide_no_nan(summed, segment_sum(weights, segment_ids), scope)
        norm = math_ops.sqrt(segment_sum(math_ops.pow(weights, 2), segment_ids))
        return _divide_no_nan(summed, norm, scope)


def _divide_no_nan(x, y, name):
    """x / y, 0 where y is 0 (a row between rows with ids has none, so its weights sum to 0)."""
    zero = math_ops.equal(y, 0)
    safe = math_ops.where(zero, shape_ops.ones_like(y), y)
    quotient = x / safe
    return math_ops.where(math_ops.logical_and(zero, shape_ops.ones_like(quotient, dtypes.bool_)),
                          shape_ops.zeros_like(quotient), quotient, name=name)


def _prune_invalid_ids(sparse_ids, sparse_weights):
    valid = math_ops.greater_equal(sparse_ids.values, 0)
    sparse_ids = sparse_retain(sparse_ids, valid)
    if sparse_weights is not None:
        sparse_weights = sparse_retain(sparse_weights, valid)
    return sparse_ids, sparse_weights


def _prune_invalid_weights(sparse_ids, sparse_weights):
    if sparse_weights is not None:
        valid = math_ops.greater(sparse_weights.values, 0)
        sparse_ids = sparse_retain(sparse_ids, valid)
        sparse_weights = sparse_retain(sparse_weights, valid)
    return sparse_ids, sparse_weights


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None,
                                 combiner="mean", default_id=None, name=None,
                                 partition_strategy="div", max_norm=None):
    """`embedding_lookup_sparse` for ids of shape [d0, ..., dn-1, max ids]: the result is
    [d0, ..., dn-1, embedding dims]. Ids < 0 are dropped, and for 'mean' and 'sqrtn' ids whose
    weight is <= 0; a row left without ids gets the embedding of `default_id`, or zeros when
    `default_id` is None."""
    if combiner not in _COMBINERS:
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    embedding_weights = _param_list(embedding_weights, "embedding_weights")
    sparse_ids = _sparse(sparse_ids, "sparse_ids")
    dtype = None
    if sparse_weights is not None:
        sparse_weights = _sparse(sparse_weights, "sparse_weights")
        dtype = sparse_weights.dtype
    embedding_weights = [convert_to_tensor(w, dtype=dtype) for w in embedding_weights]
    with name_scope(name, "embedding_lookup", embedding_weights + [sparse_ids.values]) as scope:
        original_shape = sparse_ids.dense_shape
        rank_dim = original_shape.shape.dims[0] if original_shape.shape.ndims == 1 else None
        rank = shape_ops.size(original_shape) if rank_dim is None else rank_dim
        sparse_ids = sparse_reshape(sparse_ids, core_ops.stack([
            math_ops.reduce_prod(slice_ops.slice(original_shape, [0], [rank - 1])),
            array_ops.gather(original_shape, rank - 1)]))
        if sparse_weights is not None:
            sparse_weights = SparseTensor(sparse_ids.indices, sparse_weights.values,
                                          sparse_ids.dense_shape)
        sparse_ids, sparse_weights = _prune_invalid_ids(sparse_ids, sparse_weights)
        if combiner != "sum":
            sparse_ids, sparse_weights = _prune_invalid_weights(sparse_ids, sparse_weights)
        sparse_ids, is_row_empty = sparse_fill_empty_rows(sparse_ids, default_id or 0)
        if sparse_weights is not None:
            sparse_weights, _ = sparse_fill_empty_rows(sparse_weights, 1.0)
        result = embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights,
                                         combiner=combiner, partition_strategy=partition_strategy,
                                         name=None if default_id is None else scope,
                                         max_norm=max_norm)
        if default_id is None:
            is_row_empty = array_ops.tile(shape_ops.reshape(is_row_empty, [-1, 1]),
                                          core_ops.stack([1, shape_ops.shape(result)[1]]))
            result = math_ops.where(is_row_empty, shape_ops.zeros_like(result), result)
        final = shape_ops.reshape(result, shape_ops.concat([
            slice_ops.slice(math_ops.cast(original_shape, dtypes.int32), [0], [rank - 1]),
            slice_ops.slice(shape_ops.shape(result), [1], [-1])], 0))
        known = constant_value(original_shape)
        if known is not None and result.shape.ndims is not None:
            final.set_shape(TensorShape([int(d) for d in known[:-1]]).concatenate(
                result.shape[1:]))
        elif rank_dim is not None:
            final.set_shape(TensorShape([None] * (rank_dim - 1)).concatenate(
                result.shape[1:] if result.shape.ndims is not None else TensorShape(None)))
        return final


__all__ = ["embedding_lookup_sparse", "safe_embedding_lookup_sparse"]
