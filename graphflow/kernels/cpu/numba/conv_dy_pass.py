"""One compiled pass over a block of a convolution's output gradient dy, run by the thread that then
runs the block's filter-gradient primitive (`dnnl_conv_grads.py`, on the intra-op pool or inside
the OpenMP team's loop, `dnnl_team.py`): the block's bias-gradient sums, and with a ReLU mask the
masked block `where(y > 0, dy, 0)` written to a buffer of that thread, which the primitive then
reads from the cache.

    sums[j] = float32(sum over the block's rows r of dy'[r, j]),   dy' = dy or the masked dy

Each channel's sum is accumulated in float64, four rows at a time in a fixed order, and rounded
to float32 once: the result depends only on the block's values, so the same bits on the pool, on
the team and on one thread, and on any CPU (it was one BLAS `ones @ dy` per block, whose order of
additions is the BLAS build's). The float64 sum is also closer to the exact one than float32 sums
in any order: the tests bound the fused bias gradient to 5e-7 of sum(|dy|) per channel against the
unfused Sum.

Why compiled: on the OpenMP team there is no Python between two blocks, and a ReLU-masked block
comes from memory once (the sums read the masked block from the thread's cache). Optional like
numba: `block_pass()` is None without it, and the pool path keeps the numpy mask and BLAS sums.
"""

import numpy as np

from graphflow.kernels.cpu.numba import jit_updates

# Rows added to the float64 sums at once (as ((r0 + r1) + (r2 + r3))): with one row at a time each
# channel's sum waits for its previous add through memory (a [8192, 32] block: 26-30 us, BLAS's
# ones @ dy 9.8 us); four rows at once took 11.7 us. (The expression below is written for 4.)
# With the mask, the whole block is masked first and then summed from the masked buffer (the
# thread's, in its cache): mask and sums per group of rows took twice as long from memory (a
# [65536, 32] dy and y in 8 blocks, one thread, ms: 1.46 -> 0.76; masking alone 0.64).
ROWS_PER_ADD = 4


def _compile():
    from graphflow.kernels.cpu.numba.jit_cache import njit

    @njit(nogil=True, cache=True, error_model="numpy", boundscheck=False)
    def block_pass(dy, y, masked, sums, mask):
        """dy, y, masked: [rows, channels] float32 C-contiguous (y and masked read and written only
        with `mask`); sums: [channels] float32, set to the column sums of dy (masked: of
        where(y > 0, dy, 0), also written to `masked`)."""
        rows, channels = dy.shape
        if mask:  # the whole block first, as flat arrays: the select vectorizes over long runs
            flat_dy, flat_y, flat_masked = dy.reshape(-1), y.reshape(-1), masked.reshape(-1)
            zero = np.float32(0)
            for k in range(flat_masked.size):
                flat_masked[k] = flat_dy[k] if flat_y[k] > 0 else zero
        src = masked if mask else dy
        acc = np.zeros(channels, np.float64)
        r = 0
        while r + ROWS_PER_ADD <= rows:
            for j in range(channels):
                acc[j] += ((np.float64(src[r, j]) + np.float64(src[r + 1, j]))
                           + (np.float64(src[r + 2, j]) + np.float64(src[r + 3, j])))
            r += ROWS_PER_ADD
        while r < rows:
            for j in range(channels):
                acc[j] += src[r, j]
            r += 1
        for j in range(channels):
            sums[j] = np.float32(acc[j])
    return {"block_pass": block_pass}


loops = jit_updates.LazyLoops(_compile)


def block_pass():
    """The compiled `block_pass(dy, y, masked, sums, mask)`, or None without numba."""
    compiled = loops()
    return None if compiled is None else compiled["block_pass"]
