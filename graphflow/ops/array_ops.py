"""Array ops: transpose, gather (and its dense scatter-add), one_hot, tile, pad, reverse, split —
plus the public face of the whole array family, re-exporting `shape_ops` (reshape, concat, fill...)
and `slice_ops` (slice, strided_slice, `Tensor.__getitem__`)."""

import builtins

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import constant, consumer_scope, convert_to_tensor
from graphflow.ops.math_ops import cast
from graphflow.ops.registry import define, make_tensor, same_dtype
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
    rank,
    require_shape_input,
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
from graphflow.ops.slice_ops import getitem, newaxis, slice, split, strided_slice  # noqa: F401
from graphflow.ops.static_value import constant_value, output_dtype, scalar_value, shape_vector


# ---------------------------------------------------------------- range
def _range_infer(inputs, attrs):
    start, limit, delta = inputs
    dt = same_dtype(inputs, "range arguments")
    for t in inputs:
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"range arguments must be scalars, got {t.name} of shape {t.shape}")
    values = [constant_value(t) for t in inputs]
    if any(v is None for v in values):
        return [(dt, TensorShape([None]))]
    s, lim, d = (np.asarray(v).item() for v in values)
    if d == 0:
        raise ValueError("delta must not be 0")
    n = max(0, int(np.ceil((lim - s) / d)))
    return [(dt, TensorShape([n]))]


_MAX_RANGE = 1 << 16  # a build-time Range value is a shape-like vector, never a large tensor


def _range_value(op, inputs):  # tf.range(1, tf.rank(x)) for x of known rank
    if not op.outputs[0].dtype.is_integer:
        return None
    bounds = inputs.values()
    if bounds is None or any(np.ndim(v) != 0 for v in bounds) or int(bounds[2]) == 0:
        return None
    start, limit, delta = (int(v) for v in bounds)
    if abs((limit - start) // delta) > _MAX_RANGE:
        return None
    return np.arange(start, limit, delta, dtype=output_dtype(op))


define("Range", _range_infer, value_dependent_shape=True, static_value=_range_value, onnx="Range")


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - TF1 name
    """`tf.range(start, limit, delta)` / `tf.range(limit)`: like numpy's arange."""
    if limit is None:
        start, limit = 0, start
    args = (start, limit, delta)
    if dtype is None:
        found = [convert_to_tensor(a).dtype for a in args if is_tensor_like(a)]
        if found:
            dtype = found[0]
        elif any(isinstance(a, (float, np.floating)) for a in args):
            dtype = dtypes.float32
        else:  # TF1: Python ints infer int32, int64 when one does not fit int32
            dtype = dtypes.int32 if all(-2**31 <= int(a) < 2**31 for a in args) else dtypes.int64
    dtype = dtypes.as_dtype(dtype)
    tensors = []
    for a, label in zip(args, ("start", "limit", "delta")):
        if is_tensor_like(a):
            t = convert_to_tensor(a)
            if t.dtype != dtype:
                t = cast(t, dtype)
        else:
            t = constant(a, dtype=dtype, name=label)
        tensors.append(t)
    return make_tensor("Range", tuple(tensors), name=name)


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


define("Transpose", _transpose_infer, may_alias_input=True, attrs="perm:none|list(int)",
       onnx={"op": "Transpose", "attrs": {"perm": "perm"}})


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


define("GatherV2", _gather_infer, attrs="axis:int batch_dims:int", onnx={"converter": "gather"})


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


define("GatherGrad", _gather_grad_infer, attrs="axis:int batch_dims:int", onnx=no_onnx.GRADIENT)


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


define("UnsortedSegmentSum", _segment_sum_infer, onnx={"converter": "unsorted_segment_sum"})


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """`tf.unsorted_segment_sum`: out[i] = sum of data[j...] where segment_ids[j...] == i;
    negative ids are dropped."""
    data = convert_to_tensor(data)
    ids = convert_to_tensor(segment_ids)
    num = convert_to_tensor(num_segments, dtype=None if is_tensor_like(num_segments) else ids.dtype)
    return make_tensor("UnsortedSegmentSum", (data, ids, num), name=name or "UnsortedSegmentSum")


# ---------------------------------------------------------------- one_hot
def _one_hot_infer(inputs, attrs):
    indices, on, off = inputs[:3]
    if (len(inputs) == 4) != (attrs["depth"] is None):
        raise ValueError("one_hot takes its depth as an attr or as a fourth input, not both")
    if len(inputs) == 4:
        if inputs[3].dtype not in INT_INDEX:
            raise TypeError(f"depth must be an int32 or int64 scalar, got {inputs[3].dtype.name}")
        if inputs[3].shape.ndims not in (None, 0):
            raise ValueError(f"depth must be a scalar, got shape {inputs[3].shape}")
    if indices.dtype not in INT_INDEX + (dtypes.uint8,):
        raise TypeError(f"indices must be an integer tensor, got {indices.dtype.name}")
    dt = same_dtype([on, off], "on_value and off_value")
    for t in (on, off):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"on_value and off_value must be scalars, got shape {t.shape}")
    depth = attrs["depth"]
    if depth is not None and depth < 0:
        raise ValueError(f"depth must be non-negative, got {depth}")
    dims = indices.shape.dims
    if dims is None:
        return [(dt, TensorShape(None))]
    axis = attrs["axis"]
    axis = len(dims) if axis == -1 else normalize_axis(axis, len(dims) + 1)
    out = list(dims)
    out.insert(axis, depth)
    return [(dt, TensorShape(out))]


