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

from types import SimpleNamespace

from graphflow.ops import elementwise_spec, shape_ops
from graphflow.ops import math_ops as m
from graphflow.ops.elementwise_spec import NO_GRADIENT, ZERO
from graphflow.ops.grad_util import restore_reduced_dims, shape_of, unbroadcast
from graphflow.ops.registry import no_gradient, register_gradient


def _zeros(t):
    return shape_ops.zeros_like(t)


def _mask(condition, grad):
    """`grad` where `condition` holds, 0 elsewhere (the result has the broadcast shape)."""
    return m.where(condition, grad, _zeros(grad))


# ---------------------------------------------------------------- not differentiable
no_gradient("ArgMax", "ArgMin", "Where", "All", "Any")
no_gradient("StopGradient", "ReducedShape", "BroadcastGradientArgs")
no_gradient("Assign", "AssignAdd", "AssignSub")


# ---------------------------------------------------------------- core ops and helpers
@register_gradient("Identity")
def _identity_grad(op, grad):
    return (grad,)


@register_gradient("IdentityN")
def _identity_n_grad(op, *grads):
    return grads


@register_gradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return (grad,)


@register_gradient("SumToShape")
def _sum_to_shape_grad(op, grad):
    return (shape_ops.broadcast_to(grad, shape_of(op.inputs[0])), None)


@register_gradient("AddN")
def _add_n_grad(op, grad):
    return (grad,) * len(op.inputs)


# ---------------------------------------------------------------- elementwise unary and binary
# The rule of every row of the elementwise table (ops/elementwise_spec.py); the rows' rules build
# their ops through `_OPS`: the math ops plus zeros, ones and mask.
_OPS = SimpleNamespace(**{**m.ELEMENTWISE_FUNCTIONS, **{name: getattr(m, name) for name in m.__all__}},
                       zeros=_zeros, ones=shape_ops.ones_like, mask=_mask)


def _row_rule(row):
    """`grad(op, grad)` of an elementwise row (None for the NO_GRADIENT rows)."""
    if row.grad == NO_GRADIENT:
        return None
    if row.grad == ZERO:
        return lambda op, grad: tuple(_zeros(x) for x in op.inputs)
    if row.dydx is not None:
        derivative = row.dydx
        return lambda op, grad: (grad * derivative(_OPS, op.inputs[0], op.outputs[0]),)
    rule = row.grad
    if row.arity == 1:
        def unary(op, grad):
            return (rule(_OPS, grad, op.inputs[0], op.outputs[0], row.attr_values(op.attrs)),)
        return unary

    def binary(op, grad):
        x, y = op.inputs
        dx, dy = rule(_OPS, grad, x, y, op.outputs[0])
        return (None if dx is None else unbroadcast(dx, x)), (None if dy is None else unbroadcast(dy, y))
    return binary


for _row in elementwise_spec.ROWS:
    if _row.custom:
        continue
    _rule = _row_rule(_row)
    if _rule is None:
        no_gradient(_row.op)
    else:
        _rule.__name__ = f"_{_row.op.lower()}_grad"
        register_gradient(_row.op)(_rule)


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
    """(x, axis, grad reshaped to the keepdims shape of the reduction); axis is the axes tensor
    when the reduction reads its axes at run time."""
    x = op.inputs[0]
    axis = op.inputs[1] if len(op.inputs) == 2 else op.attrs["axis"]
    keepdims = op.attrs.get("keepdims", False)
    return x, axis, restore_reduced_dims(grad, x, axis, keepdims)


def _axes_input_grad(op, grads):
    """The reduction's gradients, with None for its axes input when it has one."""
    return grads + (None,) if len(op.inputs) == 2 else grads


@register_gradient("Sum")
def _sum_grad(op, grad):
    x, _, grad = _kept(op, grad)
    return _axes_input_grad(op, (shape_ops.broadcast_to(grad, shape_of(x)),))


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
    return _axes_input_grad(op, (shape_ops.broadcast_to(grad, shape_of(x)),))


def _min_or_max_grad(op, grad):
    x, axis, grad = _kept(op, grad)
    y = restore_reduced_dims(op.outputs[0], x, axis, op.attrs.get("keepdims", False))
    chosen = m.cast(m.equal(y, x), grad.dtype)
    ties = m.reduce_sum(chosen, axis=axis, keepdims=True)
    return _axes_input_grad(op, (chosen / ties * grad,))


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
    return _axes_input_grad(op, (grad * others,))
