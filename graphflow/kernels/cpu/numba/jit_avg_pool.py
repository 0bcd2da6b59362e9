"""AvgPool and AvgPoolGrad (NHWC, any window, stride and padding) as compiled loops when numba is
installed (optional, like `jit_pool.py` for MaxPool; registered as the "numba" implementation by
`jit_pool_kernels.py`); `reference/pool_kernels.py` is the reference the tests compare with. NCHW
pools: `jit_pool_nchw.py`.

The numpy kernels make one strided whole-batch pass per window tap (AvgPoolGrad also a divided copy
of the gradient and a zeroed padded input, then a cropped copy): on [64, 32, 32, 32], 2x2 windows,
1.4 ms forward and 2.0 ms gradient. These loops visit each window once with the channels innermost
(contiguous in NHWC) and give the numpy kernels' bits: the same float additions in the same order
(taps row-major, the sum then divided by the window's count of in-bounds elements, TF's rule for
SAME padding; a window that reaches into the padding also adds the reference's +0.0, which only
turns a -0.0 sum into +0.0), and the gradient of each input element summed from +0.0 over the
windows that hold it, in tap order, as the reference's per-tap slab additions do.

2x2 windows without padding have a forward loop of flat slices that vectorizes; windows that tile
the input (stride == window, no padding) a gradient that writes each input element once. Images
are split over the intra-op pool as in `jit_pool.py` (`over_images`, PARALLEL_MIN_ELEMENTS).
"""


import numpy as np

from graphflow.kernels.cpu.numba import jit_pool, jit_updates, pool_windows
from graphflow.kernels.cpu.reference.pool_kernels import window_counts


def _compile():
    from graphflow.kernels.cpu.numba.jit_cache import njit

    opts = dict(nogil=True, cache=True, fastmath=False, error_model="numpy")
    span, flat_2x2, taps_2x2 = (pool_windows.helpers()[k] for k in ("span", "flat_2x2", "taps_2x2"))

    @njit(**opts)
    def avg_pool_any(x, out, counts, kh, kw, sh, sw, pt, pl, lo, hi):
        """x [n, h, w, c], out [n, oh, ow, c], counts [oh, ow] in x's dtype."""
        _, h, w, c = x.shape
        _, oh, ow, _ = out.shape
        for b in range(lo, hi):
            for y in range(oh):
                rlo, rhi = span(y, sh, pt, kh, h)
                for xo in range(ow):
                    clo, chi = span(xo, sw, pl, kw, w)
                    dst = out[b, y, xo]
                    src = x[b, rlo, clo]
                    for ch in range(c):
                        dst[ch] = src[ch]
                    for r in range(rlo, rhi):
                        for col in range(clo, chi):
                            if r != rlo or col != clo:
                                src = x[b, r, col]
                                for ch in range(c):
                                    dst[ch] += src[ch]
                    cnt = counts[y, xo]
                    if (rhi - rlo) * (chi - clo) != kh * kw:  # the reference's padding zeros
                        zero = cnt - cnt
                        for ch in range(c):
                            dst[ch] = (dst[ch] + zero) / cnt
                    else:
                        for ch in range(c):
                            dst[ch] = dst[ch] / cnt

    @njit(**opts)
    def avg_pool_2x2(x, out, counts, n, h, w, c, oh, ow, sh, sw, lo, hi):
        """2x2 windows, no padding: flat x and out, the four taps' channel rows in one pass."""
        rc = w * c
        cnt = counts[0, 0]
        for b in range(lo, hi):
            for y in range(oh):
                for xo in range(ow):
                    o, p = flat_2x2(b, y, xo, h, w, c, oh, ow, sh, sw)
                    dst = out[o:o + c]
                    t0, t1, t2, t3 = taps_2x2(x, p, c, rc)
                    for ch in range(c):
                        dst[ch] = (((t0[ch] + t1[ch]) + t2[ch]) + t3[ch]) / cnt

    @njit(**opts)
    def avg_pool_grad_tiled(g, counts, dx, n, h, w, c, oh, ow, kh, kw, lo, hi):
        """Windows that tile the input: each covered input element is +0.0 + g / count of its one
        window, the rows and columns no window covers +0.0 (flat g and dx, dx not zeroed)."""
        rc = w * c
        share = np.empty(c, g.dtype)
        for b in range(lo, hi):
            for y in range(oh):
                for xo in range(ow):
                    o = ((b * oh + y) * ow + xo) * c
                    gs = g[o:o + c]
                    cnt = counts[y, xo]
                    zero = cnt - cnt
                    for ch in range(c):
                        share[ch] = zero + gs[ch] / cnt
                    for i in range(kh):
                        q0 = (b * h + y * kh + i) * rc + xo * kw * c
                        for j in range(kw):
                            d = dx[q0 + j * c:q0 + (j + 1) * c]
                            for ch in range(c):
                                d[ch] = share[ch]
                for r in range(y * kh, y * kh + kh):
                    for q in range((b * h + r) * rc + ow * kw * c, (b * h + r + 1) * rc):
                        dx[q] = 0
            for q in range((b * h + oh * kh) * rc, (b + 1) * h * rc):
                dx[q] = 0

    @njit(**opts)
    def avg_pool_grad_any(g, counts, dx, kh, kw, sh, sw, pt, pl, lo, hi):
        """g [n, oh, ow, c], dx [n, h, w, c]: per image, dx = +0.0, then one pass per tap (row-major)
        adding each window's g / count at that tap (the reference's order of additions)."""
        _, h, w, c = dx.shape
        _, oh, ow, _ = g.shape
        share = np.empty((oh, ow, c), g.dtype)
        for b in range(lo, hi):
            for y in range(oh):
                for xo in range(ow):
                    cnt = counts[y, xo]
                    gs, sd = g[b, y, xo], share[y, xo]
                    for ch in range(c):
                        sd[ch] = gs[ch] / cnt
            image = dx[b]
            for r in range(h):
                for col in range(w):
                    d = image[r, col]
                    for ch in range(c):
                        d[ch] = 0
            for i in range(kh):
                for j in range(kw):
                    for y in range(oh):
                        r = y * sh + i - pt
                        if r < 0 or r >= h:
                            continue
                        for xo in range(ow):
                            col = xo * sw + j - pl
                            if col < 0 or col >= w:
                                continue
                            d, sd = image[r, col], share[y, xo]
                            for ch in range(c):
                                d[ch] += sd[ch]

    return {"avg_pool_any": avg_pool_any, "avg_pool_2x2": avg_pool_2x2,
            "avg_pool_grad_tiled": avg_pool_grad_tiled, "avg_pool_grad_any": avg_pool_grad_any}


