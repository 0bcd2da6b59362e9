"""Inference-sized ops as compiled loops when numba is installed (optional, like `jit_pool.py`): a
softmax over the last axis, a product of a few rows with bias and Relu (FusedMatMul at batch 1),
and a bias add with Relu in place (a small FusedConv2D's gathered product). `nn_kernels.py` and
`fused_conv_kernels.py` keep their numpy forms otherwise and as the reference the tests compare with.
Softmax and FusedMatMul register the loops as their implementation "numba", chosen when the plan
is built (`softmax_node_applies`, `dense_node_applies`): the kernels copy an operand that is not laid
out as the loop reads it (a view), instead of running another path.

At batch 1 these ops are a handful of numpy calls on a few hundred elements, where each call's
dispatch costs more than its arithmetic: the digits CNN's [1, 10] softmax took 3.1 us as five numpy
calls and 0.5 us as one loop; a [1, 256] x [256, 128] product with bias and Relu 3.4 us as three
calls and 3.0 as one loop, [1, 128] x [128, 10] 1.8 and 0.9 (one thread, load 2.7).
The softmax subtracts the row maximum (NaN propagates) and divides by the sum as numpy does, but
its exp and its sum order are the loop's: the values agree with numpy's to rounding. The product
accumulates each output row over k in order (BLAS blocks it differently): also to rounding.
"""


