"""FusedBatchNorm, FusedBatchNormGrad and FusedBatchNormStats (NHWC and NCHW, float32 and float64)
as compiled loops: the "numba" implementations of those ops (`batch_norm_kernels.py` registers
them and says which nodes they take); the numpy kernels of `reference/nn_norm_kernels.py` are the
definition the tests compare with (`tests/kernels/cpu/numba/test_jit_batch_norm.py`).

The numpy kernels make a dozen whole-array passes (a centered copy, its square, the reductions over
three axes, the products): on [64, 32, 32, 16] float32 NHWC, 4.0 ms forward (training) and 6.1 ms
for the gradient (medians of 20 calls, 2 cores); these loops take 0.73 and 0.8-0.97 (one or two
threads: `PARALLEL_MIN_ELEMENTS`). The passes:

  forward, training: the statistics (also FusedBatchNormStats's, `batch_statistics`), then a
      pass writes y = (x - mean) * (inv * scale) + offset. Rows layouts read x once for the
      statistics: each block's sums, then (from cache) its squared deviations from its own means,
      the blocks combined exactly in float64 (Chan et al.); planes sum x, then the squared
      deviations from that mean (the reference's two-pass variance);
  forward, inference: the third alone;
  gradient, training: one pass over (dy, x) sums dy and dy * x_hat per channel, a second writes
      dx = ((dy - d_offset / n) - x_hat * (d_scale / n)) * (scale * inv);
  gradient, inference: one pass writes dx = dy * (scale * inv) and the two sums.

Sums are accumulated in float64, so the statistics are closer to the exact values than the
reference's, which sums in the input's dtype (on [64, 32, 32, 16] float32 NHWC its variance is
1.4e-5 off in relative terms, these 6e-8). The elementwise outputs are computed in the input's dtype
with the reference's formulas in its order (no fast-math, no contraction into fused multiply-adds):
given the same statistics, they are the reference's bits (the inference forward always is).

The input is cut into blocks of about `BLOCK_ELEMENTS` elements whose bounds do not depend on the
thread count, and each block's sums go to its own row of a [blocks, C] float64 array, added up in
block order afterwards: the results are the same bits on any number of threads. Within a block the
loops accumulate into lanes folded in a fixed order, a vectorized inner loop:

  rows (NHWC, and NCHW with images of at most `MAX_ROW_ELEMENTS`): the block is whole rows (a
      pixel's C channels; an NCHW image), the lanes `LANES // row` rows side by side, each lane
      one channel's, folded into the channels in lane order at the end of the block;
  planes (NCHW with larger images): the block is any element range, walked one plane segment (one
      image and channel) at a time, summed in `SEGMENT_LANES` lanes folded pairwise.

Blocks are shared by the calling thread and the intra-op pool's workers (`intra_op.py`, the session's
intra-op threads) for passes that stream `PARALLEL_MIN_ELEMENTS` input elements or more; the loops
release the GIL.

The loops are module-level functions that call no other compiled function, so `njit(cache=True)`
keeps them on disk between processes; each compiles on its first use with a dtype (about a second
for a layout's five), which inputs below `batch_norm_kernels.MIN_ELEMENTS` never pay: those keep
the numpy kernels.
"""

import numpy as np

from graphflow.kernels.cpu.numba import jit_updates
from graphflow.kernels.cpu.threads import intra_op, omp_team

