"""Gradient rules for Cumsum and Cumprod (TF1's formulas).

The gradient of a cumulative sum is the cumulative sum of the gradient in the other direction
(same `exclusive`). For a cumulative product y with y_k = prod x_i (i <= k, or i < k when
exclusive), dy_k / dx_j = y_k / x_j, so dx = cumsum(cumprod(x) * grad, reverse flipped) / x, as
TF1 computes it: it divides by x, so an input holding zeros gets inf/nan gradients there.
"""

from graphflow.ops import math_ops as m
from graphflow.ops.cumulative_ops import cumprod, cumsum
from graphflow.ops.registry import register_gradient


def _axis(op):
    """The attr axis, or the axis tensor of an op given it at run time (which has no gradient)."""
    return op.inputs[1] if op.attrs["axis"] is None else op.attrs["axis"]


def _no_axis_grad(op, grads):
    return grads + (None,) * (len(op.inputs) - 1)


@register_gradient("Cumsum")
def _cumsum_grad(op, grad):
    attrs = op.attrs
    return _no_axis_grad(op, (cumsum(grad, _axis(op), exclusive=attrs["exclusive"],
                                     reverse=not attrs["reverse"]),))


@register_gradient("Cumprod")
def _cumprod_grad(op, grad):
    x = op.inputs[0]
    attrs = op.attrs
    prod = cumprod(x, _axis(op), exclusive=attrs["exclusive"], reverse=attrs["reverse"])
    summed = cumsum(prod * grad, _axis(op), exclusive=attrs["exclusive"],
                    reverse=not attrs["reverse"])
    return _no_axis_grad(op, (m.truediv(summed, x),))
