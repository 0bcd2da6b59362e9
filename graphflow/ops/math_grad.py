"""Gradient rules for the math ops (and the core, state and gradient-helper ops).

Each rule is `grad(op, *output_grads) -> tuple` with one entry per input (None = no gradient) and
builds ordinary graph ops, so rules are themselves differentiable (gradients of gradients). Inputs
that were broadcast get their gradient summed back to their shape with `grad_util.unbroadcast`.

Choices (documented, TF-compatible where TF is consistent):
* Piecewise-constant float ops (Floor, Ceil, Round, Sign, FloorDiv) have a rule returning zeros:
  their derivative almost everywhere. (TF returns zeros for Sign and None for Floor/Ceil/Round;
  graphflow answers zeros for all of them, so such an x counts as connected.)
* Ops whose outputs are integers or booleans (comparisons, logic, ArgMax/ArgMin, Where, All/Any,
  IsNan/IsFinite), StopGradient and variable updates are declared `no_gradient`: a gradient never
  flows through them (TF's NotDifferentiable).
* Kinks take TF's side: Relu/Relu6/Elu/LeakyRelu use x > 0, Maximum sends the gradient to x on
  ties (x >= y), Minimum to x on ties (x <= y), reduce_max/min split it evenly among ties, and
  Pow's gradient with respect to the exponent is 0 where the base is <= 0.
"""

import math

from graphflow.ops import math_ops as m
from graphflow.ops import shape_ops
from graphflow.ops.grad_util import restore_reduced_dims, shape_of, unbroadcast
from graphflow.ops.registry import no_gradient, register_gradient

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _zeros(t):
    return shape_ops.zeros_like(t)


def _mask(condition, grad):
    """`grad` where `condition` holds, 0 elsewhere (the result has the broadcast shape)."""
    return m.where(condition, grad, _zeros(grad))


# ---------------------------------------------------------------- not differentiable
no_gradient("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual", "LogicalAnd",
            "LogicalOr", "LogicalXor", "LogicalNot", "IsNan", "IsFinite", "ArgMax", "ArgMin",
            "Where", "All", "Any")
no_gradient("StopGradient", "ReducedShape")
no_gradient("Assign", "AssignAdd", "AssignSub")


# ---------------------------------------------------------------- core ops and helpers
@register_gradient("Identity")
def _identity_grad(op, grad):
    return (grad,)


@register_gradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return (grad,)


@register_gradient("SumToShape")
def _sum_to_shape_grad(op, grad):
    return (shape_ops.broadcast_to(grad, shape_of(op.inputs[0])), None)


@register_gradient("AddN")
def _add_n_grad(op, grad):
    return (grad,) * len(op.inputs)


# ---------------------------------------------------------------- elementwise unary
def _unary_rule(op_type, derivative):
    """Register `grad * derivative(x, y)` (x: input, y: output) as the rule of `op_type`."""
    def rule(op, grad):
        return (grad * derivative(op.inputs[0], op.outputs[0]),)
    rule.__name__ = f"_{op_type.lower()}_grad"
    register_gradient(op_type)(rule)


_unary_rule("Abs", lambda x, y: m.sign(x))
_unary_rule("Square", lambda x, y: 2 * x)
_unary_rule("Exp", lambda x, y: y)
_unary_rule("Expm1", lambda x, y: m.exp(x))
_unary_rule("Log", lambda x, y: m.reciprocal(x))
_unary_rule("Log1p", lambda x, y: m.reciprocal(1 + x))
_unary_rule("Sqrt", lambda x, y: 0.5 / y)
_unary_rule("Rsqrt", lambda x, y: -0.5 * (y * y * y))
_unary_rule("Reciprocal", lambda x, y: -(y * y))
_unary_rule("Sin", lambda x, y: m.cos(x))
_unary_rule("Cos", lambda x, y: -m.sin(x))
_unary_rule("Tan", lambda x, y: 1 + y * y)
_unary_rule("Tanh", lambda x, y: 1 - y * y)
_unary_rule("Sigmoid", lambda x, y: y * (1 - y))
_unary_rule("Erf", lambda x, y: (2 / math.sqrt(math.pi)) * m.exp(-(x * x)))
_unary_rule("Softplus", lambda x, y: m.sigmoid(x))
_unary_rule("Softsign", lambda x, y: m.reciprocal(m.square(1 + m.abs(x))))


