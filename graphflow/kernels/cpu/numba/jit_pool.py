"""MaxPool and MaxPoolGrad (NHWC, any window, stride and padding) as compiled loops when numba is
installed (optional, like `jit_updates.py`; the "numba" implementation of `jit_pool_kernels.py`, for
the nodes `applies` takes); `reference/pool_kernels.py` is the reference the tests compare with.

The numpy kernels make one strided pass per window tap (and MaxPoolGrad a boolean temporary per
tap, or a broadcast comparison of the whole input): on a [64, 28, 28, 16] input that was 1.1 ms
forward and 4.9 ms gradient. A loop visits each window once with the channels innermost
(contiguous in NHWC). Semantics are the numpy kernels': padding never wins, NaN propagates in the
forward max, and the gradient goes to the first maximum of the window in row-major tap order (a
later tap must be strictly greater), as TF1's CPU kernel routes it. Images are split over the
intra-op pool's threads (the loops release the GIL).

Training steps run MaxPool and then its gradient on the same arrays. Once a MaxPoolGrad has been
given a MaxPool output (`remember` / `recall`), that MaxPool also records, per output element,
where the gradient goes (the first maximum by the gradient's rule, computed in the same pass), and
the gradient becomes a scatter of `g` through those positions instead of a second search of every
window. A gradient handed an array the forward pass did not produce in this form (another run's,
a transposed NCHW view, ...) searches the windows as before, with the same result. The records:
`pool_records.py`.

2x2 windows without padding (most CNNs' pooling) have their own loops: one vectorized pass over a
window's four taps per channel row, with selects instead of conditional stores ([64, 28, 28, 16],
one thread: MaxPool 0.31 -> 0.15 ms, recording argmaxes 0.40 -> 0.18, the window search 2.5 ->
0.47). When the windows tile the input (stride == window, no padding), the recorded gradient
writes each input element once (g or 0) instead of zeroing dx and scattering; those loops, and the
2x2 stride-2 forward loop that records one-byte taps instead of int32 positions, are in
`jit_pool_tiled.py`. Loops that write each output element once from registers are split over the
threads with one call per thread (`claimed_split.py`), the others in blocks of images.

FusedMaxPoolGradReluMask (`fused_pool_kernels.py`) has a variant of that loop which keeps g only
where the pooled output is > 0 (`tiled_grad_relu_mask`; [64, 32, 32, 32], one thread: 0.48 ms
plain, 0.57 masked, against 0.72 for a separate mask pass (`positive_grad`) and the plain loop),
and the mask pass for every other route.
"""


import numpy as np

