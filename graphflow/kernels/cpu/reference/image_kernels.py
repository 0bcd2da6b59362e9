"""numpy kernels for the resize ops. Each resize is separable: out = Wy . image . Wx^T per
batch and channel, with interpolation matrices Wy [out_h, in_h], Wx [out_w, in_w] built from TF's
source-position rules (see ops/image_ops.py); the backprop ops apply the transposed matrices."""

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


@cpu_kernel("ResizeBilinearGrad")
def _resize_bilinear_grad(node):
    align, half = node.attrs["align_corners"], node.attrs["half_pixel_centers"]

    def resize_bilinear_grad(grads, original):
        _check4(grads, "grads")
        wy = bilinear_matrix(original.shape[1], grads.shape[1], align, half)
        wx = bilinear_matrix(original.shape[2], grads.shape[2], align, half)
        return _apply(grads, wy.T, wx.T, original.dtype)
    return resize_bilinear_grad


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
