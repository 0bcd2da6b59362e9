"""Tests for graphflow/ops/image_ops.py: resize_bilinear / resize_nearest_neighbor under
align_corners and half_pixel_centers against TensorFlow's numbers (tests/ops/data, made by
make_tf_image_reference.py there), resize_images' TF1 behaviours, flips, per_image_standardization,
gradients of the resize ops for 3-D images, errors."""

import json
import pathlib

import numpy as np
import pytest

import graphflow as tf

REFERENCE = json.loads((pathlib.Path(__file__).parent / "data" / "tf_image_reference.json").read_text())
IMAGE = ((np.arange(24, dtype=np.float32).reshape(1, 3, 4, 2) * 7) % 11) / 3


@pytest.mark.parametrize("record", REFERENCE["resize"],
                         ids=[f"{r['fn']}-{r['size']}-{sorted(r['attrs'])}" for r in REFERENCE["resize"]])
def test_resize_matches_tensorflow(record):
    out = getattr(tf.image, record["fn"])(IMAGE, record["size"], **record["attrs"])
    assert out.dtype == tf.float32
    assert out.shape.as_list() == [1] + record["size"] + [2]
    with tf.Session() as sess:
        got = sess.run(out)
    np.testing.assert_allclose(got.reshape(-1), record["values"], rtol=1e-6, atol=1e-6)


def test_per_image_standardization_matches_tensorflow():
    with tf.Session() as sess:
        got = sess.run(tf.image.per_image_standardization(IMAGE[0]))
        flat = sess.run(tf.image.per_image_standardization(np.full((2, 2, 1), 3, np.uint8)))
    np.testing.assert_allclose(got.reshape(-1), REFERENCE["standardized"], rtol=1e-5, atol=1e-6)
    assert flat.dtype == np.float32 and not flat.any()  # constant image: zeros, no division by 0


def test_resize_images_tf1_behaviours():
    ints = tf.constant(np.arange(12, dtype=np.int32).reshape(3, 4, 1))
    same = tf.image.resize_images(ints, [3, 4])
    assert same is ints  # already the target size: returned as it is
    nearest = tf.image.resize_images(ints, [6, 8], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)
    bilinear = tf.image.resize_images(ints, [6, 8])
    assert nearest.dtype == tf.int32 and bilinear.dtype == tf.float32
    assert nearest.shape.as_list() == [6, 8, 1]
    with tf.Session() as sess:
        n = sess.run(nearest)
    np.testing.assert_array_equal(n[:, :, 0], np.repeat(np.repeat(np.arange(12).reshape(3, 4), 2, 0),
                                                        2, 1))
    with pytest.raises(ValueError, match="Resize method is not implemented: 7"):
        tf.image.resize_images(ints, [2, 2], method=7)


def test_flips():
    x = np.arange(12).reshape(2, 3, 2)
    batch = np.arange(24).reshape(2, 2, 3, 2)
    with tf.Session() as sess:
        lr, ud, blr = sess.run([tf.image.flip_left_right(x), tf.image.flip_up_down(x),
                                tf.image.flip_left_right(batch)])
    np.testing.assert_array_equal(lr, x[:, ::-1])
    np.testing.assert_array_equal(ud, x[::-1])
    np.testing.assert_array_equal(blr, batch[:, :, ::-1])


def test_gradient_of_a_resized_single_image():
    x = tf.placeholder(tf.float32, [3, 4, 2])
    y = tf.image.resize_bilinear(x, [6, 8], align_corners=True)
    assert y.shape.as_list() == [6, 8, 2]
    (g,) = tf.gradients(tf.reduce_sum(y), x)
    with tf.Session() as sess:
        got = sess.run(g, {x: IMAGE[0]})
    # every output pixel distributes weight 1 over the input: the gradient sums to the pixel count
    np.testing.assert_allclose(got.sum(), 6 * 8 * 2, rtol=1e-5)


def test_resize_errors():
    with pytest.raises(ValueError, match="align_corners and half_pixel_centers"):
        tf.image.resize_bilinear(IMAGE, [2, 2], align_corners=True, half_pixel_centers=True)
    with pytest.raises(ValueError, match="4-D"):
        tf.image.resize_bilinear(tf.zeros([2, 2]), [2, 2])
    with pytest.raises(ValueError, match="positive"):
        tf.image.resize_nearest_neighbor(IMAGE, [0, 2])