define("OneHot", _one_hot_infer, attrs="depth:none|int>=0 axis:int", onnx={"converter": "one_hot"})


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """`tf.one_hot`: `on_value` where the new `axis` (default last) equals the index, `off_value`
    elsewhere; indices outside [0, depth) give a row of `off_value`. A `depth` known when the
    graph is built is an attr; one known only at run time (a placeholder, a computed tensor) is
    the op's fourth input, and the new axis's size is then unknown until run time."""
    idx = convert_to_tensor(indices)
    if dtype is None:
        given = [v for v in (on_value, off_value) if v is not None]
        dtype = convert_to_tensor(given[0]).dtype if given else dtypes.float32
    dtype = dtypes.as_dtype(dtype)
    on = convert_to_tensor(1 if on_value is None else on_value, dtype=dtype)
    off = convert_to_tensor(0 if off_value is None else off_value, dtype=dtype)
    attrs = {"depth": None, "axis": -1 if axis is None else int(axis)}
    if is_tensor_like(depth) and constant_value(convert_to_tensor(depth)) is None:
        depth = convert_to_tensor(depth)
        return make_tensor("OneHot", (idx, on, off, depth), attrs, name=name or "one_hot")
    attrs["depth"] = static_int(depth, "depth")
    return make_tensor("OneHot", (idx, on, off), attrs, name=name or "one_hot")


# ---------------------------------------------------------------- tile
def _tile_infer(inputs, attrs):
    x, multiples = inputs
    require_shape_input(multiples, "multiples")
    m = shape_vector(multiples)
    dims = x.shape.dims
    if m is None:
        return [(x.dtype, TensorShape(None if dims is None else [None] * len(dims)))]
    if dims is None:
        return [(x.dtype, TensorShape([None] * len(m)))]
    if len(m) != len(dims):
        raise ValueError(f"multiples has {len(m)} entries but the input has rank {len(dims)} "
                         f"(shape {x.shape})")
    if any(k is not None and k < 0 for k in m):
        raise ValueError(f"multiples {m} must not be negative")
    return [(x.dtype, TensorShape([None if d is None or k is None else d * k
                                   for d, k in zip(dims, m)]))]


define("Tile", _tile_infer, onnx={"converter": "tile"})


def tile(input, multiples, name=None):
    """`tf.tile`: repeat `input` `multiples[i]` times along dimension i."""
    x = convert_to_tensor(input)
    with consumer_scope(name, "Tile", (multiples,)) as op_name:
        return make_tensor("Tile", (x, shape_tensor(multiples, "multiples")), name=op_name)


def _tile_grad_infer(inputs, attrs):
    grad, multiples = inputs
    require_shape_input(multiples, "multiples")
    m = shape_vector(multiples)
    dims = grad.shape.dims
    if dims is None or m is None:
        return [(grad.dtype, TensorShape(None if dims is None else [None] * len(dims)))]
    return [(grad.dtype, TensorShape([None if d is None or not k else d // k
                                      for d, k in zip(dims, m)]))]


define("TileGrad", _tile_grad_infer, onnx=no_onnx.GRADIENT)


def tile_grad(grad, multiples, name=None):
    """The gradient of `tile`: the sum of the `multiples` tiles of `grad`."""
    return make_tensor("TileGrad", (convert_to_tensor(grad), shape_tensor(multiples)),
                       name=name or "TileGrad")


# ---------------------------------------------------------------- pad
def _pad_shape(x, paddings, mode):
    if paddings.dtype not in INT_INDEX:
        raise TypeError(f"paddings must be int32 or int64, got {paddings.dtype.name}")
    pshape = paddings.shape
    if pshape.ndims not in (None, 2) or (pshape.ndims == 2 and pshape.dims[1] not in (None, 2)):
        raise ValueError(f"paddings must have shape [rank, 2], got {pshape}")
    dims = x.shape.dims
    n = pshape.dims[0] if pshape.ndims == 2 else None
    if dims is not None and n is not None and n != len(dims):
        raise ValueError(f"paddings has {n} rows but the input has rank {len(dims)}")
    value = constant_value(paddings)
    if dims is None:
        return TensorShape(None if n is None else [None] * n)
    if value is None:
        return TensorShape([None] * len(dims))
    value = np.asarray(value)
    if value.min(initial=0) < 0:
        raise ValueError(f"paddings must not be negative, got {value.tolist()}")
    out = []
    for i, (d, (before, after)) in enumerate(zip(dims, value.tolist())):
        limit = {"REFLECT": (d or 1) - 1, "SYMMETRIC": d}.get(mode)
        if d is not None and limit is not None and max(before, after) > limit:
            raise ValueError(f"{mode} paddings {before, after} of dimension {i} must be at most "
                             f"{limit} for shape {x.shape}")
        out.append(None if d is None else d + before + after)
    return TensorShape(out)


