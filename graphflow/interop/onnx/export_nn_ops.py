"""Converters for graphflow's losses, index, image and normalization ops (the rest of the
converter table is in `export_ops.py`; the same `converter` registry, the same conventions).

Where ONNX has no single op, the composition is written out with its algebra: the cross
entropies through LogSoftmax, InTopK by counting larger scores, FusedBatchNorm in training mode
through the batch moments.
"""

import numpy as np

from graphflow.interop.onnx.export_ops import _ins, _out, _reduce, _scalar, converter
from graphflow.ops import static_value


@converter("einsum")
def _einsum(ctx, op):  # the op's equation is already explicit ('->' always present)
    spans = set()
    for term, x in zip(op.attrs["equation"].split("->")[0].split(","), op.inputs):
        if "..." in term and x.shape.ndims is not None:
            spans.add(x.shape.ndims - len(term.replace("...", "")))
    if len(spans) > 1:
        raise ValueError("ONNX Einsum needs every '...' to stand for the same number of dims")
    ctx.one("Einsum", _ins(ctx, op), _out(ctx, op), equation=op.attrs["equation"])


@converter("top_k")
def _top_k(ctx, op):  # ONNX TopK: largest first, equal values by lower index (as TF)
    x, k = op.inputs
    known = static_value.constant_value(k)
    kk = (ctx.const(np.array([known], np.int64).reshape(1), "k") if known is not None
          else ctx.one("Reshape", [ctx.int64(k), ctx.const(np.array([1], np.int64))]))
    values, indices = ctx.node("TopK", [ctx.name(x), kk], [_out(ctx, op, 0), ctx.fresh("indices")],
                               axis=-1, largest=1, sorted=1)
    ctx.one("Cast", [indices], _out(ctx, op, 1), to=ctx.elem_type(op.outputs[1].dtype))


@converter("in_top_k")
def _in_top_k(ctx, op):
    """target in the top k <=> fewer than k scores are larger than the target's (ties count as
    in), the target is a valid class and its score is finite."""
    predictions, targets, k = op.inputs
    p = ctx.name(predictions)
    t = ctx.one("Cast", [ctx.name(targets)], to=ctx.onnx.TensorProto.INT64)
    classes = ctx.one("Gather", [ctx.one("Shape", [p]), ctx.const(np.array(1, np.int64))], axis=0)
    zero = ctx.const(np.array(0, np.int64))
    valid = ctx.one("And", [ctx.one("GreaterOrEqual", [t, zero]), ctx.one("Less", [t, classes])])
    column = ctx.one("Unsqueeze", [t, ctx.const(np.array([1], np.int64))])
    hit = ctx.one("Equal", [ctx.one("Range", [zero, classes, ctx.const(np.array(1, np.int64))]), column])
    target = ctx.one("ReduceSum", [ctx.one("Where", [hit, p, _scalar(ctx, 0, predictions)]),
                                   ctx.const(np.array([1], np.int64))], keepdims=1)  # p[row, t]
    larger = ctx.one("ReduceSum", [ctx.one("Cast", [ctx.one("Greater", [p, target])],
                                           to=ctx.onnx.TensorProto.INT64),
                                   ctx.const(np.array([1], np.int64))], keepdims=0)
    kk = ctx.one("Cast", [ctx.name(k)], to=ctx.onnx.TensorProto.INT64)
    finite = ctx.one("Not", [ctx.one("Or", [ctx.one("IsInf", [target]), ctx.one("IsNaN", [target])])])
    finite = ctx.one("Squeeze", [finite, ctx.const(np.array([1], np.int64))])
    ctx.one("And", [ctx.one("And", [valid, finite]), ctx.one("Less", [larger, kk])], _out(ctx, op))


@converter("gather_nd")
def _gather_nd(ctx, op):
    params, indices = op.inputs
    index = ctx.one("Cast", [ctx.name(indices)], to=ctx.onnx.TensorProto.INT64)
    ctx.one("GatherND", [ctx.name(params), index], _out(ctx, op))


def _scatter_add(ctx, op, indices, updates, shape, base=None):
    """zeros(shape) (or `base`) with `updates` added at `indices`: ScatterND, reduction add."""
    if ctx.opset < 16:
        raise ValueError("needs opset 16 or newer (ScatterND with reduction='add')")
    if base is None:
        zero = ctx.onnx.numpy_helper.from_array(np.zeros([1], op.outputs[0].dtype.as_numpy_dtype))
        base = ctx.one("ConstantOfShape", [shape], value=zero)
    ctx.one("ScatterND", [base, indices, updates], _out(ctx, op), reduction="add")


