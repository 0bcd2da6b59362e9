"""Object-detection ops of `tf.image`: greedy non-max suppression (TF's NonMaxSuppressionV3, V4
with padding, V5 with scores and soft-NMS), which picks boxes in order of decreasing score and
drops each box whose IoU with an already picked one exceeds iou_threshold; and CropAndResize,
which samples a crop_size grid (bilinear or nearest) inside normalised boxes of the images, with
its gradients for the image (CropAndResizeGradImage) and the boxes (CropAndResizeGradBoxes).

Boxes are [num_boxes, 4] corner pairs (y1, x1, y2, x2) in either order; scores [num_boxes].
NonMaxSuppressionV3(boxes, scores, max_output_size, iou_threshold, score_threshold)
    -> selected_indices int32 [<= max_output_size]
NonMaxSuppressionV4(...; pad_to_max_output_size) -> (selected_indices, valid_outputs int32 [])
NonMaxSuppressionV5(..., soft_nms_sigma; pad_to_max_output_size)
    -> (selected_indices, selected_scores, valid_outputs)
None of them has a gradient (TF's are not differentiable).
CropAndResize(image [batch, h, w, d], boxes float32 [n, 4], box_ind int32 [n], crop_size int32
    [2]; method, extrapolation_value) -> float32 [n, crop_h, crop_w, d]
CropAndResizeGradImage(grads, boxes, box_ind, image_size int32 [4]; T, method) -> T image
CropAndResizeGradBoxes(grads, image, boxes, box_ind; method) -> float32 [n, 4]
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import NUMERIC, define, make_op, no_gradient, require_dtype
from graphflow.ops.static_value import scalar_value, shape_vector

_BOX_TYPES = (dtypes.float16, dtypes.float32)


def _check_scalar(t, what):
    if t.shape.ndims not in (None, 0):
        raise ValueError(f"{what} must be a scalar, got shape {t.shape}")


def _nms_shapes(inputs, attrs):
    boxes, scores, max_output_size = inputs[:3]
    require_dtype(boxes, _BOX_TYPES, "boxes")
    if scores.dtype != boxes.dtype:
        raise TypeError(f"scores ({scores.dtype.name}) must have the boxes' dtype "
                        f"({boxes.dtype.name})")
    if boxes.shape.ndims not in (None, 2) or (boxes.shape.ndims == 2
                                              and boxes.shape[1] not in (None, 4)):
        raise ValueError(f"boxes must be 2-D [num_boxes, 4], got shape {boxes.shape}")
    if scores.shape.ndims not in (None, 1):
        raise ValueError(f"scores must be 1-D [num_boxes], got shape {scores.shape}")
    if boxes.shape.ndims == 2 and scores.shape.ndims == 1 and not TensorShape(
            [boxes.shape[0]]).is_compatible_with(scores.shape):
        raise ValueError(f"scores {scores.shape} must have one score per box {boxes.shape}")
    require_dtype(max_output_size, (dtypes.int32,), "max_output_size")
    for t, what in zip(inputs[2:], ("max_output_size", "iou_threshold", "score_threshold",
                                    "soft_nms_sigma")):
        _check_scalar(t, what)
    for t, what in zip(inputs[3:], ("iou_threshold", "score_threshold", "soft_nms_sigma")):
        require_dtype(t, (dtypes.float32, boxes.dtype), what)
    if attrs.get("pad_to_max_output_size"):
        size = scalar_value(max_output_size)
        return TensorShape([size])
    return TensorShape([None])


def _nms_v3_infer(inputs, attrs):
    return [(dtypes.int32, _nms_shapes(inputs, attrs))]


def _nms_v4_infer(inputs, attrs):
    return [(dtypes.int32, _nms_shapes(inputs, attrs)), (dtypes.int32, TensorShape([]))]


def _nms_v5_infer(inputs, attrs):
    shape = _nms_shapes(inputs, attrs)
    return [(dtypes.int32, shape), (inputs[0].dtype, shape), (dtypes.int32, TensorShape([]))]


_PAD = "pad_to_max_output_size:bool"
_ONNX_NMS = ("ONNX's NonMaxSuppression (batches x classes, int64 [n, 3] triples out, ties in "
             "any order) is not mapped yet")
define("NonMaxSuppressionV3", _nms_v3_infer, value_dependent_shape=True,
       onnx=no_onnx.none(_ONNX_NMS))
define("NonMaxSuppressionV4", _nms_v4_infer, attrs=_PAD, value_dependent_shape=True,
       onnx=no_onnx.none("ONNX's NonMaxSuppression has no padding to max_output_size nor a count "
                         "of valid outputs; not mapped yet"))
define("NonMaxSuppressionV5", _nms_v5_infer, attrs=_PAD, value_dependent_shape=True,
       onnx=no_onnx.none("ONNX's NonMaxSuppression has no soft-NMS and returns no scores"))
no_gradient("NonMaxSuppressionV3", "NonMaxSuppressionV4", "NonMaxSuppressionV5")


def _nms_inputs(boxes, scores, max_output_size, iou_threshold, score_threshold):
    boxes = convert_to_tensor(boxes, name="boxes")
    scores = convert_to_tensor(scores, name="scores")
    dtype = boxes.dtype if boxes.dtype in _BOX_TYPES else dtypes.float32
    return [convert_to_tensor(boxes, dtype=dtype, name="boxes"),
            convert_to_tensor(scores, dtype=dtype, name="scores"),
            convert_to_tensor(max_output_size, dtype=dtypes.int32, name="max_output_size"),
            convert_to_tensor(iou_threshold, dtype=dtypes.float32, name="iou_threshold"),
            convert_to_tensor(score_threshold, dtype=dtypes.float32, name="score_threshold")]


def _check_iou(iou_threshold):
    if isinstance(iou_threshold, (int, float)) and not 0 <= iou_threshold <= 1:
        raise ValueError(f"iou_threshold must be in [0, 1], got {iou_threshold}")


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5,
                        score_threshold=float("-inf"), name=None):
    """`tf.image.non_max_suppression`: the indices (int32) of at most max_output_size boxes,
    picked greedily by decreasing score (ties: the lower index first), skipping boxes whose IoU
    with a picked box exceeds iou_threshold and boxes scoring <= score_threshold."""
    _check_iou(iou_threshold)
    with name_scope(name, "non_max_suppression"):
        inputs = _nms_inputs(boxes, scores, max_output_size, iou_threshold, score_threshold)
        return make_op("NonMaxSuppressionV3", inputs, {}, name="NonMaxSuppressionV3").outputs[0]


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0, name=None):
    """`tf.image.non_max_suppression_with_scores`: (selected_indices, selected_scores). With
    soft_nms_sigma > 0 overlapping boxes are not dropped but their scores decay by
    exp(-iou^2 / (2 sigma)) (Bodla et al.), and the decayed scores are returned."""
    _check_iou(iou_threshold)
    with name_scope(name, "non_max_suppression_with_scores"):
        inputs = _nms_inputs(boxes, scores, max_output_size, iou_threshold, score_threshold)
        dtype = inputs[0].dtype  # V5's thresholds have the boxes' dtype
        inputs[3:] = [convert_to_tensor(v, dtype=dtype, name=n) for v, n in (
            (iou_threshold, "iou_threshold"), (score_threshold, "score_threshold"),
            (soft_nms_sigma, "soft_nms_sigma"))]
        op = make_op("NonMaxSuppressionV5", inputs, {"pad_to_max_output_size": False},
                     name="NonMaxSuppressionV5")
        return op.outputs[0], op.outputs[1]


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5,
                               score_threshold=float("-inf"), pad_to_max_output_size=False,
                               name=None, sorted_input=False, canonicalized_coordinates=False,
                               tile_size=512):
    """`tf.image.non_max_suppression_padded` as TF1 (NonMaxSuppressionV4), for one image's
    boxes ([num_boxes, 4]): (selected_indices, valid_outputs), the indices padded with 0 to
    max_output_size when pad_to_max_output_size. sorted_input, canonicalized_coordinates and
    tile_size are TF 2's arguments for its tiled batch algorithm, accepted and unused: the
    selection is TF1's greedy one."""
    del sorted_input, canonicalized_coordinates, tile_size
    _check_iou(iou_threshold)
    with name_scope(name, "non_max_suppression_padded"):
        inputs = _nms_inputs(boxes, scores, max_output_size, iou_threshold, score_threshold)
        if inputs[0].shape.ndims not in (None, 2):
            raise ValueError("non_max_suppression_padded: graphflow supports one image's boxes "
                             f"([num_boxes, 4]), got shape {inputs[0].shape}")
        op = make_op("NonMaxSuppressionV4", inputs,
                     {"pad_to_max_output_size": bool(pad_to_max_output_size)},
                     name="NonMaxSuppressionV4")
        return op.outputs[0], op.outputs[1]