# Elements per block (rows: rounded down to whole rows, at least one): 128 KB of float32.
BLOCK_ELEMENTS = 1 << 15
# A pass is shared with the intra-op pool when it streams this many input elements (x, or dy and x)
# or more; smaller ones run on the calling thread. The passes are limited by memory bandwidth, which
# one core nearly reaches while the data comes from the caches (2 cores, ms per call, one thread /
# two: [64, 32, 32, 16] forward 0.67-0.72 / 0.77-0.81, gradient 0.82-0.89 / 0.74-0.77;
# [32, 32, 32, 16] 0.34 / 0.54 and 0.45 / 0.55; [64, 32, 32, 32] 1.37 / 1.25 and 1.72 / 1.22;
# [64, 64, 64, 16] 2.6 / 1.8 and 3.3 / 2.0).
PARALLEL_MIN_ELEMENTS = 1 << 21
# While the threading chooser runs products as a team, passes streaming this many elements or more
# run on its OpenMP team (`omp_team.py`), whose threads spin awake between the convolutions around
# a batch norm. Measured right after a team product ([n, 8, 8, 32] float32, median us, team / one
# thread, gradient and statistics): 32K elements 93 / 110 and 83 / 95, 128K 113 / 122 and 92 /
# 106, 512K 440 / 502 and 293 / 371.
TEAM_MIN_ELEMENTS = 1 << 16
# Accumulator lanes (float64) of the rows loops (at least one row) and of the planes loops.
LANES = 256
SEGMENT_LANES = 64  # a power of two
# NCHW images of at most this many elements are cut as rows (one image a row: no fold per plane
# segment; larger rows made the folds at the blocks' ends cost more than the segments' folds).
MAX_ROW_ELEMENTS = 1 << 11


# ---- Rows: x flat, [rows, row] with `row` elements each (NHWC: the C channels of a pixel; NCHW
# with small planes: an image's C * H * W). A block holds `block` elements (whole rows). The lanes
# are `period` = k * row elements wide, lane j of channel chan[j]; the vectors (one value per
# channel) come expanded to the period: v[chan].

def block_moments_rows(x, part_sum, part_m2, chan, period, block, b0, b1):
    """part_sum[b, ch] = the sum of block b's elements of channel ch, part_m2[b, ch] = the sum of
    their squared deviations from that block's own channel mean (float64): a block is read from
    memory once, its second pass comes from cache (the blocks are combined by `_statistics`)."""
    size = x.shape[0]
    c = part_sum.shape[1]
    lanes = np.empty(period, np.float64)
    means = np.empty(period, np.float64)
    for b in range(b0, b1):
        lo = b * block
        xb = x[lo:min(size, lo + block)]
        lanes[:] = 0.0
        for g in range(0, xb.shape[0], period):
            xg = xb[g:g + period]
            for j in range(xg.shape[0]):
                lanes[j] += xg[j]
        sums = part_sum[b]
        sums[:] = 0.0
        for j in range(period):
            sums[chan[j]] += lanes[j]
        count = xb.shape[0] // c  # whole rows: every channel as often
        for j in range(period):
            means[j] = sums[chan[j]] / count
        lanes[:] = 0.0
        for g in range(0, xb.shape[0], period):
            xg = xb[g:g + period]
            for j in range(xg.shape[0]):
                d = xg[j] - means[j]
                lanes[j] += d * d
        m2 = part_m2[b]
        m2[:] = 0.0
        for j in range(period):
            m2[chan[j]] += lanes[j]


def affine_rows(x, y, mean, gain, offset, chan, period, block, b0, b1):
    """y = (x - mean) * gain + offset, in x's dtype."""
    size = x.shape[0]
    for b in range(b0, b1):
        lo = b * block
        hi = min(size, lo + block)
        xb, yb = x[lo:hi], y[lo:hi]
        for g in range(0, hi - lo, period):
            xg, yg = xb[g:g + period], yb[g:g + period]
            for j in range(xg.shape[0]):
                yg[j] = (xg[j] - mean[j]) * gain[j] + offset[j]


