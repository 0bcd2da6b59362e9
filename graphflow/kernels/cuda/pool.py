"""Pooling on the GPU (pool.cu), NHWC layout: MaxPool, AvgPool and their gradients, one thread per
output (or gradient) element, and the fusion pass's FusedMaxPoolGradReluMask (MaxPoolGrad followed
by the ReLU gradient of its input: the same kernel, skipping the argmaxes whose value is not > 0).
Window geometry follows TF's SAME/VALID rules (`conv.axis_geometry`).
"""

import numpy as np

from graphflow.kernels.cuda import cuda_kernel, runtime
from graphflow.kernels.cuda.conv import axis_geometry, dims, nhwc_only, supports_float_nhwc
from graphflow.kernels.cuda.launch import SUFFIX, launch_1d


class PoolGeometry:
    def __init__(self, attrs, shape):
        n, h, w, c = shape
        kh, kw = attrs["ksize"][1:3]
        sh, sw = attrs["strides"][1:3]
        oh, pt = axis_geometry(h, kh, sh, 1, attrs["padding"])
        ow, pl = axis_geometry(w, kw, sw, 1, attrs["padding"])
        self.out_shape = (n, oh, ow, c)
        self.bytes = np.array([n, h, w, c, oh, ow, kh, kw, sh, sw, pt, pl, 0, 0, 0, 0],
                              np.int64).tobytes()


_POOLS = {"MaxPool": "max", "AvgPool": "avg"}


@cuda_kernel(*_POOLS, dtypes=(np.float32, np.float64), supports=nhwc_only)
def _pool(node):
    rt, attrs = runtime(), node.attrs
    name = f"gf_{_POOLS[node.type]}_pool_{SUFFIX[np.dtype(node.out_dtypes[0])]}"

    def pool(x):
        if len(x.shape) != 4:
            raise ValueError(f"input must be 4-D, got shape {x.shape}")
        g = PoolGeometry(attrs, x.shape)
        out = rt.empty(g.out_shape, x.dtype)
        if out.size:
            launch_1d(rt, rt.kernel("pool.cu", name, "PP128s"), out.size, int(x.gpudata), int(out.gpudata),
                      g.bytes)
        return out
    return pool


_MAX_POOL_GRADS = {"MaxPoolGrad": "max_pool_grad",
                   "FusedMaxPoolGradReluMask": "max_pool_grad_relu_mask"}


@cuda_kernel(*_MAX_POOL_GRADS, dtypes=(np.float32, np.float64), supports=nhwc_only)
def _max_pool_grad(node):
    rt, attrs = runtime(), node.attrs
    name = f"gf_{_MAX_POOL_GRADS[node.type]}_{SUFFIX[np.dtype(node.out_dtypes[0])]}"

    def max_pool_grad(x, y, dy):
        g = PoolGeometry(attrs, x.shape)
        if dy.shape != g.out_shape:
            raise ValueError(f"grad has shape {dy.shape}, expected {g.out_shape} (NHWC)")
        dx = rt.fill(rt.empty(x.shape, dy.dtype), 0)
        if dy.size:
            launch_1d(rt, rt.kernel("pool.cu", name, "PPP128s"), dy.size, int(x.gpudata), int(dy.gpudata),
                      int(dx.gpudata), g.bytes)
        return dx
    return max_pool_grad


@cuda_kernel("AvgPoolGrad", dtypes=(np.float32, np.float64, np.int32), host_inputs=(0,),
             supports=supports_float_nhwc)
def _avg_pool_grad(node):
    rt, attrs = runtime(), node.attrs
    name = f"gf_avg_pool_grad_{SUFFIX[np.dtype(node.out_dtypes[0])]}"

    def avg_pool_grad(orig_input_shape, dy):
        shape = dims(orig_input_shape)
        g = PoolGeometry(attrs, shape)
        if dy.shape != g.out_shape:
            raise ValueError(f"grad has shape {dy.shape}, expected {g.out_shape} (NHWC)")
        dx = rt.empty(shape, dy.dtype)
        if dx.size:
            launch_1d(rt, rt.kernel("pool.cu", name, "PP128s"), dx.size, int(dy.gpudata), int(dx.gpudata),
                      g.bytes)
        return dx
    return avg_pool_grad
