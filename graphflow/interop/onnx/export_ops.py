"""The named ONNX converters: functions that write an op as several ONNX nodes (`CONVERTERS`).

Which op a converter writes is the op's own fact: its record says `onnx={"converter": "conv"}`
(`registry.OpDef`; `export_facts.py` derives the exporter's table from the records). Ops that are
one ONNX node need no converter: their record names the ONNX op (`onnx="Abs"`). A converter may
read further keys of its op's fact (`fact_param(op, "op")`: the ONNX pool or reduction op).

A converter is `fn(ctx, op)`: it reads the op's inputs through `ctx.name(tensor)`, emits nodes with
`ctx.node`/`ctx.one` whose outputs are named after the op's outputs (`op:0`), and adds constants with
`ctx.const`. Where ONNX has no single op the converter composes a few (`Rsqrt -> Reciprocal(Sqrt)`),
with the algebra in a comment. Layout: graphflow's NHWC convolutions and pools are wrapped in
Transposes to ONNX's NCHW; NCHW ones map directly.
"""

import numpy as np

from graphflow.ops import registry, static_value

CONVERTERS = {}
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


def converter(name):
    """Register `fn(ctx, op)` as the converter `name`, which records name in their `onnx` fact."""
    def register(fn):
        if name in CONVERTERS:
            raise ValueError(f"two ONNX converters are named '{name}'")
        CONVERTERS[name] = fn
        return fn
    return register


def fact_param(op, key):
    """A further key of the op's `onnx` fact (`{"converter": "pool", "op": "MaxPool"}`)."""
    return registry.lookup(op.type).onnx[key]


def _ins(ctx, op):
    return [ctx.name(t) for t in op.inputs]


def _out(ctx, op, index=0):
    return ctx.name(op.outputs[index])


def _scalar(ctx, value, like, hint="scalar"):
    return ctx.const(np.asarray(value, dtype=like.dtype.as_numpy_dtype), hint)


# ---------------------------------------------------------------- elementwise
@converter("real_div")
def _real_div(ctx, op):  # integers divide as floats (TF's truediv); ONNX Div of integers would floor
    inputs = _ins(ctx, op)
    if op.inputs[0].dtype != op.outputs[0].dtype:
        inputs = [ctx.one("Cast", [name], to=ctx.elem_type(op.outputs[0].dtype)) for name in inputs]
    ctx.one("Div", inputs, _out(ctx, op))


@converter("broadcast_to")
def _broadcast_to(ctx, op):  # ONNX Expand takes the shape as int64
    ctx.one("Expand", [ctx.name(op.inputs[0]), ctx.int64(op.inputs[1])], _out(ctx, op))


@converter("leaky_relu")
def _leaky_relu(ctx, op):
    ctx.one("LeakyRelu", _ins(ctx, op), _out(ctx, op), alpha=float(op.attrs.get("alpha", 0.2)))


@converter("square")
def _square(ctx, op):  # x^2 -> x * x
    x = ctx.name(op.inputs[0])
    ctx.one("Mul", [x, x], _out(ctx, op))


@converter("squared_difference")
def _squared_difference(ctx, op):  # (a - b)^2 -> d * d
    d = ctx.one("Sub", _ins(ctx, op))
    ctx.one("Mul", [d, d], _out(ctx, op))


@converter("rsqrt")
def _rsqrt(ctx, op):  # 1/sqrt(x) -> Reciprocal(Sqrt(x))
    ctx.one("Reciprocal", [ctx.one("Sqrt", _ins(ctx, op))], _out(ctx, op))


@converter("expm1")
def _expm1(ctx, op):  # exp(x) - 1
    x = op.inputs[0]
    ctx.one("Sub", [ctx.one("Exp", [ctx.name(x)]), _scalar(ctx, 1, x, "one")], _out(ctx, op))


@converter("log1p")
def _log1p(ctx, op):  # log(1 + x)
    x = op.inputs[0]
    ctx.one("Log", [ctx.one("Add", [ctx.name(x), _scalar(ctx, 1, x, "one")])], _out(ctx, op))


@converter("relu6")
def _relu6(ctx, op):  # min(max(x, 0), 6) -> Clip(x, 0, 6)
    x = op.inputs[0]
    ctx.one("Clip", [ctx.name(x), _scalar(ctx, 0, x, "zero"), _scalar(ctx, 6, x, "six")], _out(ctx, op))


@converter("is_finite")
def _is_finite(ctx, op):  # not (isinf(x) or isnan(x))
    x = ctx.name(op.inputs[0])
    ctx.one("Not", [ctx.one("Or", [ctx.one("IsInf", [x]), ctx.one("IsNaN", [x])])], _out(ctx, op))


