"""Gradient rules of the TensorArray ops, and the ops that carry gradients of arrays.

The gradient of an array (a `variant` tensor) is a *gradient array*: index -> gradient of that
element, a missing index meaning zeros. Reading an element sends its gradient into a one-entry
gradient array; writing an element reads its gradient back out (zeros if none arrived). Gradient
arrays from several paths (or loop iterations) add up with `TensorArrayAddGradients`.
"""

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import (
    no_onnx,
    tensor_array_ops,  # noqa: F401  (the forward records must exist first)
)
from graphflow.ops.registry import define, make_tensor, no_gradient, register_gradient


def _variant(inputs, attrs):
    return [(dtypes.variant, TensorShape([]))]


def _like_last(inputs, attrs):
    return [(inputs[-1].dtype, inputs[-1].shape)]


define("TensorArrayZeroGradient", _variant, stateful=True, onnx=no_onnx.GRADIENT)
define("TensorArrayAddGradients", _variant, stateful=True, onnx=no_onnx.GRADIENT)
define("TensorArrayGradOfRead", _variant, stateful=True, onnx=no_onnx.GRADIENT)
define("TensorArrayGradOfGather", _variant, stateful=True, onnx=no_onnx.GRADIENT)
define("TensorArrayGradOfStack", _variant, stateful=True, onnx=no_onnx.GRADIENT)
define("TensorArrayGradOfConcat", _variant, stateful=True, onnx=no_onnx.GRADIENT)
define("TensorArrayGradRead", _like_last, stateful=True, onnx=no_onnx.GRADIENT)
define("TensorArrayGradGather", _like_last, stateful=True, onnx=no_onnx.GRADIENT)
define("TensorArrayGradStack", _like_last, stateful=True, onnx=no_onnx.GRADIENT)
# The gradient-array ops have no gradient rules of their own: a second derivative through a
# TensorArray is an error ("No gradient defined"), never silently zero.
no_gradient("TensorArrayV3", "TensorArraySizeV3", "TensorArrayZeroGradient")


def zero_gradient():
    """An empty gradient array (every element's gradient is zero)."""
    return make_tensor("TensorArrayZeroGradient", (), name="ta_zero_grad")


def add_gradients(grads):
    """The sum of several gradient arrays."""
    total = grads[0]
    for g in grads[1:]:
        total = make_tensor("TensorArrayAddGradients", (total, g), name="ta_add_grads")
    return total


@register_gradient("TensorArrayWriteV3")
def _write_grad(op, grad_array):
    _, index, value = op.inputs
    return grad_array, None, make_tensor("TensorArrayGradRead", (grad_array, index, value))


@register_gradient("TensorArrayScatterV3")
def _scatter_grad(op, grad_array):
    _, indices, value = op.inputs
    return grad_array, None, make_tensor("TensorArrayGradGather", (grad_array, indices, value))


@register_gradient("TensorArrayUnstack")
def _unstack_grad(op, grad_array):
    _, value = op.inputs
    return grad_array, make_tensor("TensorArrayGradStack", (grad_array, value))


@register_gradient("TensorArrayReadV3")
def _read_grad(op, grad):
    return make_tensor("TensorArrayGradOfRead", (op.inputs[1], grad)), None


@register_gradient("TensorArrayGatherV3")
def _gather_grad(op, grad):
    return make_tensor("TensorArrayGradOfGather", (op.inputs[1], grad)), None


@register_gradient("TensorArrayStack")
def _stack_grad(op, grad):
    return (make_tensor("TensorArrayGradOfStack", (grad,)),)


@register_gradient("TensorArrayConcatV3")
def _concat_grad(op, grad, unused_lengths_grad):
    return (make_tensor("TensorArrayGradOfConcat", (grad, op.outputs[1])),)
