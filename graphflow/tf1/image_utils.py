"""More of `tf.image`, composed in Python as TF1 composes them: random flips, rotations and
transposes, bounding-box crops and pads, central crops, crop-or-pad resizing, brightness and
contrast, dtype conversion, grayscale, and `tf.random_crop`.

Images are 3-D [height, width, channels] or 4-D [batch, height, width, channels]. The random
functions draw through graphflow's random ops, so they follow its seed rules (`tf.set_random_seed`
and the op seed).
"""

import numbers

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.ops import (
    array_ops,
    control_flow_ops,
    math_ops,
    random_ops,
    shape_ops,
    slice_ops,
    static_value,
)
from graphflow.ops.core_ops import convert_to_tensor, identity, stack


def _image(image, what):
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims not in (3, 4):
        raise ValueError(f"{what}: 'image' must have either 3 or 4 dimensions, got shape "
                         f"{image.shape}")
    return image


def _random_flip(image, axis, seed, scope):
    """Flip along `axis` (0: height, 1: width of one image) with probability 1/2: one draw for
    a 3-D image, one per image of a 4-D batch (as TF1)."""
    with name_scope(None, scope, [image]):
        image = _image(image, scope)
        if image.shape.ndims == 3:
            flip = math_ops.less(random_ops.random_uniform([], 0, 1.0, seed=seed), 0.5)
            return math_ops.where(flip, array_ops.reverse(image, [axis]), image)
        batch = shape_ops.shape(image)[:1]
        draws = random_ops.random_uniform(batch, 0, 1.0, seed=seed)
        flip = shape_ops.reshape(math_ops.less(draws, 0.5), [-1, 1, 1, 1])  # broadcasts
        return math_ops.where(flip, array_ops.reverse(image, [axis + 1]), image)


def random_flip_left_right(image, seed=None):
    """`tf.image.random_flip_left_right`: mirror the width with probability 1/2."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """`tf.image.random_flip_up_down`: mirror the height with probability 1/2."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


def _hw(image):
    """The window's begin/size prefix for 3-D ([]) or 4-D ([batch]) images."""
    return image.shape.ndims == 4


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """`tf.image.crop_to_bounding_box`: the target_height x target_width window whose top-left
    corner is (offset_height, offset_width)."""
    with name_scope(None, "crop_to_bounding_box", [image]):
        image = _image(image, "crop_to_bounding_box")
        for v, what in ((offset_height, "offset_height"), (offset_width, "offset_width")):
            if isinstance(v, int) and v < 0:
                raise ValueError(f"{what} must be >= 0.")
        for v, what in ((target_height, "target_height"), (target_width, "target_width")):
            if isinstance(v, int) and v <= 0:
                raise ValueError(f"{what} must be > 0.")
        h, w = image.shape[-3], image.shape[-2]
        if isinstance(offset_height, int) and isinstance(target_height, int) and h is not None \
                and offset_height + target_height > h:
            raise ValueError("height must be >= target + offset.")
        if isinstance(offset_width, int) and isinstance(target_width, int) and w is not None \
                and offset_width + target_width > w:
            raise ValueError("width must be >= target + offset.")
        begin = [offset_height, offset_width, 0]
        size = [target_height, target_width, -1]
        if _hw(image):
            begin, size = [0] + begin, [-1] + size
        return slice_ops.slice(image, stack(begin), stack(size))


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """`tf.image.pad_to_bounding_box`: zero-pad the image to target_height x target_width with
    its top-left corner at (offset_height, offset_width)."""
    with name_scope(None, "pad_to_bounding_box", [image]):
        image = _image(image, "pad_to_bounding_box")
        h, w = image.shape[-3], image.shape[-2]
        for v, what in ((offset_height, "offset_height"), (offset_width, "offset_width")):
            if isinstance(v, int) and v < 0:
                raise ValueError(f"{what} must be >= 0")
        dynamic = shape_ops.shape(image)
        height = h if h is not None else dynamic[-3]
        width = w if w is not None else dynamic[-2]
        after_h = target_height - offset_height - height
        after_w = target_width - offset_width - width
        if isinstance(after_h, int) and after_h < 0:
            raise ValueError("height must be <= target - offset")
        if isinstance(after_w, int) and after_w < 0:
            raise ValueError("width must be <= target - offset")
        rows = [[offset_height, after_h], [offset_width, after_w], [0, 0]]
        if _hw(image):
            rows = [[0, 0]] + rows
        paddings = stack([stack(r) for r in rows])
        return array_ops.pad(image, paddings)


