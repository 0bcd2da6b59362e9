"""numpy kernels for CropAndResize and its two gradients (ops/detection_ops.py), vectorised
over boxes, rows, columns and channels. Positions follow TF's kernel in float32: for a box
(y1, x1, y2, x2) and crop height ch > 1, row y samples in_y = y1 (H - 1) + y (y2 - y1) (H - 1) /
(ch - 1) (ch == 1: the box's centre); positions outside [0, H - 1] give extrapolation_value (and
no gradient). Bilinear blends the four pixels around the position, nearest takes the rounded
one (half away from zero)."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel

_F32 = np.float32


def _positions(lo, hi, size, crop):
    """[boxes, crop] float32 source positions along one axis, as TF computes them."""
    n1 = _F32(size - 1)
    if crop > 1:
        scale = (hi - lo) * n1 / _F32(crop - 1)
        return lo[:, None] * n1 + np.arange(crop, dtype=_F32)[None, :] * scale[:, None]
    return np.broadcast_to((_F32(0.5) * (lo + hi) * n1)[:, None], (lo.size, 1))


def _sampling(boxes, box_ind, image_shape, crop_h, crop_w):
    batch, height, width = image_shape[:3]
    boxes = boxes.astype(_F32, copy=False)
    if boxes.ndim != 2 or boxes.shape[1] != 4 or box_ind.shape != (boxes.shape[0],):
        raise ValueError(f"boxes must be [num_boxes, 4] and box_ind [num_boxes], got shapes "
                         f"{boxes.shape} and {box_ind.shape}")
    if box_ind.size and (box_ind.min() < 0 or box_ind.max() >= batch):
        raise ValueError(f"box_ind has values outside [0, {batch})")
    in_y = _positions(boxes[:, 0], boxes[:, 2], height, crop_h)
    in_x = _positions(boxes[:, 1], boxes[:, 3], width, crop_w)
    ok_y = (in_y >= 0) & (in_y <= _F32(height - 1))
    ok_x = (in_x >= 0) & (in_x <= _F32(width - 1))
    return in_y, in_x, ok_y, ok_x


def _corners(pos, limit):
    """floor and ceil indices (clamped for the positions outside, which are masked) and the
    fraction past the floor."""
    lo = np.floor(pos)
    frac = (pos - lo).astype(_F32)
    return (np.clip(lo, 0, limit - 1).astype(np.int64),
            np.clip(np.ceil(pos), 0, limit - 1).astype(np.int64), frac)


def _nearest(pos, limit):
    return np.clip(np.where(pos < 0, np.ceil(pos - _F32(0.5)), np.floor(pos + _F32(0.5))), 0,
                   limit - 1).astype(np.int64)  # roundf: half away from zero


def crop_and_resize(image, boxes, box_ind, crop_size, method, extrapolation):
    crop_h, crop_w = (int(v) for v in np.asarray(crop_size).reshape(-1))
    if crop_h <= 0 or crop_w <= 0:
        raise ValueError(f"crop_size must be positive, got [{crop_h}, {crop_w}]")
    if image.ndim != 4:
        raise ValueError(f"image must be 4-D, got shape {image.shape}")
    in_y, in_x, ok_y, ok_x = _sampling(boxes, box_ind, image.shape, crop_h, crop_w)
    b = box_ind.astype(np.int64)[:, None, None]
    if method == "nearest":
        ys, xs = _nearest(in_y, image.shape[1]), _nearest(in_x, image.shape[2])
        out = image[b, ys[:, :, None], xs[:, None, :]].astype(_F32)
    else:
        top, bottom, dy = _corners(in_y, image.shape[1])
        left, right, dx = _corners(in_x, image.shape[2])
        t, bo = top[:, :, None], bottom[:, :, None]
        lf, rt = left[:, None, :], right[:, None, :]
        dx4 = dx[:, None, :, None]
        top_row = image[b, t, lf].astype(_F32)
        top_row = top_row + (image[b, t, rt].astype(_F32) - top_row) * dx4
        bottom_row = image[b, bo, lf].astype(_F32)
        bottom_row = bottom_row + (image[b, bo, rt].astype(_F32) - bottom_row) * dx4
        out = top_row + (bottom_row - top_row) * dy[:, :, None, None]
    inside = (ok_y[:, :, None] & ok_x[:, None, :])[..., None]
    return np.where(inside, out, _F32(extrapolation)).astype(_F32)


def crop_and_resize_grad_image(grads, boxes, box_ind, image_size, method, dtype):
    batch, height, width, depth = (int(v) for v in np.asarray(image_size).reshape(-1))
    n, crop_h, crop_w = grads.shape[:3]
    in_y, in_x, ok_y, ok_x = _sampling(boxes, box_ind, (batch, height, width), crop_h, crop_w)
    out = np.zeros((batch, height, width, depth), _F32)
    g = grads.astype(_F32) * (ok_y[:, :, None] & ok_x[:, None, :])[..., None]
    b = np.broadcast_to(box_ind.astype(np.int64)[:, None, None], (n, crop_h, crop_w))
    if method == "nearest":
        ys = np.broadcast_to(_nearest(in_y, height)[:, :, None], b.shape)
        xs = np.broadcast_to(_nearest(in_x, width)[:, None, :], b.shape)
        np.add.at(out, (b, ys, xs), g)
        return out.astype(dtype)
    top, bottom, dy = _corners(in_y, height)
    left, right, dx = _corners(in_x, width)
    dy4, dx4 = dy[:, :, None, None], dx[:, None, :, None]
    for rows, wy in ((top, 1 - dy4), (bottom, dy4)):
        for cols, wx in ((left, 1 - dx4), (right, dx4)):
            ys = np.broadcast_to(rows[:, :, None], b.shape)
            xs = np.broadcast_to(cols[:, None, :], b.shape)
            np.add.at(out, (b, ys, xs), g * wy * wx)
    return out.astype(dtype)


def crop_and_resize_grad_boxes(grads, image, boxes, box_ind):
    """d loss / d (y1, x1, y2, x2) of the bilinear crops (TF gives the nearest method the
    bilinear gradient too)."""
    n, crop_h, crop_w = grads.shape[:3]
    height, width = image.shape[1:3]
    in_y, in_x, ok_y, ok_x = _sampling(boxes, box_ind, image.shape, crop_h, crop_w)
    top, bottom, dy = _corners(in_y, height)
    left, right, dx = _corners(in_x, width)
    b = box_ind.astype(np.int64)[:, None, None]
    t, bo, lf, rt = top[:, :, None], bottom[:, :, None], left[:, None, :], right[:, None, :]
    tl, tr = image[b, t, lf].astype(_F32), image[b, t, rt].astype(_F32)
    bl, br = image[b, bo, lf].astype(_F32), image[b, bo, rt].astype(_F32)
    dy4, dx4 = dy[:, :, None, None], dx[:, None, :, None]
    g = grads.astype(_F32) * (ok_y[:, :, None] & ok_x[:, None, :])[..., None]
    grad_y = ((1 - dx4) * (bl - tl) + dx4 * (br - tr)) * g
    grad_x = ((1 - dy4) * (tr - tl) + dy4 * (br - bl)) * g
    out = np.zeros((n, 4), _F32)
    for axis, grad, size, crop in ((0, grad_y, height, crop_h), (1, grad_x, width, crop_w)):
        per_step = grad.sum(axis=(2 if axis == 0 else 1, 3), dtype=_F32)  # [n, crop]
        if crop > 1:
            ratio = _F32(size - 1) / _F32(crop - 1)
            steps = np.arange(crop, dtype=_F32) * ratio
            out[:, axis] = (per_step * (_F32(size - 1) - steps)).sum(axis=1)
            out[:, axis + 2] = (per_step * steps).sum(axis=1)
        else:
            half = per_step.sum(axis=1) * _F32(0.5) * _F32(size - 1)
            out[:, axis], out[:, axis + 2] = half, half
    return out


@cpu_kernel("CropAndResize")
def _crop_and_resize(node):
    method, extrapolation = node.attrs["method"], node.attrs["extrapolation_value"]

    def crop_and_resize_kernel(image, boxes, box_ind, crop_size):
        return crop_and_resize(image, boxes, box_ind, crop_size, method, extrapolation)
    return crop_and_resize_kernel


@cpu_kernel("CropAndResizeGradImage")
def _grad_image(node):
    method, dtype = node.attrs["method"], node.out_dtypes[0]

    def crop_and_resize_grad_image_kernel(grads, boxes, box_ind, image_size):
        return crop_and_resize_grad_image(grads, boxes, box_ind, image_size, method, dtype)
    return crop_and_resize_grad_image_kernel


@cpu_kernel("CropAndResizeGradBoxes")
def _grad_boxes(node):
    def crop_and_resize_grad_boxes_kernel(grads, image, boxes, box_ind):
        return crop_and_resize_grad_boxes(grads, image, boxes, box_ind)
    return crop_and_resize_grad_boxes_kernel
