"""Fused op records: the ops the fusion pass (`graphflow.optimizer_passes.fusion`) puts into a plan's
private graph in place of several user ops. Users never build them, but they are ordinary ops: one
`OpDef` each plus a kernel per device, and they have cases in the op harness.

- `FusedElementwise`: a group of elementwise ops evaluated as one op. Its `program` attr is a small
  JSON-able expression program; the format is specified in `graphflow/ops/elementwise_program.py`,
  whose `check` (`validate_program` below) is its one validator.
- `FusedElementwiseSum`: a FusedElementwise program's value summed (`mean`: averaged) over its
  `leading_axes` leading axes, `keepdims` as the Sum/Mean it replaces: the two in one pass, the
  program's value never written out whole (attrs `program`, `leading_axes`, `keepdims`, `mean`).
- `FusedMatMul`: `activation(matmul(a, b) + bias)` (TF's `_FusedMatMul` remapping).
- `FusedConv2D`: `activation(conv2d(x, filter) + bias)` with a per-channel bias of shape [out
  channels] (TF's `_FusedConv2D`); the Conv2D attrs (strides, padding, data_format, dilations) plus
  `activation` and `activation_attrs`, as for FusedMatMul.
- `Conv2DBackpropFilterBias`: the two parameter gradients of `conv2d(x, filter) + bias`, from one
  pass over the output gradient dy: output 0 is `Conv2DBackpropFilter(x, filter_sizes, dy)`, output
  1 the bias gradient, dy summed over every axis but the channel axis of `data_format` ([out
  channels]). Its attrs are Conv2DBackpropFilter's plus `bias_reduction`, the op type whose value
  output 1 stands for (`BIAS_REDUCTIONS`: an NHWC `Sum` over axes [0, 1, 2] or an NCHW one over [0,
  2, 3], or `BiasAddGrad`); a kernel that computes the two separately runs that op's own reduction.
- `Conv2DBackpropFilterBiasReluMask`: `Conv2DBackpropFilterBias(x, filter_sizes, where(y > 0, dy,
  0))` with inputs (x, filter_sizes, dy, y) and Conv2DBackpropFilterBias's attrs: the parameter
  gradients of a convolution whose output went through a ReLU (y) and whose input gradient is not
  needed (a network's first layer), the ReLU gradient applied to each block of dy as the filter
  gradient reads it instead of as an op of its own.
- `Conv2DBackpropInputFilter`: a convolution's input and filter gradients (and its bias's) from
  one dy, with inputs (input_sizes, filter, dy, x, filter_sizes): output 0 is
  `Conv2DBackpropInput(input_sizes, filter, dy)`, output 1 `Conv2DBackpropFilter(x, filter_sizes,
  dy)`; with a `bias_reduction` (as Conv2DBackpropFilterBias's) output 2 is the bias gradient, with
  "" there is none (a convolution without bias, e.g. before a batch norm). One op so that a kernel
  can share the cores between the two gradients' blocks of images (a hidden layer: both are
  needed, neither reads the other).
- `FusedMaxPoolGradReluMask`: `where(x > 0, max_pool_grad(x, max_pool(x), g), 0)`, a max pooling's
  gradient followed by the ReLU gradient of its input (x = relu(...), or any x: the mask only reads
  x), with MaxPoolGrad's inputs (orig_input x, orig_output y = max_pool(x) of the same window attrs,
  grad g) and attrs. The gradient reaches only each window's argmax, where x equals y: so the op is
  MaxPoolGrad of `g` masked by `y > 0` on the pooled-size tensor (its kernels say how they keep the
  unfused pair's exact bits, NaN inputs included). A fused op rather than an attr on MaxPoolGrad:
  MaxPoolGrad is a user-visible op with gradient rules (its adjoint MaxPoolGradGrad), an ONNX
  refusal and 3-D siblings that would all have to learn the attr; this record exists only in plans.

All carry their provenance in attrs: `members` (names of the ops they replaced, in schedule order),
`member_types` and `member_sources` ('file:line: code' of the user code that built each member).
"""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import elementwise_program, elementwise_spec, no_onnx
from graphflow.ops.conv_ops import (
    _POOL_ATTRS,
    _conv2d_backprop_filter_infer,
    _conv2d_backprop_input_infer,
    _conv2d_infer,
    _conv_attrs,
    _pool_attrs,
    max_pool_grad_infer,
)
from graphflow.ops.math_ops import (  # noqa: F401 - UNARY_OPS: tests
    UNARY_OPS,
    _matmul_infer,
    normalize_axes,
)
from graphflow.ops.registry import (
    broadcast_static,
    define,
    make_op,
    make_tensor,
    no_gradient,
    same_dtype,
)
from graphflow.ops.shape_ops import shape_tensor

