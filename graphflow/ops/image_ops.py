"""Image ops (`tf.image`): bilinear, nearest-neighbor, bicubic and area resizing with TF1's attrs
(align_corners, half_pixel_centers) and their backprop ops, plus flips and
per_image_standardization built from ordinary ops. Images are 4-D NHWC ([batch, height, width,
channels]); the TF1 functions also take one 3-D image.

ResizeBilinear(images, size) -> float32, as TF's op (any real input type).
ResizeBilinearGrad(grads float32, original_image) -> the original image's dtype and shape.
ResizeNearestNeighbor(images, size) -> the images' dtype.
ResizeNearestNeighborGrad(grads, size) -> grads' dtype, [batch, size..., channels].
ResizeBicubic(images, size) -> float32; ResizeBicubicGrad(grads, original_image) as bilinear's.
ResizeArea(images, size; align_corners) -> float32 (no gradient, as in TF).
Source positions follow TF's CPU kernels: scale = in / out (align_corners: (in - 1) / (out - 1));
half_pixel_centers samples at (i + 0.5) * scale - 0.5 (bilinear) / floor((i + 0.5) * scale)
(nearest); legacy samples at i * scale (align_corners nearest: round(i * scale)). Bicubic
uses the same positions and 4 taps (kernels/cpu/reference/image_kernels.py); area averages the
input span [i * scale, (i + 1) * scale) of each output pixel.
"""

import numbers

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import array_ops, math_ops, no_onnx, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import FLOATS, NUMERIC, define, make_tensor, require_dtype
from graphflow.ops.static_value import shape_vector

_RESIZE_ATTRS = "align_corners:bool half_pixel_centers:bool"


def _check_images(images, what="images"):
    if images.shape.ndims not in (None, 4):
        raise ValueError(f"{what} must be 4-D [batch, height, width, channels], got shape "
                         f"{images.shape}")


def _size_dims(size):
    require_dtype(size, (dtypes.int32,), "size")
    ndims = size.shape.ndims
    if ndims is not None and (ndims != 1 or size.shape[0] not in (None, 2)):
        raise ValueError(f"size must be a 1-D tensor of 2 elements, got shape {size.shape}")
    vector = shape_vector(size)
    if vector is None:
        return [None, None]
    if any(v is not None and v <= 0 for v in vector):
        raise ValueError(f"size must be positive, got {vector}")
    return vector


def _check_attrs(attrs):
    if attrs.get("align_corners") and attrs.get("half_pixel_centers"):
        raise ValueError("align_corners and half_pixel_centers cannot both be true")


def _resized_shape(images, size):
    h, w = _size_dims(size)
    if images.shape.ndims is None:
        return TensorShape([None, h, w, None])
    return TensorShape([images.shape[0], h, w, images.shape[3]])


def _resize_bilinear_infer(inputs, attrs):
    images, size = inputs
    require_dtype(images, NUMERIC, "images")
    _check_images(images)
    _check_attrs(attrs)
    return [(dtypes.float32, _resized_shape(images, size))]


def _resize_bilinear_grad_infer(inputs, attrs):
    grads, original = inputs
    require_dtype(grads, (dtypes.float32,), "grads")
    require_dtype(original, FLOATS, "original_image")
    _check_images(grads, "grads")
    _check_images(original, "original_image")
    _check_attrs(attrs)
    return [(original.dtype, original.shape)]


def _resize_nearest_infer(inputs, attrs):
    images, size = inputs
    require_dtype(images, NUMERIC, "images")
    _check_images(images)
    _check_attrs(attrs)
    return [(images.dtype, _resized_shape(images, size))]


def _resize_area_infer(inputs, attrs):
    images, size = inputs
    require_dtype(images, NUMERIC, "images")
    _check_images(images)
    return [(dtypes.float32, _resized_shape(images, size))]


define("ResizeBilinear", _resize_bilinear_infer, attrs=_RESIZE_ATTRS, onnx={"converter": "resize"})
define("ResizeBilinearGrad", _resize_bilinear_grad_infer, attrs=_RESIZE_ATTRS, onnx=no_onnx.GRADIENT)
define("ResizeNearestNeighbor", _resize_nearest_infer, attrs=_RESIZE_ATTRS, onnx={"converter": "resize"})
define("ResizeNearestNeighborGrad", _resize_nearest_infer, attrs=_RESIZE_ATTRS, onnx=no_onnx.GRADIENT)
define("ResizeBicubic", _resize_bilinear_infer, attrs=_RESIZE_ATTRS, onnx={"converter": "resize"})
define("ResizeBicubicGrad", _resize_bilinear_grad_infer, attrs=_RESIZE_ATTRS, onnx=no_onnx.GRADIENT)
define("ResizeArea", _resize_area_infer, attrs="align_corners:bool",
       onnx=no_onnx.none("ONNX's Resize has no area (box-average) mode"))


