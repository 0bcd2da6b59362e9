"""numpy kernels for convolution (NHWC internally; NCHW is transposed in and out).

The convolutions here are the reference implementations (the definition every other one is tested
against; the geometry and layout helpers are `conv_geometry.py`'s). conv2d is im2col + one matmul:
a zero-copy strided view of the padded input as [n, oh, ow, kh, kw, c] windows, reshaped to a
[n*oh*ow, kh*kw*c] matrix times the [kh*kw*c, out] filter. The backprop ops reuse the same
geometry: the filter gradient is cols^T @ grad, the input gradient is grad @ filter^T scattered
back (col2im) with one strided slice-add per filter tap. The other implementations register
themselves in their own modules and the plan chooses one per node: blocked im2col
(`blocked/conv_blocked.py`), the gathered product of small inputs (`blocked/conv_gather.py`), tap
products for few channels (`blocked/conv_taps.py`) and oneDNN's primitives (`onednn/dnnl_conv.py`,
`onednn/dnnl_conv_grads.py`). The pools, which share `Geometry`, are in `pool_kernels.py`.
"""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference.conv_geometry import (
    col2im_into,
    filter_grad_kernel,
    forward_kernel,
    im2col,
    input_grad_kernel,
    over_images,
)
from graphflow.kernels.cpu.threads import blas


# ---------------------------------------------------------------- convolution
def conv2d(x, f, geo, threads):
    """The reference forward convolution of NHWC `x` by the HWIO filter `f`: NHWC output."""
    xp = geo.pad(x)
    fm = f.reshape(-1, f.shape[3])
    out = np.empty((x.shape[0], geo.oh, geo.ow, f.shape[3]), dtype=np.result_type(x, f))

    def block(lo, hi):  # images lo..hi: im2col copy and product on one thread
        rows = (hi - lo) * geo.oh * geo.ow
        np.matmul(im2col(xp[lo:hi], geo), fm, out=out[lo:hi].reshape(rows, -1))
    over_images(block, x.shape[0], geo, fm.size, threads)
    return out


def conv2d_backprop_input(g, f, geo, n, c, threads):
    """The reference input gradient [n, h, w, c] (NHWC) of the NHWC output gradient `g`."""
    ft = f.reshape(-1, f.shape[3]).T
    dxp = np.zeros(geo.padded_shape(n, c), dtype=g.dtype)

    def block(lo, hi):  # images lo..hi: product and col2im on one thread
        gcols = g[lo:hi].reshape(-1, f.shape[3]) @ ft
        col2im_into(dxp[lo:hi], gcols, geo)
    over_images(block, n, geo, ft.size, threads)
    return np.ascontiguousarray(geo.crop(dxp))


def conv2d_backprop_filter(x, g, geo, f_shape, threads):
    """The reference filter gradient (HWIO `f_shape`) of NHWC `x` and output gradient `g`."""
    xp = geo.pad(x)
    partials = {}

    def block(lo, hi):  # images lo..hi: their share of cols^T @ grad, summed below
        cols = im2col(xp[lo:hi], geo)
        partials[lo] = cols.T @ g[lo:hi].reshape(-1, f_shape[3])
    over_images(block, x.shape[0], geo, int(np.prod(f_shape)), threads)
    order = sorted(partials)  # the same sum whichever thread computed which block
    total = partials[order[0]]
    for lo in order[1:]:
        total += partials[lo]
    return total.reshape(f_shape)


@cpu_kernel("Conv2D")
def conv2d_reference(node):
    threads = blas.session_threads(node)
    return forward_kernel(node, lambda x, f, geo: conv2d(x, f, geo, threads))


@cpu_kernel("Conv2DBackpropInput")
def conv2d_backprop_input_reference(node):
    threads = blas.session_threads(node)
    return input_grad_kernel(node, lambda g, f, geo, n, c: conv2d_backprop_input(g, f, geo, n, c,
                                                                                   threads))


@cpu_kernel("Conv2DBackpropFilter")
def conv2d_backprop_filter_reference(node):
    threads = blas.session_threads(node)
    return filter_grad_kernel(node, lambda x, g, geo, f_shape: conv2d_backprop_filter(
        x, g, geo, f_shape, threads))