@register_gradient("Neg")
def _neg_grad(op, grad):
    return (-grad,)


def _zero_grad(op, grad):
    return (_zeros(op.inputs[0]),)


for _type in ("Sign", "Floor", "Ceil", "Round"):
    register_gradient(_type)(_zero_grad)


@register_gradient("Relu")
def _relu_grad(op, grad):
    # relu(x) > 0 exactly where x > 0. Reading the output (as TF's ReluGrad does) rather than the
    # input lets fusion fold the activation into the producer of x: x is then read only once.
    return (_mask(op.outputs[0] > 0, grad),)


@register_gradient("Relu6")
def _relu6_grad(op, grad):
    x = op.inputs[0]
    return (_mask(m.logical_and(x > 0, x < 6), grad),)


@register_gradient("Elu")
def _elu_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return (m.where(x > 0, grad, grad * (y + 1)),)


@register_gradient("Selu")
def _selu_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return (m.where(x > 0, grad * _SELU_SCALE, grad * (y + _SELU_SCALE * _SELU_ALPHA)),)


@register_gradient("LeakyRelu")
def _leaky_relu_grad(op, grad):
    alpha = op.attrs.get("alpha", 0.2)
    return (m.where(op.inputs[0] > 0, grad, grad * alpha),)


# ---------------------------------------------------------------- elementwise binary
@register_gradient("Add")
def _add_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(grad, x), unbroadcast(grad, y)


@register_gradient("Sub")
def _sub_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(grad, x), unbroadcast(-grad, y)


@register_gradient("Mul")
def _mul_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(grad * y, x), unbroadcast(x * grad, y)


@register_gradient("RealDiv")
def _real_div_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(grad / y, x), unbroadcast(grad * (-x / y / y), y)


@register_gradient("FloorDiv")
def _floor_div_grad(op, grad):
    x, y = op.inputs
    return _zeros(x), _zeros(y)


@register_gradient("FloorMod")
def _floor_mod_grad(op, grad):
    x, y = op.inputs  # x mod y = x - floor(x / y) * y
    return unbroadcast(grad, x), unbroadcast(-grad * m.floordiv(x, y), y)


@register_gradient("Pow")
def _pow_grad(op, grad):
    x, y = op.inputs
    z = op.outputs[0]
    grad_x = grad * y * m.pow(x, y - 1)
    positive = x > 0
    log_x = m.where(positive, m.log(m.where(positive, x, shape_ops.ones_like(x))), _zeros(x))
    return unbroadcast(grad_x, x), unbroadcast(grad * z * log_x, y)


@register_gradient("Maximum")
def _maximum_grad(op, grad):
    x, y = op.inputs
    x_wins = x >= y
    return (unbroadcast(_mask(x_wins, grad), x),
            unbroadcast(_mask(m.logical_not(x_wins), grad), y))


@register_gradient("Minimum")
def _minimum_grad(op, grad):
    x, y = op.inputs
    x_wins = x <= y
    return (unbroadcast(_mask(x_wins, grad), x),
            unbroadcast(_mask(m.logical_not(x_wins), grad), y))


@register_gradient("SquaredDifference")
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    scaled = (2 * grad) * (x - y)
    return unbroadcast(scaled, x), unbroadcast(-scaled, y)


# ---------------------------------------------------------------- select, cast, clip
@register_gradient("Select")
def _select_grad(op, grad):
    condition, x, y = op.inputs
    zeros = _zeros(grad)
    return (None, unbroadcast(m.where(condition, grad, zeros), x),
            unbroadcast(m.where(condition, zeros, grad), y))


@register_gradient("Cast")
def _cast_grad(op, grad):
    source = op.inputs[0].dtype
    if source.is_floating and op.outputs[0].dtype.is_floating:
        return (m.cast(grad, source),)
    return (None,)