loops = jit_updates.LazyLoops(_compile)


def avg_pool(x, geo, threads):
    """AvgPool of NHWC `x` (C-contiguous copy made if needed)."""
    x = np.ascontiguousarray(x)
    n, h, w, c = x.shape
    out = np.empty((n, geo.oh, geo.ow, c), x.dtype)
    counts = window_counts(geo, x.dtype)
    if geo.kh == geo.kw == 2 and not geo.padded:
        jit_pool.over_images(loops()["avg_pool_2x2"],
                              (x.reshape(-1), out.reshape(-1), counts, n, h, w, c, geo.oh, geo.ow,
                               geo.sh, geo.sw), n, x.size, threads)
    else:
        jit_pool.over_images(loops()["avg_pool_any"],
                              (x, out, counts, geo.kh, geo.kw, geo.sh, geo.sw, geo.pt, geo.pl), n,
                              x.size, threads)
    return out


def avg_pool_grad(x_shape, g, geo, threads):
    """AvgPoolGrad: the NHWC input gradient of shape `x_shape` from NHWC output gradient `g`."""
    g = np.ascontiguousarray(g)
    n, h, w, c = x_shape
    dx = np.empty(x_shape, g.dtype)
    counts = window_counts(geo, g.dtype)
    if geo.tiles_input:
        jit_pool.over_images(loops()["avg_pool_grad_tiled"],
                              (g.reshape(-1), counts, dx.reshape(-1), n, h, w, c, geo.oh, geo.ow,
                               geo.kh, geo.kw), n, dx.size, threads)
    else:
        jit_pool.over_images(loops()["avg_pool_grad_any"],
                              (g, counts, dx, geo.kh, geo.kw, geo.sh, geo.sw, geo.pt, geo.pl), n,
                              dx.size, threads)
    return dx
