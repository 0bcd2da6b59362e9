"""Gradient rules for the decompositions of linalg_decomp_ops.py, TF's formulas (real matrices).

Throughout, r(x) = x / (x^2 + 1e-20) is TF's safe reciprocal: it is 0, not inf, where
eigenvalues or singular values coincide (where the decomposition is not differentiable).

SelfAdjointEigV2, a = v diag(e) v^T: with F[i, j] = r(e_j - e_i) off the diagonal and 0 on it,
da = v (diag(ge) + F * (v^T gv)) v^T, then folded onto the lower triangle the kernel reads
(da + da^T, lower triangle, diagonal halved). Without v: da = v diag(ge) v^T from a fresh
decomposition, folded the same way.

Svd, a = u diag(s) v^T (Giles 2008; Townsend 2016 for the thin case), for m <= n (else the
rule runs on a^T): with F[i, j] = r(s_j^2 - s_i^2), J = F * (u^T gu), K = F * (v1^T gv1),
da = u (diag(gs) + (J + J^T) S + S (K + K^T)) v1^T
     + [m < n] u S^-1 (gv1^T (I - v1 v1^T) - [full] (v1^T gv2) v2^T)
where v1 holds v's first m columns. full_matrices with |m - n| > 1 has no gradient (the null
space's basis is not determined), as in TF. Without u, v: da = u diag(gs) v^T.

Qr, a = q r (Roberts and Roth 2020, square and deep case, m >= n, reduced q): with
M = tril(q^T gq - gq^T q + r gr^T - gr r^T), da = (q (gr + M r^-T)) + (gq - q q^T gq) r^-T.
Wide matrices (m < n) split a = [x, y], r = [u, v] and reduce to the square case:
dx = qr_grad(q, u, gq + y gv^T, gu), dy = q gv. Deep matrices with full_matrices have no
gradient, as in TF.
"""

from graphflow.ops import math_ops as m
from graphflow.ops import shape_ops
from graphflow.ops.linalg_decomp_ops import self_adjoint_eig, svd
from graphflow.ops.linalg_ops import (
    matrix_band_part,
    matrix_diag,
    matrix_diag_part,
    matrix_set_diag,
    matrix_transpose,
)
from graphflow.ops.linalg_solve_ops import matrix_triangular_solve
from graphflow.ops.registry import register_gradient


def _safe_reciprocal(x, epsilon=1e-20):
    return x * m.reciprocal(x * x + epsilon)


def _pairwise_gaps(values):
    """F[..., i, j] = r(values_j - values_i) off the diagonal, 0 on it."""
    diffs = shape_ops.expand_dims(values, -2) - shape_ops.expand_dims(values, -1)
    return matrix_set_diag(_safe_reciprocal(diffs), shape_ops.zeros_like(values))


def _fold_to_lower(grad_a):
    grad_a = matrix_band_part(grad_a + matrix_transpose(grad_a), -1, 0)
    return matrix_set_diag(grad_a, 0.5 * matrix_diag_part(grad_a))


@register_gradient("SelfAdjointEigV2")
def _self_adjoint_eig_grad(op, grad_e, grad_v):
    e = op.outputs[0]
    if op.attrs["compute_v"]:
        v = op.outputs[1]
        inner = matrix_diag(grad_e) + _pairwise_gaps(e) * m.matmul(v, grad_v, transpose_a=True)
    else:
        _, v = self_adjoint_eig(op.inputs[0])
        inner = matrix_diag(grad_e)
    grad_a = m.matmul(v, m.matmul(inner, v, transpose_b=True))
    return (_fold_to_lower(grad_a),)


def _static_matrix_dims(a, what):
    dims = a.shape.dims
    if dims is None or dims[-2] is None or dims[-1] is None:
        raise NotImplementedError(f"the {what} gradient needs the matrix dimensions known when the "
                                  f"graph is built, got shape {a.shape}")
    return dims[-2], dims[-1]


