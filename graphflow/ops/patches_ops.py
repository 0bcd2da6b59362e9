"""`tf.extract_image_patches` / `tf.image.extract_patches`: op type ExtractImagePatches, every
ksize_rows x ksize_cols window (taps `rates` apart, windows `strides` apart, VALID or SAME
padding with zeros) of NHWC images, flattened into the depth axis in (row, column, channel)
order: [batch, out_rows, out_cols, ksize_rows * ksize_cols * depth]. Its gradient
(patches_grad.py) sums each patch value back onto the pixel it came from, as TF's does.
"""

from graphflow.framework.graph import name_scope
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import NUMERIC, define, make_op, require_dtype


def out_size(size, ksize, stride, rate, padding):
    """Output length and the padding before it along one axis (TF's windowed-op rule)."""
    effective = ksize + (ksize - 1) * (rate - 1)
    if padding == "VALID":
        return max(-(-(size - effective + 1) // stride), 0), 0
    out = -(-size // stride)
    total = max((out - 1) * stride + effective - size, 0)
    return out, total // 2


def _check_attrs(attrs):
    for name in ("ksizes", "strides", "rates"):
        v = attrs[name]
        if len(v) != 4 or v[0] != 1 or v[3] != 1 or min(v) < 1:
            raise ValueError(f"extract_image_patches: {name} must be [1, rows, cols, 1] of "
                             f"positive ints, got {v}")
    if attrs["padding"] not in ("VALID", "SAME"):
        raise ValueError(f"padding must be 'VALID' or 'SAME', got {attrs['padding']!r}")


def _infer(inputs, attrs):
    (images,) = inputs
    require_dtype(images, NUMERIC, "images")
    _check_attrs(attrs)
    if images.shape.ndims not in (None, 4):
        raise ValueError(f"extract_image_patches: images must be 4-D [batch, rows, cols, depth], "
                         f"got shape {images.shape}")
    if images.shape.ndims is None:
        return [(images.dtype, TensorShape([None] * 4))]
    b, h, w, d = images.shape.as_list()
    k, s, r = attrs["ksizes"], attrs["strides"], attrs["rates"]
    dims = [None if n is None else out_size(n, k[i], s[i], r[i], attrs["padding"])[0]
            for i, n in ((1, h), (2, w))]
    return [(images.dtype, TensorShape([b] + dims + [None if d is None else k[1] * k[2] * d]))]


define("ExtractImagePatches", _infer,
       attrs="ksizes:list(int) strides:list(int) rates:list(int) padding:string",
       onnx=no_onnx.none("no ONNX op gathers image patches (Im2Col is not in the standard)"))


def extract_image_patches(images, ksizes=None, strides=None, rates=None, padding=None, name=None,
                          sizes=None):
    """`tf.extract_image_patches` / `tf.image.extract_image_patches` (TF1's; `sizes` is TF 2's
    name for ksizes)."""
    ksizes = ksizes if ksizes is not None else sizes
    if ksizes is None or strides is None or rates is None or padding is None:
        raise ValueError("extract_image_patches needs ksizes (or sizes), strides, rates and "
                         "padding")
    with name_scope(name, "ExtractImagePatches"):
        images = convert_to_tensor(images, name="images")
        attrs = {"ksizes": [int(v) for v in ksizes], "strides": [int(v) for v in strides],
                 "rates": [int(v) for v in rates], "padding": str(padding).upper()}
        return make_op("ExtractImagePatches", (images,), attrs,
                       name="ExtractImagePatches").outputs[0]


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """`tf.image.extract_patches`: `extract_image_patches` with TF 2's argument names."""
    return extract_image_patches(images, sizes, strides, rates, padding, name=name)


__all__ = ["extract_image_patches"]
