"""Matrix ops over the last two dimensions, batched over the leading ones: band parts
(`tf.matrix_band_part`), diagonals (`tf.matrix_diag`, `tf.matrix_diag_part`,
`tf.matrix_set_diag`), inverse, determinant and Cholesky factor (op types as TF1's kernels:
MatrixBandPart, MatrixDiag, MatrixDiagPart, MatrixSetDiag, MatrixInverse, MatrixDeterminant,
Cholesky), and TF1's Python composites over them: `tf.matrix_transpose`, `tf.diag`,
`tf.diag_part`, `tf.trace`, `tf.linalg.logdet`. Gradients are in linalg_grad.py."""

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import math_ops, no_onnx, shape_ops
from graphflow.ops.array_ops import transpose
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.cumulative_ops import static_axis
from graphflow.ops.einsum_ops import einsum
from graphflow.ops.registry import NUMERIC, define, make_tensor, require_dtype, same_dtype

LINALG_FLOATS = (dtypes.float32, dtypes.float64)
_ANY = NUMERIC + (dtypes.bool_,)


def _matrix_dims(x, what="input"):
    """(batch dims, rows, cols) of a tensor of rank >= 2, or None when its rank is unknown."""
    if x.shape.ndims is None:
        return None
    if x.shape.ndims < 2:
        raise ValueError(f"{what} must be a matrix or a batch of matrices (rank >= 2), got shape "
                         f"{x.shape}")
    dims = list(x.shape.dims)
    return dims[:-2], dims[-2], dims[-1]


def _min_dim(a, b):
    if a is not None and b is not None:
        return min(a, b)
    return a if b is None and a == 0 else (b if a is None and b == 0 else None)


# ---------------------------------------------------------------- band part and diagonals
def _band_part_infer(inputs, attrs):
    (x,) = inputs
    require_dtype(x, _ANY, "input")
    _matrix_dims(x)
    return [(x.dtype, x.shape)]


define("MatrixBandPart", _band_part_infer, attrs="num_lower:int num_upper:int", fresh_output=True,
       onnx={"converter": "band_part"})


def matrix_band_part(input, num_lower, num_upper, name=None):
    """`tf.matrix_band_part`: keeps the entries (i, j) with i - j <= num_lower and
    j - i <= num_upper of each matrix (a negative bound keeps that whole triangle) and zeroes
    the rest: (-1, 0) is the lower triangle, (0, -1) the upper, (0, 0) the diagonal. The bounds
    must be known when the graph is built."""
    x = convert_to_tensor(input)
    attrs = {"num_lower": static_axis(num_lower, "num_lower"),
             "num_upper": static_axis(num_upper, "num_upper")}
    return make_tensor("MatrixBandPart", (x,), attrs, name=name or "band_part")


def _matrix_diag_infer(inputs, attrs):
    (d,) = inputs
    require_dtype(d, _ANY, "diagonal")
    if d.shape.ndims is None:
        return [(d.dtype, TensorShape(None))]
    if d.shape.ndims < 1:
        raise ValueError(f"diagonal must have rank >= 1, got shape {d.shape}")
    n = d.shape.dims[-1]
    return [(d.dtype, TensorShape(list(d.shape.dims) + [n]))]


def _matrix_diag_part_infer(inputs, attrs):
    (x,) = inputs
    require_dtype(x, _ANY, "input")
    parts = _matrix_dims(x)
    if parts is None:
        return [(x.dtype, TensorShape(None))]
    batch, rows, cols = parts
    return [(x.dtype, TensorShape(batch + [_min_dim(rows, cols)]))]


def _matrix_set_diag_infer(inputs, attrs):
    x, d = inputs
    dt = same_dtype(inputs, "input and diagonal")
    require_dtype(x, _ANY, "input")
    parts = _matrix_dims(x)
    if parts is not None and d.shape.ndims is not None:
        batch, rows, cols = parts
        expected = TensorShape(batch + [_min_dim(rows, cols)])
        if not expected.is_compatible_with(d.shape):
            raise ValueError(f"diagonal of shape {d.shape} does not fit input of shape {x.shape} "
                             f"(expected {expected})")
    return [(dt, x.shape)]


define("MatrixDiag", _matrix_diag_infer, fresh_output=True, onnx={"converter": "matrix_diag"})
define("MatrixDiagPart", _matrix_diag_part_infer, fresh_output=True, onnx={"converter": "matrix_diag_part"})
define("MatrixSetDiag", _matrix_set_diag_infer, fresh_output=True, onnx={"converter": "matrix_set_diag"})


def matrix_diag(diagonal, name="diag"):
    """`tf.matrix_diag`: [..., N] -> [..., N, N] matrices with `diagonal` on their diagonal."""
    return make_tensor("MatrixDiag", (convert_to_tensor(diagonal),), name=name or "diag")


def matrix_diag_part(input, name="diag_part"):
    """`tf.matrix_diag_part`: [..., M, N] -> [..., min(M, N)], the main diagonals."""
    return make_tensor("MatrixDiagPart", (convert_to_tensor(input),), name=name or "diag_part")


def matrix_set_diag(input, diagonal, name="set_diag"):
    """`tf.matrix_set_diag`: `input` with its main diagonals replaced by `diagonal`."""
    x = convert_to_tensor(input)
    d = convert_to_tensor(diagonal, dtype=x.dtype)
    return make_tensor("MatrixSetDiag", (x, d), name=name or "set_diag")


# ---------------------------------------------------------------- inverse, determinant, Cholesky
def _square(x, what):
    require_dtype(x, LINALG_FLOATS, what)
    parts = _matrix_dims(x, what)
    if parts is not None:
        _, rows, cols = parts
        if rows is not None and cols is not None and rows != cols:
            raise ValueError(f"{what} must be square matrices, got shape {x.shape}")
    return parts