@converter("scatter_nd")
def _scatter_nd(ctx, op):  # repeated indices add up, as TF's
    indices, updates, shape = op.inputs
    index = ctx.one("Cast", [ctx.name(indices)], to=ctx.onnx.TensorProto.INT64)
    _scatter_add(ctx, op, index, ctx.name(updates), ctx.int64(shape))


@converter("unsorted_segment_sum")
def _unsorted_segment_sum(ctx, op):
    """out[s] = sum of data[i] with segment_ids[i] == s: a ScatterND-add of the rows of data
    at [segment_id] into zeros([num_segments] + data.shape[ids.rank:])."""
    data, ids, num = op.inputs
    if ids.shape.ndims != 1:
        raise ValueError("only 1-D segment_ids export")
    ids64 = ctx.one("Cast", [ctx.name(ids)], to=ctx.onnx.TensorProto.INT64)
    dropped = ctx.one("Less", [ids64, ctx.const(np.array(0, np.int64))])  # TF drops negative ids:
    zero_id = ctx.const(np.array(0, np.int64))                           # they add zeros to row 0
    index = ctx.one("Unsqueeze", [ctx.one("Where", [dropped, zero_id, ids64]),
                                  ctx.const(np.array([1], np.int64))])
    rank = data.shape.ndims
    if rank is None:
        raise ValueError("data needs a known rank")
    row_mask = ctx.one("Unsqueeze", [dropped, ctx.const(np.arange(1, rank, dtype=np.int64))]) \
        if rank > 1 else dropped
    values = ctx.one("Where", [row_mask, _scalar(ctx, 0, data), ctx.name(data)])
    rows = ctx.one("Slice", [ctx.one("Shape", [ctx.name(data)]), ctx.const(np.array([1], np.int64)),
                             ctx.const(np.array([2**62], np.int64))])
    count = ctx.one("Reshape", [ctx.int64(num), ctx.const(np.array([1], np.int64))])
    shape = ctx.one("Concat", [count, rows], axis=0)
    _scatter_add(ctx, op, index, values, shape)


@converter("sparse_dense_matmul")
def _sparse_dense_matmul(ctx, op):
    """SparseTensorDenseMatMul: each entry (r, k, v) of A (r and k swapped for adjoint_a) adds
    v * b[k] to row r: a ScatterND-add of b's gathered, scaled rows into zeros([rows, cols])."""
    indices, values, shape, b = op.inputs
    if op.attrs["adjoint_b"]:
        dense = ctx.one("Transpose", [ctx.name(b)], perm=[1, 0])
    else:
        dense = ctx.name(b)
    first, second = (1, 0) if op.attrs["adjoint_a"] else (0, 1)
    index = ctx.int64(indices)
    rows = ctx.one("Gather", [index, ctx.const(np.array([first], np.int64))], axis=1)
    inner = ctx.one("Gather", [index, ctx.const(np.array(second, np.int64))], axis=1)
    scale = ctx.one("Unsqueeze", [ctx.name(values), ctx.const(np.array([1], np.int64))])
    updates = ctx.one("Mul", [ctx.one("Gather", [dense, inner], axis=0), scale])
    count = ctx.one("Gather", [ctx.int64(shape), ctx.const(np.array([first], np.int64))], axis=0)
    cols = ctx.one("Slice", [ctx.one("Shape", [dense]), ctx.const(np.array([1], np.int64)),
                             ctx.const(np.array([2], np.int64))])
    _scatter_add(ctx, op, rows, updates, ctx.one("Concat", [count, cols], axis=0))


# ---------------------------------------------------------------- losses
@converter("softmax_xent")
def _softmax_xent(ctx, op):  # loss = -sum(labels * log_softmax(x)); backprop = softmax(x) - labels
    features, labels = _ins(ctx, op)
    axis = int(op.attrs.get("axis", -1))
    log_p = ctx.one("LogSoftmax", [features], axis=axis)
    total = ctx.one("ReduceSum", [ctx.one("Mul", [labels, log_p]),
                                  ctx.const(np.array([axis], np.int64))], keepdims=0)
    ctx.one("Neg", [total], _out(ctx, op, 0))
    ctx.one("Sub", [ctx.one("Exp", [log_p]), labels], _out(ctx, op, 1))


