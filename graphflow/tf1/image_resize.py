"""`tf.image.resize_images` / `tf.image.resize` (TF1's, one function under both names) and
`tf.image.resize_image_with_pad`, composed over the resize ops as TF1 composes them: the method
picks ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic or ResizeArea (TF1's integer
ResizeMethod values or the method names), preserve_aspect_ratio scales both sides by the smaller
factor, and an image already of the target size is returned as it is."""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.ops import image_ops, math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor, stack
from graphflow.ops.static_value import shape_vector
from graphflow.tf1.image_utils import pad_to_bounding_box


class ResizeMethod:
    """`tf.image.ResizeMethod` (TF1's values; `resize_images` also takes the names TF's v2
    ResizeMethod uses: "bilinear", "nearest", "bicubic", "area")."""
    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_METHODS = {ResizeMethod.BILINEAR: "bilinear", ResizeMethod.NEAREST_NEIGHBOR: "nearest",
            ResizeMethod.BICUBIC: "bicubic", ResizeMethod.AREA: "area",
            "bilinear": "bilinear", "nearest": "nearest", "bicubic": "bicubic", "area": "area"}


def _resizer(method, align_corners):
    try:
        kind = _METHODS[method]
    except (KeyError, TypeError):
        raise ValueError(f"Resize method is not implemented: {method}") from None
    if kind == "bilinear":
        return lambda im, size: image_ops.resize_bilinear(im, size, align_corners=align_corners)
    if kind == "nearest":
        return lambda im, size: image_ops.resize_nearest_neighbor(im, size,
                                                                  align_corners=align_corners)
    if kind == "bicubic":
        return lambda im, size: image_ops.resize_bicubic(im, size, align_corners=align_corners)
    return lambda im, size: image_ops.resize_area(im, size, align_corners=align_corners)


def _dims(images):
    """(height, width) of 4-D images: static ints where known, else scalar tensors."""
    dynamic = shape_ops.shape(images)
    return [d if d is not None else dynamic[i] for i, d in ((1, images.shape[1]),
                                                              (2, images.shape[2]))]


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False,
                  preserve_aspect_ratio=False, name=None):
    """`tf.image.resize_images` (TF1; also `tf.image.resize`): resize 3-D or 4-D images to
    `size` = [new_height, new_width]. BILINEAR, BICUBIC and AREA give float32; NEAREST_NEIGHBOR
    keeps the dtype. With preserve_aspect_ratio the image fits inside `size` (both sides scaled
    by the smaller factor, rounded half to even)."""
    resize_fn = _resizer(method, align_corners)
    with name_scope(name, "resize", [images, size]):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is None:
            raise ValueError("'images' contains no shape.")
        if images.shape.ndims not in (3, 4):
            raise ValueError(f"'images' must have either 3 or 4 dimensions, got shape "
                             f"{images.shape}")
        original = images
        single = images.shape.ndims == 3
        if single:
            images = shape_ops.expand_dims(images, 0)
        size = image_ops._size_tensor(size)
        if not size.shape.is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
        if preserve_aspect_ratio:
            size = _aspect_size(images, size)
        target = shape_vector(size) or [None, None]
        if None not in target and images.shape.as_list()[1:3] == list(target):
            return original
        out = resize_fn(images, size)
        out.set_shape([None, target[0], target[1], None])
        return shape_ops.squeeze(out, [0]) if single else out


resize = resize_images


def _aspect_size(images, size):
    """The size within `size` that keeps images' aspect ratio (float32, rounded half to even as
    TF's round), computed now when the sizes are known, else in the graph."""
    known = [images.shape[1], images.shape[2]]
    wanted = shape_vector(size)
    if None not in known and wanted is not None and None not in wanted:
        h, w = np.float32(known[0]), np.float32(known[1])
        factor = min(np.float32(wanted[0]) / h, np.float32(wanted[1]) / w)
        return convert_to_tensor([int(np.rint(factor * h)), int(np.rint(factor * w))],
                                 dtype=dtypes.int32)
    height, width = (math_ops.cast(d, dtypes.float32) for d in _dims(images))
    factor = math_ops.minimum(math_ops.cast(size[0], dtypes.float32) / height,
                              math_ops.cast(size[1], dtypes.float32) / width)
    return stack([math_ops.cast(math_ops.round(factor * height), dtypes.int32),
                  math_ops.cast(math_ops.round(factor * width), dtypes.int32)])


def resize_image_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR,
                          align_corners=False):
    """`tf.image.resize_image_with_pad` (TF1): resize to fit inside target_height x target_width
    keeping the aspect ratio (sizes rounded down), then zero-pad the rest evenly (the extra pixel
    at the bottom / right)."""
    with name_scope(None, "resize_image_with_pad", [image]):
        image = convert_to_tensor(image, name="image")
        if image.shape.ndims not in (3, 4):
            raise ValueError(f"'image' must have either 3 or 4 dimensions, got shape "
                             f"{image.shape}")
        for value, what in ((target_height, "target_height"), (target_width, "target_width")):
            if isinstance(value, int) and value <= 0:
                raise ValueError(f"{what} must be > 0.")
        single = image.shape.ndims == 3
        if single:
            image = shape_ops.expand_dims(image, 0)
        if None not in image.shape.as_list()[1:3] and isinstance(target_height, int) \
                and isinstance(target_width, int):
            f32 = np.float32
            height, width = f32(image.shape[1]), f32(image.shape[2])
            ratio = max(width / f32(target_width), height / f32(target_height))
            new_h, new_w = height / ratio, width / ratio
            size = [int(np.floor(new_h)), int(np.floor(new_w))]
            pad_h = max(0, int(np.floor((f32(target_height) - new_h) / f32(2))))
            pad_w = max(0, int(np.floor((f32(target_width) - new_w) / f32(2))))
        else:
            height, width = (math_ops.cast(d, dtypes.float32) for d in _dims(image))
            f_target_h = math_ops.cast(target_height, dtypes.float32)
            f_target_w = math_ops.cast(target_width, dtypes.float32)
            ratio = math_ops.maximum(width / f_target_w, height / f_target_h)
            new_h, new_w = height / ratio, width / ratio
            size = stack([math_ops.cast(math_ops.floor(new_h), dtypes.int32),
                          math_ops.cast(math_ops.floor(new_w), dtypes.int32)])
            pad_h = math_ops.maximum(0, math_ops.cast(math_ops.floor((f_target_h - new_h) / 2),
                                                      dtypes.int32))
            pad_w = math_ops.maximum(0, math_ops.cast(math_ops.floor((f_target_w - new_w) / 2),
                                                      dtypes.int32))
        resized = resize_images(image, size, method, align_corners)
        padded = pad_to_bounding_box(resized, pad_h, pad_w, target_height, target_width)
        return shape_ops.squeeze(padded, [0]) if single else padded


__all__ = ["ResizeMethod", "resize_images", "resize", "resize_image_with_pad"]
