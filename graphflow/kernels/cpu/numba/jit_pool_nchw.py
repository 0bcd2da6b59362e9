"""MaxPool, MaxPoolGrad, AvgPool and AvgPoolGrad of NCHW arrays as compiled loops over each image's
[h, w] planes when numba is installed, instead of transposing to NHWC, running the NHWC kernel and
transposing back (`reference/pool_kernels.py`, the reference the tests compare with); the "numba"
implementation of `jit_pool_kernels.py` runs them. Float32 MaxPoolGrad is chosen to run oneDNN's
NCHW primitives instead (`dnnl_pool.py`, where the library is installed), except for 2x2 windows
with stride 2 that cover the planes exactly (`covers_in_pairs`): on [64, 32, 32, 32], one thread,
oneDNN takes 2.8 ms, a loop over the windows 3.0 ms (rows of 16 outputs with stride-2 taps: scalar
code with mispredicted branches) and `max_pool_grad_pairs`, three passes over flat arrays that
vectorize, 1.0 ms.

Pooling windows lie within one plane, so an NCHW pool is a loop over n * c independent planes, each
a few KB that stay in cache. The forward max follows numpy's `maximum` (NaN propagates, a tie keeps
the later tap: the reference's bits, zeros' signs included); the max gradient goes to the first
maximum of the window in row-major tap order (a later tap must be strictly greater) as `0 + g`,
and overlapping windows add into an input element in window order (float rounding may differ from
the reference's tap order there); the average sums the window's taps in row-major order, divides
by the count of in-bounds elements and its gradient sums +0.0 and each window's share in tap order:
the reference's bits. Windows that tile the input (stride == window, no padding) have gradient
loops that write each input element once; 2x2 windows with stride 2 loops of their own. Planes are
split over the intra-op pool by image as in `jit_pool.py`.
"""


import numpy as np

from graphflow.kernels.cpu.numba import jit_pool, jit_updates, pool_windows
from graphflow.kernels.cpu.reference.pool_kernels import window_counts