PROGRAM_VERSION = elementwise_program.VERSION

# Op types a FusedElementwise program may contain, besides the "Const" pseudo-instruction: the
# fusible rows of the elementwise table. Every one is an elementwise op of the graph with the same
# meaning and attrs; each device's fused kernel implements all of them (tests/op_cases/fused_cases.py
# and tests/optimizer_passes/test_fusion.py check the CPU kernel does).
ELEMENTWISE_INSTRUCTIONS = elementwise_spec.FUSIBLE

# Activations FusedMatMul can apply to its result ("" = none).
MATMUL_ACTIVATIONS = ("", "Relu", "Relu6", "Tanh", "Sigmoid", "Elu", "Selu", "Softplus", "LeakyRelu")
# Activations FusedConv2D can apply: the same list.
CONV_ACTIVATIONS = MATMUL_ACTIVATIONS
# The reductions whose value Conv2DBackpropFilterBias's second output is (its `bias_reduction`).
BIAS_REDUCTIONS = ("Sum", "BiasAddGrad")


def validate_program(program, input_dtypes=None):
    """Check a FusedElementwise program (`elementwise_program.check`); returns the output's DType.
    Raises ValueError, or TypeError for an input of the wrong dtype."""
    checked = elementwise_program.check(program, input_dtypes)
    return dtypes.as_dtype(checked["instructions"][checked["output"] - len(checked["inputs"])][3])


def _fused_elementwise_infer(inputs, attrs):
    out_dtype = validate_program(attrs["program"], [t.dtype for t in inputs])
    shape = TensorShape([])
    for t in inputs:
        shape = broadcast_static(shape, t.shape)
    return [(out_dtype, shape)]


def _fused_elementwise_sum_infer(inputs, attrs):
    ((dt, shape),) = _fused_elementwise_infer(inputs, attrs)
    if np.dtype(dt.as_numpy_dtype).kind != "f":
        raise ValueError(f"FusedElementwiseSum sums floats, not {dt.name}")
    leading = attrs["leading_axes"]
    if shape.ndims is not None and not 0 < leading < shape.ndims:
        raise ValueError(f"cannot sum over the {leading} leading axes of a rank-{shape.ndims} "
                         "value and keep the others")
    if shape.dims is None:
        return [(dt, TensorShape(None))]
    kept = list(shape.dims[leading:])
    return [(dt, TensorShape([1] * leading + kept if attrs.get("keepdims") else kept))]


def _fused_matmul_infer(inputs, attrs):
    a, b, bias = inputs
    same_dtype(inputs, "FusedMatMul operands")
    ((dt, shape),) = _matmul_infer([a, b], attrs)
    if broadcast_static(shape, bias.shape) != shape and shape.dims is not None:
        raise ValueError(f"bias of shape {bias.shape} would change the matmul result shape {shape}")
    _check_activation(attrs, MATMUL_ACTIVATIONS)
    return [(dt, shape)]


def _check_activation(attrs, allowed):
    if attrs.get("activation", "") not in allowed:
        raise ValueError(f"unsupported activation {attrs.get('activation')!r}; use one of {allowed}")


def _fused_conv2d_infer(inputs, attrs):
    x, f, bias = inputs
    same_dtype(inputs, "FusedConv2D operands")
    ((dt, shape),) = _conv2d_infer([x, f], attrs)
    channels = shape.dims[-1 if attrs["data_format"] == "NHWC" else 1] if shape.dims else None
    if bias.shape.ndims not in (None, 1):
        raise ValueError(f"bias must be 1-D [out_channels], got shape {bias.shape}")
    b = bias.shape.dims[0] if bias.shape.ndims == 1 else None
    if b is not None and channels is not None and b != channels:
        raise ValueError(f"bias has {b} values but the convolution has {channels} output channels")
    _check_activation(attrs, CONV_ACTIVATIONS)
    return [(dt, shape)]


