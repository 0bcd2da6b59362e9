"""Gradient rules for the nn ops (softmax family, cross-entropies, bias_add, l2_loss, convolution,
pooling and their backprop ops). Rules build ordinary graph ops, so second derivatives work:
the backprop ops have rules of their own (conv backprops are linear in each argument; MaxPoolGrad
and MaxPoolGradGrad are each other's adjoint; AvgPoolGrad's adjoint is AvgPool).

Choices (TF-compatible):
* SoftmaxCrossEntropyWithLogits: d loss / d logits is the op's `backprop` output
  softmax(logits) - labels, which assumes each row of labels sums to 1 (TF does the same). With the
  TF1 `softmax_cross_entropy_with_logits` no gradient flows into labels; with `_v2` it does.
* Max pooling routes the gradient to the first maximum of each window (row-major order); the
  gradient of MaxPoolGrad / MaxPoolGradGrad with respect to the pooled input is zero.
* A multi-output op receives zeros for an output nobody used; the cross-entropy rules recognise
  those (`ZerosLike`) and build nothing for them.
"""

from graphflow.ops import conv_ops, nn_ops, shape_ops
from graphflow.ops import math_ops as m
from graphflow.ops.grad_util import shape_of
from graphflow.ops.registry import no_gradient, register_gradient

no_gradient("RandomStandardNormal", "RandomUniform", "RandomUniformInt", "TruncatedNormal",
            "RandomShuffle", "Multinomial")


def _used(grad):
    """False for a missing gradient or the zeros the engine passes for an unused output."""
    return grad is not None and grad.op.type != "ZerosLike"


def _sum_or_none(terms):
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else m.add_n(terms)


# ---------------------------------------------------------------- softmax family
@register_gradient("Softmax")
def _softmax_grad(op, grad):
    y = op.outputs[0]
    axis = op.attrs.get("axis", -1)
    return ((grad - m.reduce_sum(grad * y, axis, keepdims=True)) * y,)


@register_gradient("LogSoftmax")
def _log_softmax_grad(op, grad):
    axis = op.attrs.get("axis", -1)
    return (grad - m.exp(op.outputs[0]) * m.reduce_sum(grad, axis, keepdims=True),)


def _softmax_jvp_transpose(grad, logits, axis):
    """The vector-Jacobian product of softmax(logits) with `grad` (second-order terms)."""
    s = nn_ops.softmax(logits, axis=axis)
    return (grad - m.reduce_sum(grad * s, axis, keepdims=True)) * s


@register_gradient("SoftmaxCrossEntropyWithLogits")
def _softmax_xent_grad(op, grad_loss, grad_backprop):
    logits, labels = op.inputs
    axis = op.attrs.get("axis", -1)
    d_logits, d_labels = [], []
    if _used(grad_loss):
        g = shape_ops.expand_dims(grad_loss, axis)
        d_logits.append(g * op.outputs[1])
        d_labels.append(g * m.negative(nn_ops.log_softmax(logits, axis=axis)))
    if _used(grad_backprop):
        d_logits.append(_softmax_jvp_transpose(grad_backprop, logits, axis))
        d_labels.append(m.negative(grad_backprop))
    if op.attrs.get("labels_stop_gradient"):
        d_labels = []
    return _sum_or_none(d_logits), _sum_or_none(d_labels)


@register_gradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent_grad(op, grad_loss, grad_backprop):
    d_logits = []
    if _used(grad_loss):
        d_logits.append(shape_ops.expand_dims(grad_loss, -1) * op.outputs[1])
    if _used(grad_backprop):
        d_logits.append(_softmax_jvp_transpose(grad_backprop, op.inputs[0], -1))
    return _sum_or_none(d_logits), None


@register_gradient("SigmoidCrossEntropyWithLogits")
def _sigmoid_xent_grad(op, grad):
    logits, labels = op.inputs
    return grad * (m.sigmoid(logits) - labels), grad * m.negative(logits)


# ---------------------------------------------------------------- bias_add, l2_loss
@register_gradient("BiasAdd")
def _bias_add_grad(op, grad):
    return grad, nn_ops.bias_add_grad(grad, data_format=op.attrs.get("data_format", "NHWC"))


@register_gradient("BiasAddGrad")
def _bias_add_grad_grad(op, grad):
    g = op.inputs[0]
    return (nn_ops.bias_add(shape_ops.zeros_like(g), grad,
                            data_format=op.attrs.get("data_format", "NHWC")),)


