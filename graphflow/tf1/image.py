"""`tf.image`: TF1's image functions (resizing, flips, per-image standardization)."""

from graphflow.ops.image_ops import (  # noqa: F401
    ResizeMethod,
    flip_left_right,
    flip_up_down,
    per_image_standardization,
    resize_bilinear,
    resize_images,
    resize_nearest_neighbor,
)

__all__ = ["ResizeMethod", "flip_left_right", "flip_up_down", "per_image_standardization",
           "resize_bilinear", "resize_images", "resize_nearest_neighbor"]
