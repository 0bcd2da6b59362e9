"""Forward convolutions with few filter taps (the first layer of an image network: a 3x3 filter on one
gray or three color channels) as a compiled direct loop, when numba is installed (optional, like
`jit_pool.py`); `conv_kernels.py` keeps its numpy kernels otherwise and as the reference the tests
compare with.

With one input channel the im2col product is [n*oh*ow, 9] x [9, 32] for a 3x3 filter: a matrix of 9
columns that BLAS and oneDNN run far below their speed, after a copy of the window matrix that is 9
times the input (the 8x8x1 -> 32 convolution of the digits CNN at batch 256: about 0.30 ms through
oneDNN on one thread or the gathered product, where onnxruntime takes 0.07 on two).

The loop here is generated for one filter size and channel count (kh*kw*c taps, at most
`MAX_TAPS`): for each output pixel it reads the pixel's taps into scalars, then computes every
output channel as one expression, `x0 * f0[co] + x1 * f1[co] + ... + bias[co]` (f<t>: the filter
row of tap t, contiguous in HWIO), so the loop over output channels is vectorized and the sum stays
in registers: each output element is written once, with the bias and a Relu (when the fused op has
one) applied. A loop adding each tap's filter row into the output in memory took twice as long at
batch 16 (a load and a store per tap). The input is first copied into a kept zero-bordered buffer
(TF's padding), so no tap is tested against the border. The taps are summed in the im2col order,
with fused multiply-adds (fastmath "contract" only: 12% faster at batch 16 and 256) and not blocked
as BLAS blocks its product, so the values agree with the reference kernel to rounding, not bit for
bit (tests/kernels/test_jit_conv.py). Larger outputs are left to oneDNN (`MAX_OUTPUTS`).
"""

import threading

import numpy as np

from graphflow.kernels.cpu import intra_op, jit_math, jit_updates

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Convolutions of at most this many taps (kh * kw * in channels) run here: 3x3 on up to 4 channels,
# 5x5 on one. With more, the product's inner dimension is long enough for BLAS / oneDNN.
MAX_TAPS = 36
# ... and from MIN_OUTPUTS to MAX_OUTPUTS output elements: below, the first call's compile (about a
# second per filter size, once per process) is not worth paying for a tiny graph; above, oneDNN's
# kernel is as fast on one thread (8x8x1 -> 32 3x3 with bias and Relu, one thread, min of 9 rounds,
# load 3-4, us, this loop / oneDNN / the gathered product: batch 1 3.6 / - / 5.7, 16 33 / 84 / 37,
# 64 58 / 144, 128 124 / 245, 256 230-430 either way); the loop runs on the calling thread.
# Above MAX_OUTPUTS, up to MAX_OUTPUTS_THREADED, the loop runs where the session has several
# threads, its images split in two blocks per thread over the intra-op pool (`Prepared`; the
# blocks write disjoint outputs, so the values are the one-thread loop's). Measured on the digits
# CNN's imported step at batch 256 (8x8x1 -> 32 with Relu: 524288 outputs; separate processes
# alternated, median of 7 rounds of 20 steps, load 0.7-0.9, ms): oneDNN on one thread 2.15-3.04
# (median 2.36), this loop on two 2.09-2.16 (2.12); the op itself in the traced step 286-301 ->
# 245-257 us. With another process keeping the second core busy (load 1.9-2.2) the split was
# slower as an op alone (one thread 218-245 us, two 268-310); larger convolutions (the small
# training CNN's 28x28x1 -> 16 at batch 64: 802816 outputs) stay on oneDNN, unmeasured here.
# Re-measured on the same step (sessions built with and without the split in one process, steps
# alternated, 15 rounds, load 1.0, ms): the op 0.263 split, 0.258 on one thread, 0.314 through
# oneDNN; alone (`benchmarks/bench_conv_few.py`, medians) the one-thread loop 0.21-0.26, split
# 0.23-0.33: waking a pool worker on this 2-vCPU machine costs about what the second half saves
# (the loop is bound by its per-pixel work: 9 scalar loads and broadcasts and the vectorized
# channel loop's setup, ~33 cycles a pixel for 18 256-bit FMAs; summing the taps as a tree, two or
# more pixels per iteration, or unrolled channels were all slower). The split stays: no worse.
MIN_OUTPUTS = 1 << 10
MAX_OUTPUTS = 1 << 18
MAX_OUTPUTS_THREADED = 1 << 19