def central_crop(image, central_fraction):
    """`tf.image.central_crop`: the central `central_fraction` (0 < f <= 1) of the height and
    width (the image's spatial size must be known)."""
    if central_fraction <= 0.0 or central_fraction > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    with name_scope(None, "central_crop", [image]):
        image = _image(image, "central_crop")
        if central_fraction == 1.0:
            return image
        h, w = image.shape[-3], image.shape[-2]
        if h is None or w is None:
            raise ValueError("central_crop needs a known height and width")
        start_h = int((h - h * central_fraction) / 2)
        start_w = int((w - w * central_fraction) / 2)
        return crop_to_bounding_box(image, start_h, start_w, h - start_h * 2, w - start_w * 2)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """`tf.image.convert_image_dtype`: integers stand for [0, MAX], floats for [0, 1]; values are
    rescaled accordingly (floats to integers: scaled by MAX + 0.5, then cast)."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "convert_image", [image]):
        image = convert_to_tensor(image, name="image")
        if image.dtype == dtype:
            return identity(image)
        cast = _saturate_cast if saturate else math_ops.cast
        if image.dtype.is_integer and dtype.is_integer:
            scale_in, scale_out = image.dtype.max, dtype.max
            if scale_in > scale_out:  # scale down first, then cast
                return cast(math_ops.floordiv(image, (scale_in + 1) // (scale_out + 1)), dtype)
            return math_ops.multiply(cast(image, dtype), (scale_out + 1) // (scale_in + 1))
        if image.dtype.is_floating and dtype.is_floating:
            return math_ops.cast(image, dtype)
        if image.dtype.is_integer:
            return math_ops.multiply(math_ops.cast(image, dtype), 1.0 / image.dtype.max)
        return cast(math_ops.multiply(image, dtype.max + 0.5), dtype)


def _saturate_cast(value, dtype):
    """Clip to `dtype`'s range before casting (TF1's saturate_cast)."""
    lo, hi = dtype.min, dtype.max
    if value.dtype.min < lo:
        value = math_ops.maximum(value, convert_to_tensor(lo, dtype=value.dtype))
    if value.dtype.max > hi:
        value = math_ops.minimum(value, convert_to_tensor(hi, dtype=value.dtype))
    return math_ops.cast(value, dtype)


def adjust_brightness(image, delta):
    """`tf.image.adjust_brightness`: image + delta, computed in float for integer images."""
    with name_scope(None, "adjust_brightness", [image, delta]):
        image = convert_to_tensor(image, name="image")
        orig = image.dtype
        flt = image if orig.is_floating else convert_image_dtype(image, dtypes.float32)
        adjusted = math_ops.add(flt, math_ops.cast(convert_to_tensor(delta), flt.dtype))
        return adjusted if orig.is_floating else convert_image_dtype(adjusted, orig, saturate=True)


def random_brightness(image, max_delta, seed=None):
    """`tf.image.random_brightness`: `adjust_brightness` by a delta uniform in
    [-max_delta, max_delta)."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def adjust_contrast(images, contrast_factor):
    """`tf.image.adjust_contrast`: each channel of each image moved away from (factor > 1) or
    towards its mean over height and width: (x - mean) * factor + mean, in float."""
    with name_scope(None, "adjust_contrast", [images, contrast_factor]):
        images = _image(images, "adjust_contrast")
        orig = images.dtype
        flt = images if orig.is_floating else convert_image_dtype(images, dtypes.float32)
        mean = math_ops.reduce_mean(flt, axis=[-3, -2], keepdims=True)
        factor = math_ops.cast(convert_to_tensor(contrast_factor), flt.dtype)
        adjusted = (flt - mean) * factor + mean
        return adjusted if orig.is_floating else convert_image_dtype(adjusted, orig, saturate=True)


