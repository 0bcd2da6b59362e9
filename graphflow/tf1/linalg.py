"""`tf.linalg`: TF1's linear-algebra namespace, the matrix ops of `ops/linalg_ops.py` (and
matmul, einsum, tensordot, norm) under their `tf.linalg.*` names: band_part, diag, diag_part,
set_diag, inv, det, cholesky, logdet, transpose, adjoint, trace."""

from graphflow.ops.einsum_ops import einsum
from graphflow.ops.linalg_ops import (
    cholesky,
    eye,
    logdet,
    matrix_band_part,
    matrix_determinant,
    matrix_diag,
    matrix_diag_part,
    matrix_inverse,
    matrix_set_diag,
    matrix_transpose,
    trace,
)
from graphflow.ops.math_composites import norm, tensordot
from graphflow.ops.math_ops import matmul

band_part = matrix_band_part
diag = matrix_diag
diag_part = matrix_diag_part
set_diag = matrix_set_diag
inv = matrix_inverse
det = matrix_determinant
transpose = matrix_transpose


def adjoint(matrix, name=None):
    """`tf.linalg.adjoint`: the conjugate transpose of each matrix (the transpose: graphflow
    tensors are real)."""
    return matrix_transpose(matrix, name=name or "adjoint")


__all__ = ["band_part", "diag", "diag_part", "set_diag", "inv", "det", "cholesky", "logdet", "eye",
           "transpose", "adjoint", "trace", "norm", "matmul", "einsum", "tensordot"]