# ONNX Equal takes strings from opset 19 on
_STRING_EQUAL_OPSET = 19


def _equal(ctx, op, output=None):
    """Equal of the op's two inputs (a ValueError below opset 19 for strings: a refusal)."""
    if op.inputs[0].dtype.as_numpy_dtype == np.object_ and ctx.opset < _STRING_EQUAL_OPSET:
        raise ValueError(f"ONNX Equal takes strings from opset {_STRING_EQUAL_OPSET} on: export "
                         f"with opset={_STRING_EQUAL_OPSET} or newer (this export: {ctx.opset})")
    return ctx.one("Equal", _ins(ctx, op), output)


@converter("equal")
def _equal_op(ctx, op):
    _equal(ctx, op, _out(ctx, op))


@converter("not_equal")
def _not_equal(ctx, op):
    ctx.one("Not", [_equal(ctx, op)], _out(ctx, op))


@converter("floor_div")
def _floor_div(ctx, op):  # floor(a / b); integers through float64 (exact below 2**53)
    a, b = op.inputs
    if a.dtype.is_floating:
        ctx.one("Floor", [ctx.one("Div", _ins(ctx, op))], _out(ctx, op))
        return
    f64 = ctx.onnx.TensorProto.DOUBLE
    q = ctx.one("Floor", [ctx.one("Div", [ctx.one("Cast", [ctx.name(a)], to=f64),
                                          ctx.one("Cast", [ctx.name(b)], to=f64)])])
    ctx.one("Cast", [q], _out(ctx, op), to=ctx.elem_type(a.dtype))


@converter("floor_mod")
def _floor_mod(ctx, op):  # integers: Mod (sign of the divisor); floats: a - floor(a / b) * b
    a, b = op.inputs
    if not a.dtype.is_floating:
        ctx.one("Mod", _ins(ctx, op), _out(ctx, op), fmod=0)
        return
    an, bn = _ins(ctx, op)
    ctx.one("Sub", [an, ctx.one("Mul", [ctx.one("Floor", [ctx.one("Div", [an, bn])]), bn])], _out(ctx, op))


@converter("cast")
def _cast(ctx, op):
    ctx.one("Cast", _ins(ctx, op), _out(ctx, op), to=ctx.elem_type(op.outputs[0].dtype))


# ---------------------------------------------------------------- sources
@converter("const")
def _const(ctx, op):
    name = _out(ctx, op)
    ctx.initializers.append(ctx.onnx.numpy_helper.from_array(
        np.asarray(op.attrs["value"], dtype=op.outputs[0].dtype.as_numpy_dtype), name))


@converter("variable")
def _variable(ctx, op):  # frozen: the session's current value becomes an initializer
    name = _out(ctx, op)
    value = ctx.variable_value(op).astype(op.outputs[0].dtype.as_numpy_dtype)
    ctx.initializers.append(ctx.onnx.numpy_helper.from_array(value, name))


@converter("placeholder")
def _placeholder(ctx, op):
    pass  # fed: an input of the ONNX graph (the exporter checked that it is one)


@converter("no_op")
def _no_op(ctx, op):
    pass  # only orders effects; an inference graph has none


_FILLS = {"ZerosLike": np.zeros, "OnesLike": np.ones}


@converter("fill_like")
def _fill_like(ctx, op):
    x = op.inputs[0]
    fill = _FILLS[op.type]
    value = ctx.onnx.numpy_helper.from_array(fill([1], dtype=x.dtype.as_numpy_dtype))
    ctx.one("ConstantOfShape", [ctx.one("Shape", [ctx.name(x)])], _out(ctx, op), value=value)


@converter("fill")
def _fill(ctx, op):  # Expand(value, dims)
    dims, value = op.inputs
    ctx.one("Expand", [ctx.name(value), ctx.int64(dims)], _out(ctx, op))


# ---------------------------------------------------------------- matrices and nn
@converter("matmul")
def _matmul(ctx, op):
    a, b = _transposed_operands(ctx, op)
    ctx.one("MatMul", [a, b], _out(ctx, op))


def _transposed_operands(ctx, op):
    names = []
    for tensor, flag in zip(op.inputs[:2], ("transpose_a", "transpose_b")):
        name = ctx.name(tensor)
        if op.attrs.get(flag, False):
            rank = tensor.shape.ndims
            if rank is None:
                raise ValueError(f"{flag} needs an operand of known rank to export '{op.name}'")
            perm = list(range(rank - 2)) + [rank - 1, rank - 2]
            name = ctx.one("Transpose", [name], perm=perm)
        names.append(name)
    return names


