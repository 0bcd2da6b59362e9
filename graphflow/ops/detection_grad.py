"""Gradient rules of the detection ops: CropAndResize differentiates into its image (for float
images, CropAndResizeGradImage) and its boxes (CropAndResizeGradBoxes, the bilinear gradient
for both methods, as TF). The NMS ops have none (ops/detection_ops.py)."""

from graphflow.ops import detection_ops, shape_ops
from graphflow.ops.registry import register_gradient


@register_gradient("CropAndResize")
def _crop_and_resize_grad(op, grad):
    image, boxes, box_ind, _ = op.inputs
    method = op.attrs["method"]
    grad_image = None
    if image.dtype.is_floating:
        size = image.shape.as_list() if image.shape.is_fully_defined() else shape_ops.shape(image)
        grad_image = detection_ops.crop_and_resize_grad_image(grad, boxes, box_ind, size,
                                                              T=image.dtype, method=method)
    grad_boxes = detection_ops.crop_and_resize_grad_boxes(grad, image, boxes, box_ind)
    return grad_image, grad_boxes, None, None