from graphflow.kernels.cpu.numba import jit_pool_tiled, jit_updates, pool_windows
from graphflow.kernels.cpu.reference import pool_kernels, pool_records
from graphflow.kernels.cpu.threads import claimed_split, intra_op, omp_team

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Inputs below this many elements keep the numpy kernel: the loops' first call compiles them (once
# per process, about a second), which a graph of only tiny pools should not pay. Above it the
# loops win at any size: a [1, 8, 8, 32] 2x2 pool (batch-1 inference on 8x8 images) 8 us numpy,
# 2 us compiled; [1, 4, 4, 64] 15 and 2 us.
MIN_ELEMENTS = 1 << 10
# Images are split over the intra-op pool only from this many input elements on: the loops stream
# memory, and waking the pool costs more than a second thread saves below it (measured, 2x2 pools,
# one thread / two, load 1.6, ms: [256, 8, 8, 32] 0.10 / 0.15, [256, 16, 16, 32] 0.44 / 0.48,
# [64, 32, 32, 32] 0.38 / 0.50; again with the digits CNN's batch-256 pools, median of 7 rounds,
# load 1.9-2.2, us: [256, 8, 8, 32] 66-70 / 119-127, [256, 4, 4, 64] 18-22 / 46-51). A loop
# taking the two input rows' maximum over the whole row first was 2-4% faster: not kept.
PARALLEL_MIN_ELEMENTS = 1 << 22
# ... and the loops split with one call per thread (`_claimed`) from this many (or from
# PARALLEL_MIN_ELEMENTS, where lower): a split costs them no GIL hand-over per block. Measured in
# the CIFAR training step (interleaved runs against one thread, per-op medians, ms): MaxPool
# [64, 32, 32, 32] with records 0.82 -> 0.66 and 0.74 -> 0.64, its ReLU-masked gradient 1.21 ->
# 0.79 and 1.02 -> 0.85 (quiet, load 1.2-2.0); with another process busy on one core the second
# thread costs instead (0.93 -> 1.10, 1.21 -> 1.37), as for every split kernel. At 1M elements
# ([64, 16, 16, 64]) two threads were no faster (0.37 -> 0.41): from 2M. The digits CNN's
# [256, 8, 8, 32] and [256, 4, 4, 64] stay on one thread (two took 2-3 times as long, load 2.7).
CLAIMED_MIN_ELEMENTS = 1 << 21
# While the threading chooser runs products as a team, MaxPool without argmax records (inference)
# runs on that OpenMP team (`omp_team.py`) from this many input elements on: the team is awake
# between the convolutions around the pool, where the intra-op pool would have to be woken (the
# digits CNN at batch 256, in the step: [256, 8, 8, 32] 0.10-0.125 -> 0.06 ms, the step 1.94-2.13
# -> 1.55-1.68 ms with the first convolution's loop on the team too).
TEAM_MIN_ELEMENTS = 1 << 16
# The training loops of windows that tile the input (2x2 at stride 2: the forward pass recording
# one-byte taps, the recorded gradient, ReLU-masked or not) on the team too, from
# TEAM_MIN_ELEMENTS; other windows' recording loops keep the intra-op split. They kept the
# intra-op split while the filter gradient after them ran its blocks on the intra-op pool (the
# team's spinning thread took its core: the small CNN's filter gradient 0.46 -> 0.67 ms, the step
# 1.9 -> 2.25 ms). Since filter gradients run their blocks on the team, also with bias sums and
# ReLU masks (`dnnl_team.py`), the team pays: interleaved in one process, medians of round minima,
# ms, team / intra-op split: bench_vs_tf1's CIFAR-shaped CNN step 19.33 / 19.90, small CNN 0.817 /
# 0.962, Keras CNN 18.69 / 19.35.
TRAINING_ON_TEAM = True
# 2x2 windows at stride 2 record their argmaxes as one-byte taps (`jit_pool_tiled.py`); False:
# int32 positions, as every other window does (the tests compare both).
TAP_CODES = True