@converter("fused_matmul")
def _fused_matmul(ctx, op):  # activation(a @ b + bias), as the fusion pass built it
    a, b = _transposed_operands(ctx, op)
    y = ctx.one("Add", [ctx.one("MatMul", [a, b]), ctx.name(op.inputs[2])])
    _fused_activation(ctx, op, y, _out(ctx, op))


def _fused_activation(ctx, op, y, output=None):
    """The fused op's `activation` attr applied to the ONNX value `y`, written to `output` (a
    new name when None); returns the name."""
    activation = op.attrs.get("activation", "")
    if not activation:
        return ctx.one("Identity", [y], output)
    if activation == "LeakyRelu":
        alpha = float((op.attrs.get("activation_attrs") or {}).get("alpha", 0.2))
        return ctx.one("LeakyRelu", [y], output, alpha=alpha)
    if activation == "Relu6":
        x = op.inputs[0]
        return ctx.one("Clip", [y, _scalar(ctx, 0, x), _scalar(ctx, 6, x)], output)
    fact = registry.lookup(activation).onnx if registry.find(activation) else None
    if isinstance(fact, str):  # an activation that is one ONNX node
        return ctx.one(fact, [y], output)
    raise ValueError(f"'{op.name}': activation {activation} has no ONNX export")


@converter("bias_add")
def _bias_add(ctx, op):
    x, bias = op.inputs
    b = ctx.name(bias)
    if op.attrs.get("data_format", "NHWC").startswith("NC"):
        rank = x.shape.ndims
        if rank is None:
            raise ValueError(f"BiasAdd '{op.name}' with NCHW data needs an input of known rank")
        b = ctx.one("Reshape", [b, ctx.const(np.array([-1] + [1] * (rank - 2), np.int64))])
    ctx.one("Add", [ctx.name(x), b], _out(ctx, op))


@converter("l2_loss")
def _l2_loss(ctx, op):  # sum(x^2) / 2
    x = op.inputs[0]
    total = ctx.one("ReduceSumSquare", [ctx.name(x)], keepdims=0)
    ctx.one("Div", [total, _scalar(ctx, 2, x, "two")], _out(ctx, op))


_CHANNELS_LAST = ("NHWC", "NDHWC")


def _spatial(values, fmt):
    """The spatial entries of a 4- or 5-list (or shape) in data format `fmt`."""
    values = list(values)
    return values[1:-1] if fmt in _CHANNELS_LAST else values[2:]


