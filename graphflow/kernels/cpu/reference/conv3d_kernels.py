"""numpy kernels for 3-D convolution and pooling (NDHWC internally; NCDHW is transposed in and out).

The same scheme as the 2-D reference kernels of `conv_kernels.py`, over three spatial axes:
conv3d is im2col + one matmul (a zero-copy strided view of the padded input as
[n, od, oh, ow, kd, kh, kw, c] windows reshaped to a [n*od*oh*ow, kd*kh*kw*c] matrix times the
[kd*kh*kw*c, out] filter; products split over the session's threads by `blas.matmul`); the filter
gradient is cols^T @ grad, the input gradient grad @ filter^T summed back with one strided
slice-add per filter tap (col2im). Pooling loops over the window taps, each a vectorized op over
the whole batch. Max-pool gradients follow TF's CPU
kernels at ties: MaxPool3DGrad gives a window's gradient to every element equal to its maximum,
MaxPool3DGradGrad reads the first one.
"""

import itertools

import numpy as np
from numpy.lib.stride_tricks import as_strided

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference.conv_geometry import axis as _axis
from graphflow.kernels.cpu.reference.pool_kernels import grad_at_first_max, reduce_taps
from graphflow.kernels.cpu.reference.pool_kernels import lowest as _lowest
from graphflow.kernels.cpu.threads import blas


class Geometry3:
    """Output sizes and paddings of one 3-D window op for one input size (per spatial axis:
    size, window, stride, dilation, output size and the padding before / after)."""

    def __init__(self, sizes, ksize, strides, dilations, padding):
        self.sizes, self.ksize = tuple(sizes), tuple(ksize)
        self.strides, self.dilations = tuple(strides), tuple(dilations)
        axes = [_axis(*args, padding) for args in zip(sizes, ksize, strides, dilations)]
        self.out = tuple(a[0] for a in axes)
        self.pads = tuple((a[1], a[2]) for a in axes)

    @property
    def padded(self):
        return any(p for pair in self.pads for p in pair)

    def pad(self, x, value=0):
        if not self.padded:
            return x
        return np.pad(x, ((0, 0), *self.pads, (0, 0)), constant_values=value)

    def padded_shape(self, n, c):
        return (n, *(s + lo + hi for s, (lo, hi) in zip(self.sizes, self.pads)), c)

    def crop(self, xp):
        return xp[(slice(None),
                   *(slice(lo, lo + s) for s, (lo, _) in zip(self.sizes, self.pads)),
                   slice(None))]

    def tap(self, index):
        """Index of the padded input read by filter tap `index` (kd, kh, kw) at every output."""
        spans = []
        for i, s, d, o in zip(index, self.strides, self.dilations, self.out):
            start = i * d
            spans.append(slice(start, start + s * (o - 1) + 1, s))
        return (slice(None), *spans, slice(None))

    def taps(self):
        return [self.tap(index) for index in itertools.product(*(range(k) for k in self.ksize))]

    def windows(self, xp):
        """Read-only [n, od, oh, ow, kd, kh, kw, c] view of the padded input (no copy)."""
        n, c = xp.shape[0], xp.shape[4]
        s = xp.strides
        shape = (n, *self.out, *self.ksize, c)
        strides = (s[0], *(s[1 + a] * self.strides[a] for a in range(3)),
                   *(s[1 + a] * self.dilations[a] for a in range(3)), s[4])
        return as_strided(xp, shape, strides, writeable=False)

    def count(self):
        return int(np.prod(self.out))


def _spatial(values, fmt):
    return tuple(values[1:4]) if fmt == "NDHWC" else tuple(values[2:5])


def _to_ndhwc(x, fmt):
    return x if fmt == "NDHWC" else x.transpose(0, 2, 3, 4, 1)


def _from_ndhwc(x, fmt):
    return x if fmt == "NDHWC" else np.ascontiguousarray(x.transpose(0, 4, 1, 2, 3))


def _check5(x, what):
    if x.ndim != 5:
        raise ValueError(f"{what} must be 5-D, got shape {x.shape}")


