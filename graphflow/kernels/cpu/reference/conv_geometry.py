"""What every CPU implementation of the 2-D convolutions shares: the window geometry (`Geometry`:
output size, TF's padding, the strided window view), the data-format helpers (NCHW operands are
transposed to NHWC and back: every implementation computes in NHWC), a conv node's attributes
(`Conv`), the im2col / col2im steps of the numpy reference, the split of a batch over the intra-op
threads (`over_images`), and what a plan knows of a conv node's operands when it chooses an
implementation (`static_conv`: sizes and geometry from static shapes, or None).

The implementations (reference `conv_kernels.py`, `fused_conv_kernels.py`; `blocked/conv_*`,
`numba/jit_conv.py`, `onednn/dnnl_conv*.py`) build their kernels on these: `forward_kernel`,
`input_grad_kernel` and `filter_grad_kernel` check the operands, compute in NHWC and convert back,
around an implementation's NHWC function.
"""

import numpy as np
from numpy.lib.stride_tricks import as_strided

from graphflow.kernels.cpu.threads import blas, intra_op


class Geometry:
    """Output size and padding of one 2-D window op, for one input height/width."""

    __slots__ = ("h", "w", "kh", "kw", "sh", "sw", "dh", "dw", "oh", "ow", "pt", "pb", "pl", "pr",
                 "key")

    def __init__(self, h, w, kh, kw, sh, sw, dh, dw, padding):
        self.h, self.w, self.kh, self.kw = h, w, kh, kw
        self.sh, self.sw, self.dh, self.dw = sh, sw, dh, dw
        self.oh, self.pt, self.pb = axis(h, kh, sh, dh, padding)
        self.ow, self.pl, self.pr = axis(w, kw, sw, dw, padding)
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


