"""numpy kernels for convolution (NHWC internally; NCHW is transposed in and out).

conv2d is im2col + one matmul: a zero-copy strided view of the padded input as
[n, oh, ow, kh, kw, c] windows, reshaped to a [n*oh*ow, kh*kw*c] matrix times the [kh*kw*c, out]
filter. The backprop ops reuse the same geometry: the filter gradient is cols^T @ grad, the input
gradient is grad @ filter^T scattered back (col2im) with one strided slice-add per filter tap.
With the optional oneDNN library, float32 convolutions run its primitives (`dnnl_conv.py`). The
pools, which share `Geometry`, are in `pool_kernels.py`.
"""

import numpy as np
from numpy.lib.stride_tricks import as_strided

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.blocked import conv_blocked, conv_gather, conv_taps
from graphflow.kernels.cpu.onednn import dnnl_conv, dnnl_conv_grads
from graphflow.kernels.cpu.threads import blas, intra_op

# The kernels run the blocked im2col products of `conv_blocked.py` (small forward convolutions:
# the gathered one of `conv_gather.py`); False runs the reference kernels below (whole-input
# padding, im2col and col2im), which the tests compare them with.
BLOCKED = True


class Geometry:
    """Output size and padding of one 2-D window op, for one input height/width."""

    __slots__ = ("h", "w", "kh", "kw", "sh", "sw", "dh", "dw", "oh", "ow", "pt", "pb", "pl", "pr",
                 "key")

    def __init__(self, h, w, kh, kw, sh, sw, dh, dw, padding):
        self.h, self.w, self.kh, self.kw = h, w, kh, kw
        self.sh, self.sw, self.dh, self.dw = sh, sw, dh, dw
        self.oh, self.pt, self.pb = _axis(h, kh, sh, dh, padding)
        self.ow, self.pl, self.pr = _axis(w, kw, sw, dw, padding)
        self.key = (h, w, kh, kw, sh, sw, dh, dw, self.pt, self.pb, self.pl, self.pr)  # all of it

    @property
    def tiles_input(self):
        """Windows side by side with no overlap, gap or padding (e.g. 2x2 pooling, stride 2)."""
        return (self.kh == self.sh and self.kw == self.sw and self.dh == self.dw == 1
                and not self.padded)

    @property
    def padded(self):
        return self.pt or self.pb or self.pl or self.pr

    def pad(self, x, value=0):
        if not self.padded:
            return x
        return np.pad(x, ((0, 0), (self.pt, self.pb), (self.pl, self.pr), (0, 0)),
                      constant_values=value)

    def padded_shape(self, n, c):
        return (n, self.h + self.pt + self.pb, self.w + self.pl + self.pr, c)

    def crop(self, xp):
        return xp[:, self.pt:self.pt + self.h, self.pl:self.pl + self.w, :]

    def tap(self, i, j):
        """Index of the padded input read by filter tap (i, j) at every output position."""
        top, left = i * self.dh, j * self.dw
        return (slice(None), slice(top, top + self.sh * (self.oh - 1) + 1, self.sh),
                slice(left, left + self.sw * (self.ow - 1) + 1, self.sw), slice(None))

    def taps(self):
        return [self.tap(i, j) for i in range(self.kh) for j in range(self.kw)]

    def windows(self, xp):
        """Read-only [n, oh, ow, kh, kw, c] view of the padded input (no copy)."""
        n, _, _, c = xp.shape
        s0, s1, s2, s3 = xp.strides
        return as_strided(xp, (n, self.oh, self.ow, self.kh, self.kw, c),
                          (s0, s1 * self.sh, s2 * self.sw, s1 * self.dh, s2 * self.dw, s3),
                          writeable=False)


