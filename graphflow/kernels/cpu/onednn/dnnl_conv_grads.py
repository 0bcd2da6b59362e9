"""Conv2DBackpropFilter, Conv2DBackpropFilterBias(ReluMask) and Conv2DBackpropInputFilter
through oneDNN's backward-weights primitive (`dnnl_conv.py` makes and keeps the primitives and says
how the arrays are described; the forward convolution and the input gradient alone are there).

The filter gradient runs as blocks of images (`dnnl_conv.image_blocks`: at most `MAX_BLOCKS`,
whatever the thread count), each block one primitive on one OpenMP thread, the blocks taken from one
iterator by the calling thread and the intra-op pool's (`dnnl_conv.run_tasks`); the per-block
partials are summed in block order, so the result depends neither on how many threads ran nor on
which computed which block. With the bias gradient (and with a ReLU mask) the thread that runs a
block's primitive first runs one compiled pass over the block's dy (`conv_dy_pass`, with numba):
the bias sums, and the masked block written to a buffer of the thread that the primitive then reads.
Those blocks run on the OpenMP team too (`dnnl_team.py`, the pass inside its loop). Without numba,
the mask is numpy's and each block's sums one BLAS ones @ dy right after the primitive, on the pool.

The pass on the team, measured in one process against the pool's mask and BLAS sums (interleaved
rounds, medians of round minima, 2 cores, ms, pass / before): bench_vs_tf1's CIFAR-shaped CNN step
20.69 / 21.11, its small CNN 0.950 / 1.056, the Keras CNN 20.50 / 21.52; the CIFAR net's first
layer's filter + bias gradient of the ReLU-masked dy alone (64x32x32x3 -> 32, operands in the
cache) 0.61 / 0.80.

A hidden layer needs the input gradient too. `conv2d_backprop_input_filter` puts the filter
gradient's blocks and the input gradient's blocks of images into one iterator: each thread runs
whole primitives on one core, the two gradients share the cores without an OpenMP team or a barrier
between the two ops, and the values are each op's own (the same filter blocks summed in the same
order; each image's input gradient is the same bits in any block or team). Measured on the
CIFAR-shaped CNN's hidden layers (batch 64, two threads, quiet machine, a one-off script, ms: the
two ops one after the other / shared): 32x32x32 -> 32 3x3 7.05-7.13 / 6.67-6.79, 16x16x32 -> 64
3.73-3.82 / 3.38-3.52; one thread alone: 5.57 (input) and 6.72 (filter + bias), 3.09 and 3.23.
"""

import threading

import numpy as np

from graphflow.kernels.cpu.numba import conv_dy_pass, jit_pool
from graphflow.kernels.cpu.onednn import dnnl, dnnl_conv, dnnl_team
from graphflow.kernels.cpu.onednn.dnnl_conv import (
    block_plans,
    block_tasks,
    conv_macs,
    image_blocks,
    image_bytes,
    run_tasks,
)

# Conv2DBackpropFilterBias's bias gradient from the backward-weights primitive itself (its diff-bias
# output; `jit:avx512_core` with or without it) instead of one BLAS ones @ dy per block right after
# the primitive. Measured slower: oneDNN sums the bias in a pass of its own over each block's dy
# (`benchmarks/bench_conv_bias_grad.py --rounds 31`, 2 threads, batch 64, load 1.8-2.3, ms: filter
# gradient + the Sum kernel / diff-bias / BLAS per block): 28x28x1 -> 16 5x5 0.54 / 0.59 / 0.44;
# 32x32x3 -> 32 1.51 / 1.72 / 1.31; 32x32x32 -> 32 8.34 / 8.61 / 8.27; 16x16x32 -> 64 3.99 / 4.09 /
# 3.90 (at load 2.8-4.2 the same order on the first two, the others within the noise).
BIAS_BY_PRIMITIVE = False


def conv2d_backprop_filter(x, g, geo, f_shape, threads, bias=False, relu_output=None):
    """Filter gradient [kh, kw, c, out] from the NHWC input `x` and output gradient `g`:
    one partial per block (reordered to HWIO when the primitive writes its own layout), summed
    in block order. With `bias`, (filter gradient, bias gradient [out]): each block's `g` is also
    summed over its images and pixels, by the same thread right after the primitive read it (as
    ones @ g, one BLAS call; `BIAS_BY_PRIMITIVE`: by the primitive, its diff-bias), the partials
    summed in block order too (Conv2DBackpropFilterBias). With `relu_output` (NHWC, g's shape),
    the gradients of `where(relu_output > 0, g, 0)`: each block of g masked by the thread that
    runs its primitive, into a buffer of that thread the primitive then reads from the cache
    (Conv2DBackpropFilterBiasReluMask; the same blocks, so the same bits as masking first)."""
    x, g = np.ascontiguousarray(x), np.ascontiguousarray(g)
    mask = None if relu_output is None else np.ascontiguousarray(relu_output, np.float32)
    job = _filter_job(x, g, geo, f_shape, bias, mask)
    if job is None:
        return None
    tasks, finish, team_tasks = job
    macs = conv_macs(x.shape[0], geo, *f_shape[2:])
    threads = threads if macs >= dnnl_conv.PARALLEL_MIN_MACS else 1
    if not _on_team(team_tasks, threads):
        run_tasks(tasks, threads)
    return finish()


