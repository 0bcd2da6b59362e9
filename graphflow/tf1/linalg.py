"""`tf.linalg`: TF1's linear-algebra namespace, the matrix ops of `ops/linalg_ops.py`,
`ops/linalg_decomp_ops.py` and `ops/linalg_solve_ops.py` (and matmul, einsum, tensordot, norm)
under their `tf.linalg.*` names: band_part, diag, diag_part, set_diag, tensor_diag,
tensor_diag_part, inv, det, slogdet, logdet, cholesky, cholesky_solve, solve, triangular_solve,
lstsq, svd, qr, eigh, eigvalsh, transpose, matrix_transpose, adjoint, trace, matvec, and
l2_normalize and global_norm (tf.nn's and tf.clip_by_global_norm's, under their tf.linalg
names)."""

from graphflow.ops import shape_ops
from graphflow.ops.einsum_ops import einsum
from graphflow.ops.linalg_decomp_ops import qr, self_adjoint_eig, self_adjoint_eigvals, svd
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
from graphflow.ops.linalg_ops import (
    diag as tensor_diag,
)
from graphflow.ops.linalg_ops import (
    diag_part as tensor_diag_part,
)
from graphflow.ops.linalg_solve_ops import (
    cholesky_solve,
    log_matrix_determinant,
    matrix_solve,
    matrix_solve_ls,
    matrix_triangular_solve,
)
from graphflow.ops.math_composites import norm, tensordot
from graphflow.ops.math_ops import matmul
from graphflow.ops.nn_ops import l2_normalize
from graphflow.tf1.clip_ops import global_norm

band_part = matrix_band_part
diag = matrix_diag
diag_part = matrix_diag_part
set_diag = matrix_set_diag
inv = matrix_inverse
det = matrix_determinant
transpose = matrix_transpose
slogdet = log_matrix_determinant
solve = matrix_solve
triangular_solve = matrix_triangular_solve
lstsq = matrix_solve_ls
eigh = self_adjoint_eig
eigvalsh = self_adjoint_eigvals


def adjoint(matrix, name=None):
    """`tf.linalg.adjoint`: the conjugate transpose of each matrix (the transpose: graphflow
    tensors are real)."""
    return matrix_transpose(matrix, name=name or "adjoint")


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False,
           name=None):
    """`tf.linalg.matvec`: the matrix-vector products a b of a [..., M, N] and b [..., N]
    (a^T b with `transpose_a` or `adjoint_a`), [..., M]; as TF, a matmul with b as a column."""
    column = shape_ops.expand_dims(b, -1)
    product = matmul(a, column, transpose_a=transpose_a or adjoint_a)
    return shape_ops.squeeze(product, axis=[-1], name=name or "MatVec")


__all__ = ["band_part", "diag", "diag_part", "set_diag", "tensor_diag", "tensor_diag_part", "inv",
           "det", "slogdet", "cholesky", "cholesky_solve", "logdet", "eye", "solve",
           "triangular_solve", "lstsq", "svd", "qr", "eigh", "eigvalsh", "transpose",
           "matrix_transpose", "adjoint", "trace", "norm", "matmul", "matvec", "einsum",
           "tensordot", "l2_normalize", "global_norm"]
