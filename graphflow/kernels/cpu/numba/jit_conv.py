"""Forward convolutions with few filter taps (the first layer of an image network: a 3x3 filter on one
gray or three color channels) as a compiled direct loop, when numba is installed (optional, like
`jit_pool.py`): FusedConv2D's "numba" implementation (bias and Relu inside the loop), the most
preferred where `fused_conv2d_applies` holds (NHWC, no activation or a Relu, few taps, outputs from
`MIN_OUTPUTS` to `MAX_OUTPUTS`); `conv_kernels.py` / `fused_conv_kernels.py` are the reference
the tests compare with.

With one input channel the im2col product is [n*oh*ow, 9] x [9, 32] for a 3x3 filter: a matrix of 9
columns that BLAS and oneDNN run far below their speed, after a copy of the window matrix that is 9
times the input (the 8x8x1 -> 32 convolution of the digits CNN at batch 256: about 0.30 ms through
oneDNN on one thread or the gathered product, where onnxruntime takes 0.07 on two).

The loop here is generated for one filter shape and geometry (kh*kw*c taps, at most `MAX_TAPS`;
image sizes, strides and dilations constants, so every tap's input offset is an immediate): for
each block of up to `PIXELS` output pixels of a row it reads the block's input values into scalars,
then computes the block's pixels side by side for every output channel,
`x0 * f0[co] + x1 * f1[co] + ... + bias[co]` each (f<t>: the filter row of tap t, contiguous in
HWIO), so the loop over output channels is vectorized, each filter row is read once per block and
the sums stay in registers: each output element is written once, with the bias and a Relu (when
the fused op has one) applied. A loop adding each tap's filter row into the output in memory took
twice as long at batch 16 (a load and a store per tap). The input is first copied into a kept
zero-bordered buffer (TF's padding), so no tap is tested against the border. The taps are summed
in the im2col order, with fused multiply-adds (fastmath "contract" only: 12% faster at batch 16
and 256) and not blocked as BLAS blocks its product, so the values agree with the reference kernel
to rounding, not bit for bit (tests/kernels/cpu/numba/test_jit_conv.py). Larger outputs are left to oneDNN
(`MAX_OUTPUTS`).

One pixel at a time, with the geometry read at run time (the former loop), took ~33 cycles a pixel
for the digits CNN's 8x8x1 -> 32: its time went to index arithmetic, numba's negative-index
wrap-around on each tap, and ten aliasing checks (filter rows and bias against the output) per
pixel, not to its 18 multiply-adds. One pixel with constant offsets 146 -> 111 us, blocks of 2 /
4 / 8 pixels 121 / 80-90 / 70-78 us (batch 256, one thread, the loop alone, timed with a one-off
script over the generated variants; `benchmarks/bench_conv_few.py --layers digits1` times the
kept one); the same bits.
"""

import threading

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.numba import jit_cache, jit_math, jit_updates
from graphflow.kernels.cpu.reference.conv_geometry import Conv, static_conv
from graphflow.kernels.cpu.reference.fused_kernels import member_error
from graphflow.kernels.cpu.reference.fused_matmul_kernels import activation_of
from graphflow.kernels.cpu.threads import blas, omp_team

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Convolutions of at most this many taps (kh * kw * in channels) run here: 3x3 on up to 4 channels,
# 5x5 on one. With more, the product's inner dimension is long enough for BLAS / oneDNN.
MAX_TAPS = 36
# ... and from MIN_OUTPUTS to MAX_OUTPUTS output elements (MAX_OUTPUTS_FEW_TAPS for filters of at
# most FEW_TAPS taps), on the calling thread: below, the first call's compile (about a second per
# geometry, once per process) is not worth paying for a tiny graph; above, oneDNN is as fast.
# Measured (`python benchmarks/bench_conv_few.py`, with Relu, one thread, medians, ms, this loop /
# oneDNN on one thread / oneDNN as a team of two): 8x8x1 -> 32 3x3 at batch 64 0.022 / 0.056 /
# 0.058, 256 0.089 / 0.191 / 0.199, 512 0.173 / 0.366 / 0.373; 32x32x3 -> 32 3x3 at batch 1
# 0.021 / 0.036, 2 0.042 / 0.041, 4 0.079 / 0.062, 8 0.163 / 0.100; 28x28x1 -> 16 5x5 at batch 1
# 0.007 / 0.026, 2 0.013 / 0.030, 8 0.044 / 0.048, 32 0.178 / 0.144, 64 0.349 / 0.258.
# The loop on two threads of the intra-op pool (image blocks) was slower than on one at every
# size measured (8x8x1 -> 32 at batch 256: 0.156 against 0.089; waking a pool thread on a 2-core
# machine costs more than the second half saves): it runs on one, or on the OpenMP team (below).
MIN_OUTPUTS = 1 << 10
MAX_OUTPUTS = 1 << 16
FEW_TAPS = 9
MAX_OUTPUTS_FEW_TAPS = 1 << 20
# While the threading chooser runs products as a team, a loop of this many outputs and more runs as
# one block of images per thread of that OpenMP team (`omp_team.py`).
TEAM_MIN_OUTPUTS = 1 << 17
# Loops kept compiled (one per filter shape, geometry and Relu); the oldest is dropped past this.
MAX_LOOPS = 32

