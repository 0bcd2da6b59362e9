"""AvgPool and AvgPoolGrad kernels: the numpy reference (one whole-batch pass per window tap, NCHW
transposed to NHWC and back, as the other pools of `conv_kernels.py`) and, with numba installed,
the compiled loops of `jit_avg_pool.py` (NHWC) and `jit_pool_nchw.py` (NCHW, no transposes), which
the tests compare with the reference. Each window's sum is divided by its number of in-bounds
elements (TF's rule for SAME padding).
"""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.numba import jit_avg_pool, jit_pool_nchw
from graphflow.kernels.cpu.reference.conv_kernels import (
    Pool,
    _check4,
    _from_nhwc,
    _sizes,
    _to_nhwc,
    reduce_taps,
)
from graphflow.kernels.cpu.threads import blas


def _window_counts(geo, dtype):
    """[oh, ow, 1] number of real (non-padding) elements in each window."""
    def counts(out, k, s, pad, size):
        start = np.arange(out) * s - pad
        return np.minimum(start + k, size) - np.maximum(start, 0)
    ch = counts(geo.oh, geo.kh, geo.sh, geo.pt, geo.h)
    cw = counts(geo.ow, geo.kw, geo.sw, geo.pl, geo.w)
    return np.multiply.outer(ch, cw).astype(dtype)[:, :, None]


@cpu_kernel("AvgPool")
def _avg_pool(node):
    pool = Pool(node)
    threads = blas.session_threads(node)

    def avg_pool(x):
        _check4(x, "input")
        if jit_pool_nchw.takes(pool, x):
            return jit_pool_nchw.avg_pool(x, pool.geometry(jit_pool_nchw.nhwc_shape(x.shape)), threads)
        x = _to_nhwc(x, pool.fmt)
        geo = pool.geometry(x.shape)
        if jit_avg_pool.applies(x):
            return _from_nhwc(jit_avg_pool.avg_pool(x, geo, threads), pool.fmt)
        out = reduce_taps(geo.pad(x), geo, np.add)
        out /= _window_counts(geo, x.dtype)
        return _from_nhwc(out, pool.fmt)
    return avg_pool


@cpu_kernel("AvgPoolGrad")
def _avg_pool_grad(node):
    pool = Pool(node)
    threads = blas.session_threads(node)

    def avg_pool_grad(orig_input_shape, g):
        _check4(g, "grad")
        sizes = _sizes(orig_input_shape, "orig_input_shape")
        n, h, w, c = sizes if pool.fmt == "NHWC" else (sizes[0], sizes[2], sizes[3], sizes[1])
        geo = pool.geometry((n, h, w, c))
        if jit_pool_nchw.takes(pool, g, n * h * w * c) and g.shape == (n, c, geo.oh, geo.ow):
            return jit_pool_nchw.avg_pool_grad(sizes, g, geo, threads)
        g = _to_nhwc(g, pool.fmt)
        pool.check_grad(g, geo, n, c)
        if jit_avg_pool.applies(g, n * h * w * c):
            return _from_nhwc(jit_avg_pool.avg_pool_grad((n, h, w, c), g, geo, threads), pool.fmt)
        share = g / _window_counts(geo, g.dtype)
        dxp = np.zeros(geo.padded_shape(n, c), dtype=g.dtype)
        for tap in geo.taps():
            dxp[tap] += share
        return _from_nhwc(np.ascontiguousarray(geo.crop(dxp)), pool.fmt)
    return avg_pool_grad
