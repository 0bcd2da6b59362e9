"""Gradient rules for the index ops. TopKV2 routes each value's gradient back to the input entry
it came from (a comparison mask against the indices, so any shape works); GatherNd and ScatterNd
are each other's adjoint. InTopKV2 has no gradient (a bool output)."""

from graphflow.framework import dtypes
from graphflow.ops import array_ops, index_ops, math_ops, shape_ops
from graphflow.ops.grad_util import shape_of
from graphflow.ops.registry import no_gradient, register_gradient

no_gradient("InTopKV2")


@register_gradient("TopKV2")
def _top_k_grad(op, grad_values, grad_indices):
    x = op.inputs[0]
    indices = op.outputs[1]
    columns = array_ops.range(0, shape_ops.shape(x)[-1], 1, dtype=dtypes.int32)
    picked = math_ops.cast(math_ops.equal(shape_ops.expand_dims(indices, -1), columns), x.dtype)
    grad = math_ops.reduce_sum(picked * shape_ops.expand_dims(grad_values, -1), axis=-2)
    return grad, None


@register_gradient("GatherNd")
def _gather_nd_grad(op, grad):
    params, indices = op.inputs
    return index_ops.scatter_nd(indices, grad, shape_of(params)), None


@register_gradient("ScatterNd")
def _scatter_nd_grad(op, grad):
    indices = op.inputs[0]
    return None, index_ops.gather_nd(grad, indices), None
