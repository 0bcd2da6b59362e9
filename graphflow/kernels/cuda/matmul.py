"""MatMul on the GPU (matmul.cu): batched, broadcast batch dims, transposes, float32/float64.

`gemm(...)` is the raw entry point (device addresses, leading dimensions, alpha/beta) that the
convolution kernels reuse; a product with few output tiles and a long K (a convolution's filter
gradient) is split along K (`split_k`). The MatMul kernel maps numpy matmul semantics onto it:
the batch dims of both operands broadcast, their strides are collapsed into at most 8 dims, and
one launch covers every batch (grid z walks the batches).
"""

import numpy as np

from graphflow.kernels.cuda import codegen, cuda_kernel, runtime
from graphflow.kernels.cuda.launch import ceil_div, launch_1d

_FMT = "qqqPqPqPqq72s64s64s64sdd"
_TILES = {"f32": (128, 128), "f32s": (64, 64), "f64": (64, 64)}


def variant(dtype, M, N, batch=1, sm_count=1):
    """Kernel family for a problem: 'f64', or for float32 'f32' (128x128 tiles) when they give
    every SM at least two blocks, else 'f32s' (64x64 tiles: four times the blocks)."""
    if np.dtype(dtype) == np.float64:
        return "f64"
    big_tiles = ceil_div(M, 128) * ceil_div(N, 128) * batch
    return "f32" if big_tiles >= 2 * sm_count else "f32s"


def gemm(rt, dtype, a, b, c, M, N, K, ta=False, tb=False, lda=None, ldb=None, ldc=None,
         batch_shape=(), a_bst=(), b_bst=(), c_bst=(), alpha=1.0, beta=0.0):
    """C = alpha * op(A) @ op(B) + beta * C on device addresses a, b, c (ints).

    op(A) is M x K (A stored K x M when ta), op(B) is K x N (stored N x K when tb); ld* are row
    strides in elements (default: packed); batch_shape / *_bst give batch dims and per-operand
    batch strides in elements (0 = broadcast)."""
    if M == 0 or N == 0:
        return
    lda = lda if lda is not None else (M if ta else K)
    ldb = ldb if ldb is not None else (K if tb else N)
    ldc = ldc if ldc is not None else N
    batch = int(np.prod(batch_shape)) if len(batch_shape) else 1
    fam = variant(dtype, M, N, batch, rt.sm_count)
    split = split_k(M, N, K, _TILES[fam], rt.sm_count) if batch == 1 else None
    if split is not None:
        _gemm_split_k(rt, dtype, a, b, c, M, N, K, ta, tb, lda, ldb, ldc, alpha, beta, *split)
        return
    name = f"gf_gemm_{fam}_{'t' if ta else 'n'}{'t' if tb else 'n'}"
    fn = rt.kernel("matmul.cu", name, _FMT)
    bm, bn = _TILES[fam]
    grid = (ceil_div(N, bn), ceil_div(M, bm), max(1, min(batch, 65535)))
    if grid[1] > 65535:
        raise ValueError(f"matmul with {M} rows exceeds the {65535 * bm} rows one launch covers")
    fn.prepared_call(grid, (256, 1, 1), np.int64(M), np.int64(N), np.int64(K), np.uintp(a),
                     np.int64(lda), np.uintp(b), np.int64(ldb), np.uintp(c), np.int64(ldc),
                     np.int64(batch), codegen.pack_shape(batch_shape), codegen.pack_strides(a_bst),
                     codegen.pack_strides(b_bst), codegen.pack_strides(c_bst), np.float64(alpha),
                     np.float64(beta))


SPLIT_K_MIN = 2048  # a reduction shorter than this is one tile's loop even when few tiles run
SPLIT_K_MIN_CHUNK = 512  # rows of K per partial product, at least


