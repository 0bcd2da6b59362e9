"""Cases for DrawBoundingBoxes(V2) and SampleDistortedBoundingBoxV2. The drawing reference marks
each pixel on a box's outline (rows floor(y (h - 1)), columns floor(x (w - 1)), clipped to the
image), later boxes over earlier ones; the sampler's windows are random (shapes and dtypes here;
their constraints are checked in tests/ops/test_bounding_box_ops.py)."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase

_TABLE = [[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
          [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]]


def _draw_ref(images, boxes, colors=None):
    out = images.copy()
    n, h, w, d = images.shape
    table = np.array(colors if colors is not None else _TABLE, np.float32)
    if d == 1:
        table[:, 0] = 1
    for b in range(n):
        for k, box in enumerate(boxes[b]):
            y0, x0 = int(np.float32(box[0]) * np.float32(h - 1)), int(np.float32(box[1]) * np.float32(w - 1))
            y1, x1 = int(np.float32(box[2]) * np.float32(h - 1)), int(np.float32(box[3]) * np.float32(w - 1))
            if y0 > y1 or x0 > x1:
                continue
            for r in range(h):
                for c in range(w):
                    on_row = r in (y0, y1) and x0 <= c <= x1
                    on_col = c in (x0, x1) and y0 <= r <= y1
                    if on_row or on_col:
                        out[b, r, c] = table[k % len(table), :d]
    return out


_IMAGES = np.random.default_rng(8).random((2, 6, 7, 3)).astype(np.float32)
_BOXES = np.array([[[0.1, 0.2, 0.7, 0.9], [0.5, -0.3, 1.4, 0.5], [0.6, 0.6, 0.2, 0.8]],
                   [[0.0, 0.0, 1.0, 1.0], [0.3, 0.3, 0.3, 0.6], [0.2, 0.1, 0.9, 0.4]]],
                  np.float32)
_COLORS = np.array([[0.2, 0.4, 0.6, 1.0], [0.9, 0.8, 0.7, 1.0]], np.float32)

CASES = [
    OpCase("DrawBoundingBoxes", lambda x: tf.image.draw_bounding_boxes(x, _BOXES), [_IMAGES],
           lambda x: _draw_ref(x, _BOXES), grad=False),
    OpCase("DrawBoundingBoxes", lambda x: tf.image.draw_bounding_boxes(x, _BOXES[:, :2]),
           [_IMAGES[..., :1]], lambda x: _draw_ref(x, _BOXES[:, :2]), grad=False,
           name="DrawBoundingBoxes[grey]"),
    OpCase("DrawBoundingBoxesV2", lambda x: tf.image.draw_bounding_boxes(x, _BOXES, colors=_COLORS),
           [_IMAGES], lambda x: _draw_ref(x, _BOXES, _COLORS), grad=False),
    OpCase("SampleDistortedBoundingBoxV2", lambda b: tf.image.sample_distorted_bounding_box(
        [30, 40, 3], b, seed=5, min_object_covered=0.2), [_BOXES[:1, :1].clip(0, 1)],
        grad=False),
]
