"""`tf.image`'s colour functions, composed from ordinary ops: RGB <-> HSV (TF's formulas: hue and
saturation in [0, 1]), hue, saturation and gamma adjustments and their random forms, RGB <-> YIQ /
YUV (TF's 3x3 matrices over the last axis) and grayscale -> RGB.

TF runs RGBToHSV, HSVToRGB, AdjustHue and AdjustSaturation as fused kernels; here the same
per-pixel arithmetic is written with elementwise ops, so the results agree with TF's to float32
rounding, every function runs on every device graphflow has, and all are differentiable (away
from the ties of max/min). Integer images are converted to float32 in [0, 1] and back, as TF1.
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.ops import array_ops, math_composites, math_ops, random_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor, stack
from graphflow.tf1.image_utils import convert_image_dtype


def _rgb(images, what):
    images = convert_to_tensor(images, name="images")
    last = images.shape[-1] if images.shape.ndims else None
    if images.shape.ndims == 0 or (last is not None and last != 3):
        raise ValueError(f"{what}: the last dimension of 'images' must be 3 (RGB), got shape "
                         f"{images.shape}")
    return images


def _channels(images):
    return [images[..., i] for i in range(3)]


def _float_for_kernel(image):
    """TF1's adjust_hue / adjust_saturation / adjust_gamma run in float32 (float16 kept)."""
    if image.dtype in (dtypes.float16, dtypes.float32):
        return image
    return convert_image_dtype(image, dtypes.float32)


def _hsv(r, g, b):
    """TF's RGB -> HSV of each pixel: (hue in [0, 1), saturation, value)."""
    v = math_ops.maximum(math_ops.maximum(r, g), b)
    spread = v - math_ops.minimum(math_ops.minimum(r, g), b)
    zero = shape_ops.zeros_like(v)
    positive = math_ops.greater(spread, zero)
    s = math_ops.where(math_ops.greater(v, zero),
                       math_ops.truediv(spread, math_ops.where(math_ops.greater(v, zero), v,
                                                               shape_ops.ones_like(v))), zero)
    # 1 / (6 * spread), with a stand-in 1 where the spread is 0 (that hue is 0: no inf * 0)
    norm = math_ops.reciprocal(math_ops.where(positive, spread, shape_ops.ones_like(v))) * (1.0 / 6.0)
    h = math_ops.where(math_ops.equal(r, v), norm * (g - b),
                       math_ops.where(math_ops.equal(g, v), norm * (b - r) + 2.0 / 6.0,
                                      norm * (r - g) + 4.0 / 6.0))
    h = math_ops.where(positive, h, zero)
    h = math_ops.where(math_ops.less(h, zero), h + 1.0, h)
    return h, s, v


def _rgb_from_hsv(h, s, v):
    """TF's HSV -> RGB of each pixel (hue in [0, 1], wrapping at 1)."""
    dh = h * 6.0

    def clip(t):
        return math_ops.minimum(math_ops.maximum(t, 0.0), 1.0)
    dr = clip(math_ops.abs(dh - 3.0) - 1.0)
    dg = clip(2.0 - math_ops.abs(dh - 2.0))
    db = clip(2.0 - math_ops.abs(dh - 4.0))
    one_s = 1.0 - s
    return [(one_s + s * d) * v for d in (dr, dg, db)]


def rgb_to_hsv(images, name=None):
    """`tf.image.rgb_to_hsv`: RGB floats in [0, 1] to HSV, each in [0, 1] (last axis of 3)."""
    with name_scope(name, "RGBToHSV", [images]):
        images = _rgb(images, "rgb_to_hsv")
        if not images.dtype.is_floating:
            raise TypeError(f"rgb_to_hsv: 'images' must be a float tensor, got {images.dtype.name}")
        return stack(list(_hsv(*_channels(images))), axis=-1)


def hsv_to_rgb(images, name=None):
    """`tf.image.hsv_to_rgb`: HSV in [0, 1] to RGB (last axis of 3)."""
    with name_scope(name, "HSVToRGB", [images]):
        images = _rgb(images, "hsv_to_rgb")
        if not images.dtype.is_floating:
            raise TypeError(f"hsv_to_rgb: 'images' must be a float tensor, got {images.dtype.name}")
        return stack(_rgb_from_hsv(*_channels(images)), axis=-1)


def adjust_hue(image, delta, name=None):
    """`tf.image.adjust_hue`: rotate the hue by `delta` (in [-1, 1]; TF wraps it into [0, 1))."""
    with name_scope(name, "adjust_hue", [image]):
        image = _rgb(image, "adjust_hue")
        orig = image.dtype
        flt = _float_for_kernel(image)
        h, s, v = _hsv(*_channels(flt))
        h = h + math_ops.cast(convert_to_tensor(delta, name="delta"), flt.dtype)
        h = h - math_ops.floor(h)
        return convert_image_dtype(stack(_rgb_from_hsv(h, s, v), axis=-1), orig)


