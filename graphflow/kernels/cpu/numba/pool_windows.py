"""The window-iteration core the compiled pooling loops share (`jit_pool.py`, `jit_pool_tiled.py`,
`jit_avg_pool.py`, `jit_pool_nchw.py`): where a window starts and ends on one axis, where a 2x2
window's output and input start in flat NHWC arrays, and its four taps' channel rows. The loops
differ only in what they do per tap (max with NaN propagation, first maximum for the gradient,
recorded positions or taps, sums); these helpers are inlined into each loop (numba's
`inline="always"`), so each loop compiles to the code it had with the arithmetic written out.
"""

from graphflow.kernels.cpu.numba import jit_updates


def _compile():
    from graphflow.kernels.cpu.numba.jit_cache import njit

    opts = dict(nogil=True, cache=True, fastmath=False, error_model="numpy", inline="always")

    @njit(**opts)
    def span(o, s, pad, k, size):
        """The in-bounds [lo, hi) of the window of output `o` on one axis."""
        start = o * s - pad
        return max(start, 0), min(start + k, size)

    @njit(**opts)
    def flat_2x2(b, y, xo, h, w, c, oh, ow, sh, sw):
        """(output offset, input offset of tap 0) of window (b, y, xo) in flat NHWC arrays."""
        return ((b * oh + y) * ow + xo) * c, ((b * h + y * sh) * w + xo * sw) * c

    @njit(**opts)
    def taps_2x2(x, p, c, rc):
        """The channel rows of the 2x2 window whose tap 0 starts at `p` (rows `rc` apart)."""
        return x[p:p + c], x[p + c:p + 2 * c], x[p + rc:p + rc + c], x[p + rc + c:p + rc + 2 * c]

    return {"span": span, "flat_2x2": flat_2x2, "taps_2x2": taps_2x2}


helpers = jit_updates.LazyLoops(_compile)
