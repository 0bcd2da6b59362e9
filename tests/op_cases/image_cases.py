"""Cases for the resize ops (bilinear, nearest, bicubic, area) and their backprop ops. The
references are written per output pixel from TF's source-position formulas (independent of the
kernels' interpolation matrices); the values are compared with TensorFlow in
tests/ops/test_image_ops.py."""

import numpy as np

import graphflow as tf
from graphflow.ops import image_ops
from tests.op_cases import OpCase, rand


def _scale(n_in, n_out, align):
    return (n_in - 1) / (n_out - 1) if align and n_out > 1 else n_in / n_out


def _bilinear_ref(x, size, align=False, half=False):
    n, h, w, c = x.shape
    oh, ow = size
    out = np.zeros((n, oh, ow, c))
    sy, sx = _scale(h, oh, align), _scale(w, ow, align)
    for i in range(oh):
        for j in range(ow):
            py = (i + 0.5) * sy - 0.5 if half else i * sy
            px = (j + 0.5) * sx - 0.5 if half else j * sx
            y0, x0 = int(np.floor(py)), int(np.floor(px))
            dy, dx = py - y0, px - x0
            ya, yb = max(y0, 0), min(int(np.ceil(py)), h - 1)
            xa, xb = max(x0, 0), min(int(np.ceil(px)), w - 1)
            top = x[:, ya, xa] * (1 - dx) + x[:, ya, xb] * dx
            bottom = x[:, yb, xa] * (1 - dx) + x[:, yb, xb] * dx
            out[:, i, j] = top * (1 - dy) + bottom * dy
    return out.astype(np.float32)


def _nearest_ref(x, size, align=False, half=False):
    n, h, w, c = x.shape
    oh, ow = size
    sy, sx = _scale(h, oh, align), _scale(w, ow, align)

    def src(i, s, limit):
        if half:
            return min(int(np.floor((i + 0.5) * s)), limit - 1)
        return min(int(np.floor(i * s + 0.5)) if align else int(np.floor(i * s)), limit - 1)

    out = np.zeros((n, oh, ow, c), x.dtype)
    for i in range(oh):
        for j in range(ow):
            out[:, i, j] = x[:, src(i, sy, h), src(j, sx, w)]
    return out


def _adjoint(forward_ref, in_shape, size, **kw):
    """The transpose of a linear resize, column by column: the backprop ops' reference."""
    def grad_ref(g):
        dx = np.zeros(in_shape)
        for idx in np.ndindex(*in_shape[1:3]):
            e = np.zeros((1,) + in_shape[1:3] + (1,))
            e[(0,) + idx + (0,)] = 1
            col = forward_ref(e, size, **kw).astype(np.float64)[0, :, :, 0]
            dx[:, idx[0], idx[1], :] = np.einsum("nijc,ij->nc", g, col)
        return dx
    return grad_ref


def _cubic(t, a):
    t = abs(t)
    if t <= 1:
        return ((a + 2) * t - (a + 3)) * t * t + 1
    return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a if t < 2 else 0.0


def _bicubic_ref(x, size, align=False, half=False):
    """TF's bicubic per output pixel (exact cubic weights: the cases' source positions fall on
    TF's 1/1024 table steps, where its table is exact)."""
    n, h, w, c = x.shape
    a = -0.5 if half else -0.75

    def taps(i, scale, limit):
        pos = (i + 0.5) * scale - 0.5 if half else i * scale
        base = int(np.floor(pos))
        out = [(min(max(base + k, 0), limit - 1), _cubic(pos - base - k, a), 0 <= base + k < limit)
               for k in (-1, 0, 1, 2)]
        if half:  # Keys: outside taps dropped, the rest renormalised
            total = sum(wt for _, wt, inside in out if inside)
            out = [(j, wt / total if inside else 0.0, inside) for j, wt, inside in out]
        return [(j, wt) for j, wt, _ in out]

    sy, sx = _scale(h, size[0], align), _scale(w, size[1], align)
    out = np.zeros((n,) + tuple(size) + (c,))
    for i in range(size[0]):
        for j in range(size[1]):
            for yi, wy in taps(i, sy, h):
                for xj, wx in taps(j, sx, w):
                    out[:, i, j] += wy * wx * x[:, yi, xj]
    return out.astype(np.float32)


def _area_ref(x, size, align=False):
    """Each output pixel: the input pixels it covers, weighted by the overlap of their spans."""
    n, h, w, c = x.shape
    sy, sx = _scale(h, size[0], align), _scale(w, size[1], align)

    def cover(i, scale, limit):
        lo, hi = i * scale, (i + 1) * scale
        return [(min(k, limit - 1), (min(k + 1, hi) - max(k, lo)) / scale)
                for k in range(int(np.floor(lo)), int(np.ceil(hi)))]

    out = np.zeros((n,) + tuple(size) + (c,))
    for i in range(size[0]):
        for j in range(size[1]):
            for yi, wy in cover(i, sy, h):
                for xj, wx in cover(j, sx, w):
                    out[:, i, j] += wy * wx * x[:, yi, xj]
    return out.astype(np.float32)


_IMG = rand(2, 3, 4, 2, seed=11)