_lock = threading.Lock()
_kernels = {}  # (kh, kw, c, oc) -> the compiled loop
_local = threading.local()  # per thread: {(padded shape, dtype): zero-bordered input buffer}
_MAX_KEPT = 8


def _source(kh, kw, c, oc):
    """The loop's Python source for a kh x kw filter from c to oc channels (taps unrolled; the
    output channel count a constant, so that LLVM's vectorized channel loop has no remainder or
    run-time trip count; in 512-bit vectors where the CPU has them)."""
    taps = [(i, j, ci) for i in range(kh) for j in range(kw) for ci in range(c)]
    t = range(len(taps))
    total = "(" + " + ".join(f"x{k} * f{k}[co]" for k in t) + ") + bias[co]"
    lines = [
        "def conv_taps(xp, f, bias, out, dims, lo, hi):",
        "    hp, wp, oh, ow, sh, sw, dh, dw, relu = (dims[0], dims[1], dims[2], dims[3], dims[4],",
        "        dims[5], dims[6], dims[7], dims[8])",
        f"    oc = {oc}",
        "    wide_vectors()",
        "    zero = out.dtype.type(0)",
        "    " + ", ".join(f"f{k}" for k in t) + ", = " + ", ".join(f"f[{k}]" for k in t) + ",",
        f"    image_in, image_out, row = hp * wp * {c}, oh * ow * oc, wp * {c}",
        f"    dy, dx = dh * wp * {c}, dw * {c}",
        "    for b in range(lo, hi):",
        "        xb = xp[b * image_in:(b + 1) * image_in]",
        "        ob = out[b * image_out:(b + 1) * image_out]",
        "        for y in range(oh):",
        "            for xo in range(ow):",
        f"                q = y * sh * row + xo * sw * {c}",
    ]
    for k, (i, j, ci) in enumerate(taps):
        lines.append(f"                x{k} = xb[q + {i} * dy + {j} * dx + {ci}]")
    lines += [
        "                p = (y * ow + xo) * oc",
        "                dst = ob[p:p + oc]",
        "                if relu:  # numpy's maximum(v, 0): NaN and -0.0 stay",
        "                    for co in range(oc):",
        "                        v = " + total,
        "                        dst[co] = v if (v >= 0 or v != v) else zero",
        "                else:",
        "                    for co in range(oc):",
        "                        dst[co] = " + total,
    ]
    return "\n".join(lines) + "\n"


def kernel(kh, kw, c, oc):
    """The compiled loop for a kh x kw filter from c to oc channels (compiled on first use), or
    None without numba (or with GRAPHFLOW_NO_JIT=1)."""
    key = (kh, kw, c, oc)
    loop = _kernels.get(key)
    if loop is None:
        with _lock:
            loop = _kernels.get(key)
            if loop is None:
                if jit_updates.loops() is None:
                    loop = False
                else:
                    from numba import njit
                    namespace = {"wide_vectors": jit_math.wide_vectors()}
                    exec(_source(kh, kw, c, oc), namespace)  # our own generated source
                    loop = njit(nogil=True, cache=False, fastmath={"contract"},
                                error_model="numpy")(namespace["conv_taps"])
                _kernels[key] = loop
    return loop or None


def applies(x, f, geo, threads=1):
    """Whether `conv2d` runs this NHWC input and HWIO filter (a `conv_kernels.Geometry`)."""
    top = max(MAX_OUTPUTS, MAX_OUTPUTS_THREADED) if threads > 1 else MAX_OUTPUTS
    return (x.dtype in _DTYPES and f.dtype == x.dtype and x.ndim == 4 and f.ndim == 4
            and x.shape[3] == f.shape[2] and 0 < f.shape[0] * f.shape[1] * f.shape[2] <= MAX_TAPS
            and MIN_OUTPUTS <= x.shape[0] * geo.oh * geo.ow * f.shape[3] <= top
            and kernel(*f.shape) is not None)


def dims(geo, relu):
    """The loop's integer arguments but the images to run (one array: numba unboxes each argument
    of a call, about 0.1 us apiece) for a geometry and a Relu or none."""
    return np.array([geo.h + geo.pt + geo.pb, geo.w + geo.pl + geo.pr, geo.oh, geo.ow, geo.sh,
                     geo.sw, geo.dh, geo.dw, int(bool(relu))], np.int64)