def _conv2d_backprop_filter_bias_relu_mask_infer(inputs, attrs):
    x, sizes, dy, y = inputs
    same_dtype([dy, y], "out_backprop and its ReLU output")
    if not dy.shape.is_compatible_with(y.shape):
        raise ValueError(f"the ReLU output's shape {y.shape} does not match out_backprop's "
                         f"{dy.shape}")
    return _conv2d_backprop_filter_bias_infer([x, sizes, dy], attrs)


def _conv2d_backprop_filter_bias_infer(inputs, attrs):
    x, sizes, dy = inputs
    ((dt, f_shape),) = _conv2d_backprop_filter_infer(inputs, attrs)
    if attrs.get("bias_reduction") not in BIAS_REDUCTIONS:
        raise ValueError(f"unsupported bias_reduction {attrs.get('bias_reduction')!r}; use one of "
                         f"{BIAS_REDUCTIONS}")
    if dy.shape.ndims not in (None, 4):
        raise ValueError(f"out_backprop must be 4-D, got shape {dy.shape}")
    channels = None if f_shape.dims is None else f_shape.dims[3]
    if channels is None and dy.shape.ndims == 4:
        channels = dy.shape.dims[3 if (attrs.get("data_format") or "NHWC") == "NHWC" else 1]
    return [(dt, f_shape), (dt, TensorShape([channels]))]


def _conv2d_backprop_input_filter_infer(inputs, attrs):
    input_sizes, f, dy, x, filter_sizes = inputs
    same_dtype([f, dy, x], "filter, out_backprop and input")
    ((dt, x_shape),) = _conv2d_backprop_input_infer([input_sizes, f, dy], attrs)
    if not attrs.get("bias_reduction"):  # no bias: the input and filter gradients
        return [(dt, x_shape), *_conv2d_backprop_filter_infer([x, filter_sizes, dy], attrs)]
    return [(dt, x_shape), *_conv2d_backprop_filter_bias_infer([x, filter_sizes, dy], attrs)]


_PROVENANCE = " members:list(string) member_types:list(string) member_sources:list(string)"
define("FusedElementwise", _fused_elementwise_infer, elementwise=True,
       attrs="program:dict" + _PROVENANCE, inplace_any_input=True, fresh_output=True,
       onnx=no_onnx.OPTIMIZER_BUILT)
define("FusedElementwiseSum", _fused_elementwise_sum_infer,
       attrs="program:dict leading_axes:int>=1 keepdims:bool mean:bool" + _PROVENANCE,
       fresh_output=True, onnx=no_onnx.OPTIMIZER_BUILT)
define("FusedMatMul", _fused_matmul_infer,
       attrs="transpose_a:bool transpose_b:bool activation:string activation_attrs:dict"
       + _PROVENANCE, fresh_output=True, onnx={"converter": "fused_matmul"})
define("FusedConv2D", _fused_conv2d_infer,
       attrs="strides:int>=1|list(int>=1) padding:string data_format:none|string "
       "dilations:int>=1|list(int>=1) activation:string activation_attrs:dict" + _PROVENANCE,
       fresh_output=True, onnx={"converter": "conv"})
define("Conv2DBackpropFilterBias", _conv2d_backprop_filter_bias_infer,
       attrs="strides:int>=1|list(int>=1) padding:string data_format:none|string "
       "dilations:int>=1|list(int>=1) bias_reduction:string" + _PROVENANCE,
       fresh_output=True, retains_inputs=False, onnx=no_onnx.GRADIENT)
define("Conv2DBackpropFilterBiasReluMask", _conv2d_backprop_filter_bias_relu_mask_infer,
       attrs="strides:int>=1|list(int>=1) padding:string data_format:none|string "
       "dilations:int>=1|list(int>=1) bias_reduction:string" + _PROVENANCE,
       fresh_output=True, retains_inputs=False, onnx=no_onnx.GRADIENT)
define("Conv2DBackpropInputFilter", _conv2d_backprop_input_filter_infer,
       attrs="strides:int>=1|list(int>=1) padding:string data_format:none|string "
       "dilations:int>=1|list(int>=1) bias_reduction:string" + _PROVENANCE,
       fresh_output=True, retains_inputs=False, onnx=no_onnx.GRADIENT)
define("FusedMaxPoolGradReluMask", max_pool_grad_infer(True), attrs=_POOL_ATTRS + _PROVENANCE,
       fresh_output=True, onnx=no_onnx.GRADIENT)
