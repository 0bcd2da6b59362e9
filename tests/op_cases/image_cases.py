"""Cases for the resize ops and their backprop ops. The references are written per output pixel
from TF's source-position formulas (independent of the kernels' interpolation matrices); the
values are compared with TensorFlow in tests/ops/test_image_ops.py."""

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
