"""Convolutions as im2col products in cache-sized image blocks, without padding copies.

The reference kernels (`conv_kernels.py`) pad the whole input with `np.pad` and copy a strided
window view of it into one [n*oh*ow, kh*kw*c] matrix. Here a block of a few images at a time is
copied into a buffer of about `BLOCK_FLOATS` floats that stays in the core's cache, and one BLAS
product runs on it:

    forward          out[block]  = cols(x[block]) @ W                    [rows, K] @ [K, out]
    filter gradient  dW         += cols(x[block])^T @ g[block]           [K, rows] @ [rows, out]
    input gradient   (stride 1)  a forward convolution of g with the filter flipped in space and
                     transposed in channels, padded so that the output has the input's size

Each filter tap (i, j) is one slice copy of the input into the buffer's tap column, covering only
the output positions whose window reads real input; the others read padding. A buffer belongs to
one thread and one geometry and is zeroed once when created: the copies always write the same
positions, so the padding positions stay zero in every later call and no padded input is built
(buffers above `MAX_KEPT_FLOATS`, one large image's im2col, are allocated zeroed per call instead).

With few input channels (c <= `MAX_PLANAR_CHANNELS`, e.g. a first layer on grey or RGB images) a
tap's copy moves only c floats per output position, to positions kh*kw*c floats apart: the copies
cost more than the product. There the block is built transposed instead, as a planar
[kh*kw*c, rows] matrix: each (tap, channel) row is one slice copy whose innermost run is a whole
output row (contiguous when the column stride is 1), and the products read it transposed:

    forward          out[block]  = cols^T @ W      (BLAS reads the planar matrix as its transpose)
    filter gradient  dW         += cols @ g[block]

(on the 64x28x28x1 input and 5x5x16 filter, one thread: the block copy 1.9x faster, forward
1.56 -> 1.07 ms, filter gradient 1.66 -> 1.08 ms; with 2 input channels about 2.9x faster).

Blocks are shared by the calling thread and the intra-op pool (`intra_op.py`), each block one
single-threaded BLAS call (`blas.py` owns the BLAS threads). The filter gradient's per-block partial
products are summed in block order, so the result does not depend on which thread computed which
block. The products are `np.dot` calls, not `np.matmul`: numpy 2.4's 2-D matmul keeps the GIL
when its output is small (measured: a [25, 16] output, a 5x5x1x16 filter gradient's per-block
partial, keeps it, a [32, 16] one does not), so two threads' products ran one after the other
(that filter gradient: 1.1 ms on 1 thread, 1.3-1.4 ms on 2; with `np.dot`, which releases the GIL
for every BLAS call, 0.7 ms on 2). Strided input gradients, and those of inputs with few
channels, keep the reference kernel (col2im), which these are tested against.

Registered as the "blocked" implementation of Conv2D and Conv2DBackpropFilter (any node: the
general one, chosen where no more preferred implementation applies, unknown shapes included) and
of Conv2DBackpropInput at stride 1 with `MIN_INPUT_GRAD_CHANNELS` input channels or more.
"""

import threading

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference.conv_geometry import (
    Conv,
    filter_grad_kernel,
    forward_kernel,
    input_grad_kernel,
    nhwc_shape,
)
from graphflow.kernels.cpu.threads import blas, intra_op

# Floats in one block's im2col buffer (1.2 MB of float32: in a core's L2 on the machines measured;
# measured 4096..1M floats on the CIFAR-shaped and MNIST-shaped convolutions: 128K-512K best).
BLOCK_FLOATS = 300_000
# The input gradient as a flipped convolution computes [rows, kh*kw*out] @ [kh*kw*out, c]: below
# this many input channels c that product is too thin (c = 1: a matrix-vector product, 6x slower on
# a 5x5x1x16 filter than the reference's [rows, out] @ [out, kh*kw*c] product and col2im).
MIN_INPUT_GRAD_CHANNELS = 8
MIN_BLOCKS = 8
# Inputs with at most this many channels are copied into planar (tap- and channel-major) blocks
# (measured at batch 64 on one thread, forward and filter gradient: 1.3-2.9x faster at 1-4 channels,
# 1.3x at 6, 1.05x at 8).
MAX_PLANAR_CHANNELS = 8
_MAX_BUFFERS = 8
# Buffers of more floats than this (one large image's im2col) are not kept between calls: each call
# allocates its own (np.zeros, calloc), so a thread never holds more than 8 x 16 MB.
MAX_KEPT_FLOATS = 4 << 20  # buffers one thread keeps (one per geometry and block size), oldest dropped

_local = threading.local()


class Window:
    """The geometry one im2col copy needs: input h, w; output oh, ow; taps; strides; dilations;
    top/left padding. (`conv_geometry.Geometry` has these fields too.)"""

    __slots__ = ("h", "w", "oh", "ow", "kh", "kw", "sh", "sw", "dh", "dw", "pt", "pl", "copies")

    def __init__(self, h, w, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl):
        self.h, self.w, self.oh, self.ow = h, w, oh, ow
        self.kh, self.kw, self.sh, self.sw = kh, kw, sh, sw
        self.dh, self.dw, self.pt, self.pl = dh, dw, pt, pl
        self.copies = _copies(self)

    @classmethod
    def of(cls, geo):
        return cls(geo.h, geo.w, geo.oh, geo.ow, geo.kh, geo.kw, geo.sh, geo.sw, geo.dh, geo.dw,
                   geo.pt, geo.pl)

    def key(self):
        return tuple(getattr(self, s) for s in self.__slots__[:-1])