def _padded(x, geo):
    """`x` in the interior of a kept zero-bordered buffer of this thread (its border is never
    written, so it stays zero)."""
    if not geo.padded:
        return np.ascontiguousarray(x)
    n, h, w, c = x.shape
    key = (n, h + geo.pt + geo.pb, w + geo.pl + geo.pr, c, x.dtype)
    kept = getattr(_local, "kept", None)
    if kept is None:
        kept = _local.kept = {}
    buf = kept.get(key)
    if buf is None:
        if len(kept) >= _MAX_KEPT:
            kept.pop(next(iter(kept)))
        buf = kept[key] = np.zeros(key[:4], x.dtype)
    buf[:, geo.pt:geo.pt + h, geo.pl:geo.pl + w] = x
    return buf


def conv2d(x, f, geo, bias=None, relu=False, dims_=None):
    """conv2d(x, f) (+ bias) (then Relu) of NHWC `x` and HWIO `f` for operands `applies` accepts:
    a new NHWC array. `dims_`: `dims(geo, relu)`, when the caller keeps it."""
    kh, kw, c, oc = f.shape
    if dims_ is None:
        dims_ = dims(geo, relu)
    xp = _padded(x, geo).reshape(-1)
    fm = np.ascontiguousarray(f).reshape(kh * kw * c, oc)
    b = np.zeros(oc, x.dtype) if bias is None else np.ascontiguousarray(bias, dtype=x.dtype)
    out = np.empty((x.shape[0], geo.oh, geo.ow, oc), x.dtype)
    kernel(kh, kw, c, oc)(xp, fm, b, out.reshape(-1), dims_, 0, x.shape[0])
    return out


class Prepared:
    """`conv2d` for one input shape and dtype, filter shape and Relu or none, with everything but
    the copy into the bordered buffer and the loop's call decided once (FusedConv2D's route at
    batch 1: 8x8x1 -> 32 3.8 -> 2.6 us as an op). Takes C-contiguous `f` and `bias` of x's dtype
    (the caller checks). Above MAX_OUTPUTS output elements and with `threads` > 1, the images are
    split into blocks run by the calling thread and the intra-op pool."""

    __slots__ = ("loop", "dims", "out_shape", "k", "n", "geo", "x_shape", "dtype", "_local",
                 "threads", "bounds")

    def __init__(self, x, f, geo, relu, threads=1):
        self.loop = kernel(*f.shape)
        size = x.shape[0] * geo.oh * geo.ow * f.shape[3]
        self.threads = int(threads) if threads > 1 and size > MAX_OUTPUTS else 1
        blocks = min(x.shape[0], 2 * self.threads)
        self.bounds = [int(v) for v in np.linspace(0, x.shape[0], blocks + 1)]
        self.dims = dims(geo, relu)
        self.n, self.geo, self.x_shape, self.dtype = x.shape[0], geo, x.shape, x.dtype
        self.out_shape = (x.shape[0], geo.oh, geo.ow, f.shape[3])
        self.k = f.shape[0] * f.shape[1] * f.shape[2]
        self._local = threading.local()

    def _buffers(self):
        """This thread's zero-bordered buffer (flat) and the view of its interior."""
        geo, (n, h, w, c) = self.geo, self.x_shape
        buf = np.zeros((n, h + geo.pt + geo.pb, w + geo.pl + geo.pr, c), self.dtype)
        kept = self._local.kept = (buf.reshape(-1), buf[:, geo.pt:geo.pt + h, geo.pl:geo.pl + w])
        return kept

    def __call__(self, x, f, bias):
        flat, interior = getattr(self._local, "kept", None) or self._buffers()
        interior[...] = x
        out = np.empty(self.out_shape, self.dtype)
        fm, flat_out = f.reshape(self.k, self.out_shape[3]), out.reshape(-1)
        if self.threads <= 1 or intra_op.in_worker():
            self.loop(flat, fm, bias, flat_out, self.dims, 0, self.n)
            return out
        loop, dims_, bounds = self.loop, self.dims, self.bounds
        pieces = intra_op.shared_iter(range(len(bounds) - 1))

        def work():
            for k in pieces:
                loop(flat, fm, bias, flat_out, dims_, bounds[k], bounds[k + 1])
        intra_op.POOL.run_shared(work, self.threads)
        return out