def _compile():
    from graphflow.kernels.cpu.numba.jit_cache import njit

    opts = dict(nogil=True, cache=True, fastmath=False, error_model="numpy")
    span = pool_windows.helpers()["span"]

    # x: [planes, h, w], out: [planes, oh, ow]; lo, hi: images, c planes each

    @njit(**opts)
    def max_pool(x, out, c, kh, kw, sh, sw, pt, pl, lo, hi):
        _, h, w = x.shape
        _, oh, ow = out.shape
        for p in range(lo * c, hi * c):
            for y in range(oh):
                rlo, rhi = span(y, sh, pt, kh, h)
                for xo in range(ow):
                    clo, chi = span(xo, sw, pl, kw, w)
                    m = x[p, rlo, clo]
                    for r in range(rlo, rhi):
                        for col in range(clo, chi):
                            v = x[p, r, col]
                            m = m if (m > v or m != m) else v
                    out[p, y, xo] = m

    @njit(**opts)
    def max_pool_2x2s2(x, out, c, lo, hi):
        _, oh, ow = out.shape
        for p in range(lo * c, hi * c):
            for y in range(oh):
                a, b, dst = x[p, 2 * y], x[p, 2 * y + 1], out[p, y]
                for xo in range(ow):
                    m = a[2 * xo]
                    v = a[2 * xo + 1]
                    m = m if (m > v or m != m) else v
                    v = b[2 * xo]
                    m = m if (m > v or m != m) else v
                    v = b[2 * xo + 1]
                    m = m if (m > v or m != m) else v
                    dst[xo] = m

    @njit(**opts)
    def max_pool_grad(x, g, dx, c, kh, kw, sh, sw, pt, pl, lo, hi):
        """dx zeroed; g added at each window's first maximum, windows in row-major order."""
        _, h, w = x.shape
        _, oh, ow = g.shape
        for p in range(lo * c, hi * c):
            for y in range(oh):
                rlo, rhi = span(y, sh, pt, kh, h)
                for xo in range(ow):
                    clo, chi = span(xo, sw, pl, kw, w)
                    best = x[p, rlo, clo]
                    br, bc = rlo, clo
                    for r in range(rlo, rhi):
                        for col in range(clo, chi):
                            v = x[p, r, col]
                            if v > best:
                                best, br, bc = v, r, col
                    dx[p, br, bc] += g[p, y, xo]

    @njit(**opts)
    def max_pool_grad_tiled(x, g, dx, zero, c, kh, kw, lo, hi):
        """Windows that tile the input: every element of dx written once (+0.0 + g at the window's
        first maximum, as max_pool_grad adds it, 0 elsewhere, uncovered rows and columns
        included)."""
        _, h, w = x.shape
        _, oh, ow = g.shape
        for p in range(lo * c, hi * c):
            for y in range(oh):
                for xo in range(ow):
                    best = x[p, y * kh, xo * kw]
                    bi, bj = 0, 0
                    for i in range(kh):
                        for j in range(kw):
                            v = x[p, y * kh + i, xo * kw + j]
                            if v > best:
                                best, bi, bj = v, i, j
                    for i in range(kh):
                        for j in range(kw):
                            dx[p, y * kh + i, xo * kw + j] = 0
                    dx[p, y * kh + bi, xo * kw + bj] = zero + g[p, y, xo]
                for r in range(y * kh, y * kh + kh):
                    for col in range(ow * kw, w):
                        dx[p, r, col] = 0
            for r in range(oh * kh, h):
                for col in range(w):
                    dx[p, r, col] = 0

    @njit(**opts)
    def max_pool_grad_2x2s2(x, g, dx, zero, c, lo, hi):
        """max_pool_grad_tiled of 2x2 windows: each dx element written once, g where its tap wins
        (w1..w3: a later tap strictly greater than the taps before it) and 0 elsewhere. Bitwise
        ors and comparisons of booleans, not `and` / `or`: no branches to mispredict (8 -> 3.3 ms
        on [64, 32, 32, 32] with random data, one thread)."""
        _, h, w = x.shape
        _, oh, ow = g.shape
        xf, gf, dxf = x.reshape(-1), g.reshape(-1), dx.reshape(-1)  # flat rows: 3.3 ms, not 4.9
        for p in range(lo * c, hi * c):
            for y in range(oh):
                q = (p * h + 2 * y) * w
                o = (p * oh + y) * ow
                a, b, da, db = xf[q:q + w], xf[q + w:q + 2 * w], dxf[q:q + w], dxf[q + w:q + 2 * w]
                gs = gf[o:o + ow]
                for xo in range(ow):
                    i = 2 * xo
                    v = a[i + 1]
                    w1 = v > a[i]
                    bs = v if w1 else a[i]
                    v = b[i]
                    w2 = v > bs
                    bs = v if w2 else bs
                    w3 = b[i + 1] > bs
                    gv = zero + gs[xo]  # dx += g into zeros, as the NHWC window search (+0.0 for -0.0)
                    da[i] = zero if (w1 | w2 | w3) else gv
                    da[i + 1] = gv if w1 > (w2 | w3) else zero
                    db[i] = gv if w2 > w3 else zero
                    db[i + 1] = gv if w3 else zero
                for col in range(2 * ow, w):
                    da[col] = 0
                    db[col] = 0
            for q in range((p * h + 2 * oh) * w, (p + 1) * h * w):
                dxf[q] = 0

    @njit(**opts)
    def max_pool_grad_pairs(x, g, dx, zero, c, h, w, oh, ow, lo, hi):
        """max_pool_grad_2x2s2 of planes that the windows cover exactly (h == 2 oh, w == 2 ow), in
        three passes over flat arrays whose loops vectorize: each row's column pairs (their max and
        which of the two wins, by the rule of a window's top row and of its bottom row, where a
        NaN left element loses to the right one: the first-maximum rule's result), then per window
        whether its bottom pair beats its top pair (g goes to that pair), then each pair's value to
        its winning element. Flat x, g, dx. [64, 32, 32, 32], one thread: 1.0 ms (3.0 for
        max_pool_grad_2x2s2, 2.8 for oneDNN's NCHW primitives)."""
        half = h * ow  # column pairs per plane
        mt, mb = np.empty(half, x.dtype), np.empty(half, x.dtype)
        kt, kb = np.empty(half, np.uint8), np.empty(half, np.uint8)
        val = np.empty(half, x.dtype)
        for p in range(lo * c, hi * c):
            xs = x[p * h * w:(p + 1) * h * w]
            for q in range(half):
                v0 = xs[2 * q]
                v1 = xs[2 * q + 1]
                t = v1 > v0
                b = t | (v0 != v0)
                mt[q] = v1 if t else v0
                mb[q] = v1 if b else v0
                kt[q] = t
                kb[q] = b
            gs = g[p * oh * ow:(p + 1) * oh * ow]
            for y in range(oh):
                top = 2 * y * ow
                bot = top + ow
                for xo in range(ow):
                    vb = mb[bot + xo] > mt[top + xo]
                    gv = zero + gs[y * ow + xo]
                    val[top + xo] = zero if vb else gv
                    val[bot + xo] = gv if vb else zero
                    kt[bot + xo] = kb[bot + xo]
            ds = dx[p * h * w:(p + 1) * h * w]
            for q in range(half):
                v = val[q]
                right = kt[q] != 0
                ds[2 * q] = zero if right else v
                ds[2 * q + 1] = v if right else zero

    @njit(**opts)
    def avg_pool(x, out, counts, c, kh, kw, sh, sw, pt, pl, lo, hi):
        _, h, w = x.shape
        _, oh, ow = out.shape
        for p in range(lo * c, hi * c):
            for y in range(oh):
                rlo, rhi = span(y, sh, pt, kh, h)
                for xo in range(ow):
                    clo, chi = span(xo, sw, pl, kw, w)
                    s = x[p, rlo, clo]
                    for r in range(rlo, rhi):
                        for col in range(clo, chi):
                            if r != rlo or col != clo:
                                s += x[p, r, col]
                    cnt = counts[y, xo]
                    if (rhi - rlo) * (chi - clo) != kh * kw:  # the reference's padding zeros
                        s += cnt - cnt
                    out[p, y, xo] = s / cnt

    @njit(**opts)
    def avg_pool_2x2s2(x, out, counts, c, lo, hi):
        _, oh, ow = out.shape
        cnt = counts[0, 0]
        for p in range(lo * c, hi * c):
            for y in range(oh):
                a, b, dst = x[p, 2 * y], x[p, 2 * y + 1], out[p, y]
                for xo in range(ow):
                    dst[xo] = (((a[2 * xo] + a[2 * xo + 1]) + b[2 * xo]) + b[2 * xo + 1]) / cnt

    @njit(**opts)
    def avg_pool_grad(g, counts, dx, c, kh, kw, sh, sw, pt, pl, lo, hi):
        """Per plane: dx = +0.0, then one pass per tap (row-major) adding each window's
        g / count (the reference's order of additions)."""
        _, h, w = dx.shape
        _, oh, ow = g.shape
        share = np.empty((oh, ow), g.dtype)
        for p in range(lo * c, hi * c):
            for y in range(oh):
                for xo in range(ow):
                    share[y, xo] = g[p, y, xo] / counts[y, xo]
            plane = dx[p]
            for r in range(h):
                for col in range(w):
                    plane[r, col] = 0
            for i in range(kh):
                for j in range(kw):
                    for y in range(oh):
                        r = y * sh + i - pt
                        if r < 0 or r >= h:
                            continue
                        for xo in range(ow):
                            col = xo * sw + j - pl
                            if 0 <= col < w:
                                plane[r, col] += share[y, xo]

    @njit(**opts)
    def avg_pool_grad_2x2s2(g, counts, dx, c, lo, hi):
        """2x2 windows, stride 2: each dx element written once, +0.0 + g / 4."""
        _, h, w = dx.shape
        _, oh, ow = g.shape
        cnt = counts[0, 0]
        zero = cnt - cnt
        for p in range(lo * c, hi * c):
            for y in range(oh):
                da, db, gs = dx[p, 2 * y], dx[p, 2 * y + 1], g[p, y]
                for xo in range(ow):
                    s = zero + gs[xo] / cnt
                    da[2 * xo] = s
                    da[2 * xo + 1] = s
                    db[2 * xo] = s
                    db[2 * xo + 1] = s
                for col in range(2 * ow, w):
                    da[col] = 0
                    db[col] = 0
            for r in range(2 * oh, h):
                for col in range(w):
                    dx[p, r, col] = 0

    return {"max_pool": max_pool, "max_pool_2x2s2": max_pool_2x2s2,
            "max_pool_grad": max_pool_grad, "max_pool_grad_tiled": max_pool_grad_tiled,
            "max_pool_grad_2x2s2": max_pool_grad_2x2s2, "max_pool_grad_pairs": max_pool_grad_pairs,
            "avg_pool": avg_pool,
            "avg_pool_2x2s2": avg_pool_2x2s2, "avg_pool_grad": avg_pool_grad,
            "avg_pool_grad_2x2s2": avg_pool_grad_2x2s2}