# built on plan copies, after gradients exist
no_gradient("FusedElementwise", "FusedElementwiseSum", "FusedMatMul", "FusedConv2D",
            "Conv2DBackpropFilterBias",
            "Conv2DBackpropFilterBiasReluMask", "Conv2DBackpropInputFilter",
            "FusedMaxPoolGradReluMask")


def _provenance(members):
    members = list(members or [])
    return {"members": [m.name for m in members], "member_types": [m.type for m in members],
            "member_sources": [_where(m) for m in members]}


def provenance_with(fused, before=(), after=()):
    """The provenance attrs of a fused op that takes in the fused op `fused`: its members, with the
    ops `before` listed first and `after` last."""
    first, last = _provenance(before), _provenance(after)
    return {k: first[k] + list(fused.attrs.get(k, [])) + last[k] for k in first}


def _where(op):
    """'file:line: code' of a member (the code text travels in the attr, so an error about a fused
    op never has to open a file, whether the graph was built here or loaded)."""
    return "" if op.source is None else str(op.source)


def fused_elementwise(inputs, program, members=(), name=None):
    """A FusedElementwise op evaluating `program` over `inputs`; `members` are the replaced ops."""
    attrs = {"program": program, **_provenance(members)}
    return make_tensor("FusedElementwise", tuple(inputs), attrs, name=name or "FusedElementwise")


def fused_elementwise_sum(inputs, program, leading_axes, keepdims=False, mean=False, members=(),
                          name=None):
    """The value of `program` over `inputs` summed (or averaged) over its leading axes, as one op."""
    attrs = {"program": program, "leading_axes": int(leading_axes), "keepdims": bool(keepdims),
             "mean": bool(mean), **_provenance(members)}
    return make_tensor("FusedElementwiseSum", tuple(inputs), attrs,
                       name=name or "FusedElementwiseSum")


def fused_matmul(a, b, bias, activation="", transpose_a=False, transpose_b=False,
                 activation_attrs=None, members=(), name=None):
    """`activation(matmul(a, b) + bias)` as one op."""
    attrs = {"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b),
             "activation": activation, "activation_attrs": dict(activation_attrs or {}),
             **_provenance(members)}
    return make_tensor("FusedMatMul", (a, b, bias), attrs, name=name or "FusedMatMul")


def fused_conv2d(x, filter, bias, strides, padding, activation="", data_format="NHWC",
                 dilations=(1, 1, 1, 1), activation_attrs=None, members=(), name=None):
    """`activation(conv2d(x, filter) + bias)` as one op; `bias` has one value per output channel."""
    attrs = {**_conv_attrs(strides, padding, data_format, dilations), "activation": activation,
             "activation_attrs": dict(activation_attrs or {}), **_provenance(members)}
    return make_tensor("FusedConv2D", (x, filter, bias), attrs, name=name or "FusedConv2D")


def conv2d_backprop_filter_bias(x, filter_sizes, out_backprop, strides, padding, data_format="NHWC",
                                dilations=(1, 1, 1, 1), bias_reduction="Sum", members=(), name=None):
    """(filter gradient, bias gradient) of `conv2d(x, filter) + bias` from the output gradient, as
    one op: `Conv2DBackpropFilter(x, filter_sizes, out_backprop)` and `out_backprop` summed over all
    but its channel axis."""
    attrs = {**_conv_attrs(strides, padding, data_format, dilations),
             "bias_reduction": bias_reduction, **_provenance(members)}
    op = make_op("Conv2DBackpropFilterBias", (x, shape_tensor(filter_sizes), out_backprop), attrs,
                 name=name or "Conv2DBackpropFilterBias")
    return tuple(op.outputs)


def conv2d_backprop_filter_bias_relu_mask(x, filter_sizes, out_backprop, relu_output, strides,
                                          padding, data_format="NHWC", dilations=(1, 1, 1, 1),
                                          bias_reduction="Sum", members=(), name=None):
    """`conv2d_backprop_filter_bias(x, filter_sizes, where(relu_output > 0, out_backprop, 0))` as
    one op."""
    attrs = {**_conv_attrs(strides, padding, data_format, dilations),
             "bias_reduction": bias_reduction, **_provenance(members)}
    op = make_op("Conv2DBackpropFilterBiasReluMask",
                 (x, shape_tensor(filter_sizes), out_backprop, relu_output), attrs,
                 name=name or "Conv2DBackpropFilterBiasReluMask")
    return tuple(op.outputs)


