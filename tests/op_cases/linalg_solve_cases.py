"""Cases for the linear solvers and log-determinants (MatrixSolve, MatrixTriangularSolve,
MatrixSolveLs, LogMatrixDeterminant) and composites over them (cholesky_solve, matvec). The
fast path of matrix_solve_ls (Cholesky of a product computed on the device, which the recording
CUDA runtime of tests/test_cuda_kernels.py does not compute) is checked against TensorFlow's
values and gradients in tests/ops/test_linalg_solve_ops.py. References are numpy's own
functions, written independently of the kernels."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, rand


def _well_conditioned(*shape, seed=0):
    n = shape[-1]
    return rand(*shape, seed=seed) + 3 * np.eye(n)


def _triangular_ref(a, b, lower=True, adjoint=False):
    t = np.tril(a) if lower else np.triu(a)
    if adjoint:
        t = np.swapaxes(t, -1, -2)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return np.linalg.solve(np.broadcast_to(t, batch + t.shape[-2:]),
                           np.broadcast_to(b, batch + b.shape[-2:]))


def _pinv_solve(a, b):
    return np.stack([np.linalg.pinv(x) @ y for x, y in zip(a, b)])


def _spd(n, seed=0):
    a = rand(n, n, seed=seed)
    return a @ a.T + n * np.eye(n)


CASES = [
    OpCase("MatrixSolve", tf.matrix_solve, [_well_conditioned(2, 3, 3), rand(2, 3, 2)],
           np.linalg.solve),
    OpCase("MatrixSolve", lambda a, b: tf.linalg.solve(a, b, adjoint=True),
           [_well_conditioned(4, 4, seed=1), rand(4, 1)],
           lambda a, b: np.linalg.solve(a.T, b), name="MatrixSolve[adjoint]"),
    OpCase("MatrixSolve", tf.matrix_solve,
           [_well_conditioned(3, 3, seed=2).astype(np.float32), rand(3, 2, dtype=np.float32)],
           np.linalg.solve, rtol=1e-4, atol=1e-5, name="MatrixSolve[float32]"),
    OpCase("MatrixTriangularSolve", tf.matrix_triangular_solve,
           [_well_conditioned(2, 3, 3), rand(2, 3, 2)], _triangular_ref),
    OpCase("MatrixTriangularSolve", lambda a, b: tf.linalg.triangular_solve(a, b, lower=False),
           [_well_conditioned(4, 4, seed=3), rand(4, 3)],
           lambda a, b: _triangular_ref(a, b, lower=False), name="MatrixTriangularSolve[upper]"),
    OpCase("MatrixTriangularSolve",
           lambda a, b: tf.matrix_triangular_solve(a, b, lower=True, adjoint=True),
           [_well_conditioned(3, 3, seed=4), rand(3, 2)],
           lambda a, b: _triangular_ref(a, b, adjoint=True),
           name="MatrixTriangularSolve[lower adjoint]"),
    OpCase("MatrixTriangularSolve",
           lambda a, b: tf.matrix_triangular_solve(a, b, lower=False, adjoint=True),
           [_well_conditioned(2, 1, 3, 3, seed=5), rand(3, 3, 2)],
           lambda a, b: _triangular_ref(a, b, lower=False, adjoint=True),
           name="MatrixTriangularSolve[upper adjoint, broadcast batch]"),
    OpCase("MatrixTriangularSolve", tf.cholesky_solve,
           [np.linalg.cholesky(_spd(3)), rand(3, 2)],
           lambda c, b: np.linalg.solve(c @ c.T, b), name="MatrixTriangularSolve[cholesky_solve]"),
    OpCase("MatrixSolveLs", lambda a, b: tf.matrix_solve_ls(a, b, fast=False),
           [rand(2, 5, 3), rand(2, 5, 2)], _pinv_solve, grad=False,
           name="MatrixSolveLs[complete orthogonal decomposition, deep]"),
    OpCase("MatrixSolveLs", lambda a, b: tf.linalg.lstsq(a, b, l2_regularizer=1.0, fast=False),
           [np.array([[[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]]), rand(1, 3, 1)], _pinv_solve,
           grad=False, name="MatrixSolveLs[rank deficient]"),
    OpCase("MatrixSolveLs", lambda a, b: tf.matrix_solve_ls(a, b, fast=False),
           [rand(1, 2, 4), rand(1, 2, 3)], _pinv_solve, grad=False,
           name="MatrixSolveLs[wide, minimum norm]"),
    OpCase("LogMatrixDeterminant", lambda a: tf.linalg.slogdet(a), [rand(2, 3, 3)],
           lambda a: tuple(np.linalg.slogdet(a))),
    OpCase("MatMul", tf.linalg.matvec, [rand(2, 3, 4), rand(2, 4)],
           lambda a, b: np.einsum("...ij,...j->...i", a, b), name="MatMul[matvec]"),
    OpCase("MatMul", lambda a, b: tf.linalg.matvec(a, b, transpose_a=True), [rand(4, 3), rand(4)],
           lambda a, b: a.T @ b, name="MatMul[matvec transpose_a]"),
]