@converter("sparse_softmax_xent")
def _sparse_softmax_xent(ctx, op):
    """loss = -log_softmax(x)[label]; backprop = softmax(x) - one_hot(label)."""
    features, labels = op.inputs
    log_p = ctx.one("LogSoftmax", [ctx.name(features)], axis=-1)
    index = ctx.one("Unsqueeze", [ctx.one("Cast", [ctx.name(labels)], to=ctx.onnx.TensorProto.INT64),
                                  ctx.const(np.array([-1], np.int64))])
    classes = ctx.one("Gather", [ctx.one("Shape", [ctx.name(features)]),
                                 ctx.const(np.array(-1, np.int64))], axis=0)
    columns = ctx.one("Range", [ctx.const(np.array(0, np.int64)), classes,
                                ctx.const(np.array(1, np.int64))])
    hit = ctx.one("Equal", [columns, index])
    picked = ctx.one("Where", [hit, log_p, _scalar(ctx, 0, features)])
    ctx.one("Neg", [ctx.one("ReduceSum", [picked, ctx.const(np.array([-1], np.int64))], keepdims=0)],
            _out(ctx, op, 0))
    one_hot = ctx.one("Cast", [hit], to=ctx.elem_type(features.dtype))
    ctx.one("Sub", [ctx.one("Exp", [log_p]), one_hot], _out(ctx, op, 1))


@converter("sigmoid_xent")
def _sigmoid_xent(ctx, op):  # max(x, 0) - x * z + log(1 + exp(-|x|)): no overflow for any x
    x, z = op.inputs
    xn, zn = ctx.name(x), ctx.name(z)
    soft = ctx.one("Log", [ctx.one("Add", [_scalar(ctx, 1, x, "one"),
                                            ctx.one("Exp", [ctx.one("Neg", [ctx.one("Abs", [xn])])])])])
    linear = ctx.one("Sub", [ctx.one("Relu", [xn]), ctx.one("Mul", [xn, zn])])
    ctx.one("Add", [linear, soft], _out(ctx, op))


# ---------------------------------------------------------------- nn
def _channel_last(op):
    fmt = op.attrs.get("data_format") or "NHWC"
    return not fmt.startswith("NC")


@converter("bias_add_grad")
def _bias_add_grad(ctx, op):  # the sum over every axis but the channel one
    g = op.inputs[0]
    rank = g.shape.ndims
    if rank is None:
        raise ValueError("the gradient needs a known rank")
    channel = rank - 1 if _channel_last(op) else 1
    axes = [a for a in range(rank) if a != channel]
    ctx.one("ReduceSum", [ctx.name(g), ctx.const(np.array(axes, np.int64))], _out(ctx, op), keepdims=0)


@converter("fused_batch_norm")
def _fused_batch_norm(ctx, op):
    """y = (x - mean) / sqrt(var + eps) * scale + offset over the channel axis. Inference: the
    given moments (ONNX BatchNormalization). Training: the batch moments, with outputs (y,
    mean, unbiased variance, mean, biased variance) as the kernel gives them."""
    x, scale, offset, mean, variance = op.inputs
    eps = float(op.attrs["epsilon"])
    nhwc = op.attrs["data_format"] == "NHWC"
    xn = ctx.name(x)
    if not op.attrs["is_training"]:
        if nhwc:
            xn = ctx.one("Transpose", [xn], perm=[0, 3, 1, 2])
        y = ctx.one("BatchNormalization", [xn, ctx.name(scale), ctx.name(offset), ctx.name(mean),
                                           ctx.name(variance)], epsilon=eps)
        ctx.one("Transpose" if nhwc else "Identity", [y], _out(ctx, op, 0),
                **({"perm": [0, 2, 3, 1]} if nhwc else {}))
        for i, t in ((1, mean), (2, variance), (3, mean), (4, variance)):
            ctx.one("Identity", [ctx.name(t)], _out(ctx, op, i))
        return
    axes = [0, 1, 2] if nhwc else [0, 2, 3]
    shape = ctx.const(np.array([1, 1, 1, -1] if nhwc else [1, -1, 1, 1], np.int64), "shape")
    m = _reduce(ctx, "ReduceMean", xn, axes, True)
    centered = ctx.one("Sub", [xn, m])
    var = _reduce(ctx, "ReduceMean", ctx.one("Mul", [centered, centered]), axes, True)
    inv = ctx.one("Reciprocal", [ctx.one("Sqrt", [ctx.one("Add", [var, _scalar(ctx, eps, x, "eps")])])])
    gain = ctx.one("Mul", [inv, ctx.one("Reshape", [ctx.name(scale), shape])])
    ctx.one("Add", [ctx.one("Mul", [centered, gain]), ctx.one("Reshape", [ctx.name(offset), shape])],
            _out(ctx, op, 0))
    flat = ctx.const(np.array([-1], np.int64))
    mean_flat, var_flat = ctx.one("Reshape", [m, flat]), ctx.one("Reshape", [var, flat])
    count = ctx.one("Cast", [ctx.one("Div", [ctx.one("Size", [xn]), ctx.one("Size", [mean_flat])])],
                    to=ctx.elem_type(x.dtype))
    one = _scalar(ctx, 1, x, "one")
    bessel = ctx.one("Div", [count, ctx.one("Max", [ctx.one("Sub", [count, one]), one])])
    ctx.one("Identity", [mean_flat], _out(ctx, op, 1))
    ctx.one("Mul", [var_flat, bessel], _out(ctx, op, 2))
    ctx.one("Identity", [mean_flat], _out(ctx, op, 3))
    ctx.one("Identity", [var_flat], _out(ctx, op, 4))