def _pads(op, in_hw, k_hw, strides, dilations):
    """ONNX pads [begin..., end...] for TF's padding of this op, or None if unknown."""
    if op.attrs["padding"] == "VALID":
        return [0] * (2 * len(k_hw))
    if any(v is None for v in in_hw):
        return None
    begin, end = [], []
    for size, k, s, d in zip(in_hw, k_hw, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        begin.append(total // 2)
        end.append(total - total // 2)
    return begin + end


def _nchw_input(ctx, x, fmt):
    if fmt in _CHANNELS_LAST:
        rank = len(fmt)
        return ctx.one("Transpose", [ctx.name(x)], perm=[0, rank - 1] + list(range(1, rank - 1)))
    return ctx.name(x)


def _nchw_output(ctx, op, y, fmt):
    if fmt in _CHANNELS_LAST:
        rank = len(fmt)
        ctx.one("Transpose", [y], _out(ctx, op), perm=[0] + list(range(2, rank)) + [1])
    else:
        ctx.one("Identity", [y], _out(ctx, op))


def _padding_attrs(op, x, fmt, k_hw, strides, dilations):
    rank = len(fmt)
    dims = x.shape.as_list() if x.shape.ndims == rank else [None] * rank
    pads = _pads(op, _spatial(dims, fmt), k_hw, strides, dilations)
    if pads is None:
        return {"auto_pad": "SAME_UPPER"}  # TF's SAME puts the odd padding at the end, as SAME_UPPER
    return {"pads": pads}


@converter("conv")
def _conv(ctx, op):  # FusedConv2D: Conv with its bias input B, then the activation
    x, f = op.inputs[:2]
    fmt = op.attrs["data_format"]
    strides = _spatial(op.attrs["strides"], fmt)
    dilations = _spatial(op.attrs["dilations"], fmt)
    spatial = len(strides)
    k_hw = f.shape.as_list()[:spatial] if f.shape.ndims == spatial + 2 else None
    if k_hw is None or None in k_hw:
        raise ValueError(f"{op.type} '{op.name}': the filter's spatial size must be known to "
                         "export it")
    order = [spatial + 1, spatial] + list(range(spatial))  # [k..., in, out] -> [out, in, k...]
    value = static_value.constant_value(f)
    if value is not None:
        w = ctx.const(np.ascontiguousarray(np.transpose(value, order)), "filter")
    else:
        w = ctx.one("Transpose", [ctx.name(f)], perm=order)
    bias = [ctx.name(t) for t in op.inputs[2:]]
    y = ctx.one("Conv", [_nchw_input(ctx, x, fmt), w, *bias], strides=strides,
                dilations=dilations, kernel_shape=k_hw,
                **_padding_attrs(op, x, fmt, k_hw, strides, dilations))
    if bias and op.attrs.get("activation"):
        y = _fused_activation(ctx, op, y)
    _nchw_output(ctx, op, y, fmt)


@converter("pool")
def _pool(ctx, op):
    x = op.inputs[0]
    fmt = op.attrs["data_format"]
    k_hw = _spatial(op.attrs["ksize"], fmt)
    strides = _spatial(op.attrs["strides"], fmt)
    attrs = _padding_attrs(op, x, fmt, k_hw, strides, [1] * len(k_hw))
    onnx_type = fact_param(op, "op")  # MaxPool or AveragePool
    if onnx_type == "AveragePool":
        attrs["count_include_pad"] = 0  # TF averages over the real elements of a window only
    inp = _nchw_input(ctx, x, fmt)
    integer = not x.dtype.is_floating  # ONNX pools floats only: through float64 (exact for int32)
    if integer:
        inp = ctx.one("Cast", [inp], to=ctx.onnx.TensorProto.DOUBLE)
    y = ctx.one(onnx_type, [inp],
                kernel_shape=k_hw, strides=strides, **attrs)
    if integer:
        y = ctx.one("Cast", [y], to=ctx.elem_type(x.dtype))
    _nchw_output(ctx, op, y, fmt)


# ---------------------------------------------------------------- reductions


def _reduce(ctx, onnx_type, x_name, axis, keepdims, output=None, axes_tensor=None):
    attrs = {"keepdims": int(bool(keepdims))}
    inputs = [x_name]
    takes_axes_input = onnx_type == "ReduceSum" or ctx.opset >= 18
    if axes_tensor is not None and not takes_axes_input:
        axis = ctx.known(axes_tensor, f"the axes of {onnx_type} below opset 18").tolist()
    elif axes_tensor is not None:  # read at run time: int64 vector; empty reduces nothing, as in TF
        axes = ctx.one("Cast", [ctx.name(axes_tensor)], to=ctx.onnx.TensorProto.INT64)
        inputs.append(ctx.one("Reshape", [axes, ctx.const(np.array([-1], np.int64), "flat")]))
        return ctx.one(onnx_type, inputs, output, noop_with_empty_axes=1, **attrs)
    if axis is not None:
        axes = np.atleast_1d(np.asarray(axis, dtype=np.int64))
        if axes.size == 0:
            return ctx.one("Identity", [x_name], output)
        if takes_axes_input:
            inputs.append(ctx.const(axes, "axes"))
        else:
            attrs["axes"] = [int(a) for a in axes]
    return ctx.one(onnx_type, inputs, output, **attrs)


@converter("identity_n")
def _identity_n(ctx, op):
    for i, t in enumerate(op.inputs):
        ctx.one("Identity", [ctx.name(t)], _out(ctx, op, i))


@converter("reduction")
def _reduction(ctx, op):
    _reduce(ctx, fact_param(op, "op"), ctx.name(op.inputs[0]), op.attrs.get("axis"),
            op.attrs.get("keepdims", False), _out(ctx, op), axes_tensor=_axes_input(op))


def _axes_input(op):
    """The axes tensor of a reduction that reads its axes at run time, else None."""
    return op.inputs[1] if len(op.inputs) == 2 else None


@converter("bool_reduction")
def _bool_reduction(ctx, op):  # all -> ReduceMin over 0/1, any -> ReduceMax over 0/1 (the fact's op)
    ints = ctx.one("Cast", [ctx.name(op.inputs[0])], to=ctx.onnx.TensorProto.INT32)
    kind = fact_param(op, "op")
    r = _reduce(ctx, kind, ints, op.attrs.get("axis"), op.attrs.get("keepdims", False),
                axes_tensor=_axes_input(op))
    ctx.one("Cast", [r], _out(ctx, op), to=ctx.onnx.TensorProto.BOOL)


@converter("arg")
def _arg(ctx, op):
    axis = op.attrs.get("axis")
    if axis is None:
        axis = int(ctx.known(op.inputs[1], f"the axis of '{op.name}'")) if len(op.inputs) > 1 else 0
    y = ctx.one(op.type, [ctx.name(op.inputs[0])], axis=int(axis), keepdims=0)
    ctx.one("Cast", [y], _out(ctx, op), to=ctx.elem_type(op.outputs[0].dtype))