def _crop_common(boxes, box_ind, what):
    require_dtype(boxes, (dtypes.float32,), "boxes")
    require_dtype(box_ind, (dtypes.int32,), "box_ind")
    if boxes.shape.ndims not in (None, 2) or (boxes.shape.ndims == 2
                                              and boxes.shape[1] not in (None, 4)):
        raise ValueError(f"{what}: boxes must be 2-D [num_boxes, 4], got shape {boxes.shape}")
    if box_ind.shape.ndims not in (None, 1):
        raise ValueError(f"{what}: box_ind must be 1-D [num_boxes], got shape {box_ind.shape}")
    n = boxes.shape[0] if boxes.shape.ndims == 2 else None
    m = box_ind.shape[0] if box_ind.shape.ndims == 1 else None
    if n is not None and m is not None and n != m:
        raise ValueError(f"{what}: boxes ({n}) and box_ind ({m}) must have the same number of "
                         "boxes")
    return n if n is not None else m


def _check_method(attrs):
    if attrs["method"] not in ("bilinear", "nearest"):
        raise ValueError(f"method must be 'bilinear' or 'nearest', got {attrs['method']!r}")


def _crop_and_resize_infer(inputs, attrs):
    image, boxes, box_ind, crop_size = inputs
    require_dtype(image, NUMERIC, "image")
    if image.shape.ndims not in (None, 4):
        raise ValueError(f"crop_and_resize: image must be 4-D [batch, height, width, depth], got "
                         f"shape {image.shape}")
    _check_method(attrs)
    n = _crop_common(boxes, box_ind, "crop_and_resize")
    require_dtype(crop_size, (dtypes.int32,), "crop_size")
    size = shape_vector(crop_size)
    if size is not None and any(v is not None and v <= 0 for v in size):
        raise ValueError(f"crop_size must be positive, got {size}")
    h, w = size if size is not None and len(size) == 2 else (None, None)
    depth = image.shape[3] if image.shape.ndims == 4 else None
    return [(dtypes.float32, TensorShape([n, h, w, depth]))]