def grad_sums_rows(dy, x, mean, inv, gain, dx, write, masked, ym, yg, yo, zero, part_o, part_s,
                   chan, period, block, b0, b1):
    """part_o[b] = the sum of dy, part_s[b] = the sum of dy * x_hat (x_hat = (x - mean) * inv in
    x's dtype, the product in float64) per channel; with `write` also dx = dy * gain (the
    inference gradient). With `masked`, dy is where((x - ym) * yg + yo > 0, dy, zero[0]) (a ReLU's
    gradient after the batch norm, y recomputed from x in x's dtype)."""
    size = x.shape[0]
    z = zero[0]  # +0.0 in x's dtype
    o_lanes = np.empty(period, np.float64)
    s_lanes = np.empty(period, np.float64)
    for b in range(b0, b1):
        lo = b * block
        hi = min(size, lo + block)
        xb, db, ob = x[lo:hi], dy[lo:hi], dx[lo:hi]
        o_lanes[:] = 0.0
        s_lanes[:] = 0.0
        for g in range(0, hi - lo, period):
            xg, dg = xb[g:g + period], db[g:g + period]
            if masked:  # the same loop, dy masked (its own loop: one that tests a flag per element
                for j in range(xg.shape[0]):  # is not vectorized)
                    d = dg[j] if (xg[j] - ym[j]) * yg[j] + yo[j] > 0 else z
                    o_lanes[j] += d
                    s_lanes[j] += np.float64(d) * ((xg[j] - mean[j]) * inv[j])
            else:
                for j in range(xg.shape[0]):
                    d = dg[j]
                    o_lanes[j] += d
                    s_lanes[j] += np.float64(d) * ((xg[j] - mean[j]) * inv[j])
            if write:
                og = ob[g:g + period]
                for j in range(xg.shape[0]):
                    d = dg[j] if not masked or (xg[j] - ym[j]) * yg[j] + yo[j] > 0 else z
                    og[j] = d * gain[j]
        row_o, row_s = part_o[b], part_s[b]
        row_o[:] = 0.0
        row_s[:] = 0.0
        for j in range(period):
            row_o[chan[j]] += o_lanes[j]
            row_s[chan[j]] += s_lanes[j]


def grad_dx_rows(dy, x, mean, inv, mean_dy, mean_dxh, gain, dx, masked, ym, yg, yo, zero, chan,
                 period, block, b0, b1):
    """dx = ((dy - mean_dy) - x_hat * mean_dxh) * gain, in x's dtype (dy masked as in
    `grad_sums_rows`)."""
    size = x.shape[0]
    z = zero[0]  # +0.0 in x's dtype
    for b in range(b0, b1):
        lo = b * block
        hi = min(size, lo + block)
        xb, db, ob = x[lo:hi], dy[lo:hi], dx[lo:hi]
        for g in range(0, hi - lo, period):
            xg, dg, og = xb[g:g + period], db[g:g + period], ob[g:g + period]
            if masked:
                for j in range(xg.shape[0]):
                    d = dg[j] if (xg[j] - ym[j]) * yg[j] + yo[j] > 0 else z
                    og[j] = ((d - mean_dy[j]) - ((xg[j] - mean[j]) * inv[j]) * mean_dxh[j]) * gain[j]
            else:
                for j in range(xg.shape[0]):
                    og[j] = ((dg[j] - mean_dy[j]) - ((xg[j] - mean[j]) * inv[j]) * mean_dxh[j]) * gain[j]


# ---- Planes (NCHW with large planes): x flat [n * c * hw]; a block is any range of `block`
# elements, walked one segment (the block's part of a plane: one image and channel) at a time,
# each summed in SEGMENT_LANES lanes folded pairwise; the vectors have one value per channel.

def moment_planes(x, mean, square, part, c, hw, block, b0, b1):
    """part[b, ch] = the sum over block b's elements of channel ch of (x - mean), squared when
    `square` (float64; `mean` float64, zeros for the plain sum: x - 0.0 is x)."""
    size = x.shape[0]
    lanes = np.empty(SEGMENT_LANES, np.float64)
    for b in range(b0, b1):
        row = part[b]
        row[:] = 0.0
        i = b * block
        hi = min(size, i + block)
        while i < hi:
            plane = i // hw
            end = min(hi, (plane + 1) * hw)
            m = mean[plane % c]
            seg = x[i:end]
            full = seg.shape[0] // SEGMENT_LANES * SEGMENT_LANES
            lanes[:] = 0.0
            for g in range(0, full, SEGMENT_LANES):
                sg = seg[g:g + SEGMENT_LANES]
                for j in range(SEGMENT_LANES):
                    d = sg[j] - m
                    lanes[j] += d * d if square else d
            w = SEGMENT_LANES
            while w > 1:
                w //= 2
                for j in range(w):
                    lanes[j] += lanes[j + w]
            s = lanes[0]
            for j in range(full, seg.shape[0]):
                d = seg[j] - m
                s += d * d if square else d
            row[plane % c] += s
            i = end


