"""numpy kernels for convolution and pooling (NHWC internally; NCHW is transposed in and out,
except for the pools that `jit_pool_nchw.py` runs on the NCHW arrays).

conv2d is im2col + one matmul: a zero-copy strided view of the padded input as
[n, oh, ow, kh, kw, c] windows, reshaped to a [n*oh*ow, kh*kw*c] matrix times the [kh*kw*c, out]
filter. The backprop ops reuse the same geometry: the filter gradient is cols^T @ grad, the input
gradient is grad @ filter^T scattered back (col2im) with one strided slice-add per filter tap.
Pooling loops over the kh*kw window taps, each a vectorized op over the whole batch; with numba
installed, MaxPool and MaxPoolGrad run as compiled loops instead (`jit_pool.py`; NCHW ones
without transposes: `jit_pool_nchw.py`), these numpy kernels being the reference (AvgPool and
AvgPoolGrad: `avg_pool_kernels.py`). With the optional oneDNN library, float32 convolutions run its
primitives (`dnnl_conv.py`), and so does MaxPoolGrad (`dnnl_pool.py`).
"""

import numpy as np
from numpy.lib.stride_tricks import as_strided

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.blocked import conv_blocked, conv_gather, conv_taps
from graphflow.kernels.cpu.numba import jit_pool, jit_pool_nchw
from graphflow.kernels.cpu.onednn import dnnl_conv, dnnl_conv_grads, dnnl_pool
from graphflow.kernels.cpu.reference import pool_records
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


# ---------------------------------------------------------------- pooling
class Pool:
    def __init__(self, node):
        a = node.attrs
        self.fmt = a.get("data_format", "NHWC")
        self.ksize = _hw(a["ksize"], self.fmt)
        self.strides = _hw(a["strides"], self.fmt)
        self.padding = a["padding"]
        self._cache = {}

    def geometry(self, shape):
        key = shape[1:3]
        geo = self._cache.get(key)
        if geo is None:
            geo = Geometry(shape[1], shape[2], *self.ksize, *self.strides, 1, 1, self.padding)
            self._cache[key] = geo
        return geo

    def check_grad(self, g, geo, n, c, what="grad"):
        want = (n, geo.oh, geo.ow, c)
        if g.shape != want:
            raise ValueError(f"{what} has shape {g.shape}, expected {want} (NHWC)")


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def reduce_taps(xp, geo, ufunc):
    """`ufunc` (np.maximum, np.add) over every window tap of the padded input: one whole-batch
    pass per tap (any number of spatial axes, as `geo` gives them)."""
    taps = geo.taps()
    out = np.array(xp[taps[0]])
    for tap in taps[1:]:
        ufunc(out, xp[tap], out=out)
    return out


def argmax_taps(xp, geo):
    """For each output position, the index (row-major over taps) of the first window maximum
    (any number of spatial axes: `geo` gives the taps, 2-D here and 3-D in conv3d_kernels)."""
    taps = geo.taps()
    best = np.array(xp[taps[0]])
    index = np.zeros(best.shape, dtype=np.int32)
    for k, tap in enumerate(taps[1:], start=1):
        candidate = xp[tap]
        better = candidate > best
        np.copyto(best, candidate, where=better)
        index[better] = k
    return index


@cpu_kernel("MaxPool")
def _max_pool(node):
    pool = Pool(node)
    threads = blas.session_threads(node)
    recorder = pool_records.Recorder() if pool.fmt == "NHWC" else None
    fast = {}  # (shape, dtype) of C-contiguous NHWC inputs -> jit_pool.runner, or None

    def max_pool(x):
        run = fast.get((x.shape, x.dtype), False) if recorder and x.flags.c_contiguous else False
        if run:
            return run(x)
        _check4(x, "input")
        if jit_pool_nchw.takes(pool, x):
            return jit_pool_nchw.max_pool(x, pool.geometry(jit_pool_nchw.nhwc_shape(x.shape)), threads)
        x = _to_nhwc(x, pool.fmt)
        geo = pool.geometry(x.shape)
        if jit_pool.applies(x):
            if run is not None and recorder and x.flags.c_contiguous and len(fast) < 16:
                run = fast[(x.shape, x.dtype)] = jit_pool.runner(x, geo, threads)
                if run:
                    return run(x)
            return _from_nhwc(jit_pool.max_pool(x, geo, threads, recorder), pool.fmt)
        out = reduce_taps(geo.pad(x, _lowest(x.dtype)), geo, np.maximum)
        return _from_nhwc(out, pool.fmt)
    return max_pool


