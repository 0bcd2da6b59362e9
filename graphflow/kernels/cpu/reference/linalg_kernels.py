"""numpy kernels for the cumulative ops (Cumsum, Cumprod) and the matrix ops of
ops/linalg_ops.py: band parts, diagonals, inverse, determinant and Cholesky factor, all batched
over the leading dimensions (numpy's linalg functions broadcast over them)."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


# ---------------------------------------------------------------- cumulative sums and products
def _cumulative(node, accumulate, identity):
    static, exclusive, reverse = (node.attrs[k] for k in ("axis", "exclusive", "reverse"))

    def cumulative(x, run_time_axis=None):  # the second input: an axis known at run time only
        axis = static if run_time_axis is None else int(run_time_axis)
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"axis {axis} is out of range for an input of shape {x.shape}")
        ax = axis % x.ndim
        if x.shape[ax] == 0:
            return x.copy()
        if reverse:
            x = np.flip(x, ax)
        if exclusive:  # shift by one: the identity first, the last element dropped
            first = np.full(x.shape[:ax] + (1,) + x.shape[ax + 1:], identity, dtype=x.dtype)
            x = np.concatenate([first, np.delete(x, -1, axis=ax)], axis=ax)
        out = accumulate(x, axis=ax, dtype=x.dtype)
        if reverse:
            out = np.flip(out, ax)
        return np.ascontiguousarray(out)
    return cumulative


@cpu_kernel("Cumsum")
def _cumsum(node):
    return _cumulative(node, np.cumsum, 0)


@cpu_kernel("Cumprod")
def _cumprod(node):
    return _cumulative(node, np.cumprod, 1)


# ---------------------------------------------------------------- band part and diagonals
@cpu_kernel("MatrixBandPart")
def _band_part(node):
    lower, upper = node.attrs["num_lower"], node.attrs["num_upper"]

    def band_part(x):
        rows, cols = x.shape[-2:]
        i = np.arange(rows)[:, None]
        j = np.arange(cols)[None, :]
        keep = np.ones((rows, cols), dtype=bool)
        if lower >= 0:
            keep &= i - j <= lower
        if upper >= 0:
            keep &= j - i <= upper
        return np.where(keep, x, np.zeros((), x.dtype))
    return band_part


@cpu_kernel("MatrixDiag")
def _matrix_diag(node):
    def matrix_diag(d):
        n = d.shape[-1]
        out = np.zeros(d.shape + (n,), dtype=d.dtype)
        idx = np.arange(n)
        out[..., idx, idx] = d
        return out
    return matrix_diag


@cpu_kernel("MatrixDiagPart")
def _matrix_diag_part(node):
    return lambda x: np.diagonal(x, axis1=-2, axis2=-1).copy()


@cpu_kernel("MatrixSetDiag")
def _matrix_set_diag(node):
    def matrix_set_diag(x, d):
        n = min(x.shape[-2:])
        if d.shape != x.shape[:-2] + (n,):
            raise ValueError(f"diagonal of shape {d.shape} does not fit input of shape {x.shape} "
                             f"(expected {x.shape[:-2] + (n,)})")
        out = x.copy()
        idx = np.arange(n)
        out[..., idx, idx] = d
        return out
    return matrix_set_diag


# ---------------------------------------------------------------- inverse, determinant, Cholesky
def _square(x, what):
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{what} needs square matrices, got shape {x.shape}")


@cpu_kernel("MatrixInverse")
def _matrix_inverse(node):
    adjoint = node.attrs["adjoint"]

    def matrix_inverse(x):
        _square(x, "matrix_inverse")
        if adjoint:
            x = np.swapaxes(x, -1, -2)
        try:
            return np.linalg.inv(x).astype(x.dtype, copy=False)
        except np.linalg.LinAlgError:
            raise ValueError("matrix_inverse: the input is not invertible") from None
    return matrix_inverse


@cpu_kernel("MatrixDeterminant")
def _matrix_determinant(node):
    def matrix_determinant(x):
        _square(x, "matrix_determinant")
        return np.asarray(np.linalg.det(x), dtype=x.dtype)
    return matrix_determinant


@cpu_kernel("Cholesky")
def _cholesky(node):
    def cholesky(x):
        _square(x, "cholesky")
        try:  # LAPACK's potrf reads the lower triangle only, as TF1's kernel does
            return np.linalg.cholesky(x).astype(x.dtype, copy=False)
        except np.linalg.LinAlgError:
            raise ValueError("cholesky: the input is not positive definite") from None
    return cholesky
