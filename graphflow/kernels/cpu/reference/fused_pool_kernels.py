"""Reference CPU kernel of `FusedMaxPoolGradReluMask`: `where(x > 0, max_pool_grad(x, y, g), 0)`
with y = max_pool(x), the fusion pass's (`graphflow/optimizer_passes/fusion.py`) replacement for
MaxPoolGrad followed by the ReLU gradient's Select in the backward pass of `max_pool(relu(...))`.

MaxPoolGrad gives each window's gradient to the window's argmax a, where x[a] == y[window], and 0
everywhere else; so the mask `x > 0` of the full-resolution result is `y > 0` on the pooled-size
gradient. One pass over the pooled arrays (4x smaller than the input for 2x2 windows) writes `g`
where `y > 0` and +0.0 elsewhere, and MaxPoolGrad runs on that (`masked_max_pool_grad`: every
implementation of the op composes its own mask pass and MaxPoolGrad this way, the compiled one
(`numba/jit_pool_kernels.py`) also masking inside its recorded gradient loop). The result has the
unfused pair's exact bits: where x[a] > 0 the same gradients reach the same positions in the same
order, and elsewhere the unfused Select writes +0.0, which is what a masked +0.0 gradient (or no
gradient) leaves. That equality x[a] == y only fails when a window holds a NaN (the forward max
propagates NaN, the gradient's argmax skips it): then y is NaN, the mask pass says so, and the
kernel computes the unfused pair itself (MaxPoolGrad, then the Select over the full-resolution
result), so NaN inputs keep the unfused bits too.
"""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference import pool_kernels


def positive_grad(y, g):
    """(`g` where `y > 0` else +0.0, whether `y` holds a NaN)."""
    nan = y.dtype.kind == "f" and bool(np.isnan(y).any())
    return np.where(y > 0, g, g.dtype.type(0)), nan


def masked_max_pool_grad(max_pool_grad, positive=positive_grad):
    """FusedMaxPoolGradReluMask from a MaxPoolGrad function of (x, y, g) and a mask pass of
    (y, g) -> (masked g, whether y holds a NaN)."""
    def max_pool_grad_relu_mask(x, y, g):
        if y.shape != g.shape:
            raise ValueError(f"grad has shape {g.shape}, expected orig_output's {y.shape}")
        masked, nan = positive(y, g)
        if not nan:
            return max_pool_grad(x, y, masked)
        dx = max_pool_grad(x, y, g)  # the unfused pair: MaxPoolGrad, then the ReLU gradient's Select
        return np.where(x > 0, dx, dx.dtype.type(0))
    return max_pool_grad_relu_mask


@cpu_kernel("FusedMaxPoolGradReluMask")
def _fused_max_pool_grad_relu_mask(node):
    return masked_max_pool_grad(pool_kernels.max_pool_grad(pool_kernels.Pool(node)))