_lock = threading.Lock()
_kernels = {}  # (filter shape, geometry, Relu) -> the compiled loop
_local = threading.local()  # per thread: {(padded shape, dtype): zero-bordered input buffer}
_MAX_KEPT = 8
# Output pixels of one row computed together (`_source`): each filter row read once for all of
# them, PIXELS independent sums in flight.
PIXELS = 8


def available():
    """Whether the loops can be compiled (numba installed, GRAPHFLOW_NO_JIT unset)."""
    return jit_updates.loops() is not None


def _key(f_shape, geo, relu):
    """What a loop is generated for: the filter shape, the padded input and output sizes, the
    strides and dilations, and whether it applies a Relu."""
    return (tuple(int(v) for v in f_shape), geo.h + geo.pt + geo.pb, geo.w + geo.pl + geo.pr,
            geo.oh, geo.ow, geo.sh, geo.sw, geo.dh, geo.dw, bool(relu))


def _source(key):
    """The loop's Python source for one `_key`: every size, stride and tap offset a constant.

    Each output row is cut into blocks of up to PIXELS pixels; for a block, the input values its
    taps read are loaded into scalars once, then the loop over output channels computes the block's
    pixels side by side, `x0 * f0[co] + x1 * f1[co] + ... + bias[co]` each (f<t>: the filter row of
    tap t, contiguous in HWIO), vectorized over the channels (512-bit vectors where the CPU has
    them), with the Relu applied before the one store of each output element."""
    (kh, kw, c, oc), hp, wp, oh, ow, sh, sw, dh, dw, relu = key
    taps = [(i, j, ci) for i in range(kh) for j in range(kw) for ci in range(c)]
    row = wp * c

    def offset(px, i, j, ci):  # of a tap's input value from the block's first window
        return px * sw * c + i * dh * row + j * dw * c + ci

    def block(pixels, indent, first_pixel):
        pad = " " * indent
        lines = [f"{pad}q = y * {sh * row} + ({first_pixel}) * {sw * c}",
                 f"{pad}dst = ob[(y * {ow} + ({first_pixel})) * {oc}:]"]
        offsets = sorted({offset(px, *tap) for px in range(pixels) for tap in taps})
        lines += [f"{pad}v{o} = xb[q + {o}]" for o in offsets]
        lines.append(f"{pad}for co in range({oc}):")
        for px in range(pixels):
            terms = " + ".join(f"v{offset(px, *tap)} * f{k}[co]" for k, tap in enumerate(taps))
            lines.append(f"{pad}    s{px} = ({terms}) + bias[co]")
        for px in range(pixels):
            value = f"s{px} if (s{px} >= 0 or s{px} != s{px}) else zero" if relu else f"s{px}"
            lines.append(f"{pad}    dst[{px * oc} + co] = {value}")  # Relu: numpy's maximum(v, 0)
        return lines

    names = [f"f{k}" for k in range(len(taps))]
    lines = [
        "def conv_taps(xp, f, bias, out, lo, hi):",
        "    wide_vectors()",
        "    zero = out.dtype.type(0)",
        "    " + ", ".join(names) + ", = " + ", ".join(f"f[{k}]" for k in range(len(taps))) + ",",
        "    for b in range(lo, hi):",
        f"        xb = xp[b * {hp * row}:(b + 1) * {hp * row}]",
        f"        ob = out[b * {oh * ow * oc}:(b + 1) * {oh * ow * oc}]",
        f"        for y in range({oh}):",
    ]
    pixels = min(PIXELS, ow)
    full, tail = divmod(ow, pixels)
    lines.append(f"            for block in range({full}):")
    lines += block(pixels, 16, f"block * {pixels}")
    if tail:
        lines += block(tail, 12, full * pixels)
    return "\n".join(lines) + "\n"


def kernel(f_shape, geo, relu):
    """The compiled loop for a filter shape, `conv_geometry.Geometry` and Relu or none (compiled on
    first use), or None without numba (or with GRAPHFLOW_NO_JIT=1). Called as
    `loop(padded input (flat), filter (taps x out channels), bias, output (flat), lo, hi)` for
    images lo to hi."""
    key = _key(f_shape, geo, relu)
    loop = _kernels.get(key)
    if loop is None:
        with _lock:
            loop = _kernels.get(key)
            if loop is None:
                if not available():
                    loop = False
                else:
                    namespace = jit_cache.load_source(  # our own generated source, kept on disk
                        _source(key), {"wide_vectors": jit_math.wide_vectors()}, "conv", (jit_math,))
                    loop = jit_cache.njit(nogil=True, cache=True, fastmath={"contract"},
                                error_model="numpy")(namespace["conv_taps"])
                if len(_kernels) >= MAX_LOOPS:
                    _kernels.pop(next(iter(_kernels)))
                _kernels[key] = loop
    return loop or None


