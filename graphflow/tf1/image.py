"""`tf.image`: TF1's image functions (resizing, flips and rotations, per-image standardization,
crops, pads, colour adjustments and colour spaces, dtype conversion, image measures)."""

from graphflow.ops.bounding_box_ops import (  # noqa: F401
    draw_bounding_boxes,
    sample_distorted_bounding_box,
)
from graphflow.ops.detection_ops import (  # noqa: F401
    crop_and_resize,
    non_max_suppression,
    non_max_suppression_padded,
    non_max_suppression_with_scores,
)
from graphflow.ops.image_ops import (  # noqa: F401
    flip_left_right,
    flip_up_down,
    per_image_standardization,
    resize_area,
    resize_bicubic,
    resize_bilinear,
    resize_nearest_neighbor,
)
from graphflow.ops.patches_ops import extract_image_patches, extract_patches  # noqa: F401
from graphflow.tf1.image_color import (  # noqa: F401
    adjust_gamma,
    adjust_hue,
    adjust_saturation,
    grayscale_to_rgb,
    hsv_to_rgb,
    random_hue,
    random_saturation,
    rgb_to_hsv,
    rgb_to_yiq,
    rgb_to_yuv,
    yiq_to_rgb,
    yuv_to_rgb,
)
from graphflow.tf1.image_metrics import (  # noqa: F401
    image_gradients,
    psnr,
    sobel_edges,
    ssim,
    ssim_multiscale,
    total_variation,
)
from graphflow.tf1.image_resize import (  # noqa: F401
    ResizeMethod,
    resize,
    resize_image_with_pad,
    resize_images,
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
    rot90,
    transpose,
)

transpose_image = transpose
resize_with_crop_or_pad = resize_image_with_crop_or_pad

__all__ = ["ResizeMethod", "flip_left_right", "flip_up_down", "per_image_standardization",
           "resize_bilinear", "resize_images", "resize_nearest_neighbor",
           "adjust_brightness", "central_crop", "convert_image_dtype", "crop_to_bounding_box",
           "pad_to_bounding_box", "random_brightness", "random_flip_left_right",
           "random_flip_up_down", "rgb_to_grayscale", "random_crop", "adjust_contrast",
           "random_contrast", "resize_image_with_crop_or_pad", "resize_with_crop_or_pad", "rot90",
           "transpose", "transpose_image", "adjust_gamma", "adjust_hue", "adjust_saturation",
           "grayscale_to_rgb", "hsv_to_rgb", "random_hue", "random_saturation", "rgb_to_hsv",
           "rgb_to_yiq", "rgb_to_yuv", "yiq_to_rgb", "yuv_to_rgb", "image_gradients", "psnr",
           "sobel_edges", "ssim", "total_variation", "resize", "resize_area", "resize_bicubic",
           "resize_image_with_pad", "non_max_suppression", "non_max_suppression_padded",
           "non_max_suppression_with_scores", "crop_and_resize", "draw_bounding_boxes",
           "sample_distorted_bounding_box", "ssim_multiscale", "extract_image_patches",
           "extract_patches"]
