"""numpy reference kernels of the 2-D pools: MaxPool, MaxPoolGrad, MaxPoolGradGrad, AvgPool and
AvgPoolGrad (NHWC internally; NCHW is transposed in and out). They are the definition the other
implementations are tested against: the compiled loops (`numba/jit_pool_kernels.py`, registered
as "numba") and oneDNN's MaxPoolGrad (`onednn/dnnl_pool.py`, "onednn"), chosen when the plan is
built. The helpers the predicates of those implementations read (the node's NHWC input shape, its
geometry when the shape is static) are here too, public.

Pooling loops over the kh*kw window taps, each a vectorized op over the whole batch. Padding never
wins a max (it is the dtype's lowest value); NaN propagates in the forward max; the gradient goes to
the first maximum of the window in row-major tap order (a later tap must be strictly greater), as
TF1's CPU kernel routes it. The average divides each window's sum by its number of in-bounds
elements (TF's rule for SAME padding).
"""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference.conv_geometry import Geometry
from graphflow.kernels.cpu.reference.conv_geometry import check4 as _check4
from graphflow.kernels.cpu.reference.conv_geometry import from_nhwc as _from_nhwc
from graphflow.kernels.cpu.reference.conv_geometry import hw as _hw
from graphflow.kernels.cpu.reference.conv_geometry import sizes as _sizes
from graphflow.kernels.cpu.reference.conv_geometry import to_nhwc as _to_nhwc


class Pool:
    """Attributes of one pooling node and the geometry for a given NHWC input shape."""

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

    def nhwc(self, shape):
        """The NHWC form of a shape in this pool's layout."""
        if self.fmt == "NHWC":
            return tuple(shape)
        n, c, h, w = shape
        return (n, h, w, c)

    def check_grad(self, g, geo, n, c, what="grad"):
        want = (n, geo.oh, geo.ow, c)
        if g.shape != want:
            raise ValueError(f"{what} has shape {g.shape}, expected {want} (NHWC)")


# ---------------------------------------------------------------- what predicates read
def node_input_shape(node):
    """The NHWC shape the pool of `node` reads (None for unknown dims): its first input's, the
    forward input, where that is 4-D, else its output's (AvgPoolGrad, whose first input is the
    forward input's shape vector); None when the rank is unknown or not 4."""
    for shapes in (node.in_shapes, node.out_shapes):
        shape = shapes[0] if shapes else None
        if shape is not None and len(shape) == 4:
            return Pool(node).nhwc(shape)
    return None


def node_geometry(node):
    """(NHWC input shape, Geometry) of `node` when its height and width are static, else None."""
    shape = node_input_shape(node)
    if shape is None or shape[1] is None or shape[2] is None:
        return None
    try:
        return shape, Pool(node).geometry(shape)
    except ValueError:  # a window larger than the input: the reference raises it at run time
        return None


def per_image_size(shape):
    """h * w * c of an NHWC shape, None when one of them is unknown."""
    if None in shape[1:]:
        return None
    return shape[1] * shape[2] * shape[3]


# ---------------------------------------------------------------- window taps
def lowest(dtype):
    """The value padding takes in a max: never a window's maximum."""
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


def window_counts(geo, dtype):
    """[oh, ow] number of in-bounds (non-padding) elements of each window, in `dtype`."""
    def counts(out, k, s, pad, size):
        start = np.arange(out) * s - pad
        return np.minimum(start + k, size) - np.maximum(start, 0)
    return np.multiply.outer(counts(geo.oh, geo.kh, geo.sh, geo.pt, geo.h),
                             counts(geo.ow, geo.kw, geo.sw, geo.pl, geo.w)).astype(dtype)


# ---------------------------------------------------------------- max pooling
@cpu_kernel("MaxPool")
def _max_pool(node):
    pool = Pool(node)

    def max_pool(x):
        _check4(x, "input")
        x = _to_nhwc(x, pool.fmt)
        geo = pool.geometry(x.shape)
        out = reduce_taps(geo.pad(x, lowest(x.dtype)), geo, np.maximum)
        return _from_nhwc(out, pool.fmt)
    return max_pool


def tiled_max_pool_grad(x, y, g, geo):
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


def max_pool_grad_nhwc(pool, x, y, g):
    """MaxPoolGrad of NHWC arrays (FusedMaxPoolGradReluMask's reference runs it too)."""
    geo = pool.geometry(x.shape)
    pool.check_grad(g, geo, x.shape[0], x.shape[3])
    if geo.tiles_input:
        pool.check_grad(y, geo, x.shape[0], x.shape[3], what="orig_output")
        return tiled_max_pool_grad(x, y, g, geo)
    index = argmax_taps(geo.pad(x, lowest(x.dtype)), geo)
    dxp = np.zeros(geo.padded_shape(x.shape[0], x.shape[3]), dtype=g.dtype)
    for k, tap in enumerate(geo.taps()):
        dxp[tap] += np.where(index == k, g, 0)
    return np.ascontiguousarray(geo.crop(dxp))


def max_pool_grad(pool):
    """The reference MaxPoolGrad of `pool`'s layout, as a function of (x, y, g)."""
    def max_pool_grad(x, y, g):
        _check4(x, "orig_input")
        x, y, g = _to_nhwc(x, pool.fmt), _to_nhwc(y, pool.fmt), _to_nhwc(g, pool.fmt)
        return _from_nhwc(max_pool_grad_nhwc(pool, x, y, g), pool.fmt)
    return max_pool_grad


@cpu_kernel("MaxPoolGrad")
def _max_pool_grad(node):
    return max_pool_grad(Pool(node))


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
    index = argmax_taps(geo.pad(x, lowest(x.dtype)), geo)
    gp = geo.pad(g)
    out = np.zeros(index.shape, dtype=g.dtype)
    for k, tap in enumerate(geo.taps()):
        np.copyto(out, gp[tap], where=index == k)
    return out


# ---------------------------------------------------------------- average pooling
@cpu_kernel("AvgPool")
def _avg_pool(node):
    pool = Pool(node)

    def avg_pool(x):
        _check4(x, "input")
        x = _to_nhwc(x, pool.fmt)
        geo = pool.geometry(x.shape)
        out = reduce_taps(geo.pad(x), geo, np.add)
        out /= window_counts(geo, x.dtype)[:, :, None]
        return _from_nhwc(out, pool.fmt)
    return avg_pool


def avg_pool_grad_sizes(pool, orig_input_shape, g):
    """(the NHWC input shape, its geometry) of AvgPoolGrad's `orig_input_shape` value."""
    _check4(g, "grad")
    sizes = _sizes(orig_input_shape, "orig_input_shape")
    shape = pool.nhwc(sizes)
    return shape, pool.geometry(shape)


@cpu_kernel("AvgPoolGrad")
def _avg_pool_grad(node):
    pool = Pool(node)

    def avg_pool_grad(orig_input_shape, g):
        (n, h, w, c), geo = avg_pool_grad_sizes(pool, orig_input_shape, g)
        g = _to_nhwc(g, pool.fmt)
        pool.check_grad(g, geo, n, c)
        share = g / window_counts(geo, g.dtype)[:, :, None]
        dxp = np.zeros(geo.padded_shape(n, c), dtype=g.dtype)
        for tap in geo.taps():
            dxp[tap] += share
        return _from_nhwc(np.ascontiguousarray(geo.crop(dxp)), pool.fmt)
    return avg_pool_grad