def conv2d_backprop_input_filter(g, f, x, geo, threads, bias=True):
    """(input gradient, filter gradient, bias gradient) of a biased convolution from its NHWC
    output gradient `g`, HWIO filter `f` and NHWC input `x` (Conv2DBackpropInputFilter; without
    `bias`, (input gradient, filter gradient)): the filter gradient's blocks
    (`conv2d_backprop_filter`'s, with the bias sums) and the input gradient's blocks of images
    taken from one iterator by this thread and the intra-op pool's, each primitive on one OpenMP
    thread, so the two gradients share the cores instead of each running on all of them in turn
    (no team, no barrier between them). The filter gradient's blocks are its own op's, summed in
    block order: the same bits; each image's input gradient is the same bits in any block or
    team. None where oneDNN has no primitive."""
    g, x = np.ascontiguousarray(g), np.ascontiguousarray(x)
    n, c, oc = x.shape[0], f.shape[2], f.shape[3]
    job = _filter_job(x, g, geo, f.shape, bias, None)
    macs = conv_macs(n, geo, c, oc)
    dx = np.empty((n, geo.h, geo.w, c), np.float32)
    if job is None:
        return None
    filter_tasks, finish, team_tasks = job
    threads = threads if 2 * macs >= dnnl_conv.PARALLEL_MIN_MACS else 1

    def input_tasks(team=False):
        return block_tasks("backward_data", dnnl.ARG_DIFF_DST, g, dnnl.ARG_DIFF_SRC, dx, f, geo,
                            c, oc, image_blocks(n, macs), team=team)
    # the filter gradient's blocks first (measured on the CIFAR-shaped CNN's two hidden layers, a
    # one-off script: 2-5% faster than interleaving the two kinds)
    if team_tasks is not None and dnnl_team.wanted(threads, 2):
        tasks = input_tasks(team=True)
        if tasks is None:
            return None
        if dnnl_team.run(team_tasks + tasks, threads):
            return (dx, *finish()) if bias else (dx, finish())
    tasks = input_tasks()
    if tasks is None:
        return None
    run_tasks(filter_tasks + tasks, threads)
    return (dx, *finish()) if bias else (dx, finish())


def _on_team(team_tasks, threads):
    """Run `team_tasks` on the OpenMP team where it is wanted (`dnnl_team.py`); False: not run."""
    return (team_tasks is not None and dnnl_team.wanted(threads, len(team_tasks))
            and dnnl_team.run(team_tasks, threads))