def affine_planes(x, y, mean, gain, offset, c, hw, block, b0, b1):
    """`affine_rows` for planes."""
    size = x.shape[0]
    for b in range(b0, b1):
        i = b * block
        hi = min(size, i + block)
        while i < hi:
            plane = i // hw
            end = min(hi, (plane + 1) * hw)
            ch = plane % c
            m, a, o = mean[ch], gain[ch], offset[ch]
            xs, ys = x[i:end], y[i:end]
            for j in range(xs.shape[0]):
                ys[j] = (xs[j] - m) * a + o
            i = end


def grad_sums_planes(dy, x, mean, inv, gain, dx, write, masked, ym, yg, yo, zero, part_o, part_s,
                     c, hw, block, b0, b1):
    """`grad_sums_rows` for planes."""
    size = x.shape[0]
    z = zero[0]  # +0.0 in x's dtype
    o_lanes = np.empty(SEGMENT_LANES, np.float64)
    s_lanes = np.empty(SEGMENT_LANES, np.float64)
    for b in range(b0, b1):
        row_o, row_s = part_o[b], part_s[b]
        row_o[:] = 0.0
        row_s[:] = 0.0
        i = b * block
        hi = min(size, i + block)
        while i < hi:
            plane = i // hw
            end = min(hi, (plane + 1) * hw)
            ch = plane % c
            m, iv, a = mean[ch], inv[ch], gain[ch]
            pm, pg, po = ym[ch], yg[ch], yo[ch]
            xs, ds = x[i:end], dy[i:end]
            full = xs.shape[0] // SEGMENT_LANES * SEGMENT_LANES
            o_lanes[:] = 0.0
            s_lanes[:] = 0.0
            for g in range(0, full, SEGMENT_LANES):
                xg, dg = xs[g:g + SEGMENT_LANES], ds[g:g + SEGMENT_LANES]
                for j in range(SEGMENT_LANES):
                    d = dg[j] if not masked or (xg[j] - pm) * pg + po > 0 else z
                    o_lanes[j] += d
                    s_lanes[j] += np.float64(d) * ((xg[j] - m) * iv)
            w = SEGMENT_LANES
            while w > 1:
                w //= 2
                for j in range(w):
                    o_lanes[j] += o_lanes[j + w]
                    s_lanes[j] += s_lanes[j + w]
            so, ss = o_lanes[0], s_lanes[0]
            for j in range(full, xs.shape[0]):
                d = ds[j] if not masked or (xs[j] - pm) * pg + po > 0 else z
                so += d
                ss += np.float64(d) * ((xs[j] - m) * iv)
            row_o[ch] += so
            row_s[ch] += ss
            if write:
                os_ = dx[i:end]
                for j in range(xs.shape[0]):
                    d = ds[j] if not masked or (xs[j] - pm) * pg + po > 0 else z
                    os_[j] = d * a
            i = end


def grad_dx_planes(dy, x, mean, inv, mean_dy, mean_dxh, gain, dx, masked, ym, yg, yo, zero, c, hw,
                   block, b0, b1):
    """`grad_dx_rows` for planes."""
    size = x.shape[0]
    z = zero[0]  # +0.0 in x's dtype
    for b in range(b0, b1):
        i = b * block
        hi = min(size, i + block)
        while i < hi:
            plane = i // hw
            end = min(hi, (plane + 1) * hw)
            ch = plane % c
            m, iv, p, q, a = mean[ch], inv[ch], mean_dy[ch], mean_dxh[ch], gain[ch]
            pm, pg, po = ym[ch], yg[ch], yo[ch]
            xs, ds, os_ = x[i:end], dy[i:end], dx[i:end]
            if masked:
                for j in range(xs.shape[0]):
                    d = ds[j] if (xs[j] - pm) * pg + po > 0 else z
                    os_[j] = ((d - p) - ((xs[j] - m) * iv) * q) * a
            else:
                for j in range(xs.shape[0]):
                    os_[j] = ((ds[j] - p) - ((xs[j] - m) * iv) * q) * a
            i = end


