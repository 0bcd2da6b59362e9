"""Gradient rules for the resize ops: each resize and its backprop op are adjoint linear maps
(the backprop applies the transposed interpolation matrices), so each one's gradient is the
other. Sizes and the original image's values get no gradient. ResizeArea has none, as in TF."""

from graphflow.ops import image_ops, shape_ops
from graphflow.ops.registry import register_gradient


def _attrs(op):
    return {"align_corners": op.attrs["align_corners"],
            "half_pixel_centers": op.attrs["half_pixel_centers"]}


def _spatial(t):
    return shape_ops.shape(t)[1:3]


@register_gradient("ResizeBilinear")
def _resize_bilinear_grad(op, grad):
    images = op.inputs[0]
    if not images.dtype.is_floating:
        return None, None
    return image_ops.resize_bilinear_grad(grad, images, **_attrs(op)), None


@register_gradient("ResizeBilinearGrad")
def _resize_bilinear_grad_grad(op, grad):
    return image_ops.resize_bilinear(grad, _spatial(op.inputs[0]), **_attrs(op)), None


@register_gradient("ResizeBicubic")
def _resize_bicubic_grad(op, grad):
    images = op.inputs[0]
    if not images.dtype.is_floating:
        return None, None
    return image_ops.resize_bicubic_grad(grad, images, **_attrs(op)), None


@register_gradient("ResizeBicubicGrad")
def _resize_bicubic_grad_grad(op, grad):
    return image_ops.resize_bicubic(grad, _spatial(op.inputs[0]), **_attrs(op)), None


@register_gradient("ResizeNearestNeighbor")
def _resize_nearest_grad(op, grad):
    return image_ops.resize_nearest_neighbor_grad(grad, _spatial(op.inputs[0]), **_attrs(op)), None


@register_gradient("ResizeNearestNeighborGrad")
def _resize_nearest_grad_grad(op, grad):
    return image_ops.resize_nearest_neighbor(grad, _spatial(op.inputs[0]), **_attrs(op)), None