def _grad_image_infer(inputs, attrs):
    grads, boxes, box_ind, image_size = inputs
    require_dtype(grads, (dtypes.float32,), "grads")
    _check_method(attrs)
    _crop_common(boxes, box_ind, "crop_and_resize_grad_image")
    require_dtype(image_size, (dtypes.int32,), "image_size")
    size = shape_vector(image_size)
    return [(dtypes.as_dtype(attrs["T"]), TensorShape(size if size is not None else [None] * 4))]


def _grad_boxes_infer(inputs, attrs):
    grads, image, boxes, box_ind = inputs
    require_dtype(grads, (dtypes.float32,), "grads")
    require_dtype(image, NUMERIC, "image")
    n = _crop_common(boxes, box_ind, "crop_and_resize_grad_boxes")
    return [(dtypes.float32, TensorShape([n, 4]))]


define("CropAndResize", _crop_and_resize_infer,
       attrs="method:string extrapolation_value:float",
       onnx=no_onnx.none("ONNX's RoiAlign averages bins (no point sampling at TF's positions) "
                         "and its Resize crops one region for the whole batch"))
define("CropAndResizeGradImage", _grad_image_infer, attrs="T:dtype method:string",
       onnx=no_onnx.GRADIENT)
define("CropAndResizeGradBoxes", _grad_boxes_infer, attrs="method:string", onnx=no_onnx.GRADIENT)


def crop_and_resize(image, boxes, box_ind=None, crop_size=None, method="bilinear",
                    extrapolation_value=0, name=None, box_indices=None):
    """`tf.image.crop_and_resize`: for each box (y1, x1, y2, x2, normalised: 0 and 1 are the
    first and last pixel centres; y1 > y2 flips the crop) of image box_ind[i], a crop_size
    [crop_height, crop_width] grid sampled bilinearly or at the nearest pixel; positions outside
    the image take extrapolation_value. float32 [num_boxes, crop_height, crop_width, depth]."""
    if box_ind is None:
        box_ind = box_indices
    if box_ind is None or crop_size is None:
        raise ValueError("crop_and_resize needs box_ind (or box_indices) and crop_size")
    with name_scope(name, "CropAndResize"):
        image = convert_to_tensor(image, name="image")
        boxes = convert_to_tensor(boxes, dtype=dtypes.float32, name="boxes")
        box_ind = convert_to_tensor(box_ind, dtype=dtypes.int32, name="box_ind")
        crop_size = convert_to_tensor(crop_size, dtype=dtypes.int32, name="crop_size")
        attrs = {"method": method, "extrapolation_value": float(extrapolation_value)}
        return make_op("CropAndResize", (image, boxes, box_ind, crop_size), attrs,
                       name="CropAndResize").outputs[0]


def _boxes_and_ind(boxes, box_ind):
    return (convert_to_tensor(boxes, dtype=dtypes.float32, name="boxes"),
            convert_to_tensor(box_ind, dtype=dtypes.int32, name="box_ind"))


def crop_and_resize_grad_image(grads, boxes, box_ind, image_size, T=dtypes.float32,
                               method="bilinear", name=None):
    attrs = {"T": dtypes.as_dtype(T).name, "method": method}
    image_size = convert_to_tensor(image_size, dtype=dtypes.int32, name="image_size")
    inputs = (convert_to_tensor(grads, name="grads"), *_boxes_and_ind(boxes, box_ind), image_size)
    return make_op("CropAndResizeGradImage", inputs, attrs,
                   name=name or "CropAndResizeGradImage").outputs[0]


def crop_and_resize_grad_boxes(grads, image, boxes, box_ind, method="bilinear", name=None):
    inputs = (convert_to_tensor(grads, name="grads"), convert_to_tensor(image, name="image"),
              *_boxes_and_ind(boxes, box_ind))
    return make_op("CropAndResizeGradBoxes", inputs, {"method": method},
                   name=name or "CropAndResizeGradBoxes").outputs[0]


__all__ = []