def conv2d_backprop_input_filter(input_sizes, filter, out_backprop, x, filter_sizes, strides,
                                 padding, data_format="NHWC", dilations=(1, 1, 1, 1),
                                 bias_reduction="Sum", members=(), name=None):
    """(input gradient, filter gradient, bias gradient) of `conv2d(x, filter) + bias` as one op:
    `Conv2DBackpropInput(input_sizes, filter, out_backprop)` and
    `conv2d_backprop_filter_bias(x, filter_sizes, out_backprop)`; with `bias_reduction=""`, of
    `conv2d(x, filter)`: (input gradient, filter gradient)."""
    attrs = {**_conv_attrs(strides, padding, data_format, dilations),
             "bias_reduction": bias_reduction, **_provenance(members)}
    op = make_op("Conv2DBackpropInputFilter",
                 (shape_tensor(input_sizes), filter, out_backprop, x, shape_tensor(filter_sizes)),
                 attrs, name=name or "Conv2DBackpropInputFilter")
    return tuple(op.outputs)


def fused_max_pool_grad_relu_mask(orig_input, orig_output, grad, ksize, strides, padding,
                                  data_format="NHWC", members=(), name=None):
    """`where(orig_input > 0, max_pool_grad(orig_input, orig_output, grad), 0)` as one op;
    `orig_output` must be `max_pool(orig_input)` with the same window attrs."""
    attrs = {**_pool_attrs(ksize, strides, padding, data_format), **_provenance(members)}
    return make_tensor("FusedMaxPoolGradReluMask", (orig_input, orig_output, grad), attrs,
                       name=name or "FusedMaxPoolGradReluMask")


# ---------------------------------------------------------------- what the fusion pass may absorb
def is_instruction(op):
    """`op` has a FusedElementwise instruction (its type is in ELEMENTWISE_INSTRUCTIONS)."""
    return op.type in ELEMENTWISE_INSTRUCTIONS


def is_fused_elementwise(op):
    """`op` is a FusedElementwise (whose value a sum over leading axes may take in)."""
    return op.type == "FusedElementwise"


def leading_axes_sum(op):
    """(leading axes, keepdims, mean) when `op` is a float Sum or Mean of one input over its first
    k axes (k static, 0 < k < rank), else None: FusedElementwiseSum's reduction."""
    if op.type not in ("Sum", "Mean") or len(op.inputs) != 1:
        return None
    x = op.inputs[0]
    rank = x.shape.ndims
    axis = op.attrs.get("axis")
    if rank is None or axis is None or np.dtype(x.dtype.as_numpy_dtype).kind != "f":
        return None
    try:
        axes = normalize_axes(axis, rank)
    except ValueError:
        return None
    if not axes or axes != tuple(range(len(axes))) or len(axes) >= rank:
        return None
    return len(axes), bool(op.attrs.get("keepdims", False)), op.type == "Mean"


def is_matmul(op):
    """`op` is the product FusedMatMul computes (MatMul)."""
    return op.type == "MatMul"


def is_conv2d(op):
    """`op` is the convolution FusedConv2D computes (Conv2D)."""
    return op.type == "Conv2D"


def is_conv2d_backprop_input(op):
    """`op` is the input gradient Conv2DBackpropInputFilter computes (Conv2DBackpropInput)."""
    return op.type == "Conv2DBackpropInput"


def is_conv2d_backprop_filter(op):
    """`op` is the filter gradient Conv2DBackpropFilterBias computes (Conv2DBackpropFilter)."""
    return op.type == "Conv2DBackpropFilter"


def bias_gradient_reduction(op, dy, data_format):
    """The `bias_reduction` of a Conv2DBackpropFilterBias whose second output `op`'s value is: `op`
    sums the 4-D `dy` over every axis but the channel axis of `data_format` into [channels], as a
    BiasAddGrad in that data format ("BiasAddGrad") or a Sum over those static axes without keepdims
    ("Sum"); else None."""
    if op.inputs[:1] != (dy,) or dy.shape.ndims != 4 or data_format not in ("NHWC", "NCHW"):
        return None
    if op.type == "BiasAddGrad":
        return op.type if (op.attrs.get("data_format") or "NHWC") == data_format else None
    if op.type != "Sum" or len(op.inputs) != 1 or op.attrs.get("keepdims"):
        return None
    axis = op.attrs.get("axis")
    axes = list(range(4)) if axis is None else [axis] if isinstance(axis, int) else list(axis)
    channel = 3 if data_format == "NHWC" else 1
    if any(not -4 <= a < 4 for a in axes) or {a % 4 for a in axes} != set(range(4)) - {channel}:
        return None
    return op.type