def _sizes(value, what, fmt=None):
    sizes = tuple(int(v) for v in np.asarray(value).reshape(-1))
    if len(sizes) != 5:
        raise ValueError(f"{what} must have 5 elements, got {list(sizes)}")
    if fmt == "NCDHW":
        return (sizes[0], sizes[2], sizes[3], sizes[4], sizes[1])
    return sizes


def _check_grad(g, geo, n, c, what):
    want = (n, *geo.out, c)
    if g.shape != want:
        raise ValueError(f"{what} has shape {g.shape}, expected {want} (NDHWC)")


# ---------------------------------------------------------------- convolution
class _Conv:
    def __init__(self, node):
        a = node.attrs
        self.fmt = a.get("data_format", "NDHWC")
        self.strides = _spatial(a["strides"], self.fmt)
        self.dilations = _spatial(a.get("dilations", [1] * 5), self.fmt)
        self.padding = a["padding"]

    def geometry(self, x_shape, f_shape):
        if x_shape[4] != f_shape[3]:
            raise ValueError(f"input has {x_shape[4]} channels but the filter expects {f_shape[3]} "
                             f"(filter shape {list(f_shape)})")
        return Geometry3(x_shape[1:4], f_shape[:3], self.strides, self.dilations, self.padding)


def _im2col(xp, geo):
    return geo.windows(xp).reshape(xp.shape[0] * geo.count(), -1)


@cpu_kernel("Conv3D")
def _conv3d(node):
    conv = _Conv(node)
    threads = blas.session_threads(node)

    def conv3d(x, f):
        _check5(x, "input")
        _check5(f, "filter")
        x = _to_ndhwc(x, conv.fmt)
        geo = conv.geometry(x.shape, f.shape)
        out = blas.matmul(_im2col(geo.pad(x), geo), f.reshape(-1, f.shape[4]), threads)
        return _from_ndhwc(out.reshape(x.shape[0], *geo.out, f.shape[4]), conv.fmt)
    return conv3d


@cpu_kernel("Conv3DBackpropInputV2")
def _conv3d_backprop_input(node):
    conv = _Conv(node)
    threads = blas.session_threads(node)

    def conv3d_backprop_input(input_sizes, f, g):
        _check5(f, "filter")
        _check5(g, "out_backprop")
        n, d, h, w, c = _sizes(input_sizes, "input_sizes", conv.fmt)
        g = _to_ndhwc(g, conv.fmt)
        geo = conv.geometry((n, d, h, w, c), f.shape)
        _check_grad(g, geo, n, f.shape[4], "out_backprop")
        gcols = blas.matmul(g.reshape(-1, f.shape[4]), f.reshape(-1, f.shape[4]).T, threads)
        gcols = gcols.reshape(n, *geo.out, -1, c)
        dxp = np.zeros(geo.padded_shape(n, c), dtype=g.dtype)
        for k, tap in enumerate(geo.taps()):
            dxp[tap] += gcols[:, :, :, :, k, :]
        return _from_ndhwc(np.ascontiguousarray(geo.crop(dxp)), conv.fmt)
    return conv3d_backprop_input


@cpu_kernel("Conv3DBackpropFilterV2")
def _conv3d_backprop_filter(node):
    conv = _Conv(node)
    threads = blas.session_threads(node)

    def conv3d_backprop_filter(x, filter_sizes, g):
        _check5(x, "input")
        _check5(g, "out_backprop")
        f_shape = _sizes(filter_sizes, "filter_sizes")
        x, g = _to_ndhwc(x, conv.fmt), _to_ndhwc(g, conv.fmt)
        geo = conv.geometry(x.shape, f_shape)
        _check_grad(g, geo, x.shape[0], f_shape[4], "out_backprop")
        cols = _im2col(geo.pad(x), geo)
        return blas.matmul(cols.T, g.reshape(-1, f_shape[4]), threads).reshape(f_shape)
    return conv3d_backprop_filter


# ---------------------------------------------------------------- pooling
class _Pool:
    def __init__(self, node):
        a = node.attrs
        self.fmt = a.get("data_format", "NDHWC")
        self.ksize = _spatial(a["ksize"], self.fmt)
        self.strides = _spatial(a["strides"], self.fmt)
        self.padding = a["padding"]

    def geometry(self, shape):
        return Geometry3(shape[1:4], self.ksize, self.strides, (1, 1, 1), self.padding)