def _span(out, size, k, s, d, pad):
    """For tap index k: the output range [o0, o1) that reads real input, and the input slice."""
    offset = k * d - pad
    if offset >= size:
        return None
    o0 = max(0, -(offset // s))  # first output whose read o*s + offset is >= 0
    o1 = min(out, (size - 1 - offset) // s + 1)  # outputs whose read is < size
    if o1 <= o0:
        return None
    start = o0 * s + offset
    return o0, o1, slice(start, (o1 - 1) * s + offset + 1, s)


def _copies(win):
    """The tap copies of one geometry: (i, j, (y0, y1), (x0, x1), rows slice, cols slice)."""
    copies = []
    for i in range(win.kh):
        rows = _span(win.oh, win.h, i, win.sh, win.dh, win.pt)
        if rows is None:
            continue
        for j in range(win.kw):
            cols = _span(win.ow, win.w, j, win.sw, win.dw, win.pl)
            if cols is None:
                continue
            copies.append((i, j, rows[0], rows[1], cols[0], cols[1], rows[2], cols[2]))
    return copies


def _buffer(win, nb, c, dtype, planar=False):
    """This thread's zero-bordered [nb, oh, ow, kh, kw, c] buffer for the geometry (planar:
    [kh, kw, c, nb, oh, ow])."""
    if planar:
        shape = (win.kh, win.kw, c, nb, win.oh, win.ow)
    else:
        shape = (nb, win.oh, win.ow, win.kh, win.kw, c)
    if nb * win.oh * win.ow * win.kh * win.kw * c > MAX_KEPT_FLOATS:
        return np.zeros(shape, dtype=dtype)
    buffers = getattr(_local, "buffers", None)
    if buffers is None:
        buffers = _local.buffers = {}
    key = (win.key(), nb, c, np.dtype(dtype).str, planar)
    buf = buffers.get(key)
    if buf is None:
        if len(buffers) >= _MAX_BUFFERS:
            buffers.pop(next(iter(buffers)))
        buf = np.zeros(shape, dtype=dtype)
        buffers[key] = buf
    return buf


def _fill(buf, x, lo, hi, copies):
    """Copy images lo..hi of NHWC `x` into the window buffer (padding positions are left alone)."""
    nb = hi - lo
    cols = buf[:nb]
    xs = x[lo:hi]
    for i, j, y0, y1, x0, x1, rows, src_cols in copies:
        cols[:, y0:y1, x0:x1, i, j, :] = xs[:, rows, src_cols, :]
    return cols.reshape(nb * buf.shape[1] * buf.shape[2], -1)


def _fill_planar(win, x, lo, hi, dtype):
    """Images lo..hi of NHWC `x` as a planar [kh*kw*c, (hi-lo)*oh*ow] matrix: one slice copy per
    tap and channel (padding positions are left alone). Each block size has its own buffer, so
    that a short last block is a contiguous matrix too."""
    nb = hi - lo
    c = x.shape[3]
    buf = _buffer(win, nb, c, dtype, planar=True)
    xs = x[lo:hi]
    for i, j, y0, y1, x0, x1, rows, src_cols in win.copies:
        tap = buf[i, j]
        for ch in range(c):
            tap[ch, :, y0:y1, x0:x1] = xs[:, rows, src_cols, ch]
    return buf.reshape(win.kh * win.kw * c, nb * win.oh * win.ow)


def _images_per_block(n, rows_per_image, k):
    """Images per block: a buffer of about BLOCK_FLOATS, and at least MIN_BLOCKS blocks so that the
    threads share the work evenly. Independent of the thread count: the filter gradient's sum of
    per-block partials is then the same whichever threads run."""
    nb = max(1, BLOCK_FLOATS // max(1, rows_per_image * k))
    return max(1, min(nb, -(-n // MIN_BLOCKS)))


def _share(count, work_on, threads, macs):
    """Run `work_on(k)` for k in range(count) on up to `threads` threads when worth it."""
    if threads <= 1 or count < 2 or macs < blas.PARALLEL_MIN_MACS or intra_op.in_worker() \
            or not blas.owns_blas_threads():
        for k in range(count):
            work_on(k)
        return
    pieces = intra_op.shared_iter(range(count))

    def work():
        for k in pieces:
            work_on(k)
    intra_op.POOL.run_shared(work, threads)


def conv2d(x, f, win, threads):
    """Forward convolution of NHWC `x` (any strides) with f [kh, kw, c, out]: NHWC output."""
    n, _, _, c = x.shape
    out_c = f.shape[3]
    fm = f.reshape(-1, out_c)
    k = fm.shape[0]
    dtype = np.result_type(x, f)
    out = np.empty((n, win.oh, win.ow, out_c), dtype=dtype)
    if out.size == 0 or n == 0:
        return out
    if k == 0:
        out.fill(0)
        return out
    if fm.dtype != dtype:
        fm = fm.astype(dtype)
    rows_per_image = win.oh * win.ow
    nb = _images_per_block(n, rows_per_image, k)
    starts = range(0, n, nb)

    planar = c <= MAX_PLANAR_CHANNELS

    def block(b):
        lo = starts[b]
        hi = min(n, lo + nb)
        if planar:
            cols = _fill_planar(win, x, lo, hi, dtype).T
        else:
            cols = _fill(_buffer(win, nb, c, dtype), x, lo, hi, win.copies)
        np.dot(cols, fm, out=out[lo:hi].reshape(-1, out_c))
    _share(len(starts), block, threads, n * rows_per_image * k * out_c)
    return out


def conv2d_backprop_filter(x, g, win, f_shape, threads):
    """Gradient of the filter [kh, kw, c, out] from NHWC input `x` and output gradient `g`."""
    n, _, _, c = x.shape
    out_c = f_shape[3]
    k = win.kh * win.kw * c
    dtype = np.result_type(x, g)
    if n == 0 or k == 0 or out_c == 0 or win.oh * win.ow == 0:
        return np.zeros(f_shape, dtype=dtype)
    rows_per_image = win.oh * win.ow
    nb = _images_per_block(n, rows_per_image, k)
    starts = range(0, n, nb)
    partials = np.empty((len(starts), k, out_c), dtype=dtype)

    planar = c <= MAX_PLANAR_CHANNELS

    def block(b):
        lo = starts[b]
        hi = min(n, lo + nb)
        if planar:
            cols_t = _fill_planar(win, x, lo, hi, dtype)
        else:
            cols_t = _fill(_buffer(win, nb, c, dtype), x, lo, hi, win.copies).T
        np.dot(cols_t, g[lo:hi].reshape(-1, out_c), out=partials[b])
    _share(len(starts), block, threads, n * rows_per_image * k * out_c)
    return np.add.reduce(partials, axis=0).reshape(f_shape)  # block order: thread-independent


def input_gradient_window(geo):
    """The geometry that computes a stride-1 convolution's input gradient as a forward convolution
    of the output gradient: the flipped filter's tap i reads g[y + pt - i*dh], i.e. the output
    gradient padded by (kh-1)*dh - pt on top (likewise left), and its output has the input's size."""
    return Window(geo.oh, geo.ow, geo.h, geo.w, geo.kh, geo.kw, 1, 1, geo.dh, geo.dw,
                  (geo.kh - 1) * geo.dh - geo.pt, (geo.kw - 1) * geo.dw - geo.pl)


def conv2d_backprop_input(g, f, geo, threads):
    """Gradient of a stride-1 convolution's NHWC input from the output gradient `g`."""
    flipped = np.ascontiguousarray(f[::-1, ::-1].transpose(0, 1, 3, 2))  # [kh, kw, out, c]
    return conv2d(g, flipped, input_gradient_window(geo), threads)


# ---------------------------------------------------------------- the registered kernels
class _Windows:
    """The Window of each geometry one kernel meets (made once per geometry)."""

    def __init__(self):
        self._of = {}

    def __call__(self, geo):
        win = self._of.get(geo.key)
        if win is None:
            if len(self._of) >= 16:
                self._of.clear()
            win = self._of[geo.key] = Window.of(geo)
        return win


def forward(threads):
    """conv2d(x, f, geo) on `threads` threads, the Window made once per geometry."""
    window = _Windows()
    return lambda x, f, geo: conv2d(x, f, window(geo), threads)


@cpu_kernel("Conv2D", name="blocked", preference=10)
def conv2d_blocked(node):
    return forward_kernel(node, forward(blas.session_threads(node)))


def input_grad_applies(node):
    """Stride 1 and at least MIN_INPUT_GRAD_CHANNELS input channels (known when the plan is
    built): the flipped convolution's product is wide enough."""
    conv = Conv(node)
    shape = node.out_shapes[0] if node.out_shapes else None
    if shape is None or len(shape) != 4:
        return False
    c = nhwc_shape(shape, conv.fmt)[3]
    return conv.strides == (1, 1) and c is not None and c >= MIN_INPUT_GRAD_CHANNELS


@cpu_kernel("Conv2DBackpropInput", name="blocked", preference=10, applies=input_grad_applies)
def conv2d_backprop_input_blocked(node):
    threads = blas.session_threads(node)
    return input_grad_kernel(node, lambda g, f, geo, n, c: conv2d_backprop_input(g, f, geo,
                                                                                 threads))


@cpu_kernel("Conv2DBackpropFilter", name="blocked", preference=10)
def conv2d_backprop_filter_blocked(node):
    threads = blas.session_threads(node)
    window = _Windows()
    return filter_grad_kernel(node, lambda x, g, geo, f_shape: conv2d_backprop_filter(
        x, g, window(geo), f_shape, threads))