def adjust_saturation(image, saturation_factor, name=None):
    """`tf.image.adjust_saturation`: scale the saturation by `saturation_factor`, clipped to
    [0, 1]."""
    with name_scope(name, "adjust_saturation", [image]):
        image = _rgb(image, "adjust_saturation")
        orig = image.dtype
        flt = _float_for_kernel(image)
        h, s, v = _hsv(*_channels(flt))
        factor = math_ops.cast(convert_to_tensor(saturation_factor, name="saturation_factor"),
                               flt.dtype)
        s = math_ops.minimum(math_ops.maximum(s * factor, 0.0), 1.0)
        return convert_image_dtype(stack(_rgb_from_hsv(h, s, v), axis=-1), orig)


def adjust_gamma(image, gamma=1, gain=1):
    """`tf.image.adjust_gamma`: gain * image ** gamma, on [0, 1] floats (integer images are
    converted there and back, saturating)."""
    with name_scope(None, "adjust_gamma", [image, gamma, gain]):
        image = convert_to_tensor(image, name="image")
        if isinstance(gamma, (int, float)) and gamma < 0:
            raise ValueError("Gamma should be a non-negative real number.")
        orig = image.dtype
        flt = _float_for_kernel(image)
        gamma = math_ops.cast(convert_to_tensor(gamma, name="gamma"), flt.dtype)
        gain = math_ops.cast(convert_to_tensor(gain, name="gain"), flt.dtype)
        adjusted = gain * math_ops.pow(flt, gamma)
        return convert_image_dtype(adjusted, orig, saturate=True)


def random_hue(image, max_delta, seed=None):
    """`tf.image.random_hue`: `adjust_hue` by a delta uniform in [-max_delta, max_delta)
    (0 <= max_delta <= 0.5)."""
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_hue(image, delta)


def random_saturation(image, lower, upper, seed=None):
    """`tf.image.random_saturation`: `adjust_saturation` by a factor uniform in [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    factor = random_ops.random_uniform([], lower, upper, seed=seed)
    return adjust_saturation(image, factor)


# TF's colour-space matrices: out[..., j] = sum_i in[..., i] * M[i][j]
_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
               [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021],
               [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
               [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def _color_matrix(images, matrix, what):
    images = _rgb(images, what)
    if not images.dtype.is_floating:
        raise TypeError(f"{what}: 'images' must be a float tensor, got {images.dtype.name}")
    kernel = convert_to_tensor(matrix, dtype=images.dtype)
    return math_composites.tensordot(images, kernel, axes=[[images.shape.ndims - 1], [0]])


def rgb_to_yiq(images):
    """`tf.image.rgb_to_yiq`: RGB in [0, 1] to YIQ."""
    return _color_matrix(images, _RGB_TO_YIQ, "rgb_to_yiq")


def yiq_to_rgb(images):
    """`tf.image.yiq_to_rgb`: YIQ to RGB."""
    return _color_matrix(images, _YIQ_TO_RGB, "yiq_to_rgb")


def rgb_to_yuv(images):
    """`tf.image.rgb_to_yuv`: RGB in [0, 1] to YUV."""
    return _color_matrix(images, _RGB_TO_YUV, "rgb_to_yuv")


def yuv_to_rgb(images):
    """`tf.image.yuv_to_rgb`: YUV to RGB."""
    return _color_matrix(images, _YUV_TO_RGB, "yuv_to_rgb")


def grayscale_to_rgb(images, name=None):
    """`tf.image.grayscale_to_rgb`: repeat a last axis of 1 three times."""
    with name_scope(name, "grayscale_to_rgb", [images]):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is not None and (images.shape.ndims < 2
                                               or images.shape[-1] not in (None, 1)):
            raise ValueError(f"grayscale_to_rgb: 'images' must be at least 2-D with a last "
                             f"dimension of 1, got shape {images.shape}")
        if images.shape.ndims is not None:
            multiples = [1] * (images.shape.ndims - 1) + [3]
        else:
            multiples = shape_ops.concat([shape_ops.ones_like(shape_ops.shape(images))[:-1], [3]], 0)
        return array_ops.tile(images, multiples)


__all__ = ["rgb_to_hsv", "hsv_to_rgb", "adjust_hue", "adjust_saturation", "adjust_gamma",
           "random_hue", "random_saturation", "rgb_to_yiq", "yiq_to_rgb", "rgb_to_yuv",
           "yuv_to_rgb", "grayscale_to_rgb"]
