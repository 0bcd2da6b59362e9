"""The compiled loops (numba, optional like `jit_pool.py`, whose `applies` decides for them) of
MaxPool windows that tile the input (stride == window, no padding): the 2x2 forward loop that
records each output's argmax as its window tap (0-3, one byte: a quarter of the int32 positions
`jit_pool.py` records for other windows; [64, 32, 32, 32], one thread, inputs in cache, load 1.6:
MaxPool with records 0.45 -> 0.41 ms, its gradient 0.49 -> 0.41, the ReLU-masked gradient 0.57 ->
0.51; in the CIFAR training step, where the pool's input comes from memory, the forward pass is
unchanged and the masked gradient 1.18 -> 1.09, medians of 4 interleaved runs, load 0.2-0.6), and
the recorded gradients, which write every input element once (g where it is its window's target, else
0) from taps or positions. Semantics are `jit_pool.py`'s: NaN propagates in the forward max, the
gradient goes to the first maximum in row-major tap order. Every loop writes each output element
once from registers, so `claimed_split.py` may run them.
"""

import numpy as np

from graphflow.kernels.cpu.numba import jit_updates, pool_windows


def _compile():
    from graphflow.kernels.cpu.numba.jit_cache import njit

    opts = dict(nogil=True, cache=True, fastmath=False, error_model="numpy")
    flat_2x2, taps_2x2 = (pool_windows.helpers()[k] for k in ("flat_2x2", "taps_2x2"))

    @njit(**opts)
    def max_pool_tap_2x2(x, out, tap, n, h, w, c, oh, ow, lo, hi):
        """max_pool of 2x2 windows at stride 2, and in `tap` (uint8) each output's gradient
        target as the window's tap 0-3 (row-major): a quarter of int32 positions' bytes."""
        rc = w * c
        t1c, t2c, t3c = np.uint8(1), np.uint8(2), np.uint8(3)
        for b in range(lo, hi):
            for y in range(oh):
                for xo in range(ow):
                    o, p = flat_2x2(b, y, xo, h, w, c, oh, ow, 2, 2)
                    dst, ats = out[o:o + c], tap[o:o + c]
                    t0, t1, t2, t3 = taps_2x2(x, p, c, rc)
                    for ch in range(c):
                        m = t0[ch]
                        bs = m
                        a = np.uint8(0)
                        v = t1[ch]
                        m = v if (v > m or v != v) else m
                        a = t1c if v > bs else a
                        bs = v if v > bs else bs
                        v = t2[ch]
                        m = v if (v > m or v != v) else m
                        a = t2c if v > bs else a
                        bs = v if v > bs else bs
                        v = t3[ch]
                        m = v if (v > m or v != v) else m
                        a = t3c if v > bs else a
                        dst[ch] = m
                        ats[ch] = a

    # These loops repeat jit_pool.py's 2x2 forward loop (here recording taps) and each other's
    # window writing on purpose: one forward loop for taps and positions, and the two gradients
    # sharing compiled helpers, each gave the same times on the CIFAR shapes alone but slowed the
    # small CNN's training step (`benchmarks/bench_step_profile.py small`, [64, 28, 28, 16]):
    # MaxPool 0.24 -> 0.28 ms, its ReLU-masked gradient 0.30 -> 0.48 ms.

    @njit(**opts)
    def tiled_grad(g, arg, dx, coded, n, h, w, c, oh, ow, kh, kw, lo, hi):
        """The gradient when windows tile the input (stride == window, no padding): every input
        element is written once, g where it is its window's target, else 0 (dx need not be
        zeroed; the rows and columns no window covers are zeroed here). `arg` holds positions
        r * w + col or, `coded`, taps i * kw + j (`max_pool_tap_2x2`'s uint8)."""
        rc = w * c
        target = np.empty(1, arg.dtype)  # a target in arg's own type: the compare vectorizes
        for b in range(lo, hi):
            for y in range(oh):
                for xo in range(ow):
                    o = ((b * oh + y) * ow + xo) * c
                    gs, ats = g[o:o + c], arg[o:o + c]
                    for i in range(kh):
                        r = y * kh + i
                        for j in range(kw):
                            col = xo * kw + j
                            target[0] = i * kw + j if coded else r * w + col
                            flat = target[0]
                            q = (b * h + r) * rc + col * c
                            d = dx[q:q + c]
                            for ch in range(c):
                                d[ch] = gs[ch] if ats[ch] == flat else 0
                for r in range(y * kh, y * kh + kh):
                    for q in range((b * h + r) * rc + ow * kw * c, (b * h + r + 1) * rc):
                        dx[q] = 0
            for q in range((b * h + oh * kh) * rc, (b + 1) * h * rc):
                dx[q] = 0

    @njit(**opts)
    def tiled_grad_relu_mask(g, y, arg, dx, coded, nans, n, h, w, c, oh, ow, kh, kw, lo, hi):
        """tiled_grad with g kept only where the pooled output y > 0 (FusedMaxPoolGradReluMask);
        nans[lo] counts the NaNs of y in images lo..hi (the caller's fallback)."""
        rc = w * c
        target = np.empty(1, arg.dtype)
        gs = np.empty(c, g.dtype)  # the window's masked gradient
        nan = np.zeros(c, np.uint8)  # per channel (a vectorized or, not a reduction)
        for b in range(lo, hi):
            for y0 in range(oh):
                for xo in range(ow):
                    o = ((b * oh + y0) * ow + xo) * c
                    gw, ys, ats = g[o:o + c], y[o:o + c], arg[o:o + c]
                    for ch in range(c):
                        v = ys[ch]
                        gs[ch] = gw[ch] if v > 0 else 0
                        nan[ch] |= v != v
                    for i in range(kh):
                        r = y0 * kh + i
                        for j in range(kw):
                            col = xo * kw + j
                            target[0] = i * kw + j if coded else r * w + col
                            flat = target[0]
                            q = (b * h + r) * rc + col * c
                            d = dx[q:q + c]
                            for ch in range(c):
                                d[ch] = gs[ch] if ats[ch] == flat else 0
                for r in range(y0 * kh, y0 * kh + kh):
                    for q in range((b * h + r) * rc + ow * kw * c, (b * h + r + 1) * rc):
                        dx[q] = 0
            for q in range((b * h + oh * kh) * rc, (b + 1) * h * rc):
                dx[q] = 0
        nans[lo] = 1 if nan.any() else 0

    return {"max_pool_tap_2x2": max_pool_tap_2x2, "tiled_grad": tiled_grad,
            "tiled_grad_relu_mask": tiled_grad_relu_mask}


loops = jit_updates.LazyLoops(_compile)
