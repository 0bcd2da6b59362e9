"""Convolutions that produce one or a few channels, as one product per filter tap and shifted sums:
Conv2D's and Conv2DBackpropInput's "taps" implementation (FusedConv2D's too, with the bias add, in
`fused_conv_blocked.py`), chosen where `taps_forward` / `input_grad_applies` say so: a forward
convolution to one channel (a one-class or grey-image last layer) not small enough for the
gathered kernel (`conv_gather.py`), an input gradient to 1-3 channels (`conv2d_transpose` to an
image, a first layer's gradient). Their preference is above oneDNN's.

oneDNN runs these shapes slowly: a [64, 28, 28, 16] -> 1 channel 5x5 convolution takes 3.6 ms for
its 20M multiply-adds, on one thread or two (its usual speed would be ~0.3 ms), and an im2col
product there has a [pixels, kh*kw] result, a shape BLAS also runs slowly, with a strided col2im after.

Forward, out[n, y, x, o] = sum over taps (i, j) and channels c of xp[n, y*sh + i*dh, x*sw + j*dw, c]
* f[i, j, c, o]: one product P = F @ Xp^T gives, for each tap and output channel, a contiguous plane
P[i, j, o][n, Y, X] = sum_c f[i, j, c, o] * xp[n, Y, X, c] over every padded input pixel; each
output channel is then the sum of its kh*kw planes, each read at its tap's offset and strides.
Input gradient, the adjoint: P[i, j, c][n, y, x] = sum_o f[i, j, c, o] * g[n, y, x, o] (P = F @ G^T),
each plane added into the padded input gradient at its tap's offset and strides (any stride or
dilation), and the padding cropped.

Measured on one thread (ms, this kernel / oneDNN, batch 64, load 1.4): forward 28x28x16 -> 1, 5x5:
2.40 / 3.56; 32x32x32 -> 1, 3x3: 2.75 / 3.76 (-> 2 channels 3.93 / 3.79, -> 3 2.66 / 2.04: not
taken); input gradients 28x28x1 <- 16, 5x5: 1.80 / 3.59; 32x32x2 <- 32, 3x3: 2.81 / 3.76; stride 2,
5x5, 32x32x3 <- 64: 3.41 / 5.78; 64x64x3 <- 64: 27.4 / 39.5; 4x4, 32x32x3 <- 128: 3.49 / 11.0
(stride 1 to 3 channels 2.62 / 2.15: not taken). `python benchmarks/bench_ops_vs_tf1.py` has rows.

Sums run tap by tap in the operands' dtype: float32 rounding differs from an im2col product's order
(the tests bound it). Each block of images keeps P near `BLOCK_ELEMENTS`; blocks of images run on
the intra-op threads (`conv_geometry.over_images`).
"""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.blocked import conv_gather
from graphflow.kernels.cpu.reference.conv_geometry import (
    forward_kernel,
    input_grad_kernel,
    over_images,
    static_conv,
)
from graphflow.kernels.cpu.threads import blas

BLOCK_ELEMENTS = 1 << 22   # elements of P per product (16 MB in float32)


def forward_applies(geo, in_channels, out_channels):
    """Conv2D takes this route: one output channel from several, stride 1."""
    return out_channels == 1 and in_channels > 1 and geo.sh == geo.sw == 1


def taps_forward(n, geo, in_channels, out_channels):
    """Whether Conv2D (and FusedConv2D) runs here: one output channel, stride 1, and not small
    enough for the gathered kernel below oneDNN's minimum (`conv_gather.gathered_below_dnnl`)."""
    return (forward_applies(geo, in_channels, out_channels)
            and not conv_gather.gathered_below_dnnl(n, geo, in_channels, out_channels))


def forward_node_applies(node):
    """The plan's test of a Conv2D or FusedConv2D node (static shapes)."""
    shapes = static_conv(node)
    return shapes is not None and taps_forward(shapes.n, shapes.geo, shapes.c, shapes.oc)


def input_grad_node_applies(node):
    """The plan's test of a Conv2DBackpropInput node (static shapes)."""
    shapes = static_conv(node)
    return shapes is not None and input_grad_applies(shapes.geo, shapes.c, shapes.oc)