def bias_reduction_attrs(bias_reduction, data_format):
    """The attrs of the `bias_reduction` op (Sum or BiasAddGrad) that Conv2DBackpropFilterBias's
    second output stands for, in the convolution's `data_format`."""
    if bias_reduction == "BiasAddGrad":
        return {"data_format": data_format}
    return {"axis": [0, 1, 2] if data_format == "NHWC" else [0, 2, 3], "keepdims": False}


def is_bias_add(op):
    """`op` adds a per-channel bias (BiasAdd; FusedMatMul takes it when channels are last)."""
    return op.type == "BiasAdd"


def is_bias_add_grad(op):
    """`op` sums a gradient over all but its channel axis (BiasAddGrad: a bias's gradient, which
    WhileGrad sums once over a loop's stacked rows)."""
    return op.type == "BiasAddGrad"


def is_add(op):
    """`op` is a plain two-input Add (FusedMatMul takes it when the bias does not grow the product)."""
    return op.type == "Add" and len(op.inputs) == 2


def is_matmul_activation(op):
    """`op` is an activation FusedMatMul applies after the bias (`MATMUL_ACTIVATIONS`)."""
    return bool(op.type) and op.type in MATMUL_ACTIVATIONS


def is_conv_activation(op):
    """`op` is an activation FusedConv2D applies after the bias (`CONV_ACTIVATIONS`)."""
    return bool(op.type) and op.type in CONV_ACTIVATIONS


def is_max_pool(op):
    """`op` is the 2-D max pooling whose gradient FusedMaxPoolGradReluMask takes (MaxPool)."""
    return op.type == "MaxPool"


def is_max_pool_grad(op):
    """`op` is the gradient FusedMaxPoolGradReluMask computes before its mask (MaxPoolGrad)."""
    return op.type == "MaxPoolGrad"


def is_conv2d_backprop_filter_bias(op):
    """`op` is the fused filter and bias gradient (Conv2DBackpropFilterBias) whose dy a ReLU mask
    may join (Conv2DBackpropFilterBiasReluMask)."""
    return op.type == "Conv2DBackpropFilterBias"


def is_broadcast_to(op):
    """`op` is a BroadcastTo, whose value a FusedElementwise program may read unbroadcast (its
    input broadcast by the kernel instead)."""
    return op.type == "BroadcastTo"


def is_select(op):
    """`op` is a three-input Select (the ReLU gradient's `where(y > 0, g, 0)`)."""
    return op.type == "Select" and len(op.inputs) == 3


def is_greater(op):
    """`op` is a two-input Greater (the ReLU gradient's `y > 0`)."""
    return op.type == "Greater" and len(op.inputs) == 2


def is_training_batch_norm(op):
    """`op` is a FusedBatchNorm computing its batch's statistics (is_training)."""
    return op.type == "FusedBatchNorm" and bool(op.attrs.get("is_training"))


def is_batch_norm_grad(op):
    """`op` is a FusedBatchNormGrad (whose y_backprop a ReLU's mask may join:
    FusedBatchNormGradReluMask)."""
    return op.type == "FusedBatchNormGrad"


def is_relu(op):
    """`op` is a Relu."""
    return op.type == "Relu"


def affine_operands(op):
    """(x, mean, gain, offset) when `op` computes `(x - mean) * gain + offset` as Add(Mul(Sub(x,
    mean), gain), offset), the split training batch norm's y (`fusion_batch_norm.py`); else None."""
    if op.type != "Add" or len(op.inputs) != 2:
        return None
    scaled, offset = op.inputs
    if scaled.op.type != "Mul" or len(scaled.op.inputs) != 2:
        return None
    centered, gain = scaled.op.inputs
    if centered.op.type != "Sub" or len(centered.op.inputs) != 2:
        return None
    x, mean = centered.op.inputs
    return x, mean, gain, offset