def split_k(M, N, K, tile, sm_count):
    """(chunk, count) when C has too few tiles to occupy the GPU and K is long, else None: the
    filter gradient of a convolution is C [KH*KW*C, OC] = col^T @ dy with K = N*OH*OW, a handful of
    tiles each walking tens of thousands of rows. Its K is then cut into `count` chunks of `chunk`
    rows (multiples of 64), each a batch entry of one launch, so that about two blocks run per SM."""
    tiles = ceil_div(M, tile[0]) * ceil_div(N, tile[1])
    if K < SPLIT_K_MIN or 2 * tiles > sm_count:
        return None
    count = min(ceil_div(2 * sm_count, tiles), K // SPLIT_K_MIN_CHUNK)
    chunk = ceil_div(ceil_div(K, count), 64) * 64
    count = K // chunk
    return (chunk, count) if count >= 2 else None


def _gemm_split_k(rt, dtype, a, b, c, M, N, K, ta, tb, lda, ldb, ldc, alpha, beta, chunk, count):
    """C = alpha * op(A) @ op(B) + beta * C as `count` partial products over chunks of K (one
    batched launch into a [count, M, N] buffer), summed in chunk order into C by one kernel
    (deterministic, no atomics); the rows of K after the last whole chunk are one more GEMM
    accumulated into C (beta = 1)."""
    size = np.dtype(dtype).itemsize
    partial = rt.empty((count, M, N), dtype)
    a_step = chunk * lda if ta else chunk  # A stored K x M (ta) or M x K
    b_step = chunk if tb else chunk * ldb  # B stored N x K (tb) or K x N
    gemm(rt, dtype, a, b, int(partial.gpudata), M, N, chunk, ta, tb, lda, ldb, N,
         batch_shape=(count,), a_bst=(a_step,), b_bst=(b_step,), c_bst=(M * N,))
    t = "f64" if np.dtype(dtype) == np.float64 else "f32"
    sum_chunks = rt.kernel("matmul.cu", f"gf_sum_chunks_{t}", "PqqqPqdd")
    launch_1d(rt, sum_chunks, M * N, int(partial.gpudata), np.int64(count), np.int64(M), np.int64(N),
              np.uintp(c), np.int64(ldc), np.float64(alpha), np.float64(beta))
    done = chunk * count
    if done < K:
        gemm(rt, dtype, a + done * (lda if ta else 1) * size, b + done * (1 if tb else ldb) * size, c,
             M, N, K - done, ta, tb, lda, ldb, ldc, alpha=alpha, beta=1.0)


def plan_matmul(a_shape, b_shape, ta, tb):
    """(out shape, M, N, K, collapsed batch shape, a/b/c batch strides) for numpy matmul."""
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise ValueError(f"matmul needs inputs of rank >= 2, got shapes {a_shape} and {b_shape}")
    M, Ka = (a_shape[-1], a_shape[-2]) if ta else (a_shape[-2], a_shape[-1])
    Kb, N = (b_shape[-1], b_shape[-2]) if tb else (b_shape[-2], b_shape[-1])
    if Ka != Kb:
        raise ValueError(f"matmul inner dimensions differ: {a_shape} x {b_shape} "
                         f"(transpose_a={ta}, transpose_b={tb})")
    batch = tuple(np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2])))
    out_shape = batch + (M, N)
    a_bst = [s * a_shape[-1] * a_shape[-2] for s in codegen.broadcast_strides(a_shape[:-2], batch)]
    b_bst = [s * b_shape[-1] * b_shape[-2] for s in codegen.broadcast_strides(b_shape[:-2], batch)]
    c_bst = [s * M * N for s in codegen.broadcast_strides(batch, batch)]
    cshape, (a_bst, b_bst, c_bst) = codegen.collapse(list(batch), [a_bst, b_bst, c_bst])
    if len(cshape) > codegen.MAX_DIMS:
        raise ValueError(f"matmul batch dims {batch} do not collapse into {codegen.MAX_DIMS} dims")
    return out_shape, M, N, Ka, cshape, a_bst, b_bst, c_bst


@cuda_kernel("MatMul", dtypes=(np.float32, np.float64))
def _matmul(node):
    rt = runtime()
    ta = bool(node.attrs.get("transpose_a", False))
    tb = bool(node.attrs.get("transpose_b", False))
    dtype = np.dtype(node.out_dtypes[0])

    def matmul(a, b):
        out_shape, M, N, K, bshape, a_bst, b_bst, c_bst = plan_matmul(a.shape, b.shape, ta, tb)
        out = rt.empty(out_shape, dtype)
        if out.size == 0:
            return out
        if K == 0:
            return rt.fill(out, 0)
        gemm(rt, dtype, int(a.gpudata), int(b.gpudata), int(out.gpudata), M, N, K, ta, tb,
             batch_shape=bshape, a_bst=a_bst, b_bst=b_bst, c_bst=c_bst)
        return out
    return matmul


def activation_supported(out_dtypes, attrs):
    """Why the generated kernels cannot apply a fused op's `activation` attr (None: they can)."""
    from graphflow.kernels.cuda.elementwise import _supports
    act = attrs.get("activation", "")
    return _supports(act)(out_dtypes, out_dtypes, attrs.get("activation_attrs") or {}) if act else None


def bias_activation_epilogue(node):
    """One generated kernel computing activation(y + bias) for a fused op (FusedMatMul,
    FusedConv2D): the bias broadcast over y's last axis, the activation from the node's attrs."""
    from graphflow.kernels.cuda.elementwise import kernel_for
    dt = np.dtype(node.out_dtypes[0]).name
    instructions = [["Add", [0, 1], {}, None]]
    act = node.attrs.get("activation", "")
    if act:
        instructions.append([act, [2], dict(node.attrs.get("activation_attrs") or {}), None])
    epilogue = kernel_for({"version": 1, "inputs": [dt, dt], "instructions": instructions,
                           "output": 1 + len(instructions)})
    return lambda y, bias: epilogue(y, bias)[0]


def _fused_matmul_supported(in_dtypes, out_dtypes, attrs):
    return activation_supported(out_dtypes, attrs)


@cuda_kernel("FusedMatMul", dtypes=(np.float32, np.float64), supports=_fused_matmul_supported)
def _fused_matmul(node):
    """activation(matmul(a, b) + bias): the GEMM, then one generated kernel for bias + activation."""
    matmul = _matmul(node)
    epilogue = bias_activation_epilogue(node)
    return lambda a, b, bias: epilogue(matmul(a, b), bias)
