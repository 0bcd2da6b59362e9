"""numpy kernels for the resize ops. Each resize is separable: out = Wy . image . Wx^T per
batch and channel, with interpolation matrices Wy [out_h, in_h], Wx [out_w, in_w] built from TF's
source-position rules (see ops/image_ops.py); the backprop ops apply the transposed matrices.
Bicubic weights come, as in TF's kernel, from a table of the cubic at 1024 steps between two
pixels (the fraction rounded to the nearest step); area weights are each input pixel's overlap
with the output pixel's span, over the span's length."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


def _scale(in_size, out_size, align_corners):
    if align_corners and out_size > 1:
        return (in_size - 1) / (out_size - 1)
    return in_size / out_size


def bilinear_matrix(in_size, out_size, align_corners, half_pixel_centers):
    scale = np.float32(_scale(in_size, out_size, align_corners))
    i = np.arange(out_size, dtype=np.float32)
    pos = (i + np.float32(0.5)) * scale - np.float32(0.5) if half_pixel_centers else i * scale
    floor = np.floor(pos)
    lower = np.maximum(floor, 0).astype(np.int64)
    upper = np.minimum(np.ceil(pos), in_size - 1).astype(np.int64)
    lerp = (pos - floor).astype(np.float32)
    w = np.zeros((out_size, in_size), np.float32)
    rows = np.arange(out_size)
    np.add.at(w, (rows, lower), 1 - lerp)
    np.add.at(w, (rows, upper), lerp)
    return w


def nearest_matrix(in_size, out_size, align_corners, half_pixel_centers):
    scale = np.float32(_scale(in_size, out_size, align_corners))
    i = np.arange(out_size, dtype=np.float32)
    if half_pixel_centers:
        src = np.floor((i + np.float32(0.5)) * scale)
    elif align_corners:
        src = np.floor(i * scale + np.float32(0.5))  # TF's roundf (positions are >= 0)
    else:
        src = np.floor(i * scale)
    src = np.minimum(src.astype(np.int64), in_size - 1)
    w = np.zeros((out_size, in_size), np.float32)
    w[np.arange(out_size), src] = 1
    return w


_TABLE_SIZE = 1024


def _cubic_table(a):
    """TF's table: [k, 0] the cubic's weight at distance k / 1024 (|x| <= 1), [k, 1] at
    1 + k / 1024 (1 < |x| <= 2), computed in float64 and stored as float32, as TF does."""
    x = np.arange(_TABLE_SIZE + 1) / _TABLE_SIZE
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x = x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.stack([near, far], axis=1).astype(np.float32)


_TABLES = {}


def bicubic_matrix(in_size, out_size, align_corners, half_pixel_centers):
    keys = bool(half_pixel_centers)  # TF: Keys' a = -0.5 with half-pixel centers, else -0.75
    if keys not in _TABLES:
        _TABLES[keys] = _cubic_table(-0.5 if keys else -0.75)
    table = _TABLES[keys]
    scale = np.float32(_scale(in_size, out_size, align_corners))
    i = np.arange(out_size, dtype=np.float32)
    pos = (i + np.float32(0.5)) * scale - np.float32(0.5) if half_pixel_centers else i * scale
    floor = np.floor(pos)
    step = np.rint((pos - floor) * np.float32(_TABLE_SIZE)).astype(np.int64)  # lrintf
    weights = np.stack([table[step, 1], table[step, 0], table[_TABLE_SIZE - step, 0],
                        table[_TABLE_SIZE - step, 1]], axis=1)  # taps at floor - 1 ... floor + 2
    taps = floor.astype(np.int64)[:, None] + np.arange(-1, 3)
    index = np.clip(taps, 0, in_size - 1)
    if keys:  # taps outside the image weigh 0, the others are renormalised to sum 1
        weights = np.where(index == taps, weights, np.float32(0))
        total = weights.sum(axis=1, keepdims=True, dtype=np.float32)
        ok = np.abs(total) >= 1000 * np.finfo(np.float32).tiny
        weights = np.where(ok, weights * (np.float32(1) / np.where(ok, total, 1)), weights)
    w = np.zeros((out_size, in_size), np.float32)
    np.add.at(w, (np.repeat(np.arange(out_size), 4), index.reshape(-1)), weights.reshape(-1))
    return w


def area_matrix(in_size, out_size, align_corners, half_pixel_centers=False):
    scale = np.float32(_scale(in_size, out_size, align_corners))
    o = np.arange(out_size, dtype=np.float32)
    start, end = o * scale, (o + np.float32(1)) * scale
    pixels = np.arange(int(np.ceil(end[-1])) if out_size else 0, dtype=np.float32)
    overlap = np.minimum(pixels[None, :] + 1, end[:, None]) - np.maximum(pixels[None, :],
                                                                         start[:, None])
    overlap = np.maximum(overlap, 0).astype(np.float32)
    w = np.zeros((out_size, in_size), np.float32)
    # pixels past the last one (align_corners spans reach beyond it) read the last pixel
    np.add.at(w, (slice(None), np.minimum(np.arange(pixels.size), in_size - 1)), overlap)
    return w / scale


def _apply(x, wy, wx, dtype):
    """out[n, o, p, c] = sum_h,w wy[o, h] x[n, h, w, c] wx[p, w]."""
    work = np.float64 if dtype == np.float64 else np.float32
    tmp = np.einsum("oh,nhwc->nowc", wy.astype(work), x.astype(work, copy=False))
    return np.einsum("nowc,pw->nopc", tmp, wx.astype(work)).astype(dtype, copy=False)


def _sizes(size):
    h, w = (int(v) for v in np.asarray(size).reshape(-1))
    if h <= 0 or w <= 0:
        raise ValueError(f"size must be positive, got [{h}, {w}]")
    return h, w


def _check4(x, what):
    if x.ndim != 4:
        raise ValueError(f"{what} must be 4-D, got shape {x.shape}")


def _resize_kernel(matrix, out_dtype_of):
    def build(node):
        align, half = node.attrs["align_corners"], node.attrs["half_pixel_centers"]

        def resize(images, size):
            _check4(images, "images")
            oh, ow = _sizes(size)
            wy = matrix(images.shape[1], oh, align, half)
            wx = matrix(images.shape[2], ow, align, half)
            return _apply(images, wy, wx, out_dtype_of(node, images))
        return resize
    return build


cpu_kernel("ResizeBilinear")(_resize_kernel(bilinear_matrix, lambda node, x: np.float32))
cpu_kernel("ResizeNearestNeighbor")(_resize_kernel(nearest_matrix, lambda node, x: x.dtype))
cpu_kernel("ResizeBicubic")(_resize_kernel(bicubic_matrix, lambda node, x: np.float32))


@cpu_kernel("ResizeArea")
def _resize_area(node):
    align = node.attrs["align_corners"]

    def resize_area(images, size):
        _check4(images, "images")
        oh, ow = _sizes(size)
        wy = area_matrix(images.shape[1], oh, align)
        wx = area_matrix(images.shape[2], ow, align)
        return _apply(images, wy, wx, np.float32)
    return resize_area


def _resize_grad_kernel(matrix):
    def build(node):
        align, half = node.attrs["align_corners"], node.attrs["half_pixel_centers"]

        def resize_grad(grads, original):
            _check4(grads, "grads")
            wy = matrix(original.shape[1], grads.shape[1], align, half)
            wx = matrix(original.shape[2], grads.shape[2], align, half)
            return _apply(grads, wy.T, wx.T, original.dtype)
        return resize_grad
    return build


cpu_kernel("ResizeBilinearGrad")(_resize_grad_kernel(bilinear_matrix))
cpu_kernel("ResizeBicubicGrad")(_resize_grad_kernel(bicubic_matrix))


@cpu_kernel("ResizeNearestNeighborGrad")
def _resize_nearest_grad(node):
    align, half = node.attrs["align_corners"], node.attrs["half_pixel_centers"]

    def resize_nearest_neighbor_grad(grads, size):
        _check4(grads, "grads")
        ih, iw = _sizes(size)
        wy = nearest_matrix(ih, grads.shape[1], align, half)
        wx = nearest_matrix(iw, grads.shape[2], align, half)
        return _apply(grads, wy.T, wx.T, grads.dtype)
    return resize_nearest_neighbor_grad
