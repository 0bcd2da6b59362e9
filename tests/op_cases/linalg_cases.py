"""Cases for the cumulative ops (Cumsum, Cumprod: exclusive, reverse, negative, tensor and fed axes)
and the matrix ops (band parts, diagonals, inverse, determinant, Cholesky), plus the composites
built on them (tensordot, reduce_logsumexp, norm, meshgrid, linspace, trace, logdet) under the op
type they build. References are numpy's own functions, written independently of the kernels."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, positive, rand


def _cum(np_fn, x, axis, exclusive=False, reverse=False):
    identity = 0 if np_fn is np.cumsum else 1
    if reverse:
        x = np.flip(x, axis)
    out = np_fn(x, axis=axis)
    if exclusive:
        out = np_fn(x, axis=axis) - x if np_fn is np.cumsum else out / x
        out = np.where(np.isfinite(out), out, identity)
    return np.flip(out, axis) if reverse else out


def _spd(n, batch=(), seed=0):
    a = rand(*batch, n, n, seed=seed)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _band(x, lower, upper):
    i, j = np.indices(x.shape[-2:])
    keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
    return np.where(keep, x, 0)


def _set_diag(x, d):
    out = x.copy()
    n = min(x.shape[-2:])
    out[..., range(n), range(n)] = d
    return out


CASES = [
    OpCase("Cumsum", lambda x: tf.cumsum(x, axis=1), [rand(3, 4)], lambda x: np.cumsum(x, 1)),
    OpCase("Cumsum", lambda x: tf.math.cumsum(x, exclusive=True), [rand(4, 2)],
           lambda x: _cum(np.cumsum, x, 0, exclusive=True), name="Cumsum[exclusive]"),
    OpCase("Cumsum", lambda x: tf.cumsum(x, axis=-1, reverse=True), [rand(2, 3, 4)],
           lambda x: _cum(np.cumsum, x, -1, reverse=True), name="Cumsum[reverse]"),
    OpCase("Cumsum", lambda x: tf.cumsum(x, axis=tf.constant(1), exclusive=True, reverse=True),
           [rand(2, 5)], lambda x: _cum(np.cumsum, x, 1, exclusive=True, reverse=True),
           name="Cumsum[tensor axis, exclusive, reverse]"),
    OpCase("Cumsum", lambda x, axis: tf.cumsum(x, axis=axis, reverse=True),
           [rand(3, 4), np.array(-1, np.int32)], lambda x, axis: _cum(np.cumsum, x, -1, reverse=True),
           grad_inputs=[0], name="Cumsum[axis fed at run time]"),
    OpCase("Cumprod", lambda x, axis: tf.cumprod(x, axis=axis, exclusive=True),
           [positive(2, 3), np.array(0, np.int64)], lambda x, axis: _cum(np.cumprod, x, 0, exclusive=True),
           grad_inputs=[0], name="Cumprod[axis fed at run time]"),
    OpCase("Cumsum", lambda x: tf.cumsum(x), [np.arange(6, dtype=np.int32)],
           lambda x: np.cumsum(x).astype(np.int32), name="Cumsum[int32]"),
    OpCase("Cumprod", lambda x: tf.cumprod(x, axis=1), [positive(2, 4)],
           lambda x: np.cumprod(x, 1)),
    OpCase("Cumprod", lambda x: tf.math.cumprod(x, exclusive=True, reverse=True), [positive(4, 2)],
           lambda x: _cum(np.cumprod, x, 0, exclusive=True, reverse=True),
           name="Cumprod[exclusive, reverse]"),
    OpCase("MatrixBandPart", lambda x: tf.matrix_band_part(x, 1, 0), [rand(2, 4, 3)],
           lambda x: _band(x, 1, 0)),
    OpCase("MatrixBandPart", lambda x: tf.linalg.band_part(x, -1, 0), [rand(4, 4)],
           lambda x: np.tril(x), name="MatrixBandPart[lower triangle]"),
    OpCase("MatrixBandPart", lambda x: tf.linalg.band_part(x, 0, -1), [rand(3, 5)],
           lambda x: np.triu(x), name="MatrixBandPart[upper triangle]"),
    OpCase("MatrixDiag", tf.matrix_diag, [rand(2, 3)],
           lambda d: np.stack([np.diag(r) for r in d])),
    OpCase("MatrixDiag", tf.diag, [rand(4)], np.diag, name="MatrixDiag[tf.diag]"),
    OpCase("MatrixDiag", tf.diag, [rand(2, 3)],
           lambda d: np.diag(d.ravel()).reshape(2, 3, 2, 3), name="MatrixDiag[tf.diag rank 2]"),
    OpCase("MatrixDiagPart", tf.matrix_diag_part, [rand(2, 3, 4)],
           lambda x: np.diagonal(x, axis1=-2, axis2=-1)),
    OpCase("MatrixDiagPart", tf.trace, [rand(2, 3, 3)],
           lambda x: np.trace(x, axis1=-2, axis2=-1), name="MatrixDiagPart[tf.trace]"),
    OpCase("MatrixDiagPart", tf.diag_part, [rand(3, 3)], np.diag, unknown_shapes=False,
           name="MatrixDiagPart[tf.diag_part]"),
    OpCase("MatrixSetDiag", tf.matrix_set_diag, [rand(2, 4, 3), rand(2, 3)], _set_diag),
    OpCase("MatrixInverse", tf.matrix_inverse, [rand(2, 3, 3) + 3 * np.eye(3)], np.linalg.inv),
    OpCase("MatrixInverse", lambda x: tf.linalg.inv(x, adjoint=True), [rand(3, 3) + 3 * np.eye(3)],
           lambda x: np.linalg.inv(x.T), name="MatrixInverse[adjoint]"),
    OpCase("MatrixDeterminant", tf.matrix_determinant, [rand(2, 3, 3) + 2 * np.eye(3)],
           np.linalg.det),
    OpCase("MatrixDeterminant", tf.linalg.det,
           [rand(3, 3).astype(np.float32) + 2 * np.eye(3, dtype=np.float32)],
           np.linalg.det, rtol=1e-4, name="MatrixDeterminant[float32]"),
    # TF1's Cholesky gradient is the symmetric one while the kernel reads one triangle, so
    # finite differences along arbitrary directions do not apply: tests/ops/test_linalg_ops.py
    # checks it along symmetric directions
    OpCase("Cholesky", tf.cholesky, [_spd(3, (2,))], np.linalg.cholesky, grad=False),
    OpCase("Cholesky", tf.linalg.logdet, [_spd(4, seed=1)], lambda x: np.linalg.slogdet(x)[1],
           grad=False, name="Cholesky[logdet]"),
    # composites, under an op type they build
    OpCase("Einsum", lambda a, b: tf.tensordot(a, b, axes=1), [rand(2, 3), rand(3, 4)],
           lambda a, b: np.tensordot(a, b, axes=1), unknown_shapes=False, name="Einsum[tensordot 1]"),
    OpCase("Einsum", lambda a, b: tf.tensordot(a, b, axes=[[0, 2], [1, 0]]),
           [rand(2, 3, 4), rand(4, 2, 5)], lambda a, b: np.tensordot(a, b, axes=[[0, 2], [1, 0]]),
           unknown_shapes=False, name="Einsum[tensordot axis lists]"),
    OpCase("Einsum", lambda a, b: tf.tensordot(a, b, axes=0), [rand(2), rand(3)],
           lambda a, b: np.tensordot(a, b, axes=0), unknown_shapes=False, name="Einsum[tensordot outer]"),
    OpCase("Max", lambda x: tf.reduce_logsumexp(x, axis=1), [rand(3, 4) * 100],
           lambda x: np.log(np.sum(np.exp(x - x.max(1, keepdims=True)), 1)) + x.max(1),
           name="Max[reduce_logsumexp]"),
    OpCase("Max", lambda x: tf.math.reduce_logsumexp(x, keepdims=True), [rand(2, 3)],
           lambda x: np.log(np.sum(np.exp(x), keepdims=True)), name="Max[reduce_logsumexp all]"),
    OpCase("Sqrt", tf.norm, [rand(2, 3)], lambda x: np.linalg.norm(x), name="Sqrt[norm]"),
    OpCase("Sqrt", lambda x: tf.norm(x, ord="fro", axis=[-2, -1], keepdims=True), [rand(2, 3, 3)],
           lambda x: np.linalg.norm(x, "fro", axis=(-2, -1), keepdims=True),
           name="Sqrt[norm fro]"),
    OpCase("Abs", lambda x: tf.norm(x, ord=1, axis=1), [rand(3, 4)],
           lambda x: np.linalg.norm(x, 1, axis=1), name="Abs[norm 1]"),
    OpCase("Abs", lambda x: tf.norm(x, ord=np.inf, axis=(0, 1)), [rand(3, 4)],
           lambda x: np.linalg.norm(x, np.inf), name="Abs[norm inf matrix]"),
    OpCase("Abs", lambda x: tf.norm(x, ord=1, axis=(0, 1)), [rand(3, 4)],
           lambda x: np.linalg.norm(x, 1), name="Abs[norm 1 matrix]"),
    OpCase("Pow", lambda x: tf.norm(x, ord=3, axis=0), [rand(4, 2)],
           lambda x: np.linalg.norm(x, 3, axis=0), name="Pow[norm 3]"),
    OpCase("Mul", lambda x, y: tf.meshgrid(x, y), [rand(3), rand(2)],
           lambda x, y: np.meshgrid(x, y), name="Mul[meshgrid xy]"),
    OpCase("Mul", lambda x, y, z: tf.meshgrid(x, y, z, indexing="ij"), [rand(3), rand(2), rand(4)],
           lambda x, y, z: np.meshgrid(x, y, z, indexing="ij"), name="Mul[meshgrid ij]"),
    OpCase("Add", lambda a, b: tf.linspace(a, b, 7), [np.float64(-1.5), np.float64(2.0)],
           lambda a, b: np.linspace(a, b, 7), name="Add[linspace]"),
    OpCase("Add", lambda a, b, n: tf.lin_space(a, b, n), [np.float32(0), np.float32(1),
                                                              np.int32(1)],
           lambda a, b, n: np.linspace(a, b, n).astype(np.float32), shape_from_values=True,
           name="Add[lin_space num 1]"),
]