def _filter_job(x, g, geo, f_shape, bias, mask):
    """([(work_on, lo, hi)] of the filter gradient's blocks, finish() -> its result, the same
    blocks as `dnnl_team.Task`s or None) for `conv2d_backprop_filter`; None where oneDNN has no
    primitive. With numba, a block's bias sums and ReLU mask are one compiled pass
    (`conv_dy_pass`) that also runs inside the OpenMP team's loop; without it they are numpy's
    and BLAS's, on the pool only."""
    n = x.shape[0]
    c, oc = f_shape[2], f_shape[3]
    nb = image_blocks(n, conv_macs(n, geo, c, oc))
    by_primitive = bias and BIAS_BY_PRIMITIVE
    plans = block_plans("backward_weights", geo, n, nb, c, oc, by_primitive)
    if plans is None:
        return None
    starts = range(0, n, nb)
    plan = plans[nb]
    # where every block's primitive writes one layout of its own, the partials are summed in that
    # layout and reordered to HWIO once (a reorder only moves values: the same bits as reordering
    # each partial, then summing)
    raw = plan.reorder is not None and all(plan.same_weights(p) for p in plans.values())
    partials = np.empty((len(starts), plan.weights_bytes // 4) if raw
                        else (len(starts),) + tuple(f_shape), np.float32)
    pixels = geo.oh * geo.ow
    block_pass = None if by_primitive else conv_dy_pass.block_pass()
    dy_pass = None
    if block_pass is not None and (bias or mask is not None):  # the sums (discarded without bias)
        dy_pass = dnnl_team.DyPass(g.reshape(-1, oc), None if mask is None else mask.reshape(-1, oc),
                                   np.empty((len(starts), oc), np.float32))
    bias_partials = dy_pass.sums if dy_pass is not None else (
        np.empty((len(starts), oc), np.float32) if bias else None)
    ones = _ones(nb * pixels) if bias and not by_primitive and dy_pass is None else None
    xb, gb = image_bytes(x), image_bytes(g)

    def work_on(lo, hi):
        plan = plans[hi - lo]
        own = partials[lo // nb]
        sums = None if bias_partials is None else bias_partials[lo // nb]
        out = own if raw or plan.reorder is None else np.empty(plan.weights_bytes // 4, np.float32)
        if dy_pass is not None:
            gl = _passed(dy_pass, lo * pixels, hi * pixels, sums, block_pass)
        else:
            gl = g[lo:hi] if mask is None else _masked(g[lo:hi], mask[lo:hi])
        args = {dnnl.ARG_SRC: x.ctypes.data + lo * xb, dnnl.ARG_DIFF_DST: gl.ctypes.data,
                dnnl.ARG_DIFF_WEIGHTS: out}
        if by_primitive:
            args[dnnl.ARG_DIFF_BIAS] = sums
        plan.prim.execute(args)
        if plan.reorder is not None and not raw:
            plan.reorder.execute({dnnl.ARG_FROM: out, dnnl.ARG_TO: own})
        if ones is not None:  # the block's dy, just read by the primitive: still in cache
            rows = (hi - lo) * pixels
            np.matmul(ones[:rows], gl.reshape(rows, oc), out=sums)

    def finish():
        df = partials[0] if len(starts) == 1 else np.add.reduce(partials, axis=0)  # block order
        if raw:
            hwio = np.empty(f_shape, np.float32)
            with dnnl.library().openmp_threads(1):
                plan.reorder.execute({dnnl.ARG_FROM: df, dnnl.ARG_TO: hwio})
            df = hwio
        if not bias:
            return df
        return df, bias_partials[0] if len(starts) == 1 else np.add.reduce(bias_partials, axis=0)

    blocks = [(lo, min(n, lo + nb)) for lo in starts]
    team = None
    if not by_primitive and (dy_pass is not None or not (bias or mask is not None)) and (
            raw or plan.reorder is None):
        team = [dnnl_team.Task(plans[hi - lo].prim,
                               (dnnl.ARG_SRC, dnnl.ARG_DIFF_DST, dnnl.ARG_DIFF_WEIGHTS),
                               (x.ctypes.data + lo * xb, g.ctypes.data + lo * gb,
                                partials[lo // nb].ctypes.data), (x, g, partials, mask),
                               None if dy_pass is None else (dy_pass, lo // nb, lo * pixels,
                                                             hi * pixels))
                for lo, hi in blocks]
    return [(work_on, lo, hi) for lo, hi in blocks], finish, team


def _passed(dy_pass, lo, hi, sums, block_pass):
    """Rows lo..hi of `dy_pass`'s dy after its block pass (its sums into `sums`, a row of
    `dy_pass.sums`): dy's own rows, or the masked rows in this thread's kept buffer."""
    dy = dy_pass.dy[lo:hi]
    if dy_pass.y is None:
        block_pass(dy, dy, np.empty_like(dy[:0]), sums, False)  # writable, as numba types it
        return dy
    masked = _buffer(dy.size).reshape(dy.shape)
    block_pass(dy, dy_pass.y[lo:hi], masked, sums, True)
    return masked


_masked_local = threading.local()  # per thread: the buffer its masked blocks of dy go to


def _buffer(size):
    """This thread's kept float32 buffer for masked blocks, `size` elements of it."""
    buf = getattr(_masked_local, "buf", None)
    if buf is None or buf.size < size:
        buf = _masked_local.buf = np.empty(size, np.float32)
    return buf[:size]


def _masked(g, y):
    """`where(y > 0, g, 0)` of one block, in this thread's kept buffer (a view of it)."""
    out = _buffer(g.size).reshape(g.shape)
    loops = jit_pool.loops()
    if loops is not None:
        loops["positive_grad"](y.reshape(-1), g.reshape(-1), out.reshape(-1))
    else:
        np.copyto(out, np.where(y > 0, g, np.float32(0)))
    return out


_ones_cache = {}


def _ones(size):
    """A read-only float32 vector of `size` ones (kept: the same block sizes recur every step)."""
    ones = _ones_cache.get(size)
    if ones is None:
        if len(_ones_cache) >= 16:
            _ones_cache.clear()
        ones = np.ones(size, np.float32)
        ones.flags.writeable = False
        _ones_cache[size] = ones
    return ones
