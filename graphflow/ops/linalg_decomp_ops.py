"""Matrix decompositions over the last two dimensions, batched over the leading ones, as TF1's
kernels define them: the singular value decomposition (`tf.svd`, op type Svd), the QR
factorization (`tf.qr`, Qr) and the eigen-decomposition of self-adjoint matrices
(`tf.self_adjoint_eig`, `tf.self_adjoint_eigvals`, SelfAdjointEigV2). Gradients are in
linalg_decomp_grad.py.

Svd(a) -> (s, u, v): a = u diag(s) v^T with s descending; with `compute_uv` False, u and v are
empty ([0]), as TF's op gives them. Qr(a) -> (q, r): a = q r, q orthonormal columns, r upper
triangular. SelfAdjointEigV2(a) -> (e, v): eigenvalues ascending, eigenvectors in v's columns,
reading a's lower triangle only; with `compute_v` False, v is empty ([0]).
"""

from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.linalg_ops import LINALG_FLOATS, _matrix_dims, _min_dim, _square
from graphflow.ops.registry import define, make_op, require_dtype

_EMPTY = TensorShape([0])


def _svd_infer(inputs, attrs):
    (a,) = inputs
    require_dtype(a, LINALG_FLOATS, "input")
    parts = _matrix_dims(a)
    if parts is None:
        unknown = TensorShape(None)
        uv = unknown if attrs["compute_uv"] else _EMPTY
        return [(a.dtype, unknown), (a.dtype, uv), (a.dtype, uv)]
    batch, m, n = parts
    p = _min_dim(m, n)
    if not attrs["compute_uv"]:
        return [(a.dtype, TensorShape(batch + [p])), (a.dtype, _EMPTY), (a.dtype, _EMPTY)]
    full = attrs["full_matrices"]
    u = TensorShape(batch + [m, m if full else p])
    v = TensorShape(batch + [n, n if full else p])
    return [(a.dtype, TensorShape(batch + [p])), (a.dtype, u), (a.dtype, v)]


def _qr_infer(inputs, attrs):
    (a,) = inputs
    require_dtype(a, LINALG_FLOATS, "input")
    parts = _matrix_dims(a)
    if parts is None:
        return [(a.dtype, TensorShape(None)), (a.dtype, TensorShape(None))]
    batch, m, n = parts
    k = m if attrs["full_matrices"] else _min_dim(m, n)
    return [(a.dtype, TensorShape(batch + [m, k])), (a.dtype, TensorShape(batch + [k, n]))]


def _eig_infer(inputs, attrs):
    (a,) = inputs
    parts = _square(a, "input")
    if parts is None:
        unknown = TensorShape(None)
        return [(a.dtype, unknown), (a.dtype, unknown if attrs["compute_v"] else _EMPTY)]
    batch, m, n = parts
    size = m if m is not None else n
    v = TensorShape(batch + [size, size]) if attrs["compute_v"] else _EMPTY
    return [(a.dtype, TensorShape(batch + [size])), (a.dtype, v)]


_NO_DECOMPOSITION = "ONNX has no matrix decomposition op (SVD, QR, eigen-decomposition)"
define("Svd", _svd_infer, attrs="compute_uv:bool full_matrices:bool", fresh_output=True,
       onnx=no_onnx.none(_NO_DECOMPOSITION))
define("Qr", _qr_infer, attrs="full_matrices:bool", fresh_output=True,
       onnx=no_onnx.none(_NO_DECOMPOSITION))
define("SelfAdjointEigV2", _eig_infer, attrs="compute_v:bool", fresh_output=True,
       onnx=no_onnx.none(_NO_DECOMPOSITION))


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """`tf.svd` (`tf.linalg.svd`): the singular values of each matrix of `tensor` [..., M, N]
    ([..., P], P = min(M, N), descending); with `compute_uv`, the tuple (s, u, v) with
    tensor = u diag(s) v^T, u [..., M, P] and v [..., N, P] ([..., M, M] and [..., N, N] with
    `full_matrices`). Note v, not its transpose, as TF returns it."""
    op = make_op("Svd", (convert_to_tensor(tensor),),
                 {"compute_uv": bool(compute_uv), "full_matrices": bool(full_matrices)},
                 name=name or "Svd")
    s, u, v = op.outputs
    return (s, u, v) if compute_uv else s


def qr(input, full_matrices=False, name=None):
    """`tf.qr` (`tf.linalg.qr`): (q, r) with input = q r for each matrix of input [..., M, N]:
    q [..., M, P] with orthonormal columns and r [..., P, N] upper triangular, P = min(M, N)
    (P = M with `full_matrices`)."""
    op = make_op("Qr", (convert_to_tensor(input),), {"full_matrices": bool(full_matrices)},
                 name=name or "Qr")
    return tuple(op.outputs)


def self_adjoint_eig(tensor, name=None):
    """`tf.self_adjoint_eig` (`tf.linalg.eigh`): (e, v), the eigenvalues of each symmetric
    matrix in ascending order [..., N] and its eigenvectors as v's columns [..., N, N]. Only the
    lower triangle of each matrix is read."""
    op = make_op("SelfAdjointEigV2", (convert_to_tensor(tensor),), {"compute_v": True},
                 name=name or "self_adjoint_eig")
    return op.outputs[0], op.outputs[1]


def self_adjoint_eigvals(tensor, name=None):
    """`tf.self_adjoint_eigvals` (`tf.linalg.eigvalsh`): the eigenvalues of each symmetric
    matrix, ascending, [..., N]."""
    op = make_op("SelfAdjointEigV2", (convert_to_tensor(tensor),), {"compute_v": False},
                 name=name or "self_adjoint_eigvals")
    return op.outputs[0]


__all__ = ["svd", "qr", "self_adjoint_eig", "self_adjoint_eigvals"]