def _square_infer(inputs, attrs):
    (x,) = inputs
    _square(x, "input")
    return [(x.dtype, x.shape)]


def _determinant_infer(inputs, attrs):
    (x,) = inputs
    parts = _square(x, "input")
    if parts is None:
        return [(x.dtype, TensorShape(None))]
    return [(x.dtype, TensorShape(parts[0]))]


define("MatrixInverse", _square_infer, attrs="adjoint:bool", fresh_output=True,
       onnx=no_onnx.none("ONNX's standard domain has no matrix inverse (only com.microsoft's Inverse "
                         "contrib op)"))
define("MatrixDeterminant", _determinant_infer, fresh_output=True, onnx="Det")
define("Cholesky", _square_infer, fresh_output=True, onnx=no_onnx.none("ONNX has no Cholesky factorization"))


def matrix_inverse(input, adjoint=False, name=None):
    """`tf.matrix_inverse`: inverse of each square matrix (of its transpose when `adjoint`)."""
    return make_tensor("MatrixInverse", (convert_to_tensor(input),), {"adjoint": bool(adjoint)},
                       name=name or "MatrixInverse")


def matrix_determinant(input, name=None):
    """`tf.matrix_determinant`: [..., N, N] -> [...], the determinants."""
    return make_tensor("MatrixDeterminant", (convert_to_tensor(input),),
                       name=name or "MatrixDeterminant")


def cholesky(input, name=None):
    """`tf.cholesky`: the lower-triangular L with L L^T = input, for symmetric positive definite
    matrices; only the lower triangle of `input` is read."""
    return make_tensor("Cholesky", (convert_to_tensor(input),), name=name or "Cholesky")


# ---------------------------------------------------------------- composites
def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """`tf.matrix_transpose` (`tf.linalg.transpose`): swaps the last two dimensions."""
    x = convert_to_tensor(a)
    rank = x.shape.ndims
    if rank is None:  # checked at run time: einsum needs two dimensions after the ellipsis
        return einsum("...ij->...ji", x, name=name or "matrix_transpose")
    if rank < 2:
        raise ValueError(f"matrix_transpose needs a tensor of rank >= 2, got shape {x.shape}")
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return transpose(x, perm, name=name or "matrix_transpose")


def _static_rank(x, what):
    rank = x.shape.ndims
    if rank is None:
        raise ValueError(f"{what} needs a tensor of known rank, got {x.name} of unknown shape")
    return rank


def diag(diagonal, name=None):
    """`tf.diag`: a tensor of rank k -> rank 2k, output[i.., j..] = diagonal[i..] where the index
    tuples i.. and j.. are equal, else 0 (for a vector: the diagonal matrix)."""
    d = convert_to_tensor(diagonal)
    if d.shape.ndims == 1:
        return matrix_diag(d, name=name or "Diag")
    square = matrix_diag(shape_ops.reshape(d, [-1]))
    if d.shape.is_fully_defined():
        dims = list(d.shape.dims)
        return shape_ops.reshape(square, dims + dims, name=name or "Diag")
    dims = shape_ops.shape(d)
    return shape_ops.reshape(square, shape_ops.concat([dims, dims], 0), name=name or "Diag")


def diag_part(input, name=None):
    """`tf.diag_part`: the inverse of `tf.diag`, a tensor of shape [d.., d..] -> [d..]."""
    x = convert_to_tensor(input)
    rank = _static_rank(x, "diag_part")
    if rank % 2:
        raise ValueError(f"diag_part needs a tensor of even rank, got shape {x.shape}")
    if rank == 2:
        return matrix_diag_part(x, name=name or "DiagPart")
    half = x.shape.dims[:rank // 2]
    if any(d is None for d in half):
        raise ValueError(f"diag_part of rank > 2 needs known dimensions, got shape {x.shape}")
    size = 1
    for d in half:
        size *= d
    flat = matrix_diag_part(shape_ops.reshape(x, [size, size]))
    return shape_ops.reshape(flat, list(half), name=name or "DiagPart")


def trace(x, name=None):
    """`tf.trace`: sum of the main diagonal of each matrix, [..., M, N] -> [...]."""
    return math_ops.reduce_sum(matrix_diag_part(x), axis=-1, name=name or "trace")


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """`tf.eye`: identity matrices of shape batch_shape + [num_rows, num_columns]."""
    rows = static_axis(num_rows, "num_rows")
    cols = rows if num_columns is None else static_axis(num_columns, "num_columns")
    batch = [] if batch_shape is None else [static_axis(d, "batch_shape") for d in batch_shape]
    dtype = dtypes.as_dtype(dtype)
    zeros = shape_ops.zeros(batch + [rows, cols], dtype=dtype)
    return matrix_set_diag(zeros, shape_ops.ones(batch + [min(rows, cols)], dtype=dtype),
                           name=name or "eye")


def logdet(matrix, name=None):
    """`tf.linalg.logdet`: log(det(matrix)) of symmetric positive definite matrices, as twice the
    sum of the logs of the Cholesky factor's diagonal (no overflow for large determinants)."""
    chol = cholesky(matrix)
    return math_ops.multiply(
        2.0, math_ops.reduce_sum(math_ops.log(matrix_diag_part(chol)), axis=-1),
        name=name or "logdet")


__all__ = ["matrix_band_part", "matrix_diag", "matrix_diag_part", "matrix_set_diag",
           "matrix_inverse", "matrix_determinant", "cholesky", "matrix_transpose", "diag",
           "diag_part", "trace", "eye"]