loops = jit_updates.LazyLoops(_compile)


def _planes(a):
    n, c, h, w = a.shape
    return np.ascontiguousarray(a).reshape(n * c, h, w)


def _run(name, args, n, size, threads):
    jit_pool.over_images(loops()[name], args, n, size, threads)


def _two_by_two(geo):
    return geo.kh == geo.kw == geo.sh == geo.sw == 2 and not geo.padded


def max_pool(x, geo, threads):
    """MaxPool of NCHW `x`: NCHW output."""
    n, c = x.shape[:2]
    xp = _planes(x)
    out = np.empty((n * c, geo.oh, geo.ow), x.dtype)
    if _two_by_two(geo):
        _run("max_pool_2x2s2", (xp, out, c), n, x.size, threads)
    else:
        _run("max_pool", (xp, out, c, geo.kh, geo.kw, geo.sh, geo.sw, geo.pt, geo.pl), n, x.size,
             threads)
    return out.reshape(n, c, geo.oh, geo.ow)


def covers_in_pairs(geo):
    """2x2 windows at stride 2 that cover the planes exactly: `max_pool_grad_pairs`' flat passes
    (faster than oneDNN's NCHW primitives there)."""
    return _two_by_two(geo) and geo.h == 2 * geo.oh and geo.w == 2 * geo.ow