@register_gradient("ClipByValue")
def _clip_by_value_grad(op, grad):
    t, low, high = op.inputs
    below, above = t < low, t > high
    zeros = _zeros(grad)
    return (unbroadcast(m.where(m.logical_or(below, above), zeros, grad), t),
            unbroadcast(m.where(below, grad, zeros), low),
            unbroadcast(m.where(above, grad, zeros), high))


# ---------------------------------------------------------------- matmul
@register_gradient("MatMul")
def _matmul_grad(op, grad):
    a, b = op.inputs
    ta, tb = op.attrs.get("transpose_a", False), op.attrs.get("transpose_b", False)
    if not ta and not tb:
        grad_a = m.matmul(grad, b, transpose_b=True)
        grad_b = m.matmul(a, grad, transpose_a=True)
    elif not ta and tb:
        grad_a = m.matmul(grad, b)
        grad_b = m.matmul(grad, a, transpose_a=True)
    elif ta and not tb:
        grad_a = m.matmul(b, grad, transpose_b=True)
        grad_b = m.matmul(a, grad)
    else:
        grad_a = m.matmul(b, grad, transpose_a=True, transpose_b=True)
        grad_b = m.matmul(grad, a, transpose_a=True, transpose_b=True)
    return unbroadcast(grad_a, a), unbroadcast(grad_b, b)  # batch dims may have broadcast


# ---------------------------------------------------------------- reductions
def _kept(op, grad):
    """(x, axis, grad reshaped to the keepdims shape of the reduction)."""
    x = op.inputs[0]
    axis, keepdims = op.attrs["axis"], op.attrs.get("keepdims", False)
    return x, axis, restore_reduced_dims(grad, x, axis, keepdims)


@register_gradient("Sum")
def _sum_grad(op, grad):
    x, _, grad = _kept(op, grad)
    return (shape_ops.broadcast_to(grad, shape_of(x)),)


@register_gradient("Mean")
def _mean_grad(op, grad):
    x, _, grad = _kept(op, grad)
    y = op.outputs[0]
    n_in, n_out = x.shape.num_elements(), y.shape.num_elements()
    if n_in is not None and n_out is not None:
        grad = grad / float(max(n_in // max(n_out, 1), 1))
    else:  # count = size(x) / size(y), computed at run time where a shape is not static
        if n_in is None:
            n_in = m.reduce_prod(shape_ops.shape(x))
        if n_out is None:
            n_out = m.reduce_prod(shape_ops.shape(y))
        count = m.maximum(m.floordiv(n_in, m.maximum(n_out, 1)), 1)
        grad = grad / m.cast(count, grad.dtype)
    return (shape_ops.broadcast_to(grad, shape_of(x)),)


def _min_or_max_grad(op, grad):
    x, axis, grad = _kept(op, grad)
    y = restore_reduced_dims(op.outputs[0], x, axis, op.attrs.get("keepdims", False))
    chosen = m.cast(m.equal(y, x), grad.dtype)
    ties = m.reduce_sum(chosen, axis=axis, keepdims=True)
    return (chosen / ties * grad,)


register_gradient("Max")(_min_or_max_grad)
register_gradient("Min")(_min_or_max_grad)


@register_gradient("Prod")
def _prod_grad(op, grad):
    """d prod(x) / d x_i = product of the other entries; exact with zeros in the input:
    no zero in the slice -> prod / x_i; one zero -> the product of the non-zeros at the zero,
    0 elsewhere; two or more zeros -> 0."""
    x, axis, grad = _kept(op, grad)
    nonzero = m.not_equal(x, 0)
    safe_x = m.where(nonzero, x, shape_ops.ones_like(x))
    prod_nonzero = m.reduce_prod(safe_x, axis=axis, keepdims=True)
    zero_count = m.reduce_sum(m.cast(m.logical_not(nonzero), x.dtype), axis=axis, keepdims=True)
    at_single_zero = m.logical_and(m.equal(zero_count, 1), m.logical_not(nonzero))
    others = m.where(m.equal(zero_count, 0), prod_nonzero / safe_x,
                     m.where(at_single_zero, prod_nonzero, _zeros(x)))
    return (grad * others,)
