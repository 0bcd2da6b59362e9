"""Forward convolutions with few input channels (the first layer of an image network: one gray or
three color channels) as a compiled direct loop, when numba is installed (optional, like
`jit_pool.py`); `conv_kernels.py` keeps its numpy kernels otherwise and as the reference the tests
compare with.

With one input channel the im2col product is [n*oh*ow, 9] x [9, 32] for a 3x3 filter: a matrix of
9 columns that BLAS and oneDNN run far below their speed, after a copy of the window matrix that is
9 times the input (the 8x8x1 -> 32 convolution of the digits CNN at batch 256: about 0.30 ms
through oneDNN or the gathered product, where onnxruntime takes 0.07). The loop here visits each
output pixel once and, for each filter tap and input channel, adds the input value times the
filter row into the pixel's output channels (contiguous in NHWC and in the HWIO filter, so that
inner loop is vectorized); the bias, and a Relu when the fused op has one, are applied to the
pixel's channels while they are in cache, so the output is written once. Taps in the padding are
skipped (they add zero). The sums run over the taps in the im2col order, but in a different
association than BLAS's blocked product, so the values agree with the reference kernel to rounding,
not bit for bit (tests/kernels/test_jit_conv.py). It runs on the calling thread: it is taken only
for small outputs (`MAX_OUTPUTS`, as at batch 1).
"""

import threading

import numpy as np

from graphflow.kernels.cpu import jit_updates

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# The loop runs convolutions with at most this many input channels (with more, the product's
# inner dimension kh*kw*c is long enough for BLAS / oneDNN to run near their speed).
MAX_IN_CHANNELS = 4
# ... and from MIN_OUTPUTS to MAX_OUTPUTS output elements: below, the first call's compile (about
# a second, once per process) is not worth paying for a tiny graph; above, the loop (which adds
# each filter row into the output pixel in memory, not in registers) loses to oneDNN: the digits
# CNN's first convolution at batch 1 2.3 us here, 5.7 as the gathered product with bias and Relu;
# at batch 8 17 / 20 us; at batch 256 0.54 ms, oneDNN 0.32 (load 1.2-2.9).
MIN_OUTPUTS = 1 << 10
MAX_OUTPUTS = 1 << 15

_lock = threading.Lock()
_loops = None


def _compile():
    from numba import njit

    opts = dict(nogil=True, cache=False, fastmath=False, error_model="numpy")

    # Flat operands sliced per image, pixel and tap, so that the inner loops index from 0 (LLVM
    # then vectorizes them without numba's negative-index wraparound).
    @njit(**opts)
    def conv_direct(x, f, bias, out, dims):
        h, w, c, oh, ow, oc, kh, kw, sh, sw, dh, dw, pt, pl, relu, lo, hi = (
            dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], dims[6], dims[7], dims[8],
            dims[9], dims[10], dims[11], dims[12], dims[13], dims[14], dims[15], dims[16])
        image_in, image_out, row = h * w * c, oh * ow * oc, ow * oc
        for b in range(lo, hi):
            xb = x[b * image_in:(b + 1) * image_in]
            ob = out[b * image_out:(b + 1) * image_out]
            for y in range(oh):
                orow = ob[y * row:(y + 1) * row]
                for k in range(row):
                    orow[k] = 0
                for i in range(kh):
                    r = y * sh - pt + i * dh
                    if r < 0 or r >= h:
                        continue
                    xr = xb[r * w * c:(r + 1) * w * c]
                    for j in range(kw):
                        for ci in range(c):
                            t = ((i * kw + j) * c + ci) * oc
                            fr = f[t:t + oc]
                            for xo in range(ow):
                                col = xo * sw - pl + j * dw
                                if col < 0 or col >= w:
                                    continue
                                v = xr[col * c + ci]
                                d = orow[xo * oc:(xo + 1) * oc]
                                for co in range(oc):
                                    d[co] += v * fr[co]
                for xo in range(ow):
                    d = orow[xo * oc:(xo + 1) * oc]
                    for co in range(oc):
                        d[co] += bias[co]
                if relu:  # numpy's maximum(v, 0): NaN and -0.0 stay
                    for k in range(row):
                        v = orow[k]
                        if not (v >= 0 or v != v):
                            orow[k] = 0

    return {"conv_direct": conv_direct}


def loops():
    global _loops
    if _loops is None:
        with _lock:
            if _loops is None:
                _loops = _compile() if jit_updates.loops() is not None else False
    return _loops or None


def applies(x, f, geo):
    """Whether `conv2d` runs this NHWC input and HWIO filter (a `conv_kernels.Geometry`)."""
    return (x.dtype in _DTYPES and f.dtype == x.dtype and x.ndim == 4 and f.ndim == 4
            and 0 < x.shape[3] <= MAX_IN_CHANNELS and x.shape[3] == f.shape[2]
            and MIN_OUTPUTS <= x.shape[0] * geo.oh * geo.ow * f.shape[3] <= MAX_OUTPUTS
            and loops() is not None)


def dims(x_shape, f_shape, geo, relu):
    """The loop's integer arguments (one array: numba unboxes each argument of a call, about 0.1 us
    apiece) for an NHWC input of `x_shape`, an HWIO filter of `f_shape` and a Relu or none."""
    n, h, w, c = x_shape
    return np.array([h, w, c, geo.oh, geo.ow, f_shape[3], geo.kh, geo.kw, geo.sh, geo.sw, geo.dh,
                     geo.dw, geo.pt, geo.pl, int(bool(relu)), 0, n], np.int64)


def conv2d(x, f, geo, bias=None, relu=False, dims_=None):
    """conv2d(x, f) (+ bias) (then Relu) of NHWC `x` and HWIO `f` for operands `applies` accepts:
    a new NHWC array. `dims_`: `dims(...)` of these shapes, when the caller keeps it."""
    oc = f.shape[3]
    if dims_ is None:
        dims_ = dims(x.shape, f.shape, geo, relu)
    x = np.ascontiguousarray(x)
    f = np.ascontiguousarray(f)
    b = np.zeros(oc, x.dtype) if bias is None else np.ascontiguousarray(bias, dtype=x.dtype)
    out = np.empty((x.shape[0], geo.oh, geo.ow, oc), x.dtype)
    loops()["conv_direct"](x.reshape(-1), f.reshape(-1), b, out.reshape(-1), dims_)
    return out