def _compile():
    from graphflow.kernels.cpu.numba.jit_cache import njit

    opts = dict(nogil=True, cache=True, fastmath=False, error_model="numpy")
    span, flat_2x2, taps_2x2 = (pool_windows.helpers()[k] for k in ("span", "flat_2x2", "taps_2x2"))

    # `v > d or v != v` is the forward rule (NaN propagates); `v > d` alone the gradient's (the
    # first maximum stays). Any window: conditional stores into 4-D views (for 3x3 windows with
    # 17 channels faster than the selects that win on 2x2 windows).

    @njit(**opts)
    def max_pool_any(x, out, kh, kw, sh, sw, pt, pl, lo, hi):
        _, h, w, c = x.shape
        _, oh, ow, _ = out.shape
        for b in range(lo, hi):
            for y in range(oh):
                r0 = y * sh - pt
                for xo in range(ow):
                    c0 = xo * sw - pl
                    first = True
                    for i in range(kh):
                        r = r0 + i
                        if r < 0 or r >= h:
                            continue
                        for j in range(kw):
                            col = c0 + j
                            if col < 0 or col >= w:
                                continue
                            src = x[b, r, col]  # channel rows: indices from 0 (vectorized)
                            dst = out[b, y, xo]
                            if first:
                                for ch in range(c):
                                    dst[ch] = src[ch]
                                first = False
                            else:
                                for ch in range(c):
                                    v = src[ch]
                                    if v > dst[ch] or v != v:
                                        dst[ch] = v

    @njit(**opts)
    def max_pool_argmax_any(x, out, arg, kh, kw, sh, sw, pt, pl, lo, hi):
        """max_pool, and in `arg` each output's gradient target r * w + col (-1: no tap)."""
        _, h, w, c = x.shape
        _, oh, ow, _ = out.shape
        best = np.empty(c, x.dtype)
        for b in range(lo, hi):
            for y in range(oh):
                r0 = y * sh - pt
                for xo in range(ow):
                    c0 = xo * sw - pl
                    first = True
                    dst = out[b, y, xo]
                    at = arg[b, y, xo]
                    for i in range(kh):
                        r = r0 + i
                        if r < 0 or r >= h:
                            continue
                        for j in range(kw):
                            col = c0 + j
                            if col < 0 or col >= w:
                                continue
                            src = x[b, r, col]
                            flat = r * w + col
                            if first:
                                for ch in range(c):
                                    dst[ch] = src[ch]
                                    best[ch] = src[ch]
                                    at[ch] = flat
                                first = False
                            else:
                                for ch in range(c):
                                    v = src[ch]
                                    if v > dst[ch] or v != v:
                                        dst[ch] = v
                                    if v > best[ch]:
                                        best[ch] = v
                                        at[ch] = flat
                    if first:
                        for ch in range(c):
                            at[ch] = -1

    # 2x2 windows with no padding (the common pooling): one pass over the channels of a window's
    # four taps, flat indexing with hoisted offsets, unconditional selects: the channel loop
    # vectorizes (a conditional store or a running max in a buffer kept it scalar).

    @njit(**opts)
    def max_pool_2x2(x, out, n, h, w, c, oh, ow, sh, sw, lo, hi):
        rc = w * c
        for b in range(lo, hi):
            for y in range(oh):
                for xo in range(ow):
                    o, p = flat_2x2(b, y, xo, h, w, c, oh, ow, sh, sw)
                    dst = out[o:o + c]
                    t0, t1, t2, t3 = taps_2x2(x, p, c, rc)
                    for ch in range(c):
                        m = t0[ch]
                        v = t1[ch]
                        m = v if (v > m or v != v) else m
                        v = t2[ch]
                        m = v if (v > m or v != v) else m
                        v = t3[ch]
                        m = v if (v > m or v != v) else m
                        dst[ch] = m

    @njit(**opts)
    def max_pool_argmax_2x2(x, out, arg, n, h, w, c, oh, ow, sh, sw, lo, hi):
        """max_pool, and in `arg` each output's gradient target r * w + col."""
        rc = w * c
        for b in range(lo, hi):
            for y in range(oh):
                for xo in range(ow):
                    o, p = flat_2x2(b, y, xo, h, w, c, oh, ow, sh, sw)
                    f0 = np.int32(y * sh * w + xo * sw)
                    f1, f2, f3 = np.int32(f0 + 1), np.int32(f0 + w), np.int32(f0 + w + 1)
                    dst, ats = out[o:o + c], arg[o:o + c]
                    t0, t1, t2, t3 = taps_2x2(x, p, c, rc)
                    for ch in range(c):
                        m = t0[ch]
                        bs = m
                        a = f0
                        v = t1[ch]
                        m = v if (v > m or v != v) else m
                        a = f1 if v > bs else a
                        bs = v if v > bs else bs
                        v = t2[ch]
                        m = v if (v > m or v != v) else m
                        a = f2 if v > bs else a
                        bs = v if v > bs else bs
                        v = t3[ch]
                        m = v if (v > m or v != v) else m
                        a = f3 if v > bs else a
                        dst[ch] = m
                        ats[ch] = a

    @njit(**opts)
    def scatter_grad(g, arg, dx, lo, hi):
        """dx: [n, h * w, c] (zeroed), g and arg: [n, oh, ow, c]; dx[b, arg] += g per channel."""
        _, oh, ow, c = g.shape
        for b in range(lo, hi):
            image = dx[b]
            for y in range(oh):
                for xo in range(ow):
                    grow = g[b, y, xo]
                    at = arg[b, y, xo]
                    for ch in range(c):
                        flat = at[ch]
                        if flat >= 0:
                            image[flat, ch] += grow[ch]

    @njit(**opts)
    def max_pool_grad(x, g, dx, n, h, w, c, oh, ow, kh, kw, sh, sw, pt, pl, lo, hi):
        """Searches each window for its first maximum and adds g there (dx zeroed)."""
        best = np.empty(c, x.dtype)
        at = np.empty(c, np.int64)
        for b in range(lo, hi):
            base = b * h * w * c
            for y in range(oh):
                rlo, rhi = span(y, sh, pt, kh, h)
                for xo in range(ow):
                    clo, chi = span(xo, sw, pl, kw, w)
                    o = ((b * oh + y) * ow + xo) * c
                    p = base + (rlo * w + clo) * c
                    src = x[p:p + c]
                    for ch in range(c):
                        best[ch] = src[ch]
                        at[ch] = p + ch
                    for r in range(rlo, rhi):
                        q = base + (r * w + clo) * c
                        for col in range(clo, chi):
                            if r != rlo or col != clo:
                                src = x[q:q + c]
                                for ch in range(c):
                                    v = src[ch]
                                    bs = best[ch]
                                    up = v > bs
                                    best[ch] = v if up else bs
                                    at[ch] = q + ch if up else at[ch]
                            q += c
                    gs = g[o:o + c]
                    for ch in range(c):
                        dx[at[ch]] += gs[ch]

    @njit(**opts)
    def max_pool_grad_2x2(x, g, dx, n, h, w, c, oh, ow, sh, sw, lo, hi):
        """max_pool_grad of 2x2 windows with no padding: the first maximum's tap (0-3) per channel
        in one vectorized pass, then g added there."""
        rc = w * c
        at = np.empty(c, np.int64)
        for b in range(lo, hi):
            for y in range(oh):
                for xo in range(ow):
                    o, p = flat_2x2(b, y, xo, h, w, c, oh, ow, sh, sw)
                    t0, t1, t2, t3 = taps_2x2(x, p, c, rc)
                    for ch in range(c):
                        bs = t0[ch]
                        a = 0
                        v = t1[ch]
                        a = c if v > bs else a
                        bs = v if v > bs else bs
                        v = t2[ch]
                        a = rc if v > bs else a
                        bs = v if v > bs else bs
                        v = t3[ch]
                        at[ch] = rc + c if v > bs else a
                    gs = g[o:o + c]
                    for ch in range(c):
                        dx[p + at[ch] + ch] += gs[ch]

    @njit(**opts)
    def positive_grad(y, g, out):
        """out = g where y > 0, else 0 (flat arrays); returns whether y holds a NaN."""
        nans = 0
        for i in range(y.size):
            v = y[i]
            out[i] = g[i] if v > 0 else 0
            nans += v != v
        return nans != 0

    return {"max_pool_2x2": max_pool_2x2, "positive_grad": positive_grad, "max_pool_grad": max_pool_grad,
            "max_pool_argmax_2x2": max_pool_argmax_2x2, "scatter_grad": scatter_grad,
            "max_pool_any": max_pool_any,
            "max_pool_argmax_any": max_pool_argmax_any, "max_pool_grad_2x2": max_pool_grad_2x2}


