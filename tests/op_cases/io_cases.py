"""Cases for the file and image-decoding ops. Images are built here with Pillow (PNG, BMP and GIF are
lossless, so the expected pixels are known exactly); the cases are skipped without Pillow."""

import io
import os
import tempfile

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase

try:
    from PIL import Image
except ImportError:  # graphflow[images] not installed: no image cases
    Image = None

_DIR = tempfile.mkdtemp(prefix="graphflow-io-cases-")
_PIXELS = np.stack([*np.meshgrid(np.arange(5) * 40, np.arange(4) * 60, indexing="xy"),
                    np.full((4, 5), 7)], axis=-1).astype(np.uint8)  # [4, 5, 3]


def _blob(data):
    out = np.empty((), dtype=object)
    out[()] = data
    return out


def _path(name):
    return np.array(os.path.join(_DIR, name))


def _encoded(fmt, pixels, **kwargs):
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format=fmt, **kwargs)
    return _blob(buf.getvalue())


def _write_then_read(path, contents):
    with tf.control_dependencies([tf.io.write_file(path, contents)]):
        return tf.read_file(path)


def _gray(rgb):
    r, g, b = (rgb[..., i].astype(np.uint32) for i in range(3))
    return ((r * 9797 + g * 19234 + b * 3737) >> 15).astype(np.uint8)[..., None]


CASES = [
    OpCase("WriteFile", _write_then_read, [_path("a/b.bin"), _blob(b"\x00\xffbytes")],
           lambda p, c: _blob(b"\x00\xffbytes"), grad=False),
    OpCase("ReadFile", _write_then_read, [_path("c.txt"), _blob(b"text")],
           lambda p, c: _blob(b"text"), grad=False),
]

if Image is not None:
    _alpha = np.concatenate([_PIXELS, np.full((4, 5, 1), 128, np.uint8)], axis=-1)
    CASES += [
        OpCase("DecodePng", tf.image.decode_png, [_encoded("PNG", _PIXELS)], lambda c: _PIXELS,
               grad=False),
        OpCase("DecodePng", lambda c: tf.image.decode_png(c, channels=1),
               [_encoded("PNG", _PIXELS)], lambda c: _gray(_PIXELS), grad=False,
               name="DecodePng[gray]"),
        OpCase("DecodePng", lambda c: tf.image.decode_png(c, channels=3),
               [_encoded("PNG", _alpha)], lambda c: _PIXELS, grad=False, name="DecodePng[rgba->rgb]"),
        OpCase("DecodePng", lambda c: tf.image.decode_png(c, dtype=tf.uint16),
               [_encoded("PNG", _PIXELS)], lambda c: _PIXELS.astype(np.uint16) * 257, grad=False,
               name="DecodePng[uint16]"),
        OpCase("DecodeBmp", tf.image.decode_bmp, [_encoded("BMP", _PIXELS)], lambda c: _PIXELS,
               grad=False),
        OpCase("DecodeGif", tf.image.decode_gif, [_encoded("GIF", _PIXELS)],
               lambda c: np.asarray(Image.open(io.BytesIO(c[()])).convert("RGB"))[None],
               grad=False),
        OpCase("DecodeJpeg", tf.image.decode_jpeg, [_encoded("JPEG", _PIXELS, quality=100)],
               lambda c: np.asarray(Image.open(io.BytesIO(c[()])).convert("RGB")), grad=False),
        OpCase("DecodeImage", tf.image.decode_image, [_encoded("PNG", _PIXELS)], lambda c: _PIXELS,
               grad=False),
        OpCase("DecodeImage", lambda c: tf.image.decode_image(c, dtype=tf.float32),
               [_encoded("BMP", _PIXELS)], lambda c: _PIXELS / np.float32(255), grad=False,
               name="DecodeImage[float32]"),
    ]