@register_gradient("Svd")
def _svd_grad(op, grad_s, grad_u, grad_v):
    a = op.inputs[0]
    if not op.attrs["compute_uv"]:
        _, u, v = svd(a, compute_uv=True)
        return (m.matmul(u, m.matmul(matrix_diag(grad_s), v, transpose_b=True)),)
    rows, cols = _static_matrix_dims(a, "Svd")
    full = op.attrs["full_matrices"]
    s, u, v = op.outputs
    transposed = rows > cols
    if transposed:  # the rule for a^T = v diag(s) u^T, transposed back at the end
        rows, cols = cols, rows
        u, v, grad_u, grad_v = v, u, grad_v, grad_u
    if full and cols - rows > 1:
        raise NotImplementedError(f"the Svd gradient with full_matrices=True is not defined for "
                                  f"|m - n| > 1 (shape {a.shape}), as in TF")
    s_mat = matrix_diag(s)
    gaps = _pairwise_gaps(m.square(s))
    v1, grad_v1 = v[..., :, :rows], grad_v[..., :, :rows]
    j = gaps * m.matmul(u, grad_u, transpose_a=True)
    k = gaps * m.matmul(v1, grad_v1, transpose_a=True)
    middle = (matrix_diag(grad_s) + m.matmul(j + matrix_transpose(j), s_mat)
              + m.matmul(s_mat, k + matrix_transpose(k)))
    grad_a = m.matmul(u, m.matmul(middle, v1, transpose_b=True))
    if rows != cols:
        gv1t = matrix_transpose(grad_v1)
        rest = gv1t - m.matmul(m.matmul(gv1t, v1), v1, transpose_b=True)
        if full:
            v2, grad_v2 = v[..., :, rows:cols], grad_v[..., :, rows:cols]
            rest = rest - m.matmul(m.matmul(v1, grad_v2, transpose_a=True), v2, transpose_b=True)
        s_inv = matrix_diag(_safe_reciprocal(s))
        grad_a = grad_a + m.matmul(m.matmul(u, s_inv), rest)
    if transposed:
        grad_a = matrix_transpose(grad_a)
    return (grad_a,)


def _times_r_inverse_transpose(x, r):
    """x r^-T for upper-triangular r: the transpose of the solve r y = x^T."""
    return matrix_transpose(matrix_triangular_solve(r, matrix_transpose(x), lower=False))


def _qr_grad_deep(q, r, grad_q, grad_r):
    qgq = m.matmul(q, grad_q, transpose_a=True)
    rgr = m.matmul(r, grad_r, transpose_b=True)
    lower = matrix_band_part(qgq - matrix_transpose(qgq) + rgr - matrix_transpose(rgr), -1, 0)
    first = m.matmul(q, grad_r + _times_r_inverse_transpose(lower, r))
    return first + _times_r_inverse_transpose(grad_q - m.matmul(q, qgq), r)


@register_gradient("Qr")
def _qr_grad(op, grad_q, grad_r):
    a = op.inputs[0]
    q, r = op.outputs
    rows, cols = _static_matrix_dims(a, "Qr")
    if rows > cols and op.attrs["full_matrices"]:
        raise NotImplementedError(f"the Qr gradient is not defined for matrices with more rows "
                                  f"than columns with full_matrices=True (shape {a.shape}), as "
                                  "in TF")
    if rows >= cols:
        return (_qr_grad_deep(q, r, grad_q, grad_r),)
    y = a[..., :, rows:]
    u = r[..., :, :rows]
    grad_u, grad_v = grad_r[..., :, :rows], grad_r[..., :, rows:]
    grad_x = _qr_grad_deep(q, u, grad_q + m.matmul(y, grad_v, transpose_b=True), grad_u)
    grad_y = m.matmul(q, grad_v)
    return (shape_ops.concat([grad_x, grad_y], axis=-1),)