def _tiled_max_pool_grad(x, y, g, geo):
    """MaxPoolGrad when the windows tile the input (stride == window, no padding): each window's
    gradient goes to its first element (row-major) equal to the window's maximum, the forward output
    y. Windows become axes of one reshaped view, so the work is a few whole-array passes instead of
    strided passes per tap (x == y broadcast, ties resolved per tap on booleans, one select: +0.0
    where no gradient goes, as every other route writes, not the -0.0 or NaN of `0 * g`)."""
    n, c = x.shape[0], x.shape[3]
    kh, kw, oh, ow = geo.kh, geo.kw, geo.oh, geo.ow
    used = x[:, :oh * kh, :ow * kw, :]
    windows = np.ascontiguousarray(used).reshape(n, oh, kh, ow, kw, c)
    first = windows == y[:, :, None, :, None, :]
    if np.count_nonzero(first) != y.size:  # ties: keep only the first maximum of each window
        taken = np.zeros(y.shape, dtype=bool)
        for i in range(kh):
            for j in range(kw):
                tap = first[:, :, i, :, j, :]
                np.greater(tap, taken, out=tap)  # true here and not in an earlier tap
                taken |= tap
    dx = np.where(first, g[:, :, None, :, None, :], g.dtype.type(0)).reshape(used.shape)
    if used.shape == x.shape:
        return dx
    full = np.zeros(x.shape, dtype=g.dtype)
    full[:, :oh * kh, :ow * kw, :] = dx
    return full


@cpu_kernel("MaxPoolGrad")
def _max_pool_grad(node):
    pool = Pool(node)
    threads = blas.session_threads(node)
    pool_records.recalling_kernel_built()  # MaxPool records argmaxes for it from now on

    def max_pool_grad(x, y, g):
        _check4(x, "orig_input")
        dx = jit_pool_nchw.max_pool_grad(pool, x, g, threads)  # None: not an NCHW loop's
        if dx is not None:
            return dx
        x, y, g = _to_nhwc(x, pool.fmt), _to_nhwc(y, pool.fmt), _to_nhwc(g, pool.fmt)
        return _from_nhwc(max_pool_grad_nhwc(pool, x, y, g, threads), pool.fmt)
    return max_pool_grad


def max_pool_grad_nhwc(pool, x, y, g, threads):
    """MaxPoolGrad of NHWC arrays: the forward pass's recorded argmaxes, oneDNN, the compiled
    window search or numpy, whichever applies first (FusedMaxPoolGradReluMask runs it too)."""
    geo = pool.geometry(x.shape)
    pool.check_grad(g, geo, x.shape[0], x.shape[3])
    if g.dtype == x.dtype and jit_pool.applies(x):
        arg = pool_records.recall(y, x.shape)  # the forward pass's argmaxes, when it kept them
        if arg is not None:
            return jit_pool.max_pool_grad_from_argmax(x.shape, g, arg, threads)
    if dnnl_pool.applies(x, g):
        dx = dnnl_pool.max_pool_grad(x, g, geo, threads)
        if dx is not None:
            return dx
    if g.dtype == x.dtype and jit_pool.applies(x):
        return jit_pool.max_pool_grad(x, g, geo, threads)
    if geo.tiles_input:
        pool.check_grad(y, geo, x.shape[0], x.shape[3], what="orig_output")
        return _tiled_max_pool_grad(x, y, g, geo)
    index = argmax_taps(geo.pad(x, _lowest(x.dtype)), geo)
    dxp = np.zeros(geo.padded_shape(x.shape[0], x.shape[3]), dtype=g.dtype)
    for k, tap in enumerate(geo.taps()):
        dxp[tap] += np.where(index == k, g, 0)
    return np.ascontiguousarray(geo.crop(dxp))


@cpu_kernel("MaxPoolGradGrad")
def _max_pool_grad_grad(node):
    pool = Pool(node)

    def max_pool_grad_grad(x, y, g):
        _check4(x, "orig_input")
        x, g = _to_nhwc(x, pool.fmt), _to_nhwc(g, pool.fmt)
        if g.shape != x.shape:
            raise ValueError(f"grad has shape {g.shape}, expected the input shape {x.shape}")
        return _from_nhwc(grad_at_first_max(x, g, pool.geometry(x.shape)), pool.fmt)
    return max_pool_grad_grad


def grad_at_first_max(x, g, geo):
    """MaxPoolGradGrad's rule (TF's): each output takes `g` at the first (row-major) maximum of
    its window (any number of spatial axes)."""
    index = argmax_taps(geo.pad(x, _lowest(x.dtype)), geo)
    gp = geo.pad(g)
    out = np.zeros(index.shape, dtype=g.dtype)
    for k, tap in enumerate(geo.taps()):
        np.copyto(out, gp[tap], where=index == k)
    return out