def input_grad_applies(geo, in_channels, out_channels):
    """Conv2DBackpropInput takes this route: an input of 1-2 channels, or 3 with a stride, from
    more output channels."""
    strided = geo.sh * geo.sw > 1
    return out_channels > in_channels and (in_channels <= 2 or (in_channels == 3 and strided))


def forward(threads):
    """conv2d(x, f, geo) on `threads` intra-op threads."""
    return lambda x, f, geo: conv2d(x, f, geo, lambda block: over_images(
        block, x.shape[0], geo, f.size, threads))


@cpu_kernel("Conv2D", name="taps", preference=40, applies=forward_node_applies)
def conv2d_taps(node):
    return forward_kernel(node, forward(blas.session_threads(node)))


@cpu_kernel("Conv2DBackpropInput", name="taps", preference=40, applies=input_grad_node_applies)
def conv2d_backprop_input_taps(node):
    threads = blas.session_threads(node)
    return input_grad_kernel(node, lambda g, f, geo, n, c: conv2d_backprop_input(
        g, f, geo, n, c, lambda block: over_images(block, n, geo, f.size, threads)))


def _sub_blocks(lo, hi, per_image):
    step = max(1, BLOCK_ELEMENTS // max(per_image, 1))
    return [(a, min(hi, a + step)) for a in range(lo, hi, step)]


def conv2d(x, f, geo, over_images):
    """NHWC convolution of `x` by the HWIO filter `f` (`geo`: conv_geometry.Geometry);
    `over_images(block)` calls block(lo, hi) over blocks of images."""
    n = x.shape[0]
    kh, kw, c, oc = f.shape
    xp = geo.pad(x)
    hp, wp = xp.shape[1], xp.shape[2]
    weights = np.ascontiguousarray(f.transpose(0, 1, 3, 2).reshape(kh * kw * oc, c))
    out = np.empty((oc, n, geo.oh, geo.ow), np.result_type(x, f))

    def block(lo, hi):
        for a, b in _sub_blocks(lo, hi, kh * kw * oc * hp * wp):
            planes = (weights @ xp[a:b].reshape(-1, c).T).reshape(kh, kw, oc, b - a, hp, wp)
            for o in range(oc):
                dst = out[o, a:b]
                np.copyto(dst, planes[0, 0, o][_tap(geo, 0, 0)])
                for i, j in _taps(kh, kw)[1:]:
                    np.add(dst, planes[i, j, o][_tap(geo, i, j)], out=dst)
    over_images(block)
    return np.ascontiguousarray(out.transpose(1, 2, 3, 0))


def conv2d_backprop_input(g, f, geo, n, c, over_images):
    """NHWC input gradient [n, h, w, c] from the NHWC output gradient `g` and the HWIO filter."""
    kh, kw, _, oc = f.shape
    weights = np.ascontiguousarray(f.reshape(kh * kw * c, oc))
    hp, wp = geo.padded_shape(n, 1)[1:3]
    dxp = np.zeros((c, n, hp, wp), np.result_type(g, f))

    def block(lo, hi):
        for a, b in _sub_blocks(lo, hi, kh * kw * c * geo.oh * geo.ow):
            planes = (weights @ g[a:b].reshape(-1, oc).T).reshape(kh, kw, c, b - a, geo.oh, geo.ow)
            for ch in range(c):
                dst = dxp[ch, a:b]
                for i, j in _taps(kh, kw):
                    window = dst[_tap(geo, i, j)]
                    np.add(window, planes[i, j, ch], out=window)
    over_images(block)
    dx = dxp[:, :, geo.pt:geo.pt + geo.h, geo.pl:geo.pl + geo.w]
    return np.ascontiguousarray(dx.transpose(1, 2, 3, 0))


def _taps(kh, kw):
    return [(i, j) for i in range(kh) for j in range(kw)]


def _tap(geo, i, j):
    """Index of the padded [n, H, W] plane read (or written) by tap (i, j) for every output."""
    top, left = i * geo.dh, j * geo.dw
    return (slice(None), slice(top, top + geo.sh * (geo.oh - 1) + 1, geo.sh),
            slice(left, left + geo.sw * (geo.ow - 1) + 1, geo.sw))