def _pad_infer(inputs, attrs):
    x, paddings, constant_values = inputs
    same_dtype([x, constant_values], "tensor and constant_values")
    if constant_values.shape.ndims not in (None, 0):
        raise ValueError(f"constant_values must be a scalar, got shape {constant_values.shape}")
    return [(x.dtype, _pad_shape(x, paddings, "CONSTANT"))]


def _mirror_pad_infer(inputs, attrs):
    x, paddings = inputs
    return [(x.dtype, _pad_shape(x, paddings, attrs["mode"]))]


def _mirror_pad_grad_infer(inputs, attrs):
    grad, paddings = inputs
    value = constant_value(paddings)
    dims = grad.shape.dims
    if dims is None or value is None:
        return [(grad.dtype, TensorShape(None if dims is None else [None] * len(dims)))]
    value = np.asarray(value).tolist()
    return [(grad.dtype, TensorShape([None if d is None else d - b - a
                                      for d, (b, a) in zip(dims, value)]))]


define("Pad", _pad_infer, onnx={"converter": "pad"})
define("MirrorPad", _mirror_pad_infer, attrs="mode:string", onnx={"converter": "mirror_pad"})
define("MirrorPadGrad", _mirror_pad_grad_infer, attrs="mode:string", onnx=no_onnx.GRADIENT)


def _paddings_tensor(paddings):
    if is_tensor_like(paddings):
        return convert_to_tensor(paddings)
    if isinstance(paddings, (list, tuple)) and any(is_tensor_like(p) or (
            isinstance(p, (list, tuple)) and any(is_tensor_like(q) for q in p)) for p in paddings):
        return stack([stack(list(p)) if isinstance(p, (list, tuple)) else p for p in paddings])
    arr = np.asarray(paddings)
    if arr.size == 0:
        arr = arr.reshape(0, 2)
    return constant(arr.astype(np.int32), name="paddings")


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """`tf.pad`: paddings[i] = [before, after] for dimension i; mode CONSTANT (with
    `constant_values`), REFLECT (edge not repeated) or SYMMETRIC (edge repeated)."""
    x = convert_to_tensor(tensor)
    p = _paddings_tensor(paddings)
    mode = str(mode).upper()
    if mode == "CONSTANT":
        cv = convert_to_tensor(constant_values, dtype=None if is_tensor_like(constant_values)
                               else x.dtype)
        return make_tensor("Pad", (x, p, cv), name=name or "Pad")
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f"pad mode must be CONSTANT, REFLECT or SYMMETRIC, got {mode!r}")
    return make_tensor("MirrorPad", (x, p), {"mode": mode}, name=name or "MirrorPad")


def mirror_pad_grad(grad, paddings, mode, name=None):
    """The gradient of a REFLECT/SYMMETRIC pad: each padded element's gradient is added back to
    the element it mirrors."""
    return make_tensor("MirrorPadGrad", (convert_to_tensor(grad), _paddings_tensor(paddings)),
                       {"mode": mode}, name=name or "MirrorPadGrad")


# ---------------------------------------------------------------- reverse
def _reverse_infer(inputs, attrs):
    (x,) = inputs
    if x.shape.ndims is not None:
        axes = [normalize_axis(a, x.shape.ndims) for a in attrs["axis"]]
        if len(set(axes)) != len(axes):
            raise ValueError(f"axis {attrs['axis']} names a dimension twice")
    return [(x.dtype, x.shape)]


define("ReverseV2", _reverse_infer, may_alias_input=True, attrs="axis:list(int)",
       onnx={"converter": "reverse"})


def reverse(tensor, axis, name=None):
    """`tf.reverse`: reverse the order of elements along the dimensions in `axis`."""
    x = convert_to_tensor(tensor)
    return make_tensor("ReverseV2", (x,), {"axis": static_ints(axis, "axis")},
                       name=name or "ReverseV2")


reverse_v2 = reverse


__all__ = [
    "shape", "size", "rank", "reshape", "fill", "zeros", "ones", "zeros_like", "ones_like",
    "broadcast_to", "expand_dims", "squeeze", "concat", "stack", "unstack", "range",
    "transpose", "gather", "unsorted_segment_sum", "one_hot", "tile", "pad", "reverse",
    "reverse_v2", "slice", "strided_slice", "split", "newaxis",
]