def max_pool_grad(x, g, geo, threads):
    """MaxPoolGrad of NCHW input `x` and output gradient `g` of the pooled shape (cast to x's
    dtype)."""
    n, c, h, w = x.shape
    if covers_in_pairs(geo):
        dx = np.empty(x.shape, x.dtype)
        g = np.ascontiguousarray(g, dtype=x.dtype)
        _run("max_pool_grad_pairs", (np.ascontiguousarray(x).reshape(-1), g.reshape(-1),
                                     dx.reshape(-1), x.dtype.type(0), c, h, w, geo.oh, geo.ow), n,
             x.size, threads)
        return dx
    xp, gp = _planes(x), _planes(g.astype(x.dtype, copy=False))
    if _two_by_two(geo):
        dx = np.empty(xp.shape, x.dtype)
        _run("max_pool_grad_2x2s2", (xp, gp, dx, x.dtype.type(0), c), n, x.size, threads)
    elif geo.tiles_input:
        dx = np.empty(xp.shape, x.dtype)
        _run("max_pool_grad_tiled", (xp, gp, dx, x.dtype.type(0), c, geo.kh, geo.kw), n, x.size, threads)
    else:
        dx = np.zeros(xp.shape, x.dtype)
        _run("max_pool_grad", (xp, gp, dx, c, geo.kh, geo.kw, geo.sh, geo.sw, geo.pt, geo.pl), n,
             x.size, threads)
    return dx.reshape(x.shape)


def avg_pool(x, geo, threads):
    """AvgPool of NCHW `x`: NCHW output."""
    n, c = x.shape[:2]
    xp = _planes(x)
    out = np.empty((n * c, geo.oh, geo.ow), x.dtype)
    counts = window_counts(geo, x.dtype)
    if _two_by_two(geo):
        _run("avg_pool_2x2s2", (xp, out, counts, c), n, x.size, threads)
    else:
        _run("avg_pool", (xp, out, counts, c, geo.kh, geo.kw, geo.sh, geo.sw, geo.pt, geo.pl), n,
             x.size, threads)
    return out.reshape(n, c, geo.oh, geo.ow)


def avg_pool_grad(x_shape, g, geo, threads):
    """AvgPoolGrad: the NCHW input gradient of NCHW shape `x_shape` from NCHW gradient `g`."""
    n, c, h, w = x_shape
    gp = _planes(g)
    dx = np.empty((n * c, h, w), g.dtype)
    counts = window_counts(geo, g.dtype)
    if _two_by_two(geo):
        _run("avg_pool_grad_2x2s2", (gp, counts, dx, c), n, dx.size, threads)
    else:
        _run("avg_pool_grad", (gp, counts, dx, c, geo.kh, geo.kw, geo.sh, geo.sw, geo.pt, geo.pl),
             n, dx.size, threads)
    return dx.reshape(x_shape)