def _axis(size, k, s, d, padding):
    effective = (k - 1) * d + 1
    if padding == "SAME":
        out = -(-size // s)
        total = max((out - 1) * s + effective - size, 0)
        return out, total // 2, total - total // 2
    if size < effective:
        raise ValueError(f"the window ({effective}) is larger than the input ({size}) with VALID "
                         "padding")
    return (size - effective) // s + 1, 0, 0


def _hw(values, data_format):
    return (values[1], values[2]) if data_format == "NHWC" else (values[2], values[3])


def _to_nhwc(x, data_format):
    return x if data_format == "NHWC" else x.transpose(0, 2, 3, 1)


def _from_nhwc(x, data_format):
    return x if data_format == "NHWC" else np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def _check4(x, what):
    if x.ndim != 4:
        raise ValueError(f"{what} must be 4-D, got shape {x.shape}")


def _sizes(value, what):
    sizes = tuple(int(v) for v in np.asarray(value).reshape(-1))
    if len(sizes) != 4:
        raise ValueError(f"{what} must have 4 elements, got {list(sizes)}")
    return sizes


# ---------------------------------------------------------------- convolution
class _Conv:
    """Attributes of one conv node and the geometry for a given input/filter shape."""

    def __init__(self, node):
        a = node.attrs
        self.fmt = a.get("data_format", "NHWC")
        self.strides = _hw(a["strides"], self.fmt)
        self.dilations = _hw(a.get("dilations", [1, 1, 1, 1]), self.fmt)
        self.padding = a["padding"]
        self._cache = {}
        self._windows = {}

    def geometry(self, x_shape, f_shape):
        key = (x_shape, f_shape)
        geo = self._cache.get(key)
        if geo is None:
            _, h, w, c = x_shape
            kh, kw, ki, _ = f_shape
            if c != ki:
                raise ValueError(f"input has {c} channels but the filter expects {ki} "
                                 f"(filter shape {list(f_shape)})")
            geo = Geometry(h, w, kh, kw, *self.strides, *self.dilations, self.padding)
            self._cache[key] = geo
        return geo

    def window(self, geo):
        win = self._windows.get(geo)
        if win is None:
            win = self._windows[geo] = conv_blocked.Window.of(geo)
        return win

    def check_grad(self, g, geo, n, out_channels):
        want = (n, geo.oh, geo.ow, out_channels)
        if g.shape != want:
            raise ValueError(f"out_backprop has shape {g.shape}, expected {want} (NHWC)")


def _im2col(xp, geo):
    cols = geo.windows(xp)
    n = xp.shape[0]
    return cols.reshape(n * geo.oh * geo.ow, geo.kh * geo.kw * xp.shape[3])


def gathered_below_dnnl(n, geo, in_channels, out_channels):
    """Whether Conv2D runs the gathered kernel (`conv_gather.py`) at once: small enough for it and
    below oneDNN's minimum, so oneDNN would not take it (FusedConv2D takes the same route)."""
    return (BLOCKED and conv_gather.applies(n, geo, in_channels)
            and dnnl_conv.conv_macs(n, geo, in_channels, out_channels) < dnnl_conv.MIN_MACS)


def taps_forward(geo, in_channels, out_channels):
    """Whether Conv2D runs `conv_taps` (one output channel: oneDNN is slow there; FusedConv2D takes
    the same route)."""
    return BLOCKED and conv_taps.forward_applies(geo, in_channels, out_channels)


@cpu_kernel("Conv2D")
def _conv2d(node):
    conv = _Conv(node)
    threads = blas.session_threads(node)

    def conv2d(x, f):
        _check4(x, "input")
        _check4(f, "filter")
        x = _to_nhwc(x, conv.fmt)
        geo = conv.geometry(x.shape, f.shape)
        if gathered_below_dnnl(x.shape[0], geo, *f.shape[2:]):  # skip oneDNN's checks
            return _from_nhwc(conv_gather.conv2d(x, f, geo), conv.fmt)
        if taps_forward(geo, *f.shape[2:]):
            return _from_nhwc(conv_taps.conv2d(x, f, geo, lambda block: _over_images(
                block, x.shape[0], geo, f.size, threads)), conv.fmt)
        if dnnl_conv.applies(x, f, macs=dnnl_conv.conv_macs(x.shape[0], geo, *f.shape[2:])):
            out = dnnl_conv.conv2d(x, f, geo, threads)
            if out is not None:
                return _from_nhwc(out, conv.fmt)
        if BLOCKED and conv_gather.applies(x.shape[0], geo, x.shape[3]):
            return _from_nhwc(conv_gather.conv2d(x, f, geo), conv.fmt)
        if BLOCKED:
            return _from_nhwc(conv_blocked.conv2d(x, f, conv.window(geo), threads), conv.fmt)
        xp = geo.pad(x)
        fm = f.reshape(-1, f.shape[3])
        out = np.empty((x.shape[0], geo.oh, geo.ow, f.shape[3]), dtype=np.result_type(x, f))

        def block(lo, hi):  # images lo..hi: im2col copy and product on one thread
            rows = (hi - lo) * geo.oh * geo.ow
            np.matmul(_im2col(xp[lo:hi], geo), fm, out=out[lo:hi].reshape(rows, -1))
        _over_images(block, x.shape[0], geo, fm.size, threads)
        return _from_nhwc(out, conv.fmt)
    return conv2d


def _col2im_into(dxp, gcols, geo):
    """Adjoint of im2col: sum each tap's [n, oh, ow, c] slab back into the zeroed padded input."""
    n, c = dxp.shape[0], dxp.shape[3]
    gcols = gcols.reshape(n, geo.oh, geo.ow, geo.kh, geo.kw, c)
    for i in range(geo.kh):
        for j in range(geo.kw):
            dxp[geo.tap(i, j)] += gcols[:, :, :, i, j, :]


def _over_images(block, n, geo, macs_per_row, threads):
    """Call `block(lo, hi)` over image blocks of the batch, on up to `threads` threads of the
    intra-op pool (one block per call when the work is small). Blocks keep each thread's im2col
    copy small enough to stay in cache and run the copies, products and col2im sums in parallel."""
    rows_per_image = geo.oh * geo.ow
    macs = n * rows_per_image * macs_per_row
    if threads <= 1 or n < 2 or macs < blas.PARALLEL_MIN_MACS or intra_op.in_worker() \
            or not blas.owns_blas_threads():
        block(0, n)
        return
    blocks = min(n, threads * 4)
    bounds = np.linspace(0, n, blocks + 1).astype(int)
    pieces = intra_op.shared_iter(range(blocks))

    def work():
        for i in pieces:
            block(bounds[i], bounds[i + 1])
    intra_op.POOL.run_shared(work, threads)


@cpu_kernel("Conv2DBackpropInput")
def _conv2d_backprop_input(node):
    conv = _Conv(node)
    threads = blas.session_threads(node)

    def conv2d_backprop_input(input_sizes, f, g):
        _check4(f, "filter")
        _check4(g, "out_backprop")
        sizes = _sizes(input_sizes, "input_sizes")
        n, h, w, c = sizes if conv.fmt == "NHWC" else (sizes[0], sizes[2], sizes[3], sizes[1])
        g = _to_nhwc(g, conv.fmt)
        geo = conv.geometry((n, h, w, c), f.shape)
        conv.check_grad(g, geo, n, f.shape[3])
        if BLOCKED and conv_taps.input_grad_applies(geo, c, f.shape[3]):
            return _from_nhwc(conv_taps.conv2d_backprop_input(g, f, geo, n, c, lambda block: (
                _over_images(block, n, geo, f.size, threads))), conv.fmt)
        if dnnl_conv.applies(f, g, macs=dnnl_conv.conv_macs(n, geo, c, f.shape[3])):
            dx = dnnl_conv.conv2d_backprop_input(g, f, geo, n, c, threads)
            if dx is not None:
                return _from_nhwc(dx, conv.fmt)
        if BLOCKED and geo.sh == geo.sw == 1 and c >= conv_blocked.MIN_INPUT_GRAD_CHANNELS:
            return _from_nhwc(conv_blocked.conv2d_backprop_input(g, f, geo, threads), conv.fmt)
        ft = f.reshape(-1, f.shape[3]).T
        dxp = np.zeros(geo.padded_shape(n, c), dtype=g.dtype)

        def block(lo, hi):  # images lo..hi: product and col2im on one thread
            gcols = g[lo:hi].reshape(-1, f.shape[3]) @ ft
            _col2im_into(dxp[lo:hi], gcols, geo)
        _over_images(block, n, geo, ft.size, threads)
        return _from_nhwc(np.ascontiguousarray(geo.crop(dxp)), conv.fmt)
    return conv2d_backprop_input


@cpu_kernel("Conv2DBackpropFilter")
def _conv2d_backprop_filter(node):
    conv = _Conv(node)
    threads = blas.session_threads(node)

    def conv2d_backprop_filter(x, filter_sizes, g):
        _check4(x, "input")
        _check4(g, "out_backprop")
        f_shape = _sizes(filter_sizes, "filter_sizes")
        x = _to_nhwc(x, conv.fmt)
        g = _to_nhwc(g, conv.fmt)
        geo = conv.geometry(x.shape, f_shape)
        conv.check_grad(g, geo, x.shape[0], f_shape[3])
        if dnnl_conv.applies(x, g, macs=dnnl_conv.conv_macs(x.shape[0], geo, *f_shape[2:])) \
                and 0 not in f_shape:
            df = dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f_shape, threads)
            if df is not None:
                return df
        if BLOCKED:
            return conv_blocked.conv2d_backprop_filter(x, g, conv.window(geo), f_shape, threads)
        xp = geo.pad(x)
        partials = {}

        def block(lo, hi):  # images lo..hi: their share of cols^T @ grad, summed below
            cols = _im2col(xp[lo:hi], geo)
            partials[lo] = cols.T @ g[lo:hi].reshape(-1, f_shape[3])
        _over_images(block, x.shape[0], geo, int(np.prod(f_shape)), threads)
        order = sorted(partials)  # the same sum whichever thread computed which block
        total = partials[order[0]]
        for lo in order[1:]:
            total += partials[lo]
        return total.reshape(f_shape)
    return conv2d_backprop_filter