def axis(size, k, s, d, padding):
    """(output size, padding before, padding after) of one spatial axis (TF's rules)."""
    effective = (k - 1) * d + 1
    if padding == "SAME":
        out = -(-size // s)
        total = max((out - 1) * s + effective - size, 0)
        return out, total // 2, total - total // 2
    if size < effective:
        raise ValueError(f"the window ({effective}) is larger than the input ({size}) with VALID "
                         "padding")
    return (size - effective) // s + 1, 0, 0


def hw(values, data_format):
    """The height and width entries of a 4-element attribute (strides, dilations, ksize)."""
    return (values[1], values[2]) if data_format == "NHWC" else (values[2], values[3])


def to_nhwc(x, data_format):
    return x if data_format == "NHWC" else x.transpose(0, 2, 3, 1)


def from_nhwc(x, data_format):
    return x if data_format == "NHWC" else np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def nhwc_shape(shape, data_format):
    return tuple(shape) if data_format == "NHWC" else (shape[0], shape[2], shape[3], shape[1])


def check4(x, what):
    if x.ndim != 4:
        raise ValueError(f"{what} must be 4-D, got shape {x.shape}")


def sizes(value, what):
    """A 4-element size operand (input_sizes, filter_sizes) as a tuple of ints."""
    found = tuple(int(v) for v in np.asarray(value).reshape(-1))
    if len(found) != 4:
        raise ValueError(f"{what} must have 4 elements, got {list(found)}")
    return found


def conv_macs(n, geo, in_channels, out_channels):
    """Multiply-adds of one convolution (and of each of its gradients)."""
    return n * geo.oh * geo.ow * geo.kh * geo.kw * in_channels * out_channels


class Conv:
    """Attributes of one conv node and the geometry for a given input/filter shape."""

    def __init__(self, node):
        a = node.attrs
        self.fmt = a.get("data_format") or "NHWC"
        self.strides = hw(a["strides"], self.fmt)
        self.dilations = hw(a.get("dilations") or [1, 1, 1, 1], self.fmt)
        self.padding = a["padding"]
        self._cache = {}

    def geometry(self, x_shape, f_shape):
        """The Geometry of an NHWC input shape and an HWIO filter shape (checked to agree)."""
        key = (x_shape, f_shape)
        geo = self._cache.get(key)
        if geo is None:
            _, h, w, c = x_shape
            kh, kw, ki, _ = f_shape
            if c != ki:
                raise ValueError(f"input has {c} channels but the filter expects {ki} "
                                 f"(filter shape {list(f_shape)})")
            geo = Geometry(h, w, kh, kw, *self.strides, *self.dilations, self.padding)
            if len(self._cache) >= 16:
                self._cache.clear()
            self._cache[key] = geo
        return geo

    def biased_geometry(self, x, f, bias):
        """The Geometry of a fused convolution of NHWC `x` by HWIO `f` plus `bias`, its operands
        checked: 4-D input and filter, a bias of the filter's output channels."""
        check4(x, "input")
        check4(f, "filter")
        geo = self.geometry(x.shape, f.shape)
        if bias.shape != f.shape[3:]:
            raise ValueError(f"bias of shape {bias.shape} does not match the {f.shape[3]} output "
                             "channels of the convolution")
        return geo

    def check_grad(self, g, geo, n, out_channels):
        want = (n, geo.oh, geo.ow, out_channels)
        if g.shape != want:
            raise ValueError(f"out_backprop has shape {g.shape}, expected {want} (NHWC)")


def im2col(xp, geo):
    """The [n*oh*ow, kh*kw*c] window matrix of a padded NHWC input (a copy)."""
    cols = geo.windows(xp)
    n = xp.shape[0]
    return cols.reshape(n * geo.oh * geo.ow, geo.kh * geo.kw * xp.shape[3])


def col2im_into(dxp, gcols, geo):
    """Adjoint of im2col: sum each tap's [n, oh, ow, c] slab back into the zeroed padded input."""
    n, c = dxp.shape[0], dxp.shape[3]
    gcols = gcols.reshape(n, geo.oh, geo.ow, geo.kh, geo.kw, c)
    for i in range(geo.kh):
        for j in range(geo.kw):
            dxp[geo.tap(i, j)] += gcols[:, :, :, i, j, :]


def over_images(block, n, geo, macs_per_row, threads):
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


# ---------------------------------------------------------------- kernels around NHWC functions
def forward_kernel(node, run):
    """Conv2D kernel of `node` computing `run(x, f, geo)` on the NHWC input (NHWC result)."""
    conv = Conv(node)

    def conv2d(x, f):
        check4(x, "input")
        check4(f, "filter")
        x = to_nhwc(x, conv.fmt)
        return from_nhwc(run(x, f, conv.geometry(x.shape, f.shape)), conv.fmt)
    return conv2d


def input_grad_kernel(node, run):
    """Conv2DBackpropInput kernel of `node` computing `run(g, f, geo, n, c)` on the NHWC output
    gradient (the NHWC input gradient)."""
    conv = Conv(node)

    def conv2d_backprop_input(input_sizes, f, g):
        check4(f, "filter")
        check4(g, "out_backprop")
        n, h, w, c = nhwc_shape(sizes(input_sizes, "input_sizes"), conv.fmt)
        g = to_nhwc(g, conv.fmt)
        geo = conv.geometry((n, h, w, c), f.shape)
        conv.check_grad(g, geo, n, f.shape[3])
        return from_nhwc(run(g, f, geo, n, c), conv.fmt)
    return conv2d_backprop_input


def filter_grad_kernel(node, run):
    """Conv2DBackpropFilter kernel of `node` computing `run(x, g, geo, f_shape)` on the NHWC input
    and output gradient (the HWIO filter gradient)."""
    conv = Conv(node)

    def conv2d_backprop_filter(x, filter_sizes, g):
        check4(x, "input")
        check4(g, "out_backprop")
        f_shape = sizes(filter_sizes, "filter_sizes")
        x, g = to_nhwc(x, conv.fmt), to_nhwc(g, conv.fmt)
        geo = conv.geometry(x.shape, f_shape)
        conv.check_grad(g, geo, x.shape[0], f_shape[3])
        return run(x, g, geo, f_shape)
    return conv2d_backprop_filter


# ---------------------------------------------------------------- what the plan knows
class StaticConv:
    """A conv node's operands as its static shapes give them: batch n, NHWC input (h, w, c),
    filter (kh, kw, c, oc), data format and geometry."""

    __slots__ = ("n", "c", "oc", "geo", "fmt", "f_shape", "x_shape")

    def __init__(self, x_shape, f_shape, geo, fmt):
        self.n, _, _, self.c = x_shape
        self.oc = f_shape[3]
        self.x_shape, self.f_shape, self.geo, self.fmt = x_shape, f_shape, geo, fmt

    @property
    def macs(self):
        return conv_macs(self.n, self.geo, self.c, self.oc)

    @property
    def out_shape(self):
        """The NHWC forward output's shape."""
        return (self.n, self.geo.oh, self.geo.ow, self.oc)

    @property
    def window_floats(self):
        """Elements of the forward im2col window matrix."""
        geo = self.geo
        return self.n * geo.oh * geo.ow * geo.kh * geo.kw * self.c


# where each op type's input (x) and filter shapes are: ("in" | "out", index)
_OPERANDS = {
    "Conv2D": (("in", 0), ("in", 1)),
    "FusedConv2D": (("in", 0), ("in", 1)),
    "Conv2DBackpropInput": (("out", 0), ("in", 1)),
    "Conv2DBackpropFilter": (("in", 0), ("out", 0)),
    "Conv2DBackpropFilterBias": (("in", 0), ("out", 0)),
    "Conv2DBackpropFilterBiasReluMask": (("in", 0), ("out", 0)),
    "Conv2DBackpropInputFilter": (("in", 3), ("in", 1)),
}


def _static(shapes, index):
    if shapes is None or index >= len(shapes):
        return None
    shape = shapes[index]
    if shape is None or len(shape) != 4 or any(d is None for d in shape):
        return None
    return tuple(int(d) for d in shape)


def static_conv(node):
    """The `StaticConv` of a conv node from its static shapes, or None where a dim is unknown or
    the shapes do not make a convolution (the kernel then raises its error at run time)."""
    where = _OPERANDS.get(node.type)
    if where is None:
        return None
    (xs, xi), (fs, fi) = where
    x = _static(node.in_shapes if xs == "in" else node.out_shapes, xi)
    f = _static(node.in_shapes if fs == "in" else node.out_shapes, fi)
    if x is None or f is None:
        return None
    try:
        conv = Conv(node)
        x = nhwc_shape(x, conv.fmt)
        geo = conv.geometry(x, f)
    except (ValueError, KeyError, TypeError, IndexError):
        return None
    return StaticConv(x, f, geo, conv.fmt)


def dtypes_are(node, dtype, indices):
    """Whether the node's inputs at `indices` all have numpy dtype `dtype`."""
    dtypes = node.in_dtypes or ()
    return all(i < len(dtypes) and np.dtype(dtypes[i]) == dtype for i in indices)
