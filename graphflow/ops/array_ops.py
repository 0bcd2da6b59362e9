"""Array ops: transpose, gather (and its dense scatter-add), one_hot, tile, pad, reverse, split —
plus the public face of the whole array family, re-exporting `shape_ops` (reshape, concat, fill...)
and `slice_ops` (slice, strided_slice, `Tensor.__getitem__`)."""

import builtins

from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_tensor
from graphflow.ops.shape_ops import (
    INT_INDEX,
    _dims_from_vector,
    broadcast_to,
    concat,
    expand_dims,
    fill,
    is_tensor_like,
    normalize_axis,
    ones,
    ones_like,
    range,
    rank,
    reshape,
    shape,
    shape_tensor,
    size,
    squeeze,
    stack,
    static_int,
    static_ints,
    unstack,
    zeros,
    zeros_like,
)
from graphflow.ops.static_value import scalar_value
from graphflow.tensor_shape import TensorShape


# ---------------------------------------------------------------- transpose
def _transpose_infer(inputs, attrs):
    (x,) = inputs
    perm = attrs["perm"]
    dims = x.shape.dims
    if perm is None:
        return [(x.dtype, TensorShape(None if dims is None else dims[::-1]))]
    if sorted(perm) != list(builtins.range(len(perm))):
        raise ValueError(f"perm {perm} is not a permutation of 0..{len(perm) - 1}")
    if dims is None:
        return [(x.dtype, TensorShape([None] * len(perm)))]
    if len(perm) != len(dims):
        raise ValueError(f"perm {perm} has {len(perm)} entries but the input has rank "
                         f"{len(dims)} (shape {x.shape})")
    return [(x.dtype, TensorShape([dims[p] for p in perm]))]


define("Transpose", _transpose_infer, may_alias_input=True, attr_names=("perm",))


def transpose(a, perm=None, name="transpose", conjugate=False):
    """`tf.transpose`: permute dimensions; `perm=None` reverses them."""
    x = convert_to_tensor(a)
    perm = None if perm is None else static_ints(perm, "perm")
    return make_tensor("Transpose", (x,), {"perm": perm}, name=name)


# ---------------------------------------------------------------- gather
def _gather_shape(params, indices, axis, batch_dims):
    pd, idims = params.shape.dims, indices.shape.dims
    if pd is None or idims is None:
        return TensorShape(None)
    axis = normalize_axis(axis, len(pd))
    if batch_dims < 0:
        batch_dims += len(idims)
    if not 0 <= batch_dims <= min(axis, len(idims)):
        raise ValueError(f"batch_dims must be in [0, min(axis, rank(indices))], got {batch_dims}")
    for i in builtins.range(batch_dims):
        a, b = pd[i], idims[i]
        if a is not None and b is not None and a != b:
            raise ValueError(f"params shape {params.shape} and indices shape {indices.shape} "
                             f"differ in batch dimension {i}")
    return TensorShape(list(pd[:axis]) + list(idims[batch_dims:]) + list(pd[axis + 1:]))


def _gather_infer(inputs, attrs):
    params, indices = inputs
    if indices.dtype not in INT_INDEX:
        raise TypeError(f"indices must be int32 or int64, got {indices.name} of dtype "
                        f"{indices.dtype.name}")
    if params.shape.ndims == 0:
        raise ValueError("params must be at least 1-D")
    out = _gather_shape(params, indices, attrs["axis"], attrs.get("batch_dims", 0))
    return [(params.dtype, out)]


define("GatherV2", _gather_infer, attr_names=("axis", "batch_dims"))


def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """`tf.gather`: slices of `params` along `axis` at `indices` (any rank). Out-of-range indices
    are a run-time error, as in TF."""
    p = convert_to_tensor(params)
    idx = convert_to_tensor(indices)
    axis = batch_dims if axis is None else static_int(axis, "axis")
    attrs = {"axis": axis, "batch_dims": static_int(batch_dims, "batch_dims")}
    return make_tensor("GatherV2", (p, idx), attrs, name=name or "GatherV2")


def _gather_grad_infer(inputs, attrs):
    grad, indices, params_shape = inputs
    return [(grad.dtype, _dims_from_vector(params_shape, "params_shape"))]


define("GatherGrad", _gather_grad_infer, attr_names=("axis", "batch_dims"))


def gather_grad(grad, indices, params_shape, axis=0, batch_dims=0, name=None):
    """The dense gradient of `gather`: a zeros tensor of `params_shape` with the slices of `grad`
    added (scatter-add) at `indices` along `axis`; repeated indices accumulate."""
    grad = convert_to_tensor(grad)
    indices = convert_to_tensor(indices)
    attrs = {"axis": int(axis), "batch_dims": int(batch_dims)}
    return make_tensor("GatherGrad", (grad, indices, shape_tensor(params_shape)), attrs,
                       name=name or "GatherGrad")


def _segment_sum_infer(inputs, attrs):
    data, ids, num = inputs
    if ids.dtype not in INT_INDEX:
        raise TypeError(f"segment_ids must be int32 or int64, got {ids.dtype.name}")
    if num.shape.ndims not in (None, 0):
        raise ValueError(f"num_segments must be a scalar, got shape {num.shape}")
    n = scalar_value(num)
    dd, di = data.shape.dims, ids.shape.dims
    if dd is None or di is None:
        return [(data.dtype, TensorShape(None))]
    if len(di) > len(dd):
        raise ValueError(f"segment_ids of shape {ids.shape} has higher rank than data "
                         f"{data.shape}")
    for a, b in zip(dd, di):
        if a is not None and b is not None and a != b:
            raise ValueError(f"segment_ids shape {ids.shape} must be a prefix of data shape "
                             f"{data.shape}")
    return [(data.dtype, TensorShape([n] + list(dd[len(di):])))]


define("UnsortedSegmentSum", _segment_sum_infer)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """`tf.unsorted_segment_sum`: out[i] = sum of data[j...] where segment_ids[j...] == i;
    negative ids are dropped."""
    data = convert_to_tensor(data)
    ids = convert_to_tensor(segment_ids)
    num = convert_to_tensor(num_segments, dtype=None if is_tensor_like(num_segments) else ids.dtype)
    return make_tensor("UnsortedSegmentSum", (data, ids, num), name=name or "UnsortedSegmentSum")


__all__ = [
    "shape", "size", "rank", "reshape", "fill", "zeros", "ones", "zeros_like", "ones_like",
    "broadcast_to", "expand_dims", "squeeze", "concat", "stack", "unstack", "range",
    "transpose", "gather", "unsorted_segment_sum",
]