def applies(x, f, geo):
    """Whether `conv2d` runs this NHWC input and HWIO filter (a `conv_geometry.Geometry`)."""
    if not (x.dtype in _DTYPES and f.dtype == x.dtype and x.ndim == 4 and f.ndim == 4
            and x.shape[3] == f.shape[2]):
        return False
    return fits(x.shape[0], geo, f.shape) and available()


def fits(n, geo, f_shape):
    """Whether the filter has few enough taps and the output a size the loop takes."""
    taps = f_shape[0] * f_shape[1] * f_shape[2]
    top = MAX_OUTPUTS_FEW_TAPS if taps <= FEW_TAPS else MAX_OUTPUTS
    return 0 < taps <= MAX_TAPS and MIN_OUTPUTS <= n * geo.oh * geo.ow * f_shape[3] <= top


def fused_conv2d_applies(node):
    """The plan's test of a FusedConv2D node: NHWC, no activation or a Relu, x, filter and bias of
    one float dtype, static shapes the loop takes, a bias of the output channels."""
    shapes = static_conv(node)
    dtypes = node.in_dtypes or ()
    if (shapes is None or shapes.fmt != "NHWC" or len(dtypes) < 3
            or activation_of(node).relu_or_none is False):
        return False
    dtype = np.dtype(dtypes[0])
    bias_shape = node.in_shapes[2] if node.in_shapes and len(node.in_shapes) > 2 else None
    return (dtype in _DTYPES and np.dtype(dtypes[1]) == dtype == np.dtype(dtypes[2])
            and bias_shape is not None and tuple(bias_shape) == (shapes.oc,)
            and fits(shapes.n, shapes.geo, shapes.f_shape))


@cpu_kernel("FusedConv2D", name="numba", preference=50, requires=("numba",),
            applies=fused_conv2d_applies)
def fused_conv2d_loop(node):
    """relu?(conv2d(x, f) + bias) as one compiled loop, prepared once per operand shapes."""
    conv = Conv(node)
    relu = activation_of(node).relu_or_none is True
    threads = blas.session_threads(node)
    kept = {}  # (x shape and dtype, filter and bias shapes) -> Prepared

    def prepare(x, f, bias):
        geo = conv.biased_geometry(x, f, bias)
        if len(kept) >= 16:
            kept.clear()
        run = kept[(x.shape, x.dtype, f.shape, bias.shape)] = Prepared(x, f, geo, relu, threads)
        return run

    def fused_conv2d(x, f, bias):
        try:
            bias = np.asarray(bias)
            run = kept.get((x.shape, x.dtype, f.shape, bias.shape)) or prepare(x, f, bias)
            if f.flags.c_contiguous and bias.flags.c_contiguous and bias.dtype == x.dtype:
                return run(x, f, bias)
            return conv2d(x, f, run.geo, bias, relu)
        except Exception as exc:
            raise member_error(exc, node.attrs, 0) from exc
    return fused_conv2d


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


def conv2d(x, f, geo, bias=None, relu=False):
    """conv2d(x, f) (+ bias) (then Relu) of NHWC `x` and HWIO `f` for operands `applies` accepts:
    a new NHWC array."""
    kh, kw, c, oc = f.shape
    xp = _padded(x, geo).reshape(-1)
    fm = np.ascontiguousarray(f).reshape(kh * kw * c, oc)
    b = np.zeros(oc, x.dtype) if bias is None else np.ascontiguousarray(bias, dtype=x.dtype)
    out = np.empty((x.shape[0], geo.oh, geo.ow, oc), x.dtype)
    kernel(f.shape, geo, relu)(xp, fm, b, out.reshape(-1), 0, x.shape[0])
    return out


class Prepared:
    """`conv2d` for one input shape and dtype, filter shape and Relu or none, with everything but
    the copy into the bordered buffer and the loop's call decided once (FusedConv2D's route at
    batch 1: 8x8x1 -> 32 3.8 -> 2.6 us as an op). Takes C-contiguous `f` and `bias` of x's dtype
    (the caller checks). From TEAM_MIN_OUTPUTS outputs on, with `threads` > 1, the images are
    split over the OpenMP team while products run as one (`omp_team.wanted`)."""

    __slots__ = ("loop", "out_shape", "k", "n", "geo", "x_shape", "dtype", "_local", "threads")

    def __init__(self, x, f, geo, relu, threads=1):
        self.loop = kernel(f.shape, geo, relu)
        size = x.shape[0] * geo.oh * geo.ow * f.shape[3]
        self.threads = int(threads) if size >= TEAM_MIN_OUTPUTS and x.shape[0] > 1 else 1
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
        args = (flat, f.reshape(self.k, self.out_shape[3]), bias, out.reshape(-1))
        if self.threads > 1 and omp_team.wanted(self.threads):
            omp_team.run(self.loop, args, self.n, self.threads)
        else:
            self.loop(*args, 0, self.n)
        return out
