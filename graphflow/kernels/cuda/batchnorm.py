"""FusedBatchNorm, FusedBatchNormGrad and FusedBatchNormStats on the GPU (batchnorm.cu), float32 and
float64.

Training mode: one launch computes the per-channel statistics (mean, biased and unbiased
variance), one normalizes. Inference mode: one launch normalizes with the given statistics,
which are also the op's statistics outputs. The backprop op: one per-channel reduction launch
(sum(dy), sum(dy * x_hat)), one elementwise launch for dx.
"""

import numpy as np

from graphflow.kernels.cuda import cuda_kernel, runtime
from graphflow.kernels.cuda.elementwise import kernel_for
from graphflow.kernels.cuda.launch import SUFFIX, launch_1d, row_blocks


def _layout(shape, data_format):
    """(outer, C, inner) of a 4-D shape."""
    if len(shape) != 4:
        raise ValueError(f"x must be 4-D, got shape {shape}")
    n, a, b, c = shape
    if data_format == "NCHW":
        return n, a, b * c
    return n * a * b, c, 1


def _check_vectors(C, **vectors):
    for what, v in vectors.items():
        if v.shape != (C,):
            raise ValueError(f"{what} of shape {v.shape} must have one value per channel ({C})")


@cuda_kernel("FusedBatchNorm", dtypes=(np.float32, np.float64))
def _fused_batch_norm(node):
    rt = runtime()
    eps = float(node.attrs["epsilon"])
    fmt = node.attrs["data_format"]
    training = node.attrs["is_training"]
    t = SUFFIX[np.dtype(node.out_dtypes[0])]

    def fused_batch_norm(x, scale, offset, mean, variance):
        outer, C, inner = _layout(x.shape, fmt)
        _check_vectors(C, scale=scale, offset=offset)
        y = rt.empty(x.shape, x.dtype)
        if training:
            mean, variance = rt.empty((C,), x.dtype), rt.empty((C,), x.dtype)
            batch_variance = rt.empty((C,), x.dtype)
            if C and outer * inner:
                fn = rt.kernel("batchnorm.cu", f"gf_bn_stats_{t}", "PPPPqqq")
                fn.prepared_call((row_blocks(rt, C), 1, 1), (256, 1, 1), int(x.gpudata),
                                 int(mean.gpudata), int(variance.gpudata),
                                 int(batch_variance.gpudata), np.int64(outer), np.int64(C),
                                 np.int64(inner))
            elif C:
                for v in (mean, variance, batch_variance):
                    rt.fill(v, np.nan)
        else:
            _check_vectors(C, mean=mean, variance=variance)
            mean, variance = rt.copy(mean), rt.copy(variance)
            batch_variance = rt.copy(variance)
        if x.size:
            fn = rt.kernel("batchnorm.cu", f"gf_bn_apply_{t}", "PPPPPPqqqd")
            launch_1d(rt, fn, x.size, int(x.gpudata), int(scale.gpudata), int(offset.gpudata),
                      int(mean.gpudata), int(variance.gpudata), int(y.gpudata), np.int64(x.size),
                      np.int64(C), np.int64(inner), np.float64(eps))
        return y, rt.copy(mean), batch_variance, mean, variance
    return fused_batch_norm


@cuda_kernel("FusedBatchNormStats", dtypes=(np.float32, np.float64))
def _fused_batch_norm_stats(node):
    rt = runtime()
    fmt = node.attrs["data_format"]
    t = SUFFIX[np.dtype(node.out_dtypes[0])]

    def fused_batch_norm_stats(x):
        outer, C, inner = _layout(x.shape, fmt)
        mean, variance = rt.empty((C,), x.dtype), rt.empty((C,), x.dtype)
        batch_variance = rt.empty((C,), x.dtype)
        if C and outer * inner:
            fn = rt.kernel("batchnorm.cu", f"gf_bn_stats_{t}", "PPPPqqq")
            fn.prepared_call((row_blocks(rt, C), 1, 1), (256, 1, 1), int(x.gpudata),
                             int(mean.gpudata), int(variance.gpudata), int(batch_variance.gpudata),
                             np.int64(outer), np.int64(C), np.int64(inner))
        elif C:
            for v in (mean, variance, batch_variance):
                rt.fill(v, np.nan)
        return mean, variance, batch_variance
    return fused_batch_norm_stats


