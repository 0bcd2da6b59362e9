"""Tests for graphflow/tf1/image_resize.py and the bicubic / area resize ops: resize_bicubic
(align_corners, half_pixel_centers, up and down), resize_area, `tf.image.resize` /
`resize_images` with every method (TF1's integers and the names), preserve_aspect_ratio and
resize_image_with_pad, against TensorFlow 2.21's numbers (tests/tf1/image_reference.json;
compared live with GRAPHFLOW_TF_PYTHON set); gradients of bicubic; errors."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1 import image_programs
from tests.tf1.test_image_color import _compare, _run
from tests.tf_reference import run_in_tensorflow, tf_python

REFERENCE = image_programs.load_reference()


def test_resizes_match_tensorflow():
    _compare(_run(image_programs.resize_program), REFERENCE["resize_program"], atol=2e-5)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_resizes_match_tensorflow_live():
    want = run_in_tensorflow([("r", image_programs.resize_program, {})])["r"]
    _compare(_run(image_programs.resize_program), want, atol=2e-5)


def test_static_shapes_and_the_same_size_shortcut():
    x = tf.placeholder(tf.float32, [None, 6, 8, 3])
    assert tf.image.resize(x, [3, 4], method="bicubic").shape.as_list() == [None, 3, 4, 3]
    assert tf.image.resize_images(x, [6, 8], method=tf.image.ResizeMethod.AREA) is x
    kept = tf.image.resize_images(x, [12, 12], preserve_aspect_ratio=True)
    assert kept.shape.as_list() == [None, 9, 12, 3]
    padded = tf.image.resize_image_with_pad(x, 10, 10)
    assert padded.shape.as_list() == [None, 10, 10, 3]


def test_bicubic_gradient_is_the_adjoint():
    rng = np.random.default_rng(0)
    x0 = rng.random((1, 4, 5, 2)).astype(np.float32)
    g0 = rng.random((1, 7, 3, 2)).astype(np.float32)
    for kw in ({}, {"align_corners": True}, {"half_pixel_centers": True}):
        x = tf.placeholder(tf.float32, [1, 4, 5, 2])
        y = tf.image.resize_bicubic(x, [7, 3], **kw)
        (g,) = tf.gradients(y, x, grad_ys=g0)
        with tf.Session() as sess:
            got = sess.run(g, {x: x0})
            # <resize(x), g0> == <x, resize^T(g0)> for every x: check on the basis images
            basis = np.eye(x0.size, dtype=np.float32).reshape((-1,) + x0.shape)
            want = np.array([np.sum(sess.run(y, {x: b}) * g0) for b in basis]).reshape(x0.shape)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_resize_errors():
    img = np.zeros((4, 4, 3), np.float32)
    with pytest.raises(ValueError, match="Resize method is not implemented: lanczos3"):
        tf.image.resize(img, [2, 2], method="lanczos3")
    with pytest.raises(ValueError, match="'images' must have either 3 or 4 dimensions"):
        tf.image.resize(np.zeros((4, 4), np.float32), [2, 2])
    with pytest.raises(ValueError, match="target_width must be > 0"):
        tf.image.resize_image_with_pad(img, 3, 0)
    with pytest.raises(ValueError, match="align_corners and half_pixel_centers"):
        tf.image.resize_bicubic(img[None], [2, 2], align_corners=True, half_pixel_centers=True)
    with pytest.raises(ValueError, match="positive"):
        tf.image.resize_area(img[None], [0, 2])


def test_sizes_read_at_run_time_give_the_same_images():
    img = np.random.default_rng(2).random((2, 5, 7, 3)).astype(np.float32)
    fed = tf.placeholder(tf.float32, [None, None, None, 3])
    pairs = [(tf.image.resize_image_with_pad(img, 9, 4), tf.image.resize_image_with_pad(fed, 9, 4)),
             (tf.image.resize_images(img, [12, 12], method=2, preserve_aspect_ratio=True),
              tf.image.resize_images(fed, [12, 12], method=2, preserve_aspect_ratio=True))]
    with tf.Session() as sess:
        for static, dynamic in pairs:
            want, got = sess.run([static, dynamic], {fed: img})
            np.testing.assert_array_equal(got, want)
