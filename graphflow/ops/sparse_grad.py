"""Gradients of the sparse op types. SparseToDense: the values get the dense gradient at their
indices, the default value the rest of it (TF1's rule); indices and shape get none.
SparseTensorDenseMatMul: TF1's rule, for the values and the dense operand."""

from graphflow.ops import array_ops, index_ops, math_ops, shape_ops, sparse_math
from graphflow.ops.registry import register_gradient
from graphflow.ops.sparse_tensor import SparseTensor


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


@register_gradient("SparseTensorDenseMatMul")
def _sparse_tensor_dense_matmul_grad(op, grad):
    """TF1's rule: b's gradient is A's adjoint times grad (transposed back for adjoint_b); a
    value's gradient is the dot product of the grad row and the b row its entry multiplied."""
    indices, values, shape, b = op.inputs
    adjoint_a, adjoint_b = op.attrs["adjoint_a"], op.attrs["adjoint_b"]
    a = SparseTensor(indices, values, shape)
    b_grad = sparse_math.sparse_tensor_dense_matmul(a, grad, adjoint_a=not adjoint_a)
    if adjoint_b:
        b_grad = array_ops.transpose(b_grad)
    rows = array_ops.gather(indices, 0, axis=1)
    cols = array_ops.gather(indices, 1, axis=1)
    grad_rows = array_ops.gather(grad, cols if adjoint_a else rows)
    b_rows = array_ops.gather(array_ops.transpose(b) if adjoint_b else b,
                              rows if adjoint_a else cols)
    values_grad = math_ops.reduce_sum(grad_rows * b_rows, axis=1)
    return None, values_grad, None, b_grad
