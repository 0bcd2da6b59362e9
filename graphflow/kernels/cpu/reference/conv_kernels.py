"""numpy kernels for convolution and pooling (NHWC internally; NCHW is transposed in and out,
except for the pools that `jit_pool_nchw.py` runs on the NCHW arrays).

The convolutions here are the reference implementations (the definition every other one is tested
against; the geometry and layout helpers are `conv_geometry.py`'s). conv2d is im2col + one matmul:
a zero-copy strided view of the padded input as [n, oh, ow, kh, kw, c] windows, reshaped to a
[n*oh*ow, kh*kw*c] matrix times the [kh*kw*c, out] filter. The backprop ops reuse the same
geometry: the filter gradient is cols^T @ grad, the input gradient is grad @ filter^T scattered
back (col2im) with one strided slice-add per filter tap. The other implementations register
themselves in their own modules and the plan chooses one per node: blocked im2col
(`blocked/conv_blocked.py`), the gathered product of small inputs (`blocked/conv_gather.py`), tap
products for few channels (`blocked/conv_taps.py`) and oneDNN's primitives (`onednn/dnnl_conv.py`,
`onednn/dnnl_conv_grads.py`).
Pooling loops over the kh*kw window taps, each a vectorized op over the whole batch; with numba
installed, MaxPool and MaxPoolGrad run as compiled loops instead (`jit_pool.py`; NCHW ones
without transposes: `jit_pool_nchw.py`), these numpy kernels being the reference (AvgPool and
AvgPoolGrad: `avg_pool_kernels.py`). With the optional oneDNN library MaxPoolGrad runs its
primitives (`dnnl_pool.py`).
"""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel

# the pooling section's compiled loops and oneDNN primitives (the convolutions import none)
from graphflow.kernels.cpu.numba import jit_pool, jit_pool_nchw
from graphflow.kernels.cpu.onednn import dnnl_pool
from graphflow.kernels.cpu.reference import pool_records
from graphflow.kernels.cpu.reference.conv_geometry import (
    Geometry,
    col2im_into,
    filter_grad_kernel,
    forward_kernel,
    im2col,
    input_grad_kernel,
    over_images,
)
from graphflow.kernels.cpu.reference.conv_geometry import axis as _axis  # noqa: F401 (conv3d's)
from graphflow.kernels.cpu.reference.conv_geometry import check4 as _check4
from graphflow.kernels.cpu.reference.conv_geometry import from_nhwc as _from_nhwc
from graphflow.kernels.cpu.reference.conv_geometry import hw as _hw
from graphflow.kernels.cpu.reference.conv_geometry import sizes as _sizes  # noqa: F401 (pools')
from graphflow.kernels.cpu.reference.conv_geometry import to_nhwc as _to_nhwc
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