def block_totals(part, out):
    """out[ch] = the sum of part[:, ch] in block order."""
    out[:] = 0.0
    for b in range(part.shape[0]):
        row = part[b]
        for ch in range(out.shape[0]):
            out[ch] += row[ch]


_LOOPS = (block_totals, block_moments_rows, affine_rows, grad_sums_rows, grad_dx_rows,
          moment_planes, affine_planes, grad_sums_planes, grad_dx_planes)


def _compile():
    from graphflow.kernels.cpu.numba.jit_cache import njit

    opts = dict(nogil=True, cache=True, fastmath=False, error_model="numpy")
    return {f.__name__: njit(**opts)(f) for f in _LOOPS}


loops = jit_updates.LazyLoops(_compile)


class _Layout:
    """How one input is cut: channels, blocks, which loops (rows or planes) and the arguments they
    take after their own."""

    def __init__(self, shape, nchw):
        self.size = int(np.prod(shape))
        self.c = shape[1] if nchw else shape[3]
        hw = shape[2] * shape[3]
        self.n = self.size // self.c
        self.planes = nchw and self.c * hw > MAX_ROW_ELEMENTS
        if self.planes:
            self.block = BLOCK_ELEMENTS
            self.tail = (self.c, hw, self.block)
        else:
            row = self.c * hw if nchw else self.c
            self.block = max(1, BLOCK_ELEMENTS // row) * row
            period = max(1, LANES // row) * row
            lane = np.arange(period)
            self.chan = lane // hw % self.c if nchw else lane % self.c
            self.tail = (self.chan, period, self.block)
        self.blocks = -(-self.size // self.block)
        self.suffix = "_planes" if self.planes else "_rows"

    def vector(self, v):
        """A per-channel vector as the loops take it (rows: expanded to the lanes' period)."""
        return v if self.planes else v[self.chan]

    def partials(self):
        return np.empty((self.blocks, self.c), np.float64)

    def run(self, name, args, threads, streams=1):
        """The pass `name` (over `streams` input arrays of the input's size) on up to `threads`."""
        loop = loops()[name + self.suffix]
        _over_blocks(loop, tuple(args) + self.tail, self.blocks, self.size * streams, threads)


def _over_blocks(loop, args, blocks, streamed, threads):
    """Call `loop(*args, b0, b1)` over blocks [0, blocks) on up to `threads` threads."""
    if blocks > 1 and streamed >= TEAM_MIN_ELEMENTS and omp_team.wanted(threads):
        omp_team.run(loop, args, blocks, threads)
        return
    if threads <= 1 or blocks < 2 or streamed < PARALLEL_MIN_ELEMENTS or intra_op.in_worker():
        loop(*args, 0, blocks)
        return
    jit_updates.run_shared_ranges(loop, args, blocks, max(1, blocks // (4 * threads)), threads)


def _total(part):
    """The block rows of `part` summed in block order."""
    out = np.empty(part.shape[1], np.float64)
    loops()["block_totals"](part, out)
    return out


def _flat(a):
    return np.ascontiguousarray(a).reshape(-1)


def _statistics(lay, xf, dt, threads):
    """(mean, biased variance) per channel in `dt`. Rows: each block's sums and squared deviations
    from its own means in one read of x, combined in block order (Chan et al.: the squared
    deviations of the whole are the blocks' plus each block's count times its mean's squared
    deviation from the whole's). Planes: the sum, then the squared deviations from the mean."""
    if not lay.planes:
        sums, m2s = lay.partials(), lay.partials()
        lay.run("block_moments", (xf, sums, m2s), threads)
        counts = (np.minimum(lay.size, (np.arange(lay.blocks) + 1) * lay.block)
                  - np.arange(lay.blocks) * lay.block) // lay.c
        mean = _total(sums) / lay.n
        deviation = sums / counts[:, None] - mean
        m2 = _total(m2s + counts[:, None] * (deviation * deviation))
        return mean.astype(dt), (m2 / lay.n).astype(dt)
    part = lay.partials()
    lay.run("moment", (xf, lay.vector(np.zeros(lay.c, np.float64)), False, part), threads)
    mean = (_total(part) / lay.n).astype(dt)
    lay.run("moment", (xf, lay.vector(mean.astype(np.float64)), True, part), threads)
    return mean, (_total(part) / lay.n).astype(dt)


def _training_statistics(lay, xf, dt, threads):
    """(mean, biased variance, unbiased variance) in `dt`."""
    mean, variance = _statistics(lay, xf, dt, threads)
    return mean, variance, variance * (lay.n / max(lay.n - 1, 1))


def batch_statistics(x, nchw, threads):
    """A training FusedBatchNorm's (mean, biased variance, unbiased variance), the same bits as
    `nn_norm_kernels.batch_statistics_reference` (a 4-D float32/float64 x)."""
    return _training_statistics(_Layout(x.shape, nchw), _flat(x), x.dtype, threads)


def fused_batch_norm(x, scale, offset, mean, variance, epsilon, nchw, training, threads):
    """FusedBatchNorm's five outputs as `nn_norm_kernels.fused_batch_norm_reference` computes them
    (validated 4-D float32/float64 inputs)."""
    dt = x.dtype
    lay = _Layout(x.shape, nchw)
    xf = _flat(x)
    if training:
        mean, variance, batch_variance = _training_statistics(lay, xf, dt, threads)
    else:
        mean = mean.astype(dt, copy=False)
        variance = variance.astype(dt, copy=False)
        batch_variance = variance
    inv = 1.0 / np.sqrt(variance + epsilon)
    gain = inv * scale.astype(dt, copy=False)
    y = np.empty(x.shape, dt)
    lay.run("affine", (xf, y.reshape(-1), lay.vector(mean), lay.vector(gain),
                       lay.vector(offset.astype(dt, copy=False))), threads)
    return y, mean.astype(dt), batch_variance.astype(dt), mean.astype(dt), variance.astype(dt)


def fused_batch_norm_grad(dy, x, scale, saved_mean, saved_variance, epsilon, nchw, training,
                          threads, relu_mask=None):
    """FusedBatchNormGrad's (dx, d_scale, d_offset) as `nn_norm_kernels.
    fused_batch_norm_grad_reference` computes them (validated 4-D float32/float64 inputs,
    dy of x's shape and dtype). With
    `relu_mask` = (y_mean, y_gain, y_offset), [C] each, those of `where(y > 0, dy, 0)`, y = (x -
    y_mean) * y_gain + y_offset recomputed from x in both passes (FusedBatchNormGradReluMask: the
    same bits as `nn_norm_kernels.relu_mask_reference` then this)."""
    dt = x.dtype
    lay = _Layout(x.shape, nchw)
    xf, dyf = _flat(x), _flat(dy)
    inv = 1.0 / np.sqrt(saved_variance.astype(dt) + epsilon)
    mean = saved_mean.astype(dt)
    gain = scale.astype(dt) * inv
    dx = np.empty(x.shape, dt)
    part_o, part_s = lay.partials(), lay.partials()
    vm, vi, vg = lay.vector(mean), lay.vector(inv), lay.vector(gain)
    if relu_mask is None:
        mask = (False, vm, vm, vm)
    else:
        mask = (True, *(lay.vector(np.ascontiguousarray(v, dt)) for v in relu_mask))
    mask += (np.zeros(1, dt),)
    lay.run("grad_sums", (dyf, xf, vm, vi, vg, dx.reshape(-1), not training, *mask, part_o,
                          part_s), threads, streams=2)
    d_offset, d_scale = _total(part_o).astype(dt), _total(part_s).astype(dt)
    if training:
        n = lay.n
        lay.run("grad_dx", (dyf, xf, vm, vi, lay.vector(d_offset / n), lay.vector(d_scale / n),
                            vg, dx.reshape(-1), *mask), threads, streams=2)
    return dx, d_scale, d_offset