loops = jit_updates.LazyLoops(_compile)


def applies(node):
    """Whether the compiled loops run pooling node `node` (any of the family's op types): float32
    or float64 arrays (MaxPoolGrad's three inputs of one dtype) and an input of static height,
    width and channels with at least `MIN_ELEMENTS` elements, enough to pay the compile (with an
    unknown batch, one image's elements: a batch of none is an empty pass)."""
    # the float arrays: x (MaxPool, AvgPool), the gradient (AvgPoolGrad), x, y and g (the gradients)
    dtypes = [np.dtype(d) for d in node.in_dtypes if np.dtype(d).kind == "f"]
    if not dtypes or any(d != dtypes[0] for d in dtypes) or dtypes[0] not in _DTYPES:
        return False
    shape = pool_kernels.node_input_shape(node)
    if shape is None or pool_kernels.per_image_size(shape) is None:
        return False
    n = shape[0]
    size = pool_kernels.per_image_size(shape) * (1 if n is None else n)
    return size >= MIN_ELEMENTS and n != 0


def _on_team(loop, args, n, size, threads):
    """Run the loop over the OpenMP team where it applies (`TEAM_MIN_ELEMENTS`); True if it did."""
    if n > 1 and size >= TEAM_MIN_ELEMENTS and omp_team.wanted(threads):
        omp_team.run(loop, args, n, threads)
        return True
    return False


