"""CPU kernel of `FusedMaxPoolGradReluMask`: `where(x > 0, max_pool_grad(x, y, g), 0)` with
y = max_pool(x), the fusion pass's (`graphflow/optimizer_passes/fusion.py`) replacement for
MaxPoolGrad followed by the ReLU gradient's Select in the backward pass of `max_pool(relu(...))`.

MaxPoolGrad gives each window's gradient to the window's argmax a, where x[a] == y[window], and 0
everywhere else; so the mask `x > 0` of the full-resolution result is `y > 0` on the pooled-size
gradient. Where the forward pass recorded its argmaxes and the windows tile the input (2x2 pooling,
the CNNs' case), the mask is applied inside the compiled gradient loop
(`jit_pool.tiled_grad_relu_mask`: the plain loop plus a read of y per window). Elsewhere one pass
over the pooled arrays (`jit_pool.positive_grad`, 4x smaller than the input for 2x2 windows; numpy
where numba is missing) writes `g` where `y > 0` and +0.0 elsewhere, and the MaxPoolGrad kernel
(`conv_kernels.max_pool_grad_nhwc`, the same routing as the unfused op: the forward pass's recorded
argmaxes, oneDNN, the compiled window search, numpy) runs on that. Both ways the result has the
unfused pair's exact bits (NCHW arrays: the masked pass, then `jit_pool_nchw.max_pool_grad` on them,
no transposes; [64, 32, 32, 32], 2x2 windows: 7.2 -> 1.7 ms in a traced step, load 2.3): where
x[a] > 0 the same gradients reach the same positions in the same order, and elsewhere the unfused Select
writes +0.0, which is what a masked +0.0 gradient (or no gradient) leaves. That equality x[a] == y
only fails when a window holds a NaN (the forward max propagates NaN, the gradient's argmax skips
it): then y is NaN, the masked loop or pass says so, and the kernel computes the unfused pair itself
(MaxPoolGrad, then the Select over the full-resolution result), so NaN inputs keep the unfused bits
too.
"""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.numba import jit_pool, jit_pool_nchw
from graphflow.kernels.cpu.reference import conv_kernels, pool_records
from graphflow.kernels.cpu.threads import blas


def positive_grad(y, g):
    """(`g` where `y > 0` else +0.0, whether `y` holds a NaN): the compiled pass, or numpy."""
    if y.dtype == g.dtype and jit_pool.applies(y):
        return jit_pool.positive_grad(y, g)
    nan = y.dtype.kind == "f" and bool(np.isnan(y).any())
    return np.where(y > 0, g, g.dtype.type(0)), nan


@cpu_kernel("FusedMaxPoolGradReluMask")
def _fused_max_pool_grad_relu_mask(node):
    pool = conv_kernels.Pool(node)
    threads = blas.session_threads(node)
    pool_records.recalling_kernel_built()  # MaxPool records argmaxes for it from now on

    def max_pool_grad_relu_mask(x, y, g):
        conv_kernels._check4(x, "orig_input")
        if jit_pool_nchw.takes(pool, x) and y.shape == g.shape:  # NCHW: no transposes
            masked, nan = positive_grad(y, g)
            dx = None if nan else jit_pool_nchw.max_pool_grad(pool, x, masked, threads)
            if dx is not None:
                return dx
        x, y, g = (conv_kernels._to_nhwc(a, pool.fmt) for a in (x, y, g))
        geo = pool.geometry(x.shape)
        pool.check_grad(y, geo, x.shape[0], x.shape[3], what="orig_output")
        pool.check_grad(g, geo, x.shape[0], x.shape[3])
        if g.dtype == x.dtype and jit_pool.applies(x):
            arg = pool_records.recall(y, x.shape)  # the forward pass's argmaxes, when it kept them
            if arg is not None and arg[1].tiles_input:  # the mask inside the gradient's loop
                dx = jit_pool.tiled_grad_relu_mask(x.shape, g, y, arg, threads)
                if dx is not None:
                    return conv_kernels._from_nhwc(dx, pool.fmt)
        masked, nan = positive_grad(y, g)
        if not nan:
            dx = conv_kernels.max_pool_grad_nhwc(pool, x, y, masked, threads)
        else:  # the unfused pair: MaxPoolGrad, then the ReLU gradient's Select
            dx = conv_kernels.max_pool_grad_nhwc(pool, x, y, g, threads)
            dx = np.where(x > 0, dx, dx.dtype.type(0))
        return conv_kernels._from_nhwc(dx, pool.fmt)
    return max_pool_grad_relu_mask
