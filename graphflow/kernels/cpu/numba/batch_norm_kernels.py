"""The "numba" implementations of FusedBatchNorm, FusedBatchNormGrad, FusedBatchNormGradReluMask and
FusedBatchNormStats: the compiled loops of `jit_batch_norm.py` (a few passes over the input instead
of a dozen numpy calls), chosen when the plan is built for the nodes `applies` accepts.

They take float32/float64 x (and dy) of a static 4-D shape with at least `MIN_ELEMENTS` elements:
below that the numpy reference (`reference/nn_norm_kernels.py`) is as fast and no loop is compiled
for it; float16, a shape not known when the plan is built, and sessions without numba
(GRAPHFLOW_NO_JIT=1) keep the reference. The kernels validate their inputs with the reference's
checks, so errors read the same either way.
"""

import numpy as np

from graphflow.kernels import registry
from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.numba import jit_batch_norm
from graphflow.kernels.cpu.reference import nn_norm_kernels as ref
from graphflow.kernels.cpu.threads import blas

DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Inputs of fewer elements keep the numpy reference (each loop compiles on its first use with a
# dtype, about a second for a layout's five; small inputs are cheap in numpy anyway).
MIN_ELEMENTS = 1 << 10
PREFERENCE = 20


def static_shape(*shapes):
    """The one 4-D shape the static `shapes` (of arrays that must have the same shape) describe
    together, each dim taken from whichever knows it; None when a dim is unknown to all, a rank
    is not 4, or two known dims differ (the kernel then reports the mismatch)."""
    shape = registry.static_shape(*shapes)
    return shape if shape is not None and len(shape) == 4 else None


def _takes(node, *positions):
    """Whether the loops take the node's inputs at `positions` (x, and dy for the gradients): one
    float32/float64 dtype, together a static 4-D shape of at least MIN_ELEMENTS elements."""
    in_shapes = node.in_shapes or ()
    if len(in_shapes) <= max(positions) or len(node.in_dtypes) <= max(positions):
        return False
    dtypes = {np.dtype(node.in_dtypes[i]) for i in positions}
    if len(dtypes) != 1 or dtypes.pop() not in DTYPES:
        return False
    shape = static_shape(*(in_shapes[i] for i in positions))
    return shape is not None and int(np.prod(shape)) >= max(MIN_ELEMENTS, 1)


def forward_applies(node):
    """FusedBatchNorm and FusedBatchNormStats: x (input 0)."""
    return _takes(node, 0)


def grad_applies(node):
    """FusedBatchNormGrad and FusedBatchNormGradReluMask: dy and x (inputs 0 and 1)."""
    return _takes(node, 0, 1)


_NUMBA = dict(name="numba", preference=PREFERENCE, requires=("numba",))


@cpu_kernel("FusedBatchNorm", applies=forward_applies, **_NUMBA)
def fused_batch_norm_loops(node):
    eps, fmt, axes, training = ref.node_settings(node)
    nchw, threads = fmt == "NCHW", blas.session_threads(node)

    def fused_batch_norm(x, scale, offset, mean, variance):
        ref.check_forward(x, scale, offset, mean, variance, axes, training)
        return jit_batch_norm.fused_batch_norm(x, scale, offset, mean, variance, eps, nchw,
                                               training, threads)
    return fused_batch_norm


@cpu_kernel("FusedBatchNormGrad", applies=grad_applies, **_NUMBA)
def fused_batch_norm_grad_loops(node):
    eps, fmt, axes, training = ref.node_settings(node)
    nchw, threads = fmt == "NCHW", blas.session_threads(node)

    def fused_batch_norm_grad(dy, x, scale, saved_mean, saved_variance):
        ref.check_grad(dy, x, scale, saved_mean, saved_variance, axes)
        return jit_batch_norm.fused_batch_norm_grad(dy, x, scale, saved_mean, saved_variance, eps,
                                                    nchw, training, threads)
    return fused_batch_norm_grad


@cpu_kernel("FusedBatchNormGradReluMask", applies=grad_applies, **_NUMBA)
def fused_batch_norm_grad_relu_mask_loops(node):
    eps, fmt, axes, training = ref.node_settings(node)
    nchw, threads = fmt == "NCHW", blas.session_threads(node)

    def fused_batch_norm_grad_relu_mask(dy, x, scale, saved_mean, saved_variance, y_mean, y_gain,
                                        y_offset):
        ref.check_grad(dy, x, scale, saved_mean, saved_variance, axes)
        ref.check_relu_mask(x, scale, y_mean, y_gain, y_offset)
        mask = tuple(v.reshape(-1) for v in (y_mean, y_gain, y_offset))
        return jit_batch_norm.fused_batch_norm_grad(dy, x, scale, saved_mean, saved_variance, eps,
                                                    nchw, training, threads, relu_mask=mask)
    return fused_batch_norm_grad_relu_mask


@cpu_kernel("FusedBatchNormStats", applies=forward_applies, **_NUMBA)
def fused_batch_norm_stats_loops(node):
    nchw = node.attrs["data_format"] == "NCHW"
    threads = blas.session_threads(node)

    def fused_batch_norm_stats(x):
        ref.check_stats(x)
        dt = x.dtype
        mean, variance, batch_variance = jit_batch_norm.batch_statistics(x, nchw, threads)
        return mean.astype(dt), variance.astype(dt), batch_variance.astype(dt)
    return fused_batch_norm_stats