def _size_tensor(size):
    if isinstance(size, (list, tuple)) and all(isinstance(s, numbers.Integral) for s in size):
        if len(size) != 2:
            raise ValueError(f"size must have 2 elements (new_height, new_width), got {size}")
    return convert_to_tensor(shape_ops.shape_tensor(size), dtype=dtypes.int32)


def _resize(op_type, images, size, align_corners, half_pixel_centers, name):
    """Run a resize op on 4-D images, or on one 3-D image (batched and unbatched around it)."""
    images = convert_to_tensor(images)
    single = images.shape.ndims == 3
    if single:
        images = shape_ops.expand_dims(images, 0)
    attrs = {"align_corners": align_corners}
    if half_pixel_centers is not None:
        attrs["half_pixel_centers"] = half_pixel_centers
    out = make_tensor(op_type, (images, _size_tensor(size)), attrs, name=name or op_type)
    return shape_ops.squeeze(out, [0]) if single else out


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """`tf.image.resize_bilinear`: bilinear interpolation to `size` = [new_height, new_width];
    the result is float32."""
    return _resize("ResizeBilinear", images, size, align_corners, half_pixel_centers, name)


def resize_nearest_neighbor(images, size, align_corners=False, name=None,
                            half_pixel_centers=False):
    """`tf.image.resize_nearest_neighbor`: the nearest source pixel; keeps the dtype."""
    return _resize("ResizeNearestNeighbor", images, size, align_corners, half_pixel_centers, name)


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """`tf.image.resize_bicubic`: cubic convolution (TF's kernel: a = -0.75 with the legacy
    positions, Keys' a = -0.5 with half_pixel_centers, where taps outside the image are dropped
    and the rest renormalised); the result is float32."""
    return _resize("ResizeBicubic", images, size, align_corners, half_pixel_centers, name)


def resize_area(images, size, align_corners=False, name=None):
    """`tf.image.resize_area`: each output pixel the average of the input area it covers
    (weighted by the overlap); float32."""
    return _resize("ResizeArea", images, size, align_corners, None, name)


def resize_bicubic_grad(grads, original_image, align_corners=False, half_pixel_centers=False,
                        name=None):
    attrs = {"align_corners": align_corners, "half_pixel_centers": half_pixel_centers}
    return make_tensor("ResizeBicubicGrad", (grads, original_image), attrs,
                       name=name or "ResizeBicubicGrad")


def resize_bilinear_grad(grads, original_image, align_corners=False, half_pixel_centers=False,
                         name=None):
    attrs = {"align_corners": align_corners, "half_pixel_centers": half_pixel_centers}
    return make_tensor("ResizeBilinearGrad", (grads, original_image), attrs,
                       name=name or "ResizeBilinearGrad")


def resize_nearest_neighbor_grad(grads, size, align_corners=False, half_pixel_centers=False,
                                 name=None):
    attrs = {"align_corners": align_corners, "half_pixel_centers": half_pixel_centers}
    return make_tensor("ResizeNearestNeighborGrad", (grads, _size_tensor(size)), attrs,
                       name=name or "ResizeNearestNeighborGrad")


def flip_left_right(image):
    """`tf.image.flip_left_right`: reverse the width axis (3-D image or 4-D batch)."""
    image = convert_to_tensor(image, name="image")
    return array_ops.reverse(image, [_spatial_axis(image, "flip_left_right") + 1])


def flip_up_down(image):
    """`tf.image.flip_up_down`: reverse the height axis (3-D image or 4-D batch)."""
    image = convert_to_tensor(image, name="image")
    return array_ops.reverse(image, [_spatial_axis(image, "flip_up_down")])


def _spatial_axis(image, what):
    if image.shape.ndims not in (3, 4):
        raise ValueError(f"{what}: image must be 3-D or 4-D, got shape {image.shape}")
    return image.shape.ndims - 3


def per_image_standardization(image):
    """`tf.image.per_image_standardization`: (x - mean) / max(stddev, 1 / sqrt(num_elements)) over
    each image's height, width and channels; float32 for integer images."""
    with name_scope(None, "per_image_standardization", [image]):
        image = convert_to_tensor(image, name="image")
        if image.shape.ndims not in (3, 4):
            raise ValueError(f"per_image_standardization: image must be 3-D or 4-D, got shape "
                             f"{image.shape}")
        if not image.dtype.is_floating:
            image = math_ops.cast(image, dtypes.float32)
        axes = [-1, -2, -3]
        count = math_ops.cast(math_ops.reduce_prod(shape_ops.shape(image)[-3:]), image.dtype)
        mean = math_ops.reduce_mean(image, axes, keepdims=True)
        stddev = math_ops.sqrt(math_ops.reduce_mean(math_ops.square(image - mean), axes,
                                                    keepdims=True))
        adjusted = math_ops.maximum(stddev, math_ops.rsqrt(count))
        return math_ops.truediv(image - mean, adjusted)


__all__ = []
