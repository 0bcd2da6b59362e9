"""Small convolutions (a few small images: inference at batch 1) as one gathered im2col product.

At batch 1 on 8x8 images a convolution is a few microseconds of BLAS and tens of microseconds of
numpy calls: the blocked kernels (`conv_blocked.py`) copy the window matrix one filter tap (and,
with few channels, one channel) at a time. Here the input is copied once into the interior of a
kept zero-bordered buffer [n, (h + pads) * (w + pads), c] (its border is never written, so it
stays zero), and one `take` along the flattened spatial axis with a precomputed index array
(every output position's kh*kw window taps, row-major) builds the whole [n*oh*ow, kh*kw*c] window
matrix, the reference kernel's im2col, for one product with the [kh*kw*c, out] filter:

    out = take(padded, index, axis=1).reshape(n*oh*ow, kh*kw*c) @ f.reshape(kh*kw*c, out)

The product has the reference kernel's operands in the same layout, so the same values. Measured
(one thread, float32, 3x3 SAME, load 0.5-5): 8x8x1 -> 32 at batch 1 15 -> 3 us, 8x8x32 -> 32
26 -> 15 us, 4x4x32 -> 64 20 -> 8 us; at batch 4 54 -> 5, 99 -> 62 and 71 -> 27 us.
Registered as Conv2D's "gather" implementation: chosen where the window matrix is at most
`MAX_FLOATS` elements and neither oneDNN (`dnnl_conv.MIN_MACS` and up) nor the tap products
(`conv_taps.py`, one output channel, which leave the small ones here) take the convolution
(`gathered_below_dnnl`: small enough and below oneDNN's minimum, the route FusedConv2D's small
implementations share). Buffers and index arrays are kept per thread and geometry.
"""

import threading

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.onednn import dnnl_conv
from graphflow.kernels.cpu.reference.conv_geometry import conv_macs, forward_kernel, static_conv

# Window-matrix elements (n*oh*ow*kh*kw*c) up to which the gathered kernel runs: the copy then
# stays in cache (one 8x8x32 image with 3x3 taps: 18,432).
MAX_FLOATS = 1 << 16
_MAX_KEPT = 16  # (geometry, batch, channels, dtype) entries one thread keeps, oldest dropped

_local = threading.local()


def applies(n, geo, c):
    return 0 < n * geo.oh * geo.ow * geo.kh * geo.kw * c <= MAX_FLOATS


def gathered_below_dnnl(n, geo, in_channels, out_channels):
    """Whether a convolution is small enough for the gathered kernel and below oneDNN's minimum
    (`dnnl_conv.MIN_MACS`), where oneDNN never takes it (FusedConv2D's small routes)."""
    return (applies(n, geo, in_channels)
            and conv_macs(n, geo, in_channels, out_channels) < dnnl_conv.MIN_MACS)


def conv2d_applies(node):
    """The plan's test: static shapes whose window matrix is at most MAX_FLOATS elements."""
    shapes = static_conv(node)
    return shapes is not None and applies(shapes.n, shapes.geo, shapes.c)


@cpu_kernel("Conv2D", name="gather", preference=20, applies=conv2d_applies)
def conv2d_gathered(node):
    return forward_kernel(node, conv2d)


class _Gather:
    """One geometry's zero-bordered input buffer, its interior view and the window index."""

    __slots__ = ("padded", "interior", "index", "rows", "k")

    def __init__(self, geo, n, c, dtype):
        hp, wp = geo.h + geo.pt + geo.pb, geo.w + geo.pl + geo.pr
        self.padded = np.zeros((n, hp * wp, c), dtype)
        self.interior = self.padded.reshape(n, hp, wp, c)[:, geo.pt:geo.pt + geo.h,
                                                          geo.pl:geo.pl + geo.w]
        ys = (np.arange(geo.oh) * geo.sh)[:, None, None, None] \
            + (np.arange(geo.kh) * geo.dh)[None, None, :, None]
        xs = (np.arange(geo.ow) * geo.sw)[None, :, None, None] \
            + (np.arange(geo.kw) * geo.dw)[None, None, None, :]
        self.index = (ys * wp + xs).reshape(-1).astype(np.intp)  # [oh, ow, kh, kw] row-major
        self.rows = n * geo.oh * geo.ow
        self.k = geo.kh * geo.kw * c


def _gather(geo, n, c, dtype):
    kept = getattr(_local, "kept", None)
    if kept is None:
        kept = _local.kept = {}
    key = (geo.key, n, c, dtype)
    g = kept.get(key)
    if g is None:
        if len(kept) >= _MAX_KEPT:
            kept.pop(next(iter(kept)))
        g = kept[key] = _Gather(geo, n, c, dtype)
    return g


def conv2d(x, f, geo):
    """Forward convolution of NHWC `x` with the HWIO filter `f` (a `conv_geometry.Geometry`): NHWC
    output, a new array."""
    n, c, out_c = x.shape[0], x.shape[3], f.shape[3]
    dtype = x.dtype if x.dtype == f.dtype else np.result_type(x, f)
    g = _gather(geo, n, c, dtype)
    g.interior[...] = x
    cols = g.padded.take(g.index, axis=1).reshape(g.rows, g.k)
    fm = f.reshape(g.k, out_c)
    if fm.dtype != dtype:
        fm = fm.astype(dtype)
    return np.dot(cols, fm).reshape(n, geo.oh, geo.ow, out_c)
