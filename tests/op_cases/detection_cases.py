"""Cases for the non-max-suppression ops and CropAndResize with its gradient ops. The NMS
reference is written from the algorithm's definition (boxes in score order, each kept unless its
IoU with a kept box exceeds the threshold; soft-NMS decays scores by exp(-iou^2 / (2 sigma))
and re-ranks), over a full IoU matrix; the crops' per pixel from the sampling position.
TensorFlow's own numbers are compared in tests/ops/test_detection_ops.py."""

import numpy as np

import graphflow as tf
from graphflow.ops import detection_ops
from tests.op_cases import OpCase


def _iou_matrix(b):
    b = b.astype(np.float64)
    lo, hi = np.minimum(b[:, :2], b[:, 2:]), np.maximum(b[:, :2], b[:, 2:])
    area = np.prod(hi - lo, axis=1)
    sides = np.clip(np.minimum(hi[:, None], hi[None]) - np.maximum(lo[:, None], lo[None]), 0, None)
    inter = np.prod(sides, axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        iou = inter / (area[:, None] + area[None] - inter)
    return np.where((area[:, None] <= 0) | (area[None] <= 0), 0.0, iou)


def _nms_ref(boxes, scores, size, iou_threshold, score_threshold=-np.inf, sigma=0.0):
    iou = _iou_matrix(boxes)
    live = {i: float(s) for i, s in enumerate(scores) if s > score_threshold}
    picked, picked_scores = [], []
    while live and len(picked) < size:
        i = min(live, key=lambda k: (-live[k], k))
        score = live.pop(i)
        if sigma > 0:
            picked.append(i)
            picked_scores.append(score)
            for k in list(live):  # decay the rest by their overlap with the new pick
                live[k] *= np.exp(-0.5 / sigma * iou[i, k] ** 2)
                if live[k] <= score_threshold:
                    del live[k]
        elif all(iou[i, j] <= iou_threshold for j in picked):
            picked.append(i)
            picked_scores.append(score)
    return np.array(picked, np.int32), np.array(picked_scores, np.float32)


_RNG = np.random.default_rng(5)
_CORNERS = _RNG.random((12, 2)).astype(np.float32) * 4
_BOXES = np.concatenate([_CORNERS, _CORNERS + 0.5 + _RNG.random((12, 2)).astype(np.float32) * 2],
                        axis=1)
_BOXES[3] = _BOXES[3][[2, 3, 0, 1]]  # corners given the other way round
_BOXES[7, 2] = _BOXES[7, 0]  # an empty box: IoU 0 with everything
_SCORES = _RNG.permutation(12).astype(np.float32) / 12


def _v4(b, s):
    idx, n = tf.image.non_max_suppression_padded(b, s, 10, 0.3, 0.1, pad_to_max_output_size=True)
    return idx, n


def _v4_ref(b, s):
    idx, _ = _nms_ref(b, s, 10, 0.3, 0.1)
    return np.concatenate([idx, np.zeros(10 - idx.size, np.int32)]), np.int32(idx.size)


def _crop_ref(image, boxes, box_ind, size, method="bilinear", extrapolation=0.0):
    """Each crop pixel from the definition: its source position in the box (corners at the
    pixel centres 0 and H - 1), the four pixels around it (or the nearest), else the
    extrapolation value."""
    n, (ch, cw) = len(boxes), size
    h, w = image.shape[1:3]
    out = np.full((n, ch, cw, image.shape[3]), extrapolation)

    def pos(lo, hi, i, crop, limit):
        return lo * (limit - 1) + i * (hi - lo) * (limit - 1) / (crop - 1) if crop > 1 \
            else 0.5 * (lo + hi) * (limit - 1)
    for k, (y1, x1, y2, x2) in enumerate(boxes.astype(np.float64)):
        img = image[box_ind[k]].astype(np.float64)
        for i in range(ch):
            py = pos(y1, y2, i, ch, h)
            for j in range(cw):
                px = pos(x1, x2, j, cw, w)
                if not (0 <= py <= h - 1 and 0 <= px <= w - 1):
                    continue
                if method == "nearest":
                    out[k, i, j] = img[int(np.floor(py + 0.5)), int(np.floor(px + 0.5))]
                    continue
                y0, x0 = int(np.floor(py)), int(np.floor(px))
                y1_, x1_ = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
                fy, fx = py - y0, px - x0
                out[k, i, j] = ((1 - fy) * ((1 - fx) * img[y0, x0] + fx * img[y0, x1_])
                                + fy * ((1 - fx) * img[y1_, x0] + fx * img[y1_, x1_]))
    return out.astype(np.float32)


_IMAGE = _RNG.random((2, 5, 6, 3)).astype(np.float32)
_CROP_BOXES = np.array([[0.1, 0.2, 0.7, 0.9], [0.8, 0.1, 0.3, 0.6], [-0.2, 0.3, 0.5, 1.3]],
                       np.float32)
_BOX_IND = np.array([1, 0, 1], np.int32)


def _grad_image_ref(g, image_shape, boxes, box_ind, size, method):
    """The transpose of the crop's linear map in the image, column by column."""
    out = np.zeros(image_shape)
    for idx in np.ndindex(*image_shape):
        e = np.zeros(image_shape, np.float32)
        e[idx] = 1
        out[idx] = np.sum(_crop_ref(e, boxes, box_ind, size, method).astype(np.float64) * g)
    return out.astype(np.float32)


def _grad_boxes_ref(g, image, boxes, box_ind, size):
    """The chain rule per crop pixel: d crop / d position (the difference of the floor and ceil
    pixels, blended along the other axis; 0 on a pixel centre, where they coincide; positions
    computed in float32 as TF computes them) times
    d position / d corner ((H - 1) (1 - i / (ch - 1)) for y1, (H - 1) i / (ch - 1) for y2)."""
    ch, cw = size
    h, w = image.shape[1:3]
    out = np.zeros(boxes.shape)
    f = np.float32  # positions in float32, as TF's: which side of a pixel centre they fall on
    for k, (y1, x1, y2, x2) in enumerate(boxes):
        img = image[box_ind[k]].astype(np.float64)
        for i in range(ch):
            py = float(y1 * f(h - 1) + f(i) * ((y2 - y1) * f(h - 1) / f(ch - 1)))
            for j in range(cw):
                px = float(x1 * f(w - 1) + f(j) * ((x2 - x1) * f(w - 1) / f(cw - 1)))
                if not (0 <= py <= h - 1 and 0 <= px <= w - 1):
                    continue
                t, b = int(np.floor(py)), int(np.ceil(py))
                le, r = int(np.floor(px)), int(np.ceil(px))
                fy, fx = py - t, px - le
                d_py = ((1 - fx) * (img[b, le] - img[t, le]) + fx * (img[b, r] - img[t, r]))
                d_px = ((1 - fy) * (img[t, r] - img[t, le]) + fy * (img[b, r] - img[b, le]))
                d_py, d_px = np.sum(d_py * g[k, i, j]), np.sum(d_px * g[k, i, j])
                out[k, 0] += d_py * (h - 1) * (1 - i / (ch - 1))
                out[k, 2] += d_py * (h - 1) * i / (ch - 1)
                out[k, 1] += d_px * (w - 1) * (1 - j / (cw - 1))
                out[k, 3] += d_px * (w - 1) * j / (cw - 1)
    return out.astype(np.float32)


_G = _RNG.random((3, 4, 3, 3)).astype(np.float32)

CASES = [
    OpCase("CropAndResize", lambda x, b: tf.image.crop_and_resize(
        x, tf.cast(b, tf.float32), _BOX_IND, [4, 3]),
           [_IMAGE, _CROP_BOXES], lambda x, b: _crop_ref(x, b, _BOX_IND, (4, 3)), rtol=1e-5,
           atol=1e-5, grad_inputs=[0]),  # boxes' gradient: CropAndResizeGradBoxes' case
    OpCase("CropAndResize", lambda x, b: tf.image.crop_and_resize(
        x, tf.cast(b, tf.float32), _BOX_IND, [3, 1], method="nearest", extrapolation_value=-2.0),
        [_IMAGE, _CROP_BOXES], lambda x, b: _crop_ref(x, b, _BOX_IND, (3, 1), "nearest", -2.0),
        grad_inputs=[0], name="CropAndResize[nearest]"),
    OpCase("CropAndResize", lambda x: tf.image.crop_and_resize(x, _CROP_BOXES, _BOX_IND, [2, 2]),
           [(_IMAGE * 200).astype(np.uint8)], lambda x: _crop_ref(x, _CROP_BOXES, _BOX_IND, (2, 2)),
           rtol=1e-5, atol=1e-4, grad=False, name="CropAndResize[uint8]"),
    OpCase("CropAndResizeGradImage", lambda g: detection_ops.crop_and_resize_grad_image(
        g, _CROP_BOXES, _BOX_IND, list(_IMAGE.shape)), [_G],
        lambda g: _grad_image_ref(g, _IMAGE.shape, _CROP_BOXES, _BOX_IND, (4, 3), "bilinear"),
        rtol=1e-5, atol=1e-5, grad=False),
    OpCase("CropAndResizeGradBoxes", lambda g, x: detection_ops.crop_and_resize_grad_boxes(
        g, x, _CROP_BOXES, _BOX_IND), [_G, _IMAGE],
        lambda g, x: _grad_boxes_ref(g, x, _CROP_BOXES, _BOX_IND, (4, 3)), rtol=1e-4,
        atol=1e-4, grad=False),

    OpCase("NonMaxSuppressionV3", lambda b, s: tf.image.non_max_suppression(b, s, 6, 0.4),
           [_BOXES, _SCORES], lambda b, s: _nms_ref(b, s, 6, 0.4)[0], grad=False),
    OpCase("NonMaxSuppressionV3", lambda b, s: tf.image.non_max_suppression(
        b, s, 20, 0.2, score_threshold=0.3), [_BOXES, _SCORES],
        lambda b, s: _nms_ref(b, s, 20, 0.2, 0.3)[0], grad=False,
        name="NonMaxSuppressionV3[score_threshold]"),
    OpCase("NonMaxSuppressionV4", _v4, [_BOXES, _SCORES], _v4_ref, grad=False),
    OpCase("NonMaxSuppressionV5", lambda b, s: tf.image.non_max_suppression_with_scores(
        b, s, 8, 1.0, 0.05, soft_nms_sigma=0.5), [_BOXES, _SCORES],
        lambda b, s: _nms_ref(b, s, 8, 1.0, 0.05, sigma=0.5), grad=False),
]
