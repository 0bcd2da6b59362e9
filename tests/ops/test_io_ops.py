"""File ops (read_file/write_file) and image decoding. JPEG pixels are compared with TensorFlow's: the
checksums below are of `tf.compat.v1.image.decode_jpeg(..., dct_method="INTEGER_ACCURATE")` outputs
(TensorFlow 2.21) for the fixture files in tests/ops/data."""

import hashlib
import io
import os

import numpy as np
import pytest

import graphflow as tf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
Image = pytest.importorskip("PIL.Image")

TF_JPEG = [
    ("gradient.jpg", 0, 1, [37, 53, 3], "a48150650a5a799c"),
    ("gradient.jpg", 0, 2, [19, 27, 3], "b0aba841956d47a8"),
    ("gradient.jpg", 0, 4, [10, 14, 3], "c0f4b09e852502d7"),
    ("gradient.jpg", 1, 1, [37, 53, 1], "5374fb73e0848ff3"),
    ("gradient.jpg", 1, 2, [19, 27, 1], "43c92f5cce040bd7"),
    ("gradient.jpg", 3, 1, [37, 53, 3], "a48150650a5a799c"),
    ("gradient_gray.jpg", 0, 1, [37, 53, 1], "9d97eede16b5c67f"),
    ("gradient_gray.jpg", 0, 2, [19, 27, 1], "d745fead85b7ebc4"),
    ("gradient_gray.jpg", 3, 1, [37, 53, 3], "9947241ad159e360"),
    ("gradient_gray.jpg", 3, 4, [10, 14, 3], "9da2f4234980c349"),
]


@pytest.mark.parametrize("name, channels, ratio, shape, digest", TF_JPEG)
def test_decode_jpeg_matches_tensorflow(name, channels, ratio, shape, digest):
    pixels = tf.image.decode_jpeg(tf.read_file(os.path.join(DATA, name)), channels=channels,
                                  ratio=ratio)
    assert pixels.shape.as_list() == [None, None, channels or None]
    with tf.Session() as sess:
        value = sess.run(pixels)
    assert value.dtype == np.uint8 and list(value.shape) == shape
    assert hashlib.sha256(value.tobytes()).hexdigest()[:16] == digest


def test_read_and_write_files(tmp_path):
    path = tf.placeholder(tf.string, [], name="path")
    data = tf.read_file(path)
    target = str(tmp_path / "out" / "copy.bin")
    write = tf.io.write_file(target, tf.strings.join([data, "!"]))
    (tmp_path / "in.bin").write_bytes(b"\x00\x01abc")
    with tf.Session() as sess:
        assert sess.run(data, {path: str(tmp_path / "in.bin")}) == b"\x00\x01abc"
        sess.run(write, {path: str(tmp_path / "in.bin")})
        assert open(target, "rb").read() == b"\x00\x01abc!"
        (tmp_path / "in.bin").write_bytes(b"changed")  # each run reads the file as it is then
        assert sess.run(data, {path: str(tmp_path / "in.bin")}) == b"changed"
        with pytest.raises(tf.errors.InvalidArgumentError, match="ReadFile.*No such file"):
            sess.run(data, {path: str(tmp_path / "missing")})


def test_an_image_folder_read_with_read_file_and_decode(tmp_path):
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (6, 4, 3), dtype=np.uint8) for _ in range(3)]
    for i, img in enumerate(images):
        Image.fromarray(img).save(tmp_path / f"img{i}.png")
    filename = tf.placeholder(tf.string, [])
    decoded = tf.image.decode_image(tf.read_file(filename), channels=3)
    scaled = tf.cast(decoded, tf.float32) / 255.0
    with tf.Session() as sess:
        for i, path in enumerate(sorted(tf.gfile.Glob(str(tmp_path / "*.png")))):
            got = sess.run(scaled, {filename: path})
            np.testing.assert_allclose(got, images[i] / np.float32(255), rtol=1e-6)


def test_decode_errors_name_the_op_and_the_format():
    bad = tf.image.decode_png(tf.constant(b"not a png"), name="decoder")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="decoder.*Invalid PNG data"):
            sess.run(bad)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown image file format"):
            sess.run(tf.image.decode_image(tf.constant(b"????????")))
    with pytest.raises(ValueError, match="ratio must be"):
        tf.image.decode_jpeg(tf.constant(b""), ratio=3)
    with pytest.raises(ValueError, match="fancy upscaling"):
        tf.image.decode_jpeg(tf.constant(b""), fancy_upscaling=False)
    with pytest.raises(ValueError, match="scalar string"):
        tf.image.decode_png(tf.constant([b"a", b"b"]))


def test_decode_png_palette_alpha_and_gray_as_tensorflow():
    rgb = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3) * 3
    buf = io.BytesIO()
    Image.fromarray(rgb).convert("P").save(buf, format="PNG")
    palette = np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))
    contents = tf.constant(buf.getvalue())
    with tf.Session() as sess:
        as_rgb, as_rgba, as_gray = sess.run([tf.image.decode_png(contents),
                                             tf.image.decode_png(contents, channels=4),
                                             tf.image.decode_png(contents, channels=1)])
    np.testing.assert_array_equal(as_rgb, palette)
    assert as_rgba.shape == (4, 5, 4) and (as_rgba[:, :, 3] == 255).all()
    r, g, b = (palette[..., i].astype(np.uint32) for i in range(3))
    np.testing.assert_array_equal(as_gray[..., 0], (r * 9797 + g * 19234 + b * 3737) >> 15)


def test_missing_pillow_is_a_clear_error(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match=r"decode_jpeg decodes .*Pillow.*graphflow\[images\]"):
        tf.image.decode_jpeg(tf.constant(b""))


def test_namespaces():
    assert tf.io.read_file is tf.read_file and tf.io.decode_png is tf.image.decode_png
    assert tf.io.gfile.exists is tf.gfile.Exists and tf.io.write_file is tf.write_file