@converter("mirror_pad")
def _mirror_pad(ctx, op):  # REFLECT is ONNX's reflect; SYMMETRIC (edge repeated) has no mode
    if op.attrs["mode"].upper() != "REFLECT":
        raise ValueError(f"MirrorPad mode {op.attrs['mode']} has no ONNX Pad mode (only REFLECT)")
    x, paddings = op.inputs
    ctx.one("Pad", [ctx.name(x), ctx.pads(paddings)], _out(ctx, op), mode="reflect")


_RESIZE_MODES = {"ResizeBilinear": "linear", "ResizeNearestNeighbor": "nearest",
                 "ResizeBicubic": "cubic"}


@converter("resize")
def _resize(ctx, op):
    """ONNX Resize over H and W of NHWC images (N and C keep their size). The coordinate
    modes are TF's: align_corners, half_pixel_centers (tf_half_pixel_for_nn for nearest), else
    asymmetric; nearest rounds down, or half up with align_corners, as TF does. Bicubic is
    ONNX's cubic with TF's coefficient (-0.75, or Keys' -0.5 with half_pixel_centers, which also
    drops the taps outside the image: exclude_outside). TF reads the cubic's weights from a
    table at 1/1024 steps and ONNX computes them exactly, so where a source position falls
    between two steps the results differ by up to about 1e-3 of the image's range (and
    onnxruntime's cubic Resize only enlarges)."""
    images, size = op.inputs
    align, half = op.attrs["align_corners"], op.attrs["half_pixel_centers"]
    x = ctx.name(images)
    mode = _RESIZE_MODES[op.type]
    if mode != "nearest" and images.dtype.as_numpy_dtype != np.float32:
        x = ctx.one("Cast", [x], to=ctx.onnx.TensorProto.FLOAT)  # TF computes and returns float32
    shape = ctx.one("Shape", [x])
    sizes = ctx.one("Concat", [
        ctx.one("Slice", [shape, ctx.const(np.array([0], np.int64)), ctx.const(np.array([1], np.int64))]),
        ctx.int64(size),
        ctx.one("Slice", [shape, ctx.const(np.array([3], np.int64)), ctx.const(np.array([4], np.int64))])],
        axis=0)
    if align:
        coords = "align_corners"
    elif half:
        coords = "tf_half_pixel_for_nn" if mode == "nearest" else "half_pixel"
    else:
        coords = "asymmetric"
    attrs = {"mode": mode, "coordinate_transformation_mode": coords}
    if mode == "nearest":
        attrs["nearest_mode"] = "round_prefer_ceil" if align else "floor"
    if mode == "cubic":  # onnxruntime's cubic resizes the two inner axes: NCHW around it
        attrs["cubic_coeff_a"] = -0.5 if half else -0.75
        attrs["exclude_outside"] = 1 if half else 0
        nchw = ctx.one("Transpose", [x], perm=[0, 3, 1, 2])
        sizes = ctx.one("Gather", [sizes, ctx.const(np.array([0, 3, 1, 2], np.int64))], axis=0)
        y = ctx.one("Resize", [nchw, "", "", sizes], **attrs)
        ctx.one("Transpose", [y], _out(ctx, op), perm=[0, 2, 3, 1])
        return
    ctx.one("Resize", [x, "", "", sizes], _out(ctx, op), **attrs)


@converter("lrn")
def _lrn(ctx, op):
    """ONNX LRN is NCHW and divides alpha by the window size: size = 2 * depth_radius + 1,
    alpha = TF's alpha * size."""
    a = op.attrs
    size = 2 * int(a["depth_radius"]) + 1
    nchw = ctx.one("Transpose", [ctx.name(op.inputs[0])], perm=[0, 3, 1, 2])
    y = ctx.one("LRN", [nchw], size=size, alpha=float(a["alpha"]) * size, beta=float(a["beta"]),
                bias=float(a["bias"]))
    ctx.one("Transpose", [y], _out(ctx, op), perm=[0, 2, 3, 1])