@cpu_kernel("MaxPool3D")
def _max_pool3d(node):
    pool = _Pool(node)

    def max_pool3d(x):
        _check5(x, "input")
        x = _to_ndhwc(x, pool.fmt)
        geo = pool.geometry(x.shape)
        out = reduce_taps(geo.pad(x, _lowest(x.dtype)), geo, np.maximum)
        return _from_ndhwc(out, pool.fmt)
    return max_pool3d


@cpu_kernel("MaxPool3DGrad")
def _max_pool3d_grad(node):
    """TF's CPU rule: each window's gradient goes to every element equal to the window maximum
    (ties all receive it; the 2-D MaxPoolGrad picks the first)."""
    pool = _Pool(node)

    def max_pool3d_grad(x, y, g):
        _check5(x, "orig_input")
        x, g = _to_ndhwc(x, pool.fmt), _to_ndhwc(g, pool.fmt)
        geo = pool.geometry(x.shape)
        n, c = x.shape[0], x.shape[4]
        _check_grad(g, geo, n, c, "grad")
        xp = geo.pad(x, _lowest(x.dtype))
        taps = geo.taps()
        best = reduce_taps(xp, geo, np.maximum)
        dxp = np.zeros(geo.padded_shape(n, c), dtype=g.dtype)
        for tap in taps:
            dxp[tap] += np.where(xp[tap] == best, g, 0)
        return _from_ndhwc(np.ascontiguousarray(geo.crop(dxp)), pool.fmt)
    return max_pool3d_grad


@cpu_kernel("MaxPool3DGradGrad")
def _max_pool3d_grad_grad(node):
    """TF's rule: each output takes `grad` at the first (row-major) maximum of its window."""
    pool = _Pool(node)

    def max_pool3d_grad_grad(x, y, g):
        _check5(x, "orig_input")
        x, g = _to_ndhwc(x, pool.fmt), _to_ndhwc(g, pool.fmt)
        if g.shape != x.shape:
            raise ValueError(f"grad has shape {g.shape}, expected the input shape {x.shape}")
        return _from_ndhwc(grad_at_first_max(x, g, pool.geometry(x.shape)), pool.fmt)
    return max_pool3d_grad_grad


def _window_counts(geo, dtype):
    """[od, oh, ow, 1] number of real (non-padding) elements in each window."""
    per_axis = []
    for out, k, s, (lo, _), size in zip(geo.out, geo.ksize, geo.strides, geo.pads, geo.sizes):
        start = np.arange(out) * s - lo
        per_axis.append(np.minimum(start + k, size) - np.maximum(start, 0))
    counts = np.multiply.outer(np.multiply.outer(per_axis[0], per_axis[1]), per_axis[2])
    return counts.astype(dtype)[..., None]


@cpu_kernel("AvgPool3D")
def _avg_pool3d(node):
    pool = _Pool(node)

    def avg_pool3d(x):
        _check5(x, "input")
        x = _to_ndhwc(x, pool.fmt)
        geo = pool.geometry(x.shape)
        out = reduce_taps(geo.pad(x), geo, np.add)
        out /= _window_counts(geo, x.dtype)
        return _from_ndhwc(out, pool.fmt)
    return avg_pool3d


@cpu_kernel("AvgPool3DGrad")
def _avg_pool3d_grad(node):
    pool = _Pool(node)

    def avg_pool3d_grad(orig_input_shape, g):
        _check5(g, "grad")
        n, d, h, w, c = _sizes(orig_input_shape, "orig_input_shape", pool.fmt)
        g = _to_ndhwc(g, pool.fmt)
        geo = pool.geometry((n, d, h, w, c))
        _check_grad(g, geo, n, c, "grad")
        share = g / _window_counts(geo, g.dtype)
        dxp = np.zeros(geo.padded_shape(n, c), dtype=g.dtype)
        for tap in geo.taps():
            dxp[tap] += share
        return _from_ndhwc(np.ascontiguousarray(geo.crop(dxp)), pool.fmt)
    return avg_pool3d_grad
