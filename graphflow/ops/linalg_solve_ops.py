"""Linear systems and log-determinants over the last two dimensions, batched over the leading
ones, as TF1's kernels define them: MatrixSolve (`tf.matrix_solve`), MatrixTriangularSolve
(`tf.matrix_triangular_solve`, batch dimensions broadcast), MatrixSolveLs (`tf.matrix_solve_ls`
with `fast=False`: the minimum-norm least-squares solution) and LogMatrixDeterminant
(`tf.linalg.slogdet`), and TF1's Python composites over them: `tf.cholesky_solve` and the fast
path of `tf.matrix_solve_ls` (the regularized normal equations through a Cholesky factor, which
is differentiable). Gradients are in linalg_grad.py.
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import get_default_graph
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import math_ops, no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.linalg_ops import LINALG_FLOATS, _matrix_dims, _square, cholesky, eye
from graphflow.ops.registry import broadcast_static, define, make_op, make_tensor, same_dtype


def _rows_agree(a_rows, b, what):
    rows = b.shape.dims[-2] if b.shape.ndims is not None else None
    if a_rows is not None and rows is not None and a_rows != rows:
        raise ValueError(f"{what}: the matrix has {a_rows} rows but rhs has {rows} (shapes of "
                         f"rhs {b.shape})")


def _solve_infer(inputs, attrs):
    a, b = inputs
    same_dtype(inputs, "matrix and rhs")
    a_parts = _square(a, "matrix")
    b_parts = _matrix_dims(b, "rhs")
    if a_parts is None or b_parts is None:
        return [(a.dtype, TensorShape(None) if b_parts is None else b.shape)]
    _rows_agree(a_parts[1] if a_parts[1] is not None else a_parts[2], b, "matrix_solve")
    batch = TensorShape(a_parts[0]).merge_with(TensorShape(b_parts[0])) \
        if TensorShape(a_parts[0]).is_compatible_with(TensorShape(b_parts[0])) else None
    if batch is None:
        raise ValueError(f"matrix of shape {a.shape} and rhs of shape {b.shape} must have the "
                         "same batch dimensions")
    return [(a.dtype, TensorShape(list(batch.dims) + list(b_parts[1:])))]


def _triangular_solve_infer(inputs, attrs):
    a, b = inputs
    same_dtype(inputs, "matrix and rhs")
    a_parts = _square(a, "matrix")
    b_parts = _matrix_dims(b, "rhs")
    if a_parts is None or b_parts is None:
        return [(a.dtype, TensorShape(None))]
    _rows_agree(a_parts[1] if a_parts[1] is not None else a_parts[2], b, "matrix_triangular_solve")
    batch = broadcast_static(TensorShape(a_parts[0]), TensorShape(b_parts[0]))
    return [(a.dtype, TensorShape(list(batch.dims) + list(b_parts[1:])))]


def _solve_ls_infer(inputs, attrs):
    a, b, l2 = inputs
    same_dtype(inputs[:2], "matrix and rhs")
    if a.dtype not in LINALG_FLOATS:
        raise TypeError(f"matrix must be float32 or float64, got {a.dtype.name}")
    if l2.dtype != dtypes.float64 or l2.shape.ndims not in (None, 0):
        raise TypeError(f"l2_regularizer must be a float64 scalar, got {l2.dtype.name} of shape "
                        f"{l2.shape}")
    a_parts = _matrix_dims(a, "matrix")
    b_parts = _matrix_dims(b, "rhs")
    if a_parts is None or b_parts is None:
        return [(a.dtype, TensorShape(None))]
    _rows_agree(a_parts[1], b, "matrix_solve_ls")
    if not TensorShape(a_parts[0]).is_compatible_with(TensorShape(b_parts[0])):
        raise ValueError(f"matrix of shape {a.shape} and rhs of shape {b.shape} must have the "
                         "same batch dimensions")
    batch = TensorShape(a_parts[0]).merge_with(TensorShape(b_parts[0]))
    return [(a.dtype, TensorShape(list(batch.dims) + [a_parts[2], b_parts[2]]))]


def _slogdet_infer(inputs, attrs):
    (a,) = inputs
    parts = _square(a, "input")
    shape = TensorShape(None) if parts is None else TensorShape(parts[0])
    return [(a.dtype, shape), (a.dtype, shape)]


_NO_SOLVE = "ONNX has no linear-system solver op"
define("MatrixSolve", _solve_infer, attrs="adjoint:bool", fresh_output=True,
       onnx=no_onnx.none(_NO_SOLVE))
define("MatrixTriangularSolve", _triangular_solve_infer, attrs="lower:bool adjoint:bool",
       fresh_output=True, onnx=no_onnx.none(_NO_SOLVE))
define("MatrixSolveLs", _solve_ls_infer, attrs="fast:bool", fresh_output=True,
       onnx=no_onnx.none(_NO_SOLVE))
define("LogMatrixDeterminant", _slogdet_infer, fresh_output=True,
       onnx=no_onnx.none("ONNX's Det has no sign and log-magnitude form (log(Det) overflows "
                         "where slogdet does not)"))


def matrix_solve(matrix, rhs, adjoint=False, name=None):
    """`tf.matrix_solve` (`tf.linalg.solve`): X with matrix X = rhs (matrix^T X = rhs with
    `adjoint`) for matrix [..., M, M] and rhs [..., M, K]; a singular matrix fails at run time."""
    a = convert_to_tensor(matrix)
    b = convert_to_tensor(rhs, dtype=a.dtype)
    return make_tensor("MatrixSolve", (a, b), {"adjoint": bool(adjoint)},
                       name=name or "MatrixSolve")


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """`tf.matrix_triangular_solve` (`tf.linalg.triangular_solve`): X with matrix X = rhs
    (matrix^T X = rhs with `adjoint`), where only the lower (`lower`) or upper triangle of
    matrix is read; a zero on its diagonal gives inf/NaN, as TF's kernel does. The batch
    dimensions of matrix and rhs broadcast."""
    a = convert_to_tensor(matrix)
    b = convert_to_tensor(rhs, dtype=a.dtype)
    return make_tensor("MatrixTriangularSolve", (a, b),
                       {"lower": bool(lower), "adjoint": bool(adjoint)},
                       name=name or "MatrixTriangularSolve")


def cholesky_solve(chol, rhs, name=None):
    """`tf.cholesky_solve` (`tf.linalg.cholesky_solve`): X with A X = rhs, given A's Cholesky
    factor `chol` (lower triangle read): two triangular solves."""
    with get_default_graph().name_scope(name or "cholesky_solve"):
        y = matrix_triangular_solve(chol, rhs, lower=True, adjoint=False)
        return matrix_triangular_solve(chol, y, lower=True, adjoint=True)


def log_matrix_determinant(input, name=None):
    """`tf.linalg.slogdet` (`tf.log_matrix_determinant`): (sign, log_abs_determinant) of each
    square matrix, [..., N, N] -> [...] twice; the determinant is sign * exp(log_abs_determinant)
    without overflow."""
    op = make_op("LogMatrixDeterminant", (convert_to_tensor(input),),
                 name=name or "LogMatrixDeterminant")
    return op.outputs[0], op.outputs[1]


def _regularized_gramian_cholesky(a, l2_regularizer, first_kind):
    """The Cholesky factor of a^T a + l2 I (`first_kind`) or of a a^T + l2 I."""
    gram = math_ops.matmul(a, a, transpose_a=first_kind, transpose_b=not first_kind)
    static_zero = isinstance(l2_regularizer, (int, float)) and l2_regularizer == 0
    if not static_zero:
        size = a.shape.dims[-1 if first_kind else -2]
        l2 = math_ops.cast(convert_to_tensor(l2_regularizer, dtype=dtypes.float64), a.dtype)
        gram = gram + l2 * eye(size, dtype=a.dtype)
    return cholesky(gram)


def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """`tf.matrix_solve_ls` (`tf.linalg.lstsq`): X [..., N, K] solving matrix X = rhs in the
    least-squares sense for matrix [..., M, N] and rhs [..., M, K].

    fast (the default, differentiable): the normal equations through a Cholesky factor,
    X = (A^T A + l2 I)^-1 A^T B for M >= N, X = A^T (A A^T + l2 I)^-1 B for M < N (the
    minimum-norm solution when l2 = 0); numerically sound for well-conditioned A. The matrix
    dimensions must be known when the graph is built. fast=False: the minimum-norm least-squares
    solution by an orthogonal decomposition, sound for rank-deficient A; `l2_regularizer` is
    ignored and there is no gradient (as in TF)."""
    a = convert_to_tensor(matrix)
    b = convert_to_tensor(rhs, dtype=a.dtype)
    if not fast:
        l2 = convert_to_tensor(l2_regularizer, dtype=dtypes.float64)
        return make_tensor("MatrixSolveLs", (a, b, l2), {"fast": False},
                           name=name or "MatrixSolveLs")
    parts = _matrix_dims(a, "matrix")
    if parts is None or parts[1] is None or parts[2] is None:
        raise ValueError(f"matrix_solve_ls with fast=True needs the matrix dimensions known when "
                         f"the graph is built, got shape {a.shape}")
    _, m, n = parts
    with get_default_graph().name_scope(name or "matrix_solve_ls"):
        if m >= n:
            chol = _regularized_gramian_cholesky(a, l2_regularizer, first_kind=True)
            return cholesky_solve(chol, math_ops.matmul(a, b, transpose_a=True))
        chol = _regularized_gramian_cholesky(a, l2_regularizer, first_kind=False)
        return math_ops.matmul(a, cholesky_solve(chol, b), transpose_a=True)


__all__ = ["matrix_solve", "matrix_triangular_solve", "cholesky_solve", "matrix_solve_ls"]
