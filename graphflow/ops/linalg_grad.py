"""Gradient rules for the matrix ops of linalg_ops.py (TF1's formulas).

band part: the same band of the gradient. matrix_diag / matrix_diag_part / matrix_set_diag: the
diagonal of the gradient, or the gradient with its diagonal replaced. Inverse Y = A^-1:
dA = -Y^T G Y^T (for `adjoint`, Y = (A^T)^-1: dA = -Y G^T Y). Determinant: dA = g det(A) A^-T.
Cholesky A = L L^T (TF1's symmetric rule, as in Murray 2016): with P = Phi(L^T G), where Phi
keeps the lower triangle and halves the diagonal, dA = sym(L^-T P L^-1), sym(X) = (X + X^T) / 2;
the gradient is symmetric, as if A's two triangles moved together. The solvers of
linalg_solve_ops.py: each rule's docstring gives its formula (TF's).
"""

from graphflow.ops import math_ops as m
from graphflow.ops import shape_ops
from graphflow.ops.grad_util import unbroadcast
from graphflow.ops.linalg_ops import (
    cholesky,
    eye,
    matrix_band_part,
    matrix_diag,
    matrix_diag_part,
    matrix_inverse,
    matrix_set_diag,
    matrix_transpose,
)
from graphflow.ops.linalg_solve_ops import cholesky_solve, matrix_solve, matrix_triangular_solve
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


# ---------------------------------------------------------------- solvers (linalg_solve_ops.py)
@register_gradient("MatrixSolve")
def _matrix_solve_grad(op, grad):
    """X = A^-1 B: dB = A^-T G, dA = -dB X^T (for `adjoint`, X = A^-T B: dA = -X dB^T)."""
    a, x = op.inputs[0], op.outputs[0]
    adjoint = op.attrs["adjoint"]
    grad_b = matrix_solve(a, grad, adjoint=not adjoint)
    if adjoint:
        return -m.matmul(x, grad_b, transpose_b=True), grad_b
    return -m.matmul(grad_b, x, transpose_b=True), grad_b


@register_gradient("MatrixTriangularSolve")
def _matrix_triangular_solve_grad(op, grad):
    """As MatrixSolve's, with dA kept to the triangle the kernel reads and both gradients summed
    over the batch dimensions that broadcast."""
    a, b = op.inputs
    x = op.outputs[0]
    lower, adjoint = op.attrs["lower"], op.attrs["adjoint"]
    grad_b = matrix_triangular_solve(a, grad, lower=lower, adjoint=not adjoint)
    if adjoint:
        grad_a = -m.matmul(x, grad_b, transpose_b=True)
    else:
        grad_a = -m.matmul(grad_b, x, transpose_b=True)
    grad_a = matrix_band_part(grad_a, -1, 0) if lower else matrix_band_part(grad_a, 0, -1)
    return unbroadcast(grad_a, a), unbroadcast(grad_b, b)


@register_gradient("LogMatrixDeterminant")
def _log_matrix_determinant_grad(op, grad_sign, grad_log_abs):
    """d log|det A| = A^-T (the sign is piecewise constant: no gradient)."""
    scale = shape_ops.expand_dims(shape_ops.expand_dims(grad_log_abs, -1), -1)
    return (scale * matrix_inverse(op.inputs[0], adjoint=True),)


@register_gradient("MatrixSolveLs")
def _matrix_solve_ls_grad(op, grad):
    """The fast path's rule (the normal equations, TF's formulas): for m >= n, with
    C = A^T A + l2 I and Z = C^-1 G: dA = -A (X Z^T + Z X^T) + B Z^T, dB = A Z; for m < n,
    with C = A A^T + l2 I, dB = C^-1 A G, T = C^-1 B: dA = -dB T^T A + T (G - A^T dB)^T. No
    gradient for fast=False (TF has none)."""
    if not op.attrs["fast"]:
        raise ValueError("Gradient not defined for fast=False")
    a, b, l2 = op.inputs
    x = op.outputs[0]
    rows, cols = a.shape.dims[-2], a.shape.dims[-1]
    if rows is None or cols is None:
        raise NotImplementedError("the MatrixSolveLs gradient needs the matrix dimensions known "
                                  f"when the graph is built, got shape {a.shape}")
    l2 = m.cast(l2, a.dtype)
    if rows >= cols:
        chol = cholesky(m.matmul(a, a, transpose_a=True) + l2 * eye(cols, dtype=a.dtype))
        z = cholesky_solve(chol, grad)
        xz = m.matmul(x, z, transpose_b=True)
        grad_a = -m.matmul(a, xz + matrix_transpose(xz)) + m.matmul(b, z, transpose_b=True)
        return grad_a, m.matmul(a, z), None
    chol = cholesky(m.matmul(a, a, transpose_b=True) + l2 * eye(rows, dtype=a.dtype))
    grad_b = cholesky_solve(chol, m.matmul(a, grad))
    t = cholesky_solve(chol, b)
    first = -m.matmul(grad_b, m.matmul(t, a, transpose_a=True))
    second = m.matmul(t, grad - m.matmul(a, grad_b, transpose_a=True), transpose_b=True)
    return first + second, grad_b, None
