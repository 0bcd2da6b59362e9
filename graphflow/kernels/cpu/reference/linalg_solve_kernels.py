"""numpy kernels for the matrix decompositions of ops/linalg_decomp_ops.py (Svd, Qr,
SelfAdjointEigV2) and the solvers of ops/linalg_solve_ops.py (MatrixSolve,
MatrixTriangularSolve, MatrixSolveLs, LogMatrixDeterminant), batched over the leading dimensions
(numpy's LAPACK-backed linalg functions broadcast over them)."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


def _check_square(x, what):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{what} needs square matrices, got shape {x.shape}")


def _empty(dtype):
    return np.zeros((0,), dtype=dtype)


# ---------------------------------------------------------------- decompositions
@cpu_kernel("Svd")
def _svd(node):
    compute_uv, full = node.attrs["compute_uv"], node.attrs["full_matrices"]

    def svd(a):
        if not compute_uv:
            s = np.linalg.svd(a, compute_uv=False)
            return s.astype(a.dtype, copy=False), _empty(a.dtype), _empty(a.dtype)
        u, s, vt = np.linalg.svd(a, full_matrices=full)
        v = np.ascontiguousarray(np.swapaxes(vt, -1, -2))
        return (s.astype(a.dtype, copy=False), u.astype(a.dtype, copy=False),
                v.astype(a.dtype, copy=False))
    return svd


@cpu_kernel("Qr")
def _qr(node):
    mode = "complete" if node.attrs["full_matrices"] else "reduced"

    def qr(a):
        q, r = np.linalg.qr(a, mode=mode)
        return q.astype(a.dtype, copy=False), r.astype(a.dtype, copy=False)
    return qr


@cpu_kernel("SelfAdjointEigV2")
def _self_adjoint_eig(node):
    compute_v = node.attrs["compute_v"]

    def self_adjoint_eig(a):
        _check_square(a, "self_adjoint_eig")
        if not compute_v:  # LAPACK's syevd reads the lower triangle (UPLO="L"), as TF's kernel
            return np.linalg.eigvalsh(a, UPLO="L").astype(a.dtype, copy=False), _empty(a.dtype)
        e, v = np.linalg.eigh(a, UPLO="L")
        return e.astype(a.dtype, copy=False), v.astype(a.dtype, copy=False)
    return self_adjoint_eig


# ---------------------------------------------------------------- solvers
def _not_invertible():
    return ValueError("Input matrix is not invertible.")


@cpu_kernel("MatrixSolve")
def _matrix_solve(node):
    adjoint = node.attrs["adjoint"]

    def matrix_solve(a, b):
        _check_square(a, "matrix_solve")
        if a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
            raise ValueError(f"matrix_solve: matrix of shape {a.shape} does not fit rhs of shape "
                             f"{b.shape}")
        if adjoint:
            a = np.swapaxes(a, -1, -2)
        try:
            return np.linalg.solve(a, b).astype(b.dtype, copy=False)
        except np.linalg.LinAlgError:
            raise _not_invertible() from None
    return matrix_solve


def triangular_solve(a, b, lower, adjoint):
    """X with T X = b, T the lower (or upper) triangle of a (its transpose with `adjoint`),
    batch dimensions broadcast. Substitution row by row, each step vectorised over the batch and
    the right-hand sides (the rows depend on each other: inherently sequential); a zero pivot
    gives inf/NaN as TF's kernel does."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    n = a.shape[-1]
    t = np.tril(a) if lower else np.triu(a)
    if adjoint:
        t = np.swapaxes(t, -1, -2)
        lower = not lower
    t = np.broadcast_to(t, batch + (n, n))
    x = np.zeros(batch + b.shape[-2:], dtype=np.result_type(a, b))
    b = np.broadcast_to(b, x.shape)
    order = range(n) if lower else range(n - 1, -1, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in order:
            done = slice(0, i) if lower else slice(i + 1, n)
            partial = np.einsum("...j,...jk->...k", t[..., i, done], x[..., done, :])
            x[..., i, :] = (b[..., i, :] - partial) / t[..., i, i, None]
    return x


@cpu_kernel("MatrixTriangularSolve")
def _matrix_triangular_solve(node):
    lower, adjoint = node.attrs["lower"], node.attrs["adjoint"]

    def matrix_triangular_solve(a, b):
        _check_square(a, "matrix_triangular_solve")
        if b.ndim < 2 or a.shape[-1] != b.shape[-2]:
            raise ValueError(f"matrix_triangular_solve: matrix of shape {a.shape} does not fit "
                             f"rhs of shape {b.shape}")
        try:
            np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            raise ValueError(f"matrix_triangular_solve: the batch dimensions of {a.shape} and "
                             f"{b.shape} do not broadcast") from None
        return triangular_solve(a, b, lower, adjoint).astype(a.dtype, copy=False)
    return matrix_triangular_solve


@cpu_kernel("MatrixSolveLs")
def _matrix_solve_ls(node):
    fast = node.attrs["fast"]

    def matrix_solve_ls(a, b, l2):
        if a.shape[:-2] != b.shape[:-2] or a.shape[-2] != b.shape[-2]:
            raise ValueError(f"matrix_solve_ls: matrix of shape {a.shape} does not fit rhs of "
                             f"shape {b.shape}")
        m, n = a.shape[-2:]
        out = np.zeros(a.shape[:-2] + (n, b.shape[-1]), dtype=a.dtype)
        if min(m, n, b.shape[-1]) == 0:
            return out
        at = np.swapaxes(a, -1, -2)
        if fast:  # the regularized normal equations (TF's fast path)
            if m >= n:
                gram = at @ a + float(l2) * np.eye(n, dtype=a.dtype)
                return _cholesky_solve(gram, at @ b).astype(a.dtype, copy=False)
            gram = a @ at + float(l2) * np.eye(m, dtype=a.dtype)
            return (at @ _cholesky_solve(gram, b)).astype(a.dtype, copy=False)
        # the minimum-norm least-squares solution (orthogonal decomposition): X = pinv(A) B,
        # with LAPACK's gelsd per matrix (numpy's lstsq is not batched)
        flat_a = a.reshape((-1, m, n)).astype(np.float64)
        flat_b = b.reshape((-1, m, b.shape[-1])).astype(np.float64)
        flat_out = out.reshape((-1, n, b.shape[-1]))
        for i in range(flat_a.shape[0]):  # one LAPACK call per matrix of the batch
            flat_out[i] = np.linalg.lstsq(flat_a[i], flat_b[i], rcond=None)[0]
        return out
    return matrix_solve_ls


def _cholesky_solve(gram, rhs):
    try:
        chol = np.linalg.cholesky(gram)
    except np.linalg.LinAlgError:
        raise ValueError("matrix_solve_ls: the regularized Gram matrix is not positive definite "
                         "(the matrix is rank deficient: use fast=False)") from None
    y = triangular_solve(chol, rhs, lower=True, adjoint=False)
    return triangular_solve(chol, y, lower=True, adjoint=True)


@cpu_kernel("LogMatrixDeterminant")
def _log_matrix_determinant(node):
    def log_matrix_determinant(a):
        _check_square(a, "log_matrix_determinant")
        sign, logabs = np.linalg.slogdet(a)
        return np.asarray(sign, a.dtype), np.asarray(logabs, a.dtype)
    return log_matrix_determinant
