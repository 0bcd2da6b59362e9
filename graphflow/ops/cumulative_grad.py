"""Gradient rules for Cumsum and Cumprod (TF1's formulas).

The gradient of a cumulative sum is the cumulative sum of the gradient in the other direction
(same `exclusive`). For a cumulative product y with y_k = prod x_i (i <= k, or i < k when
exclusive), dy_k / dx_j = y_k / x_j, so dx = cumsum(cumprod(x) * grad, reverse flipped) / x, as
TF1 computes it: it divides by x, so an input holding zeros gets inf/nan gradients there.
"""

from graphflow.ops import math_ops as m
from graphflow.ops.cumulative_ops import cumprod, cumsum
from graphflow.ops.registry import register_gradient


@register_gradient("Cumsum")
def _cumsum_grad(op, grad):
    attrs = op.attrs
    return (cumsum(grad, attrs["axis"], exclusive=attrs["exclusive"],
                   reverse=not attrs["reverse"]),)


@register_gradient("Cumprod")
def _cumprod_grad(op, grad):
    x = op.inputs[0]
    attrs = op.attrs
    prod = cumprod(x, attrs["axis"], exclusive=attrs["exclusive"], reverse=attrs["reverse"])
    summed = cumsum(prod * grad, attrs["axis"], exclusive=attrs["exclusive"],
                    reverse=not attrs["reverse"])
    return (m.truediv(summed, x),)