@cuda_kernel("FusedBatchNormGrad", dtypes=(np.float32, np.float64))
def _fused_batch_norm_grad(node):
    rt = runtime()
    eps = float(node.attrs["epsilon"])
    fmt = node.attrs["data_format"]
    kind = "train" if node.attrs["is_training"] else "infer"
    t = SUFFIX[np.dtype(node.out_dtypes[0])]

    def fused_batch_norm_grad(dy, x, scale, mean, variance):
        if dy.shape != x.shape:
            raise ValueError(f"y_backprop of shape {dy.shape} must have the shape of x {x.shape}")
        outer, C, inner = _layout(x.shape, fmt)
        _check_vectors(C, scale=scale, reserve_space_1=mean, reserve_space_2=variance)
        d_scale, d_offset = rt.empty((C,), x.dtype), rt.empty((C,), x.dtype)
        dx = rt.empty(x.shape, x.dtype)
        if C:
            fn = rt.kernel("batchnorm.cu", f"gf_bn_grad_reduce_{t}", "PPPPPPqqqd")
            fn.prepared_call((row_blocks(rt, C), 1, 1), (256, 1, 1), int(dy.gpudata),
                             int(x.gpudata), int(mean.gpudata), int(variance.gpudata),
                             int(d_scale.gpudata), int(d_offset.gpudata), np.int64(outer),
                             np.int64(C), np.int64(inner), np.float64(eps))
        if x.size:
            fn = rt.kernel("batchnorm.cu", f"gf_bn_grad_{kind}_{t}", "PPPPPPPPqqqd")
            launch_1d(rt, fn, x.size, int(dy.gpudata), int(x.gpudata), int(scale.gpudata),
                      int(mean.gpudata), int(variance.gpudata), int(d_scale.gpudata),
                      int(d_offset.gpudata), int(dx.gpudata), np.int64(x.size), np.int64(C),
                      np.int64(inner), np.float64(eps))
        return dx, d_scale, d_offset
    return fused_batch_norm_grad


@cuda_kernel("FusedBatchNormGradReluMask", dtypes=(np.float32, np.float64))
def _fused_batch_norm_grad_relu_mask(node):
    """FusedBatchNormGrad of the ReLU gradient where((x - m) * a + o > 0, dy, 0): the mask as one
    generated elementwise kernel (the split forward's ops in its order, as its own generated kernel
    computes y), then FusedBatchNormGrad's two launches."""
    rt = runtime()
    fmt = node.attrs["data_format"]
    grad = _fused_batch_norm_grad(node)
    dt = np.dtype(node.out_dtypes[0]).name
    # operands 0-4: dy, x, m, a, o; instruction k is operand 5 + k
    mask = kernel_for({"version": 1, "inputs": [dt] * 5,
                       "instructions": [["Sub", [1, 2], {}, dt],        # 5: x - m
                                        ["Mul", [5, 3], {}, dt],        # 6: * a
                                        ["Add", [6, 4], {}, dt],        # 7: + o = y
                                        ["Const", [], {"value": 0}, dt],  # 8
                                        ["Greater", [7, 8], {}, "bool"],  # 9: y > 0
                                        ["Select", [9, 0, 8], {}, dt]],   # 10
                       "output": 10})

    def fused_batch_norm_grad_relu_mask(dy, x, scale, mean, variance, m, a, o):
        if dy.shape != x.shape:
            raise ValueError(f"y_backprop of shape {dy.shape} must have the shape of x {x.shape}")
        _, C, _ = _layout(x.shape, fmt)
        column = (C,) if fmt == "NHWC" else (C, 1, 1)
        for what, v in (("y_mean", m), ("y_gain", a), ("y_offset", o)):
            if v.size != C:
                raise ValueError(f"{what} of shape {v.shape} must have one value per channel ({C})")
        masked = mask(dy, x, *(rt.reshape(v, column) for v in (m, a, o)))[0]
        return grad(masked, x, scale, mean, variance)
    return fused_batch_norm_grad_relu_mask
