"""Index-based selection ops: top_k / in_top_k, gather_nd / scatter_nd, and the compositions TF1
builds from them: boolean_mask (Where + Gather) and sequence_mask (Range + Less).

TopKV2(input, k) -> (values, indices int32): the k largest entries of each last-axis row, largest
first; equal values keep their index order (lower index first), as TF's kernel does.
InTopKV2(predictions, targets, k) -> bool: whether targets[i] is among the k largest of
predictions[i]; classes tied at the boundary all count as in, a non-finite prediction never does.
GatherNd(params, indices): out[i...] = params[indices[i..., :]]; shape
indices.shape[:-1] + params.shape[indices.shape[-1]:].
ScatterNd(indices, updates, shape): zeros(shape) with `updates` added at `indices` (repeated
indices accumulate). GatherNd and ScatterNd are each other's gradient.
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import array_ops, math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import NUMERIC, define, make_op, make_tensor, require_dtype
from graphflow.ops.shape_ops import INT_INDEX, _dims_from_vector, shape_tensor
from graphflow.ops.static_value import scalar_value


# ---------------------------------------------------------------- top_k, in_top_k
def _scalar_k(k):
    require_dtype(k, (dtypes.int32,), "k")
    if k.shape.ndims not in (None, 0):
        raise ValueError(f"k must be a scalar, got shape {k.shape}")
    value = scalar_value(k)
    if value is not None and value < 0:
        raise ValueError(f"k must be non-negative, got {value}")
    return value


def _top_k_infer(inputs, attrs):
    x, k = inputs
    require_dtype(x, NUMERIC, "input")
    kv = _scalar_k(k)
    if x.shape.ndims is None:
        return [(x.dtype, TensorShape(None)), (dtypes.int32, TensorShape(None))]
    if x.shape.ndims == 0:
        raise ValueError("input must have rank >= 1, got a scalar")
    n = x.shape[-1]
    if kv is not None and n is not None and kv > n:
        raise ValueError(f"input must have at least k={kv} columns, got shape {x.shape}")
    shape = TensorShape(list(x.shape.dims[:-1]) + [kv])
    return [(x.dtype, shape), (dtypes.int32, shape)]


define("TopKV2", _top_k_infer, attrs="sorted:bool", onnx={"converter": "top_k"})


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002 - TF1 names
    """`tf.nn.top_k` / `tf.math.top_k`: (values, indices) of the k largest entries along the last
    axis, largest first (ties: lower index first; NaN ranks above every number). With
    sorted=False TF leaves the order unspecified; graphflow returns them sorted all the same."""
    x = convert_to_tensor(input)
    k = convert_to_tensor(k, dtype=dtypes.int32)
    op = make_op("TopKV2", (x, k), {"sorted": sorted}, name=name or "TopKV2")
    return op.outputs[0], op.outputs[1]


def _in_top_k_infer(inputs, attrs):
    predictions, targets, k = inputs
    require_dtype(predictions, (dtypes.float16, dtypes.float32, dtypes.float64), "predictions")
    require_dtype(targets, INT_INDEX, "targets")
    if k.dtype != targets.dtype:
        raise TypeError(f"k must have the dtype of targets ({targets.dtype.name}), got "
                        f"{k.dtype.name}")
    if k.shape.ndims not in (None, 0):
        raise ValueError(f"k must be a scalar, got shape {k.shape}")
    if predictions.shape.ndims not in (None, 2):
        raise ValueError(f"predictions must be 2-D, got shape {predictions.shape}")
    if targets.shape.ndims not in (None, 1):
        raise ValueError(f"targets must be 1-D, got shape {targets.shape}")
    batch = TensorShape([None])
    if predictions.shape.ndims is not None:
        batch = TensorShape([predictions.shape[0]])
    try:
        batch = batch.merge_with(targets.shape if targets.shape.ndims is not None else batch)
    except ValueError:
        raise ValueError(f"targets of shape {targets.shape} must have one entry per row of "
                         f"predictions {predictions.shape}") from None
    return [(dtypes.bool_, batch)]


define("InTopKV2", _in_top_k_infer, onnx={"converter": "in_top_k"})


def in_top_k(predictions, targets, k, name=None):
    """`tf.nn.in_top_k`: for each row, whether predictions[i, targets[i]] is among the k largest
    (ties at the boundary count as in; non-finite predictions never do)."""
    predictions = convert_to_tensor(predictions)
    targets = convert_to_tensor(targets)
    k = convert_to_tensor(k, dtype=targets.dtype)
    return make_tensor("InTopKV2", (predictions, targets, k), name=name or "InTopKV2")


# ---------------------------------------------------------------- gather_nd, scatter_nd
def _index_depth(indices, what="indices"):
    if indices.dtype not in INT_INDEX:
        raise TypeError(f"{what} must be int32 or int64, got {indices.name} of dtype "
                        f"{indices.dtype.name}")
    if indices.shape.ndims == 0:
        raise ValueError(f"{what} must have rank >= 1, got a scalar")
    if indices.shape.ndims is None:
        return None
    return indices.shape[-1]


def _nd_shape(indices, depth, inner):
    """indices.shape[:-1] + inner.shape[depth:] (None when unknown)."""
    if indices.shape.ndims is None or depth is None or inner.ndims is None:
        return TensorShape(None)
    if depth > inner.ndims:
        raise ValueError(f"the index depth {depth} (last dimension of indices) exceeds the rank "
                         f"{inner.ndims} of {inner}")
    return TensorShape(list(indices.shape.dims[:-1]) + list(inner.dims[depth:]))


def _gather_nd_infer(inputs, attrs):
    params, indices = inputs
    depth = _index_depth(indices)
    return [(params.dtype, _nd_shape(indices, depth, params.shape))]


define("GatherNd", _gather_nd_infer, onnx={"converter": "gather_nd"})


def gather_nd(params, indices, name=None, batch_dims=0):
    """`tf.gather_nd`: slices of `params` addressed by the last axis of `indices`."""
    if batch_dims != 0:
        raise NotImplementedError("gather_nd: batch_dims other than 0 is not supported")
    params = convert_to_tensor(params)
    indices = convert_to_tensor(indices)
    return make_tensor("GatherNd", (params, indices), name=name or "GatherNd")


def _scatter_nd_infer(inputs, attrs):
    indices, updates, shape = inputs
    depth = _index_depth(indices)
    out = _dims_from_vector(shape, "shape")
    expected = _nd_shape(indices, depth, out)
    if not expected.is_compatible_with(updates.shape):
        raise ValueError(f"updates of shape {updates.shape} must have shape {expected} "
                         f"(indices.shape[:-1] + shape[{depth}:])")
    return [(updates.dtype, out)]


define("ScatterNd", _scatter_nd_infer, onnx={"converter": "scatter_nd"})


def scatter_nd(indices, updates, shape, name=None):
    """`tf.scatter_nd`: a zeros tensor of `shape` with `updates` added at `indices` (repeated
    indices add up)."""
    indices = convert_to_tensor(indices)
    updates = convert_to_tensor(updates)
    shape = shape_tensor(shape)
    if shape.dtype != indices.dtype:
        shape = math_ops.cast(shape, indices.dtype)
    return make_tensor("ScatterNd", (indices, updates, shape), name=name or "ScatterNd")


# ---------------------------------------------------------------- compositions
def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """`tf.boolean_mask`: the entries (slices) of `tensor` where the K-D bool `mask` is true, over
    dimensions axis .. axis + K - 1 (axis 0 by default); the result has one dimension for the
    masked ones, of a length known only at run time."""
    with name_scope(name, "boolean_mask", [tensor, mask]):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, dtype=dtypes.bool_, name="mask")
        k = mask.shape.ndims
        if k is None:
            raise ValueError("boolean_mask: the rank of mask must be known")
        if k == 0:
            raise ValueError("boolean_mask: mask cannot be a scalar")
        axis = 0 if axis is None else int(axis)
        rank = tensor.shape.ndims
        if rank is not None:
            axis %= rank
            if axis + k > rank:
                raise ValueError(f"boolean_mask: mask of rank {k} does not fit tensor of shape "
                                 f"{tensor.shape} at axis {axis}")
            if not tensor.shape[axis:axis + k].is_compatible_with(mask.shape):
                raise ValueError(f"boolean_mask: mask of shape {mask.shape} does not match the "
                                 f"dimensions {axis}..{axis + k - 1} of tensor {tensor.shape}")
        dims = shape_ops.shape(tensor)
        flat = shape_ops.concat([dims[:axis], [-1], dims[axis + k:]], axis=0)
        reshaped = shape_ops.reshape(tensor, flat)
        if rank is not None:
            static = tensor.shape.dims
            lead, rest = list(static[:axis]), list(static[axis + k:])
            if all(d is not None for d in lead + rest) and (lead or rest):
                reshaped = shape_ops.reshape(tensor, lead + [-1] + rest)
        picked = shape_ops.squeeze(math_ops.where(shape_ops.reshape(mask, [-1])), axis=[1])
        return array_ops.gather(reshaped, picked, axis=axis)


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool_, name=None):
    """`tf.sequence_mask`: mask[i..., j] = j < lengths[i...], with `maxlen` columns
    (default max(lengths))."""
    with name_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = convert_to_tensor(lengths)
        if maxlen is None:
            maxlen = math_ops.reduce_max(lengths)
        maxlen = convert_to_tensor(maxlen, dtype=lengths.dtype)
        if maxlen.shape.ndims not in (None, 0):
            raise ValueError(f"maxlen must be a scalar, got shape {maxlen.shape}")
        columns = array_ops.range(0, maxlen, 1, dtype=lengths.dtype)
        result = math_ops.less(columns, shape_ops.expand_dims(lengths, -1))
        dtype = dtypes.as_dtype(dtype)
        return result if dtype == dtypes.bool_ else math_ops.cast(result, dtype)


__all__ = ["gather_nd", "scatter_nd", "boolean_mask", "sequence_mask"]
