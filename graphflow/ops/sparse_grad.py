"""Gradient of SparseToDense: the values get the dense gradient at their indices, the default value
the rest of it (TF1's rule); indices and shape get none."""

from graphflow.ops import index_ops, math_ops, shape_ops
from graphflow.ops.registry import register_gradient


@register_gradient("SparseToDense")
def _sparse_to_dense_grad(op, grad):
    indices, output_shape, values, _ = op.inputs
    # one row per value, as many columns as the output has dimensions (indices may be 0-, 1- or 2-D)
    index_matrix = shape_ops.reshape(indices, shape_ops.concat([[-1], shape_ops.shape(output_shape)],
                                                               0))
    values_grad = index_ops.gather_nd(grad, index_matrix)
    if values.shape.ndims == 0:
        values_grad = math_ops.reduce_sum(values_grad)
    default_grad = math_ops.reduce_sum(grad) - math_ops.reduce_sum(values_grad)
    return None, None, values_grad, default_grad
