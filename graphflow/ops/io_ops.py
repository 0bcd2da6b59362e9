"""File and image-decoding ops: `tf.read_file`, `tf.write_file` (`tf.io.*`), and
`tf.image.decode_jpeg` / `decode_png` / `decode_bmp` / `decode_gif` / `decode_image`.

Files are read when the op runs (never at graph-build or plan-compile time: the ops are `stateful`,
so constant folding leaves them alone and each run sees the file as it is then). Images are decoded
by Pillow, an optional dependency (`pip install 'graphflow[images]'`); building a decode op without
it fails at the user's line with that instruction.
"""

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_op, make_tensor, no_gradient, require_dtype

PILLOW_HINT = "pip install 'graphflow[images]' (or pip install Pillow)"


def require_pillow(what):
    """Import Pillow's Image module or fail with the install instruction, naming `what` needs it."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(f"{what} decodes images with Pillow, which is not installed: "
                          f"{PILLOW_HINT}") from None
    return Image


def _scalar_string(t, what):
    require_dtype(t, (dtypes.string,), what)
    if t.shape.ndims not in (None, 0):
        raise ValueError(f"{what} must be a scalar string, got shape {t.shape}")


# ---------------------------------------------------------------- files
def _read_file_infer(inputs, attrs):
    _scalar_string(inputs[0], "the filename of read_file")
    return [(dtypes.string, TensorShape([]))]


def _write_file_infer(inputs, attrs):
    _scalar_string(inputs[0], "the filename of write_file")
    _scalar_string(inputs[1], "the contents of write_file")
    return []


define("ReadFile", _read_file_infer, stateful=True, touches="files", onnx=no_onnx.IO)
define("WriteFile", _write_file_infer, stateful=True, touches="files", onnx=no_onnx.IO)


def read_file(filename, name=None):
    """`tf.read_file` / `tf.io.read_file`: the bytes of the file `filename` (a scalar string)."""
    t = convert_to_tensor(filename, dtype=dtypes.string)
    return make_tensor("ReadFile", (t,), name=name or "ReadFile")


def write_file(filename, contents, name=None):
    """`tf.write_file` / `tf.io.write_file`: an op writing `contents` to `filename` (replacing it,
    creating missing directories)."""
    f = convert_to_tensor(filename, dtype=dtypes.string)
    c = convert_to_tensor(contents, dtype=dtypes.string)
    return make_op("WriteFile", (f, c), name=name or "WriteFile")


# ---------------------------------------------------------------- image decoding
def _channels(attrs, allowed=(0, 1, 3, 4)):
    channels = attrs["channels"]
    if channels not in allowed:
        raise ValueError(f"channels must be one of {list(allowed)}, got {channels}")
    return channels or None


def _decode_infer(what, allowed=(0, 1, 3, 4)):
    def infer(inputs, attrs):
        _scalar_string(inputs[0], f"the contents of {what}")
        dtype = dtypes.as_dtype(attrs.get("dtype", "uint8"))
        return [(dtype, TensorShape([None, None, _channels(attrs, allowed)]))]
    return infer


def _decode_gif_infer(inputs, attrs):
    _scalar_string(inputs[0], "the contents of decode_gif")
    return [(dtypes.uint8, TensorShape([None, None, None, 3]))]


def _decode_image_infer(inputs, attrs):
    _scalar_string(inputs[0], "the contents of decode_image")
    channels = _channels(attrs)
    dtype = dtypes.as_dtype(attrs["dtype"])
    if attrs["expand_animations"]:
        return [(dtype, TensorShape(None))]  # 3-D, or 4-D for an animated GIF
    return [(dtype, TensorShape([None, None, channels]))]


_JPEG_ATTRS = ("channels:int ratio:int fancy_upscaling:bool try_recover_truncated:bool "
               "acceptable_fraction:float dct_method:string")
_SIZE_FROM_DATA = {"value_dependent_shape": True}  # the image's size is known once it is read
define("DecodeJpeg", _decode_infer("decode_jpeg", (0, 1, 3)), attrs=_JPEG_ATTRS,
       **_SIZE_FROM_DATA, onnx=no_onnx.IO)
define("DecodePng", _decode_infer("decode_png"), attrs="channels:int dtype:dtype",
       **_SIZE_FROM_DATA, onnx=no_onnx.IO)
define("DecodeBmp", _decode_infer("decode_bmp", (0, 3, 4)), attrs="channels:int",
       **_SIZE_FROM_DATA, onnx=no_onnx.IO)
define("DecodeGif", _decode_gif_infer, **_SIZE_FROM_DATA, onnx=no_onnx.IO)
define("DecodeImage", _decode_image_infer, attrs="channels:int dtype:dtype expand_animations:bool",
       **_SIZE_FROM_DATA, onnx=no_onnx.IO)
no_gradient("ReadFile", "DecodeJpeg", "DecodePng", "DecodeBmp", "DecodeGif", "DecodeImage")


def _contents(contents):
    return convert_to_tensor(contents, dtype=dtypes.string)


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1.0, dct_method="", name=None):
    """`tf.image.decode_jpeg`: a JPEG's pixels as uint8 [height, width, channels] (channels 0: as in
    the file; 1: grayscale; 3: RGB); `ratio` 1, 2, 4 or 8 downscales while decoding.

    libjpeg (through Pillow) decodes with the accurate integer IDCT and fancy upsampling: the pixels
    equal TF's with dct_method="INTEGER_ACCURATE"; TF's default ("", its fast IDCT) differs from
    them by a few levels at most. fancy_upscaling=False is not available."""
    require_pillow("tf.image.decode_jpeg")
    if ratio not in (1, 2, 4, 8):
        raise ValueError(f"decode_jpeg: ratio must be 1, 2, 4 or 8, got {ratio}")
    if not fancy_upscaling:
        raise ValueError("decode_jpeg: graphflow's JPEG decoder always uses fancy upscaling "
                         "(fancy_upscaling=False is not available)")
    if dct_method not in ("", "INTEGER_ACCURATE", "INTEGER_FAST"):
        raise ValueError(f"decode_jpeg: dct_method must be '', 'INTEGER_FAST' or "
                         f"'INTEGER_ACCURATE', got {dct_method!r}")
    attrs = {"channels": int(channels), "ratio": int(ratio), "fancy_upscaling": bool(fancy_upscaling),
             "try_recover_truncated": bool(try_recover_truncated),
             "acceptable_fraction": float(acceptable_fraction), "dct_method": str(dct_method)}
    return make_tensor("DecodeJpeg", (_contents(contents),), attrs, name=name or "DecodeJpeg")


def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None):
    """`tf.image.decode_png`: a PNG's pixels as uint8 (or uint16) [height, width, channels]
    (channels 0: as in the file; 1: gray; 3: RGB; 4: RGBA)."""
    require_pillow("tf.image.decode_png")
    dtype = dtypes.as_dtype(dtype)
    if dtype not in (dtypes.uint8, dtypes.uint16):
        raise TypeError(f"decode_png: dtype must be uint8 or uint16, got {dtype.name}")
    return make_tensor("DecodePng", (_contents(contents),),
                       {"channels": int(channels), "dtype": dtype.name}, name=name or "DecodePng")


def decode_bmp(contents, channels=0, name=None):
    """`tf.image.decode_bmp`: a BMP's pixels as uint8 [height, width, channels]."""
    require_pillow("tf.image.decode_bmp")
    return make_tensor("DecodeBmp", (_contents(contents),), {"channels": int(channels)},
                       name=name or "DecodeBmp")