def over_images(loop, args, n, size, threads, team=False):
    if team and _on_team(loop, args, n, size, threads):
        return
    if threads <= 1 or n < 2 or size < PARALLEL_MIN_ELEMENTS or intra_op.in_worker():
        loop(*args, 0, n)
        return
    blocks = min(n, 4 * threads)
    bounds = np.linspace(0, n, blocks + 1).astype(int)
    pieces = intra_op.shared_iter(range(blocks))

    def work():
        for k in pieces:
            loop(*args, int(bounds[k]), int(bounds[k + 1]))
    intra_op.POOL.run_shared(work, threads)


def _claimed(loop, args, n, size, threads, team=False):
    """`over_images` for the loops that write each output element once from registers (the 2x2
    forward loops, the tiled gradients): one call per thread (`claimed_split.py`)."""
    least = min(CLAIMED_MIN_ELEMENTS, PARALLEL_MIN_ELEMENTS)
    if team and _on_team(loop, args, n, size, threads):
        return
    if threads <= 1 or n < 2 or size < least or intra_op.in_worker():
        loop(*args, 0, n)
    else:
        claimed_split.run(loop, args, n, size, threads)


def _dims(x_shape, geo):
    n, h, w, c = x_shape
    return (n, h, w, c, geo.oh, geo.ow)


def positive_grad(y, g):
    """(`g` where `y > 0` else +0.0, whether `y` holds a NaN) in one pass over the pooled-size
    arrays (same shape; FusedMaxPoolGradReluMask's masked gradient)."""
    y = np.ascontiguousarray(y)
    g = np.ascontiguousarray(g, dtype=y.dtype)
    out = np.empty(y.shape, y.dtype)
    nan = loops()["positive_grad"](y.reshape(-1), g.reshape(-1), out.reshape(-1))
    return out, bool(nan)


def max_pool(x, geo, threads, recorder=None):
    """MaxPool of NHWC `x` (C-contiguous copy made if needed); with a `recorder` whose gradient has
    asked for them, the argmaxes are recorded in the same pass."""
    x = np.ascontiguousarray(x)
    out = np.empty((x.shape[0], geo.oh, geo.ow, x.shape[3]), x.dtype)
    args = (geo.kh, geo.kw, geo.sh, geo.sw, geo.pt, geo.pl)
    two = geo.kh == geo.kw == 2 and not geo.padded
    if recorder is not None and recorder.wanted and x.shape[1] * x.shape[2] < 1 << 31:
        if TAP_CODES and geo.tiles_input and two:  # 2x2 at stride 2: taps 0-3, one byte each
            arg = np.empty(out.shape, np.uint8)
            _claimed(jit_pool_tiled.loops()["max_pool_tap_2x2"],
                     (x.reshape(-1), out.reshape(-1), arg.reshape(-1), *_dims(x.shape, geo)),
                     x.shape[0], x.size, threads, team=TRAINING_ON_TEAM)
        elif two:
            arg = np.empty(out.shape, np.int32)
            _claimed(loops()["max_pool_argmax_2x2"], (x.reshape(-1), out.reshape(-1), arg.reshape(-1),
                                             *_dims(x.shape, geo), geo.sh, geo.sw), x.shape[0],
                     x.size, threads)
        else:
            arg = np.empty(out.shape, np.int32)
            over_images(loops()["max_pool_argmax_any"], (x, out, arg, *args), x.shape[0],
                         x.size, threads)
        arg = (arg, geo)
    else:
        arg = None
        if two:
            _claimed(loops()["max_pool_2x2"], (x.reshape(-1), out.reshape(-1), *_dims(x.shape, geo),
                                      geo.sh, geo.sw), x.shape[0], x.size, threads, team=True)
        else:
            over_images(loops()["max_pool_any"], (x, out, *args), x.shape[0], x.size, threads,
                         team=True)
    if recorder is not None and pool_records.recalling:
        pool_records.remember(out, x.shape, arg, recorder)
    return out


