"""Stride-1 convolutions as shifted matrix products over the flattened padded input (no im2col copy).

Flatten the padded NHWC input to a matrix X of M = n*hp*wp rows (one per padded pixel) and c columns.
Output pixel (y, x) of image b sits at row r = (b*hp + y)*wp + x of an output matrix laid out on the
same padded grid, and filter tap (i, j) reads input row r + o with o = i*wp + j. So, with W_ij the
[c, out] slice of the filter:

    out[r]         = sum over taps of  X[r + o] @ W_ij          (forward)
    dX[r]          = sum over taps of  G[r - o] @ W_ij^T        (input gradient)
    dW_ij          = X[o:]^T @ G[:M - o]                        (filter gradient)

where G is the output gradient placed on the padded grid with zeros outside the real output. Each
term is one BLAS product over contiguous rows; rows of the padded grid that are not real outputs
(the right and bottom margins, kh-1 rows and kw-1 columns per image) are computed and dropped, or
are zero in G so they add nothing, and a shifted read never reaches another image's real pixels.
The products are cut into row blocks (forward, input gradient) or taps (filter gradient) that the
calling thread and the intra-op pool share (`intra_op.py`), each block one single-threaded BLAS
call per tap (`blas.py` owns the BLAS threads).

Used for stride 1, dilation 1 and inputs with at least `MIN_CHANNELS` channels; other convolutions
keep the im2col path of `conv_kernels.py`, which is also the reference the tests compare with.
"""

import numpy as np

from graphflow.kernels.cpu import blas, intra_op

# Below this many input channels a tap's product is too thin for BLAS: im2col's one wide product wins.
MIN_CHANNELS = 8
ROW_BLOCK = 4096


def applies(geo, channels):
    return geo.sh == geo.sw == 1 and geo.dh == geo.dw == 1 and channels >= MIN_CHANNELS


def _offsets(geo, wp):
    return [i * wp + j for i in range(geo.kh) for j in range(geo.kw)]


def _share(count, work_on, threads, macs):
    """Run `work_on(k)` for k in range(count) on up to `threads` threads when worth it."""
    if threads <= 1 or count < 2 or macs < blas.PARALLEL_MIN_MACS or intra_op.in_worker() \
            or not blas.owns_blas_threads():
        for k in range(count):
            work_on(k)
        return
    pieces = intra_op.shared_iter(range(count))

    def work():
        for k in pieces:
            work_on(k)
    intra_op.POOL.run_shared(work, threads)


def _row_blocks(m):
    return np.arange(0, m + ROW_BLOCK, ROW_BLOCK).clip(max=m)


def conv2d(xp, f, geo, threads):
    """Forward conv of the padded NHWC input `xp` with filter f [kh, kw, c, out]: NHWC output."""
    n, hp, wp, c = xp.shape
    out_c = f.shape[3]
    m = n * hp * wp
    x_rows = xp.reshape(m, c)
    taps = f.reshape(geo.kh * geo.kw, c, out_c)
    offsets = _offsets(geo, wp)
    dtype = np.result_type(xp, f)
    full = np.empty((m, out_c), dtype=dtype)
    bounds = _row_blocks(m)

    def block(k):
        lo, hi = bounds[k], bounds[k + 1]
        acc = full[lo:hi]
        np.matmul(x_rows[lo:hi], taps[0], out=acc)
        tmp = np.empty_like(acc)
        for t in range(1, len(offsets)):
            o = offsets[t]
            end = min(hi, m - o)
            if end <= lo:
                continue
            part = tmp[:end - lo]
            np.matmul(x_rows[lo + o:end + o], taps[t], out=part)
            acc[:end - lo] += part
    _share(len(bounds) - 1, block, threads, m * c * out_c * len(offsets))
    return np.ascontiguousarray(full.reshape(n, hp, wp, out_c)[:, :geo.oh, :geo.ow, :])


def _gradient_grid(g, hp, wp):
    """The output gradient on the padded grid, zeros outside the real output: [n*hp*wp, out]."""
    n, oh, ow, out_c = g.shape
    grid = np.zeros((n, hp, wp, out_c), dtype=g.dtype)
    grid[:, :oh, :ow, :] = g
    return grid.reshape(n * hp * wp, out_c)


def conv2d_backprop_input(g, f, geo, padded_shape, threads):
    """Gradient with respect to the padded input (shape `padded_shape`), cropping left to the caller."""
    n, hp, wp, c = padded_shape
    m = n * hp * wp
    g_rows = _gradient_grid(g, hp, wp)
    taps_t = np.swapaxes(f.reshape(geo.kh * geo.kw, c, f.shape[3]), 1, 2)  # [taps, out, c]
    offsets = _offsets(geo, wp)
    dx = np.empty((m, c), dtype=g.dtype)
    bounds = _row_blocks(m)

    def block(k):
        lo, hi = bounds[k], bounds[k + 1]
        acc = dx[lo:hi]
        acc.fill(0)
        tmp = np.empty_like(acc)
        for t, o in enumerate(offsets):
            start = max(lo, o)  # dX[r] reads G[r - o]: rows r >= o only
            if start >= hi:
                continue
            part = tmp[:hi - start]
            np.matmul(g_rows[start - o:hi - o], taps_t[t], out=part)
            acc[start - lo:] += part
    _share(len(bounds) - 1, block, threads, m * c * g.shape[3] * len(offsets))
    return dx.reshape(padded_shape)


def conv2d_backprop_filter(xp, g, geo, threads):
    """Gradient with respect to the filter [kh, kw, c, out]."""
    n, hp, wp, c = xp.shape
    m = n * hp * wp
    out_c = g.shape[3]
    x_rows = xp.reshape(m, c)
    g_rows = _gradient_grid(g, hp, wp)
    offsets = _offsets(geo, wp)
    df = np.empty((len(offsets), c, out_c), dtype=np.result_type(xp, g))

    def tap(t):
        o = offsets[t]
        np.matmul(x_rows[o:].T, g_rows[:m - o], out=df[t])
    _share(len(offsets), tap, threads, m * c * out_c * len(offsets))
    return df.reshape(geo.kh, geo.kw, c, out_c)