@register_gradient("L2Loss")
def _l2_loss_grad(op, grad):
    return (op.inputs[0] * grad,)


# ---------------------------------------------------------------- convolution
def _conv_kw(op):
    a = op.attrs
    return {"strides": a["strides"], "padding": a["padding"], "data_format": a["data_format"],
            "dilations": a["dilations"]}


def register_convolution_gradients(types, conv, backprop_input, backprop_filter):
    """The gradient rules of a convolution family (2-D here, 3-D in `conv3d_grad.py`): `types` its
    (conv, input backprop, filter backprop) op types, the rest their builders. Each op is linear in
    each argument: the gradient of one argument is the other op of the family with `grad` in its
    place (conv(x, f) -> input backprop of grad through f, filter backprop of x and grad; ...)."""
    conv_type, input_type, filter_type = types

    @register_gradient(conv_type)
    def _conv_grad(op, grad):
        x, f = op.inputs
        kw = _conv_kw(op)
        return (backprop_input(shape_of(x), f, grad, **kw),
                backprop_filter(x, shape_of(f), grad, **kw))

    @register_gradient(input_type)
    def _backprop_input_grad(op, grad):
        _, f, g = op.inputs
        kw = _conv_kw(op)
        return (None, backprop_filter(grad, shape_of(f), g, **kw), conv(grad, f, **kw))

    @register_gradient(filter_type)
    def _backprop_filter_grad(op, grad):
        x, _, g = op.inputs
        kw = _conv_kw(op)
        return (backprop_input(shape_of(x), grad, g, **kw), None, conv(x, grad, **kw))


register_convolution_gradients(("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"),
                               conv_ops.conv2d, conv_ops.conv2d_backprop_input,
                               conv_ops.conv2d_backprop_filter)


# ---------------------------------------------------------------- pooling
def _pool_kw(op):
    a = op.attrs
    return {"ksize": a["ksize"], "strides": a["strides"], "padding": a["padding"],
            "data_format": a["data_format"]}


def register_pooling_gradients(types, ops):
    """The gradient rules of a pooling family (2-D here, 3-D in `conv3d_grad.py`): `types` maps
    MaxPool, MaxPoolGrad, MaxPoolGradGrad, AvgPool, AvgPoolGrad to the family's op types, `ops`
    the last four to their builders. MaxPoolGrad and MaxPoolGradGrad are each other's adjoint (zero
    with respect to the pooled input; away from ties: at a tie TF's MaxPoolGrad feeds every
    maximum and MaxPoolGradGrad reads the first, and graphflow keeps TF's numbers); AvgPoolGrad's
    adjoint is AvgPool."""

    @register_gradient(types["MaxPool"])
    def _max_pool_grad(op, grad):
        return (ops["MaxPoolGrad"](op.inputs[0], op.outputs[0], grad, **_pool_kw(op)),)

    @register_gradient(types["MaxPoolGrad"])
    def _max_pool_grad_grad(op, grad):
        x, y, _ = op.inputs
        return (shape_ops.zeros_like(x), shape_ops.zeros_like(y),
                ops["MaxPoolGradGrad"](x, y, grad, **_pool_kw(op)))

    @register_gradient(types["MaxPoolGradGrad"])
    def _max_pool_grad_grad_grad(op, grad):
        x, y, _ = op.inputs
        return (shape_ops.zeros_like(x), shape_ops.zeros_like(y),
                ops["MaxPoolGrad"](x, y, grad, **_pool_kw(op)))

    @register_gradient(types["AvgPool"])
    def _avg_pool_grad(op, grad):
        return (ops["AvgPoolGrad"](shape_of(op.inputs[0]), grad, **_pool_kw(op)),)

    @register_gradient(types["AvgPoolGrad"])
    def _avg_pool_grad_grad(op, grad):
        return (None, ops["AvgPool"](grad, **_pool_kw(op)))


register_pooling_gradients(
    {name: name for name in ("MaxPool", "MaxPoolGrad", "MaxPoolGradGrad", "AvgPool", "AvgPoolGrad")},
    {"MaxPoolGrad": conv_ops.max_pool_grad, "MaxPoolGradGrad": conv_ops.max_pool_grad_grad,
     "AvgPool": conv_ops.avg_pool, "AvgPoolGrad": conv_ops.avg_pool_grad})