import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.numba import jit_updates
from graphflow.kernels.cpu.reference.fused_kernels import member_error
from graphflow.kernels.cpu.reference.fused_matmul_kernels import activation_of
from graphflow.kernels.cpu.reference.math_kernels import oriented, product_dims

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Products with at most this many rows run as the loop (the loop does not block over rows: with
# more, BLAS's blocked kernels win; a [4, 256] x [256, 128] product took 9.9 us here, 4.4 numpy).
MAX_ROWS = 2
# ... and at most this many multiply-adds (beyond it BLAS's speed outweighs its call cost).
MAX_MACS = 1 << 16



def _compile():
    from graphflow.kernels.cpu.numba.jit_cache import njit

    opts = dict(nogil=True, cache=True, fastmath=False, error_model="numpy")

    @njit(**opts)
    def softmax_rows(x, out):
        m, n = x.shape
        for i in range(m):
            xr, orow = x[i], out[i]
            top = xr[0]
            for j in range(1, n):
                v = xr[j]
                if v > top or v != v:
                    top = v
            total = np.exp(xr[0] - top)
            orow[0] = total
            for j in range(1, n):
                e = np.exp(xr[j] - top)
                orow[j] = e
                total += e
            for j in range(n):
                orow[j] /= total

    @njit(**opts)
    def dense_rows(a, b, bias, out, relu):
        m, k = a.shape
        n = b.shape[1]
        for i in range(m):
            orow = out[i]
            ar = a[i]
            v0 = ar[0]
            b0 = b[0]
            for j in range(n):
                orow[j] = v0 * b0[j]
            p = 1
            while p + 4 <= k:  # four rows of b per pass over the output row
                v0, v1, v2, v3 = ar[p], ar[p + 1], ar[p + 2], ar[p + 3]
                b0, b1, b2, b3 = b[p], b[p + 1], b[p + 2], b[p + 3]
                for j in range(n):
                    orow[j] += v0 * b0[j] + v1 * b1[j] + v2 * b2[j] + v3 * b3[j]
                p += 4
            while p < k:
                v0 = ar[p]
                b0 = b[p]
                for j in range(n):
                    orow[j] += v0 * b0[j]
                p += 1
            for j in range(n):
                orow[j] += bias[j]
            if relu:  # numpy's maximum(v, 0): NaN and -0.0 stay
                for j in range(n):
                    v = orow[j]
                    if not (v >= 0 or v != v):
                        orow[j] = 0

    @njit(**opts)
    def add_bias_rows(out, bias, relu):
        m, n = out.shape
        for i in range(m):
            orow = out[i]
            for j in range(n):
                orow[j] += bias[j]
            if relu:
                for j in range(n):
                    v = orow[j]
                    if not (v >= 0 or v != v):
                        orow[j] = 0

    return {"softmax_rows": softmax_rows, "dense_rows": dense_rows,
            "add_bias_rows": add_bias_rows}


loops = jit_updates.LazyLoops(_compile)


def softmax_applies(x, axis):
    """Whether `softmax` computes this array's softmax over `axis`."""
    return (type(x) is np.ndarray and x.dtype in _DTYPES and x.ndim >= 1 and x.size > 0
            and axis in (-1, x.ndim - 1) and x.flags.c_contiguous and loops() is not None)


def softmax(x):
    """Softmax over the last axis of a C-contiguous float array: a new array."""
    out = np.empty_like(x)
    if x.ndim == 2:
        (loops.compiled or loops())["softmax_rows"](x, out)
    else:
        n = x.shape[-1]
        (loops.compiled or loops())["softmax_rows"](x.reshape(-1, n), out.reshape(-1, n))
    return out


def add_bias(out, bias, relu=False):
    """`out += bias` (then Relu) in place, over the last axis of a C-contiguous float array `out`
    with a 1-D `bias` of its dtype and channels (the caller checks); one call instead of numpy's
    add and maximum (a gathered batch-1 convolution's [64, 32] output: 1.9 -> 0.5 us)."""
    n = out.shape[-1]
    (loops.compiled or loops())["add_bias_rows"](out.reshape(-1, n), bias, relu)
    return out


def add_bias_applies(out, bias):
    return (type(out) is np.ndarray and out.dtype in _DTYPES and out.ndim >= 1
            and out.flags.c_contiguous and out.size > 0 and bias.dtype == out.dtype
            and bias.shape == out.shape[-1:] and loops() is not None)


def dense_applies(a, b, bias):
    """Whether `dense` computes `a @ b + bias`: 2-D operands of one float dtype with rows
    contiguous, a 1-D bias of b's columns, few rows and multiply-adds."""
    return (a.ndim == 2 and b.ndim == 2 and a.dtype in _DTYPES and b.dtype == a.dtype
            and bias.dtype == a.dtype and bias.ndim == 1 and bias.strides[0] == bias.itemsize
            and a.shape[1] == b.shape[0]
            and bias.shape[0] == b.shape[1] > 0 and 0 < a.shape[0] <= MAX_ROWS
            and a.shape[1] > 0 and a.shape[0] * a.shape[1] * b.shape[1] <= MAX_MACS
            and a.strides[1] == a.itemsize and b.strides[1] == b.itemsize
            and loops() is not None)


def dense(a, b, bias, relu=False):
    """`a @ b + bias` (then Relu) for operands `dense_applies` accepts: a new array."""
    out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    (loops.compiled or loops())["dense_rows"](a, b, bias, out, relu)
    return out


def softmax_node_applies(node):
    """A Softmax over the last axis of a float32/float64 input whose rank and last dim are known
    (a last dim of 0 is left to the reference)."""
    shape = node.in_shapes[0] if node.in_shapes else None
    if np.dtype(node.in_dtypes[0]) not in _DTYPES or shape is None or len(shape) < 1:
        return False
    return node.attrs.get("axis", -1) in (-1, len(shape) - 1) and (shape[-1] or 0) > 0


@cpu_kernel("Softmax", name="numba", preference=20, requires=("numba",),
            applies=softmax_node_applies)
def softmax_kernel(node):
    def softmax_loop(x):
        return softmax(np.ascontiguousarray(x))
    return softmax_loop


def dense_node_applies(node):
    """A FusedMatMul of at most MAX_ROWS rows and MAX_MACS multiply-adds, all of one float dtype,
    neither operand transposed (the loop reads rows of a and b), a bias of b's columns, and no
    activation or a Relu (the one the loop applies)."""
    dims = product_dims(node)
    if dims is None or node.attrs.get("transpose_a") or node.attrs.get("transpose_b"):
        return False
    m, k, n = dims
    dtype = np.dtype(node.in_dtypes[0])
    if dtype not in _DTYPES or any(np.dtype(d) != dtype for d in node.in_dtypes[:3]):
        return False
    if node.attrs.get("activation", "") not in ("", "Relu"):
        return False
    return (node.in_shapes[2] == (n,) and 0 < m <= MAX_ROWS and k > 0 and n > 0
            and m * k * n <= MAX_MACS)


def _row_contiguous(x):
    return x if x.strides[-1] == x.itemsize else np.ascontiguousarray(x)


@cpu_kernel("FusedMatMul", name="numba", preference=40, requires=("numba",),
            applies=dense_node_applies)
def dense_kernel(node):
    relu = activation_of(node).relu_or_none is True

    def fused_matmul(a, b, bias):
        try:
            a, b = oriented(a, b, False, False)
            if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0] or bias.shape != b.shape[1:]:
                raise ValueError(f"FusedMatMul of shapes {a.shape} x {b.shape} + bias {bias.shape}: "
                                 "the operands do not fit")
            return dense(_row_contiguous(a), _row_contiguous(b), _row_contiguous(bias), relu)
        except Exception as exc:
            raise member_error(exc, node.attrs, 0) from exc
    return fused_matmul
