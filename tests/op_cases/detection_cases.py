"""Cases for the non-max-suppression ops. The reference is written from the algorithm's
definition (boxes in score order, each kept unless its IoU with a kept box exceeds the
threshold; soft-NMS decays scores by exp(-iou^2 / (2 sigma)) and re-ranks), over a full IoU
matrix; TensorFlow's own numbers are compared in tests/tf1/test_image_detection.py."""

import numpy as np

import graphflow as tf
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


CASES = [
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
