"""Gradient rules for the matrix ops of linalg_ops.py (TF1's formulas).

band part: the same band of the gradient. matrix_diag / matrix_diag_part / matrix_set_diag: the
diagonal of the gradient, or the gradient with its diagonal replaced. Inverse Y = A^-1:
dA = -Y^T G Y^T (for `adjoint`, Y = (A^T)^-1: dA = -Y G^T Y). Determinant: dA = g det(A) A^-T.
Cholesky A = L L^T (TF1's symmetric rule, as in Murray 2016): with P = Phi(L^T G), where Phi
keeps the lower triangle and halves the diagonal, dA = sym(L^-T P L^-1), sym(X) = (X + X^T) / 2;
the gradient is symmetric, as if A's two triangles moved together.
"""

from graphflow.ops import math_ops as m
from graphflow.ops import shape_ops
from graphflow.ops.linalg_ops import (
    matrix_band_part,
    matrix_diag,
    matrix_diag_part,
    matrix_inverse,
    matrix_set_diag,
    matrix_transpose,
)
from graphflow.ops.registry import register_gradient


@register_gradient("MatrixBandPart")
def _band_part_grad(op, grad):
    return (matrix_band_part(grad, op.attrs["num_lower"], op.attrs["num_upper"]),)


@register_gradient("MatrixDiag")
def _matrix_diag_grad(op, grad):
    return (matrix_diag_part(grad),)


@register_gradient("MatrixDiagPart")
def _matrix_diag_part_grad(op, grad):
    x = op.inputs[0]
    if x.shape.ndims is not None and x.shape.dims[-1] == x.shape.dims[-2] is not None:
        return (matrix_diag(grad),)
    return (matrix_set_diag(shape_ops.zeros_like(x), grad),)


@register_gradient("MatrixSetDiag")
def _matrix_set_diag_grad(op, grad):
    diag = op.inputs[1]
    return (matrix_set_diag(grad, shape_ops.zeros_like(diag)), matrix_diag_part(grad))


@register_gradient("MatrixInverse")
def _matrix_inverse_grad(op, grad):
    y = op.outputs[0]
    if op.attrs["adjoint"]:
        return (-m.matmul(y, m.matmul(grad, y, transpose_a=True)),)
    return (-m.matmul(y, m.matmul(grad, y, transpose_b=True), transpose_a=True),)


@register_gradient("MatrixDeterminant")
def _matrix_determinant_grad(op, grad):
    a, det = op.inputs[0], op.outputs[0]
    scale = shape_ops.expand_dims(shape_ops.expand_dims(grad * det, -1), -1)
    return (scale * matrix_inverse(a, adjoint=True),)


@register_gradient("Cholesky")
def _cholesky_grad(op, grad):
    chol = op.outputs[0]
    chol_inv = matrix_inverse(chol)
    middle = m.matmul(chol, grad, transpose_a=True)
    middle = matrix_set_diag(middle, 0.5 * matrix_diag_part(middle))
    middle = matrix_band_part(middle, -1, 0)
    grad_a = m.matmul(m.matmul(chol_inv, middle, transpose_a=True), chol_inv)
    return (0.5 * (grad_a + matrix_transpose(grad_a)),)