CASES = [
    OpCase("ResizeBilinear", lambda x: tf.image.resize_bilinear(x, [5, 3]), [_IMG],
           lambda x: _bilinear_ref(x, (5, 3)), rtol=1e-5, atol=1e-5, grad_atol=1e-3,
           grad_rtol=1e-3),
    OpCase("ResizeBilinear", lambda x: tf.image.resize_bilinear(x, [4, 7], align_corners=True),
           [_IMG], lambda x: _bilinear_ref(x, (4, 7), align=True), rtol=1e-5, atol=1e-5,
           grad_atol=1e-3, grad_rtol=1e-3, name="ResizeBilinear[align_corners]"),
    OpCase("ResizeBilinear", lambda x: tf.image.resize_bilinear(x, [6, 2], half_pixel_centers=True),
           [_IMG], lambda x: _bilinear_ref(x, (6, 2), half=True), rtol=1e-5, atol=1e-5,
           grad_atol=1e-3, grad_rtol=1e-3, name="ResizeBilinear[half_pixel_centers]"),
    OpCase("ResizeBilinear", lambda x: tf.image.resize_bilinear(x, [2, 3]),
           [np.arange(24, dtype=np.uint8).reshape(1, 4, 3, 2)], lambda x: _bilinear_ref(x, (2, 3)),
           grad=False, name="ResizeBilinear[uint8]"),
    OpCase("ResizeBilinearGrad", lambda g, x: image_ops.resize_bilinear_grad(
        tf.cast(g, tf.float32), tf.cast(x, tf.float32), half_pixel_centers=True), [rand(2, 5, 3, 2), _IMG],
        lambda g, x: _adjoint(_bilinear_ref, x.shape, (5, 3), half=True)(g), rtol=1e-5,
        atol=1e-5, grad_inputs=[0], grad_atol=1e-3, grad_rtol=1e-3),
    # sizes whose source positions fall on TF's 1/1024 steps (the ONNX export's cubic is exact),
    # upsampling (onnxruntime's cubic resize does not downsample; test_image_ops.py does, vs TF)
    OpCase("ResizeBicubic", lambda x: tf.image.resize_bicubic(x, [6, 8]), [_IMG],
           lambda x: _bicubic_ref(x, (6, 8)), rtol=1e-5, atol=1e-5, grad_atol=1e-3,
           grad_rtol=1e-3),
    OpCase("ResizeBicubic", lambda x: tf.image.resize_bicubic(x, [5, 7], align_corners=True),
           [_IMG], lambda x: _bicubic_ref(x, (5, 7), align=True), rtol=1e-5, atol=1e-5,
           grad_atol=1e-3, grad_rtol=1e-3, name="ResizeBicubic[align_corners]"),
    OpCase("ResizeBicubic", lambda x: tf.image.resize_bicubic(x, [6, 8], half_pixel_centers=True),
           [_IMG], lambda x: _bicubic_ref(x, (6, 8), half=True), rtol=1e-5, atol=1e-5,
           grad_atol=1e-3, grad_rtol=1e-3, name="ResizeBicubic[half_pixel_centers]"),
    OpCase("ResizeBicubic", lambda x: tf.image.resize_bicubic(x, [8, 6]),
           [np.arange(24, dtype=np.uint8).reshape(1, 4, 3, 2)], lambda x: _bicubic_ref(x, (8, 6)),
           rtol=1e-5, atol=1e-4, grad=False, name="ResizeBicubic[uint8]"),
    OpCase("ResizeBicubicGrad", lambda g, x: image_ops.resize_bicubic_grad(
        tf.cast(g, tf.float32), tf.cast(x, tf.float32), half_pixel_centers=True),
        [rand(2, 6, 8, 2), _IMG],
        lambda g, x: _adjoint(_bicubic_ref, x.shape, (6, 8), half=True)(g), rtol=1e-5,
        atol=1e-5, grad_inputs=[0], grad_atol=1e-3, grad_rtol=1e-3),
    OpCase("ResizeArea", lambda x: tf.image.resize_area(x, [2, 3]), [_IMG],
           lambda x: _area_ref(x, (2, 3)), rtol=1e-5, atol=1e-5, grad=False),
    OpCase("ResizeArea", lambda x: tf.image.resize_area(x, [5, 7], align_corners=True), [_IMG],
           lambda x: _area_ref(x, (5, 7), align=True), rtol=1e-5, atol=1e-5, grad=False,
           name="ResizeArea[align_corners]"),
    OpCase("ResizeNearestNeighbor", lambda x: tf.image.resize_nearest_neighbor(x, [5, 7]), [_IMG],
           lambda x: _nearest_ref(x, (5, 7))),
    OpCase("ResizeNearestNeighbor", lambda x: tf.image.resize_nearest_neighbor(
        x, [2, 3], align_corners=True), [_IMG], lambda x: _nearest_ref(x, (2, 3), align=True),
        name="ResizeNearestNeighbor[align_corners]"),
    OpCase("ResizeNearestNeighbor", lambda x: tf.image.resize_nearest_neighbor(
        x, [5, 3], half_pixel_centers=True), [_IMG], lambda x: _nearest_ref(x, (5, 3), half=True),
        name="ResizeNearestNeighbor[half_pixel_centers]"),
    OpCase("ResizeNearestNeighborGrad", lambda g: image_ops.resize_nearest_neighbor_grad(g, [3, 4]),
           [rand(2, 5, 7, 2)], _adjoint(_nearest_ref, (2, 3, 4, 2), (5, 7))),
]
