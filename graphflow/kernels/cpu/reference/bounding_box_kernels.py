"""numpy kernels for DrawBoundingBoxes(V2) and SampleDistortedBoundingBoxV2
(ops/bounding_box_ops.py), following TF's kernels. Drawing goes box by box, because a later
box's outline paints over an earlier one's; each side is one slice assignment. Sampling draws
up to max_attempts candidate crops (aspect ratio uniform in its range, height uniform between
the sizes the area range allows, position uniform), keeping the first that covers enough of one
box; it draws from graphflow's generator for the op, so the windows follow TF's distribution,
not its Philox stream."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference.random_kernels import generator

_TABLE = [[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
          [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]]


def draw_bounding_boxes(images, boxes, colors=None):
    if images.ndim != 4 or images.shape[3] not in (1, 3, 4):
        raise ValueError(f"images must be 4-D [batch, height, width, depth] with depth 1, 3 or 4, "
                         f"got shape {images.shape}")
    if boxes.ndim != 3 or boxes.shape[0] != images.shape[0] or boxes.shape[2] != 4:
        raise ValueError(f"boxes must be [batch, num_boxes, 4] for {images.shape[0]} images, got "
                         f"shape {boxes.shape}")
    table = np.array(_TABLE if colors is None or colors.size == 0 else colors, np.float32)
    if table.ndim != 2 or table.shape[1] < images.shape[3]:
        raise ValueError(f"colors must be [num_colors, 4] (at least depth columns), got shape "
                         f"{table.shape}")
    if images.shape[3] == 1:
        table[:, 0] = 1  # grey images: white boxes
    out = images.copy()
    height, width, depth = images.shape[1:]
    f32 = np.float32
    for b in range(boxes.shape[0]):
        for k in range(boxes.shape[1]):
            color = table[k % len(table), :depth].astype(images.dtype)
            # TF: float32 position, truncated to an integer row / column
            y0, x0, y1, x1 = (int(f32(v) * f32(n - 1)) for v, n in zip(
                boxes[b, k], (height, width, height, width)))
            if y0 > y1 or x0 > x1 or y0 >= height or y1 < 0 or x0 >= width or x1 < 0:
                continue  # inverted, or wholly outside: not drawn
            ya, yb, xa, xb = max(y0, 0), min(y1, height - 1), max(x0, 0), min(x1, width - 1)
            if y0 >= 0:
                out[b, y0, xa:xb + 1] = color
            if y1 < height:
                out[b, y1, xa:xb + 1] = color
            if x0 >= 0:
                out[b, ya:yb + 1, x0] = color
            if x1 < width:
                out[b, ya:yb + 1, x1] = color
    return out


@cpu_kernel("DrawBoundingBoxes")
def _draw(node):
    return lambda images, boxes: draw_bounding_boxes(images, boxes)


@cpu_kernel("DrawBoundingBoxesV2")
def _draw_v2(node):
    return lambda images, boxes, colors: draw_bounding_boxes(images, boxes, colors)


def _random_crop(gen, width, height, aspect, min_area_frac, max_area_frac):
    """TF's GenerateRandomCrop: (x, y, w, h) or None."""
    f32 = np.float32
    if max_area_frac <= 0 or aspect <= 0 or width <= 0 or height <= 0 \
            or min_area_frac > max_area_frac:
        return None
    min_area = f32(min_area_frac) * f32(width) * f32(height)
    max_area = f32(max_area_frac) * f32(width) * f32(height)
    h = int(np.rint(np.sqrt(min_area / aspect)))
    max_h = int(np.rint(np.sqrt(max_area / aspect)))
    if np.rint(f32(max_h) * aspect) > width:
        max_h = int((width + 0.5 - 1e-7) / aspect)
        if np.rint(f32(max_h) * aspect) > width:
            max_h -= 1
    max_h = min(max_h, height)
    h = min(h, max_h)
    if h < max_h:
        h += int(gen.integers(0, max_h - h + 1))
    w = int(np.rint(f32(h) * aspect))
    area = f32(w * h)
    if area < min_area:
        h += 1
        w = int(np.rint(f32(h) * aspect))
        area = f32(w * h)
    if area < min_area or area > max_area or w > width or h > height or w <= 0 or h <= 0:
        return None
    y = int(gen.integers(0, height - h)) if h < height else 0
    x = int(gen.integers(0, width - w)) if w < width else 0
    return x, y, w, h


def _covers(crop, boxes, min_covered):
    """TF's SatisfiesOverlapConstraints: the crop has pixels and covers >= min_covered of some
    box with pixels. boxes: [n, 4] int (x0, y0, x1, y1)."""
    x, y, w, h = crop
    if w * h < 1 or boxes.size == 0:
        return False
    areas = ((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])).astype(np.float32)
    ix = np.minimum(boxes[:, 2], x + w) - np.maximum(boxes[:, 0], x)
    iy = np.minimum(boxes[:, 3], y + h) - np.maximum(boxes[:, 1], y)
    inter = np.where((ix > 0) & (iy > 0), ix * iy, 0).astype(np.float32)
    ok = areas >= 1
    return bool(np.any(inter[ok] / areas[ok] >= np.float32(min_covered)))


def sample_distorted_bounding_box(gen, image_size, boxes, min_covered, attrs):
    size = np.asarray(image_size).reshape(-1)
    if size.shape != (3,):
        raise ValueError(f"image_size must contain 3 elements, got shape {size.shape}")
    height, width = int(size[0]), int(size[1])
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    if boxes.size and (boxes.min() < 0 or boxes.max() > 1):
        raise ValueError("All bounding box coordinates must be in [0.0, 1.0]")
    rects = np.stack([(boxes[:, 1] * np.float32(width)).astype(np.int32),
                      (boxes[:, 0] * np.float32(height)).astype(np.int32),
                      (boxes[:, 3] * np.float32(width)).astype(np.int32),
                      (boxes[:, 2] * np.float32(height)).astype(np.int32)], axis=1)
    if rects.size == 0:
        if not attrs["use_image_if_no_bounding_boxes"]:
            raise ValueError("No bounding boxes provided as input. One must enable "
                             "use_image_if_no_bounding_boxes if you wish to not provide any "
                             "bounding boxes.")
        rects = np.array([[0, 0, width, height]], np.int32)
    lo_ratio, hi_ratio = (np.float32(v) for v in attrs["aspect_ratio_range"])
    lo_area, hi_area = attrs["area_range"]
    crop = (0, 0, width, height)
    for _ in range(attrs["max_attempts"]):
        aspect = np.float32(gen.random(dtype=np.float32)) * (hi_ratio - lo_ratio) + lo_ratio
        candidate = _random_crop(gen, width, height, aspect, lo_area, hi_area)
        if candidate is not None and _covers(candidate, rects, float(min_covered)):
            crop = candidate
            break
    x, y, w, h = crop
    dtype = np.asarray(image_size).dtype
    begin = np.array([y, x, 0], dtype)
    out_size = np.array([h, w, -1], dtype)
    bboxes = np.array([[[y / height, x / width, (y + h) / height, (x + w) / width]]], np.float32)
    return begin, out_size, bboxes


@cpu_kernel("SampleDistortedBoundingBoxV2")
def _sample(node):
    gen = generator(node)
    attrs = dict(node.attrs)

    def sample_distorted_bounding_box_kernel(image_size, boxes, min_covered):
        return sample_distorted_bounding_box(gen, image_size, boxes, min_covered, attrs)
    return sample_distorted_bounding_box_kernel