def decode_gif(contents, name=None):
    """`tf.image.decode_gif`: every frame of a GIF as uint8 [frames, height, width, 3]."""
    require_pillow("tf.image.decode_gif")
    return make_tensor("DecodeGif", (_contents(contents),), name=name or "DecodeGif")


def decode_image(contents, channels=None, dtype=dtypes.uint8, name=None, expand_animations=True):
    """`tf.image.decode_image`: decode a JPEG, PNG, BMP or GIF by its content; 3-D [h, w, c], or
    4-D [frames, h, w, 3] for a GIF when `expand_animations`. dtype uint8, uint16 or float32 (then
    scaled to [0, 1] as `tf.image.convert_image_dtype` does)."""
    require_pillow("tf.image.decode_image")
    dtype = dtypes.as_dtype(dtype)
    if dtype not in (dtypes.uint8, dtypes.uint16, dtypes.float32):
        raise TypeError(f"decode_image: dtype must be uint8, uint16 or float32, got {dtype.name}")
    attrs = {"channels": int(channels or 0), "dtype": dtype.name,
             "expand_animations": bool(expand_animations)}
    return make_tensor("DecodeImage", (_contents(contents),), attrs, name=name or "decode_image")


__all__ = ["read_file", "write_file", "decode_jpeg", "decode_png", "decode_bmp", "decode_gif",
           "decode_image"]