def random_contrast(image, lower, upper, seed=None):
    """`tf.image.random_contrast`: `adjust_contrast` by a factor uniform in [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    factor = random_ops.random_uniform([], lower, upper, seed=seed)
    return adjust_contrast(image, factor)


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """`tf.image.resize_image_with_crop_or_pad`: centrally crop the dimensions larger than the
    target and pad (with zeros) those smaller, to target_height x target_width. The image's height
    and width must be known when the graph is built."""
    with name_scope(None, "resize_image_with_crop_or_pad", [image]):
        image = _image(image, "resize_image_with_crop_or_pad")
        dims = image.shape.as_list()
        height, width = dims[-3], dims[-2]
        if height is None or width is None:
            raise ValueError("resize_image_with_crop_or_pad: the image's height and width must be "
                             f"known when the graph is built, got shape {image.shape}")
        if target_height <= 0 or target_width <= 0:
            raise ValueError("target_height and target_width must be > 0.")
        cropped = crop_to_bounding_box(image, max((height - target_height) // 2, 0),
                                       max((width - target_width) // 2, 0),
                                       min(target_height, height), min(target_width, width))
        return pad_to_bounding_box(cropped, max((target_height - height) // 2, 0),
                                   max((target_width - width) // 2, 0),
                                   target_height, target_width)


def rgb_to_grayscale(images, name=None):
    """`tf.image.rgb_to_grayscale`: 0.2989 R + 0.5870 G + 0.1140 B, keeping a last axis of 1."""
    with name_scope(name, "rgb_to_grayscale", [images]):
        images = convert_to_tensor(images, name="images")
        orig = images.dtype
        flt = convert_image_dtype(images, dtypes.float32)
        weights = convert_to_tensor([0.2989, 0.5870, 0.1140], dtype=dtypes.float32)
        gray = math_ops.reduce_sum(flt * weights, -1, keepdims=True)
        return convert_image_dtype(gray, orig)


def random_crop(value, size, seed=None, name=None):
    """`tf.random_crop`: a window of shape `size` at a uniformly random offset in `value`."""
    with name_scope(name, "random_crop", [value, size]):
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = shape_ops.shape(value)
        limit = shape - size + 1
        offset = math_ops.mod(random_ops.random_uniform(shape_ops.shape(shape), dtype=dtypes.int32,
                                                        maxval=dtypes.int32.max, seed=seed),
                              limit)
        return slice_ops.slice(value, offset, size)


def _rot90_once(image, k, batched):
    """image rotated by k * 90 degrees counter-clockwise (k in 0..3, a Python int)."""
    h, w = (1, 2) if batched else (0, 1)
    perm = [0, 2, 1, 3] if batched else [1, 0, 2]
    if k == 1:
        return array_ops.transpose(array_ops.reverse(image, [w]), perm)
    if k == 2:
        return array_ops.reverse(image, [h, w])
    if k == 3:
        return array_ops.reverse(array_ops.transpose(image, perm), [w])
    return image


def rot90(image, k=1, name=None):
    """`tf.image.rot90`: rotate a 3-D image or a 4-D batch by k * 90 degrees counter-clockwise
    (k a Python int or an int32 scalar tensor; taken mod 4)."""
    with name_scope(name, "rot90", [image, k]):
        image = _image(image, "rot90")
        batched = image.shape.ndims == 4
        if not isinstance(k, numbers.Integral):
            k = convert_to_tensor(k, dtype=dtypes.int32, name="k")
            known = static_value.scalar_value(k)
            k = k if known is None else known
        if isinstance(k, numbers.Integral):
            return _rot90_once(image, int(k) % 4, batched)
        k = math_ops.mod(k, 4)
        if k.shape.ndims not in (None, 0):
            raise ValueError(f"rot90: 'k' must be a scalar, got shape {k.shape}")
        cases = [(math_ops.equal(k, r), (lambda r=r: _rot90_once(image, r, batched)))
                 for r in (1, 2, 3)]
        result = control_flow_ops.case(cases, default=lambda: image, exclusive=True)
        dims = image.shape.as_list()
        result.set_shape(dims[:-3] + [None, None, dims[-1]])
        return result


def transpose(image, name=None):
    """`tf.image.transpose`: swap the height and width of a 3-D image or a 4-D batch."""
    with name_scope(name, "transpose", [image]):
        image = _image(image, "transpose")
        perm = [0, 2, 1, 3] if image.shape.ndims == 4 else [1, 0, 2]
        return array_ops.transpose(image, perm)


__all__ = ["random_flip_left_right", "random_flip_up_down", "crop_to_bounding_box",
           "pad_to_bounding_box", "central_crop", "convert_image_dtype", "adjust_brightness",
           "random_brightness", "adjust_contrast", "random_contrast", "resize_image_with_crop_or_pad",
           "rgb_to_grayscale", "rot90", "transpose"]