def runner(x, geo, threads):
    """MaxPool of C-contiguous NHWC arrays of `x`'s shape and dtype as a function of the array,
    all but the loop's call decided here (a [1, 8, 8, 32] pool 2.9 -> 1.2 us as an op), where
    `max_pool` would run one loop on the calling thread and record nothing; else None."""
    two = geo.kh == geo.kw == 2 and not geo.padded
    split = min(CLAIMED_MIN_ELEMENTS, PARALLEL_MIN_ELEMENTS) if two else PARALLEL_MIN_ELEMENTS
    if (pool_records.recalling or x.shape[0] == 0 or (threads > 1 and x.size >= split)
            or (threads > 1 and x.size >= TEAM_MIN_ELEMENTS and omp_team.usable())):
        return None  # max_pool splits it (over the team, when products run as one)
    n, shape, dtype = x.shape[0], (x.shape[0], geo.oh, geo.ow, x.shape[3]), x.dtype
    if two:
        loop, dims = loops()["max_pool_2x2"], (*_dims(x.shape, geo), geo.sh, geo.sw, 0, n)

        def run(x):
            out = np.empty(shape, dtype)
            loop(x.reshape(-1), out.reshape(-1), *dims)
            return out
        return run
    loop, dims = loops()["max_pool_any"], (geo.kh, geo.kw, geo.sh, geo.sw, geo.pt, geo.pl, 0, n)

    def run_any(x):
        out = np.empty(shape, dtype)
        loop(x, out, *dims)
        return out
    return run_any


def max_pool_grad_from_argmax(x_shape, g, arg, threads):
    """MaxPoolGrad as a scatter of `g` through the positions a MaxPool recorded (`arg`: the
    positions and the pool's geometry, as `recall` gives them)."""
    arg, geo = arg
    g = np.ascontiguousarray(g)
    n, h, w, c = x_shape
    if geo.tiles_input:  # every input element written once: no zeroing, no scatter
        dx = np.empty(n * h * w * c, g.dtype)
        _claimed(jit_pool_tiled.loops()["tiled_grad"],
                 (g.reshape(-1), arg.reshape(-1), dx, arg.dtype == np.uint8, *_dims(x_shape, geo),
                  geo.kh, geo.kw), n, dx.size, threads, team=TRAINING_ON_TEAM)
    else:
        dx = np.zeros((n, h * w, c), g.dtype)
        over_images(loops()["scatter_grad"], (g, arg, dx), n, dx.size, threads)
    return dx.reshape(x_shape)


def tiled_grad_relu_mask(x_shape, g, y, arg, threads):
    """FusedMaxPoolGradReluMask as the recorded gradient of windows that tile the input, masked by
    `y > 0` inside the loop (no pass of its own); None when `y` holds a NaN."""
    arg, geo = arg
    g, y = np.ascontiguousarray(g), np.ascontiguousarray(y, dtype=g.dtype)
    n = x_shape[0]
    dx = np.empty(int(np.prod(x_shape)), g.dtype)
    nans = np.zeros(n + 1, np.int64)
    _claimed(jit_pool_tiled.loops()["tiled_grad_relu_mask"],
             (g.reshape(-1), y.reshape(-1), arg.reshape(-1), dx, arg.dtype == np.uint8, nans,
              *_dims(x_shape, geo), geo.kh, geo.kw), n, dx.size, threads, team=TRAINING_ON_TEAM)
    return None if nans.any() else dx.reshape(x_shape)


def max_pool_grad(x, g, geo, threads):
    """MaxPoolGrad of NHWC input `x` and output gradient `g` (windows of one image never reach
    another image, so image blocks write disjoint parts of dx)."""
    x = np.ascontiguousarray(x)
    g = np.ascontiguousarray(g, dtype=x.dtype)
    dx = np.zeros(x.shape, x.dtype)
    if geo.kh == geo.kw == 2 and not geo.padded:
        over_images(loops()["max_pool_grad_2x2"], (x.reshape(-1), g.reshape(-1), dx.reshape(-1),
                                                 *_dims(x.shape, geo), geo.sh, geo.sw),
                     x.shape[0], x.size, threads)
        return dx
    over_images(loops()["max_pool_grad"],
                 (x.reshape(-1), g.reshape(-1), dx.reshape(-1), *_dims(x.shape, geo), geo.kh,
                  geo.kw, geo.sh, geo.sw, geo.pt, geo.pl), x.shape[0], x.size, threads)
    return dx
