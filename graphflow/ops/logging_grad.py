"""Gradient rules for the printing and checking ops: tf.Print passes the gradient to its first
input (the printed data gets none); tf.check_numerics checks the gradient too, as TF1 does."""

from graphflow.ops import logging_ops
from graphflow.ops.registry import register_gradient


@register_gradient("Print")
def _print_grad(op, grad):
    return (grad,) + (None,) * (len(op.inputs) - 1)


@register_gradient("CheckNumerics")
def _check_numerics_grad(op, grad):
    message = ("Not a number (NaN) or infinity (Inf) values detected in gradient. "
               + op.attrs["message"])
    return (logging_ops.check_numerics(grad, message),)
