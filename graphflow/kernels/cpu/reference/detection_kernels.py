"""numpy kernels for the non-max-suppression ops (ops/detection_ops.py). Greedy NMS is
sequential by nature: each pick depends on the picks before it, so the candidates are taken one
at a time (in score order, from a heap where soft-NMS re-queues them) and each is compared with
the picked boxes in one vectorised IoU. The arithmetic follows TF's kernel: IoU in float32 of
the normalised corners (0 for an empty box), hard suppression when IoU > iou_threshold, soft
weights exp(-0.5 / sigma * iou^2) applied from the most recent pick backwards."""

import heapq

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


def _iou(boxes, i, picked):
    """IoU (float32) of box i with each box of `picked` (int array)."""
    f32 = np.float32
    b = boxes.astype(f32, copy=False)
    lo = np.minimum(b[:, :2], b[:, 2:])
    hi = np.maximum(b[:, :2], b[:, 2:])
    area_i = (hi[i, 0] - lo[i, 0]) * (hi[i, 1] - lo[i, 1])
    area_j = (hi[picked, 0] - lo[picked, 0]) * (hi[picked, 1] - lo[picked, 1])
    top = np.maximum(lo[i], lo[picked])
    bottom = np.minimum(hi[i], hi[picked])
    sides = np.maximum(bottom - top, f32(0))
    inter = sides[:, 0] * sides[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (area_i + area_j - inter)
    return np.where((area_i <= 0) | (area_j <= 0), f32(0), iou).astype(f32)


def _check(boxes, scores, max_output_size, iou_threshold):
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError(f"boxes must be 2-D [num_boxes, 4], got shape {boxes.shape}")
    if scores.shape != (boxes.shape[0],):
        raise ValueError(f"scores must be [num_boxes] = [{boxes.shape[0]}], got shape "
                         f"{scores.shape}")
    if not 0 <= float(iou_threshold) <= 1:
        raise ValueError(f"iou_threshold must be in [0, 1], got {float(iou_threshold)}")
    if int(max_output_size) < 0:
        raise ValueError(f"max_output_size must be non-negative, got {int(max_output_size)}")


def non_max_suppression(boxes, scores, max_output_size, iou_threshold, score_threshold,
                        soft_nms_sigma=0.0):
    """(selected indices int32, their scores (decayed by soft-NMS), in selection order)."""
    _check(boxes, scores, max_output_size, iou_threshold)
    dtype = scores.dtype
    limit = int(max_output_size)
    iou_threshold = dtype.type(iou_threshold)
    score_threshold = dtype.type(score_threshold)
    sigma = dtype.type(soft_nms_sigma)
    soft = sigma > 0
    scale = dtype.type(-0.5) / sigma if soft else dtype.type(0)
    # heap of (-score, index, first picked box not yet compared); ties: the lower index first
    heap = [(-s, i, 0) for i, s in enumerate(scores) if s > score_threshold]
    heapq.heapify(heap)
    picked, picked_scores = [], []
    while len(picked) < limit and heap:
        neg, i, begin = heapq.heappop(heap)
        original = -neg
        score = original
        suppressed = False
        if len(picked) > begin:
            iou = _iou(boxes, i, np.array(picked[begin:][::-1]))  # the latest pick first
            if not soft:
                suppressed = bool((iou > iou_threshold).any())
            else:
                weights = np.exp(scale * iou.astype(dtype) * iou.astype(dtype)).astype(dtype)
                for w in weights:  # TF multiplies one at a time, stopping at the threshold
                    score = dtype.type(score * w)
                    if score <= score_threshold:
                        break
        if suppressed:
            continue
        if score == original:
            picked.append(i)
            picked_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(heap, (-score, i, len(picked)))
    return np.array(picked, np.int32), np.array(picked_scores, dtype)


def _padded(values, size, pad):
    if not pad or values.size >= size:
        return values
    return np.concatenate([values, np.zeros(size - values.size, values.dtype)])


@cpu_kernel("NonMaxSuppressionV3")
def _nms_v3(node):
    def nms_v3(boxes, scores, max_output_size, iou_threshold, score_threshold):
        return non_max_suppression(boxes, scores, max_output_size, iou_threshold,
                                   score_threshold)[0]
    return nms_v3


@cpu_kernel("NonMaxSuppressionV4")
def _nms_v4(node):
    pad = node.attrs["pad_to_max_output_size"]

    def nms_v4(boxes, scores, max_output_size, iou_threshold, score_threshold):
        picked, _ = non_max_suppression(boxes, scores, max_output_size, iou_threshold,
                                        score_threshold)
        return _padded(picked, int(max_output_size), pad), np.array(picked.size, np.int32)
    return nms_v4


@cpu_kernel("NonMaxSuppressionV5")
def _nms_v5(node):
    pad = node.attrs["pad_to_max_output_size"]

    def nms_v5(boxes, scores, max_output_size, iou_threshold, score_threshold, soft_nms_sigma):
        picked, picked_scores = non_max_suppression(boxes, scores, max_output_size, iou_threshold,
                                                    score_threshold, soft_nms_sigma)
        size = int(max_output_size)
        return (_padded(picked, size, pad), _padded(picked_scores, size, pad),
                np.array(picked.size, np.int32))
    return nms_v5
