"""`tf.image`: TF1's image functions (resizing, flips, per-image standardization, crops, pads,
brightness and contrast, crop-or-pad resizing, dtype conversion, grayscale)."""

from graphflow.ops.image_ops import (  # noqa: F401
    ResizeMethod,
    flip_left_right,
    flip_up_down,
    per_image_standardization,
    resize_bilinear,
    resize_images,
    resize_nearest_neighbor,
)
from graphflow.tf1.image_utils import (  # noqa: F401
    adjust_brightness,
    adjust_contrast,
    central_crop,
    convert_image_dtype,
    crop_to_bounding_box,
    pad_to_bounding_box,
    random_brightness,
    random_contrast,
    random_crop,
    random_flip_left_right,
    random_flip_up_down,
    resize_image_with_crop_or_pad,
    rgb_to_grayscale,
)

__all__ = ["ResizeMethod", "flip_left_right", "flip_up_down", "per_image_standardization",
           "resize_bilinear", "resize_images", "resize_nearest_neighbor",
           "adjust_brightness", "central_crop", "convert_image_dtype", "crop_to_bounding_box",
           "pad_to_bounding_box", "random_brightness", "random_flip_left_right",
           "random_flip_up_down", "rgb_to_grayscale", "random_crop", "adjust_contrast",
           "random_contrast", "resize_image_with_crop_or_pad"]
