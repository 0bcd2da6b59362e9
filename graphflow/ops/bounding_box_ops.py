"""`tf.image`'s bounding-box ops: DrawBoundingBoxes / DrawBoundingBoxesV2 (box outlines drawn
onto images, in a colour table) and SampleDistortedBoundingBoxV2 (a random crop window that
covers enough of the given boxes, for data augmentation).

DrawBoundingBoxes(images [batch, h, w, depth] float, boxes float32 [batch, n, 4]) -> images
DrawBoundingBoxesV2(images, boxes, colors float32 [k, 4]) -> images
SampleDistortedBoundingBoxV2(image_size int [3], bounding_boxes float32 [batch, n, 4],
    min_object_covered float32 []; seed, seed2, aspect_ratio_range, area_range, max_attempts,
    use_image_if_no_bounding_boxes) -> (begin [3], size [3], bboxes float32 [1, 1, 4])
Boxes are (y_min, x_min, y_max, x_max) in [0, 1]. Neither op has a gradient (as in TF).
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_op, require_dtype

_IMAGE_TYPES = (dtypes.float16, dtypes.float32)


def _boxes_3d(boxes, what):
    require_dtype(boxes, (dtypes.float32,), what)
    if boxes.shape.ndims not in (None, 3) or (boxes.shape.ndims == 3
                                              and boxes.shape[2] not in (None, 4)):
        raise ValueError(f"{what} must be 3-D [batch, num_boxes, 4], got shape {boxes.shape}")


def _draw_infer(inputs, attrs):
    images, boxes = inputs[:2]
    require_dtype(images, _IMAGE_TYPES, "images")
    if images.shape.ndims not in (None, 4) or (images.shape.ndims == 4
                                               and images.shape[3] not in (None, 1, 3, 4)):
        raise ValueError(f"draw_bounding_boxes: images must be 4-D [batch, height, width, depth] "
                         f"with depth 1, 3 or 4, got shape {images.shape}")
    _boxes_3d(boxes, "boxes")
    if len(inputs) == 3:
        require_dtype(inputs[2], (dtypes.float32,), "colors")
        if inputs[2].shape.ndims not in (None, 2):
            raise ValueError(f"colors must be 2-D [num_colors, 4], got shape {inputs[2].shape}")
    return [(images.dtype, images.shape)]


def _sample_infer(inputs, attrs):
    image_size, boxes, min_covered = inputs
    require_dtype(image_size, (dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.int32,
                               dtypes.int64), "image_size")
    if image_size.shape.ndims not in (None, 1) or (image_size.shape.ndims == 1
                                                   and image_size.shape[0] not in (None, 3)):
        raise ValueError(f"image_size must be 1-D [height, width, channels], got shape "
                         f"{image_size.shape}")
    _boxes_3d(boxes, "bounding_boxes")
    require_dtype(min_covered, (dtypes.float32,), "min_object_covered")
    for name in ("aspect_ratio_range", "area_range"):
        if len(attrs[name]) != 2:
            raise ValueError(f"{name} must have 2 values, got {attrs[name]}")
        if any(v <= 0 for v in attrs[name]):
            raise ValueError(f"{name} must be positive: {attrs[name]}")
    if attrs["area_range"][1] > 1:
        raise ValueError(f"area_range must be within [0, 1], got {attrs['area_range']}")
    if attrs["max_attempts"] <= 0:
        raise ValueError(f"max_attempts must be positive, got {attrs['max_attempts']}")
    return [(image_size.dtype, TensorShape([3])), (image_size.dtype, TensorShape([3])),
            (dtypes.float32, TensorShape([1, 1, 4]))]


_NO_ONNX_DRAW = no_onnx.none("drawing box outlines: no ONNX op (a scatter per box side)")
define("DrawBoundingBoxes", _draw_infer, onnx=_NO_ONNX_DRAW)
define("DrawBoundingBoxesV2", _draw_infer, onnx=_NO_ONNX_DRAW)
define("SampleDistortedBoundingBoxV2", _sample_infer, random=True,
       attrs="seed:int seed2:int aspect_ratio_range:list(float) area_range:list(float) max_attempts:int "
             "use_image_if_no_bounding_boxes:bool", onnx=no_onnx.RANDOM)


def draw_bounding_boxes(images, boxes, name=None, colors=None):
    """`tf.image.draw_bounding_boxes`: each box's outline (one pixel wide, at the rows and
    columns floor(y * (height - 1)), floor(x * (width - 1))) drawn over a copy of the images, box
    i in colour i of `colors` (cycling; default TF's table of 10; depth-1 images draw white)."""
    with name_scope(name, "draw_bounding_boxes"):
        images = convert_to_tensor(images, name="images")
        boxes = convert_to_tensor(boxes, dtype=dtypes.float32, name="boxes")
        if colors is None:
            return make_op("DrawBoundingBoxes", (images, boxes), {},
                           name="DrawBoundingBoxes").outputs[0]
        colors = convert_to_tensor(colors, dtype=dtypes.float32, name="colors")
        return make_op("DrawBoundingBoxesV2", (images, boxes, colors), {},
                       name="DrawBoundingBoxesV2").outputs[0]


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None,
                                  min_object_covered=0.1, aspect_ratio_range=None,
                                  area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """`tf.image.sample_distorted_bounding_box` (TF1): (begin, size, bboxes) of a random crop
    whose aspect ratio lies in aspect_ratio_range (default [0.75, 1.33]) and area fraction in
    area_range (default [0.05, 1]) and which covers at least min_object_covered of one of
    bounding_boxes; after max_attempts (default 100) failed draws, the whole image. As TF1,
    seed and seed2 are the op's own (the graph seed is not used; both 0: a fresh draw)."""
    attrs = {"seed": int(seed or 0), "seed2": int(seed2 or 0),
             "aspect_ratio_range": [float(v) for v in (aspect_ratio_range or [0.75, 1.33])],
             "area_range": [float(v) for v in (area_range or [0.05, 1.0])],
             "max_attempts": int(max_attempts or 100),
             "use_image_if_no_bounding_boxes": bool(use_image_if_no_bounding_boxes)}
    with name_scope(name, "sample_distorted_bounding_box"):
        image_size = convert_to_tensor(image_size, name="image_size")
        if image_size.dtype not in (dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.int64):
            image_size = convert_to_tensor(image_size, dtype=dtypes.int32, name="image_size")
        boxes = convert_to_tensor(bounding_boxes, dtype=dtypes.float32, name="bounding_boxes")
        covered = convert_to_tensor(min_object_covered, dtype=dtypes.float32,
                                    name="min_object_covered")
        op = make_op("SampleDistortedBoundingBoxV2", (image_size, boxes, covered), attrs,
                     name="SampleDistortedBoundingBoxV2")
        return tuple(op.outputs)


__all__ = []
