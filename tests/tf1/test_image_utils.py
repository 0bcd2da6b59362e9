"""Tests for graphflow.tf1.image_utils: TF1's composed image functions against numpy (and, for
the dtype conversions, TF1's documented scaling rules)."""

import numpy as np
import pytest

import graphflow as tf

IMAGE = np.random.default_rng(0).random((4, 6, 3)).astype(np.float32)


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def test_crop_pad_and_central_crop():
    batch = np.stack([IMAGE, IMAGE * 2])
    crop, crop4, pad, central = _run([
        tf.image.crop_to_bounding_box(IMAGE, 1, 2, 2, 3),
        tf.image.crop_to_bounding_box(batch, 0, 1, 4, 4),
        tf.image.pad_to_bounding_box(IMAGE, 1, 2, 7, 9),
        tf.image.central_crop(IMAGE, 0.5)])
    np.testing.assert_array_equal(crop, IMAGE[1:3, 2:5])
    np.testing.assert_array_equal(crop4, batch[:, :, 1:5])
    expected = np.zeros((7, 9, 3), np.float32)
    expected[1:5, 2:8] = IMAGE
    np.testing.assert_array_equal(pad, expected)
    np.testing.assert_array_equal(central, IMAGE[1:3, 1:5])  # TF1: start = int((h - h*f) / 2)
    with pytest.raises(ValueError, match="target \\+ offset"):
        tf.image.crop_to_bounding_box(IMAGE, 3, 0, 2, 2)
    with pytest.raises(ValueError, match="central_fraction"):
        tf.image.central_crop(IMAGE, 0.0)


def test_random_flips_are_flips_and_both_happen():
    batch = np.stack([IMAGE] * 16)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        lr = tf.image.random_flip_left_right(batch)
        ud = tf.image.random_flip_up_down(IMAGE)
        lr_batch, flips = _run([lr, [ud for _ in range(1)]])
    flipped = [np.array_equal(img, IMAGE[:, ::-1]) for img in lr_batch]
    kept = [np.array_equal(img, IMAGE) for img in lr_batch]
    assert all(f or k for f, k in zip(flipped, kept)) and any(flipped) and any(kept)
    assert np.array_equal(flips[0], IMAGE) or np.array_equal(flips[0], IMAGE[::-1])


def test_random_crop_is_a_window_and_random_brightness_a_shift():
    x = np.arange(60, dtype=np.float32).reshape(6, 10)
    with tf.Graph().as_default():
        crop = tf.random_crop(x, [3, 4], seed=1)
        bright = tf.image.random_brightness(IMAGE, 0.2, seed=2)
        with tf.Session() as sess:
            crops = [sess.run(crop) for _ in range(20)]
            b = sess.run(bright)
    corners = set()
    for c in crops:
        i, j = divmod(int(c[0, 0]), 10)
        np.testing.assert_array_equal(c, x[i:i + 3, j:j + 4])
        corners.add((i, j))
    assert len(corners) > 3
    delta = b - IMAGE
    assert np.allclose(delta, delta.flat[0], atol=1e-6) and abs(delta.flat[0]) <= 0.2


def test_convert_image_dtype_and_grayscale():
    u8 = np.array([[[0, 128, 255]]], np.uint8)
    f, back, up, down, gray = _run([
        tf.image.convert_image_dtype(u8, tf.float32),
        tf.image.convert_image_dtype(np.array([0.0, 0.5, 1.0], np.float32), tf.uint8),
        tf.image.convert_image_dtype(u8, tf.int32),
        tf.image.convert_image_dtype(np.array([0, 2**31 - 1], np.int32), tf.uint8),
        tf.image.rgb_to_grayscale(IMAGE)])
    np.testing.assert_allclose(f, u8.astype(np.float32) * np.float32(1.0 / 255))
    np.testing.assert_array_equal(back, [0, 127, 255])  # scaled by 255.5, then cast (truncates)
    np.testing.assert_array_equal(up, u8.astype(np.int32) * 2**23)  # (MAX_out + 1) / (MAX_in + 1)
    np.testing.assert_array_equal(down, [0, 255])
    np.testing.assert_allclose(gray[..., 0], IMAGE @ np.array([0.2989, 0.5870, 0.1140]),
                               rtol=1e-6)
    assert gray.shape == (4, 6, 1)


def test_adjust_and_random_contrast_and_crop_or_pad_as_the_cifar10_tutorial_uses_them():
    rng = np.random.default_rng(0)
    batch = rng.random((2, 5, 4, 3)).astype(np.float32)
    ints = (rng.random((5, 4, 3)) * 255).astype(np.uint8)
    contrast = tf.image.adjust_contrast(batch, 1.8)
    int_contrast = tf.image.adjust_contrast(ints, 0.5)
    randomized = tf.image.random_contrast(batch[0], 0.2, 1.8, seed=3)
    bigger = tf.image.resize_image_with_crop_or_pad(batch, 3, 6)
    smaller = tf.image.resize_image_with_crop_or_pad(batch[0], 7, 2)
    with tf.Session() as sess:
        got, got_int, got_random, got_bigger, got_smaller = sess.run(
            [contrast, int_contrast, randomized, bigger, smaller])
    mean = batch.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(got, (batch - mean) * 1.8 + mean, rtol=1e-5, atol=1e-6)
    assert got_int.dtype == np.uint8
    floats = ints / 255.0
    fm = floats.mean(axis=(0, 1), keepdims=True)
    np.testing.assert_allclose(got_int / 255.0, np.clip((floats - fm) * 0.5 + fm, 0, 1), atol=1 / 255)
    img_mean = batch[0].mean(axis=(0, 1), keepdims=True)
    ratio = (got_random - img_mean) / (batch[0] - img_mean)
    assert 0.2 <= ratio.mean() < 1.8 and np.allclose(ratio, ratio.mean(), rtol=1e-3)
    want_bigger = np.zeros((2, 3, 6, 3), np.float32)
    want_bigger[:, :, 1:5] = batch[:, 1:4]
    np.testing.assert_array_equal(got_bigger, want_bigger)
    want_smaller = np.zeros((7, 2, 3), np.float32)
    want_smaller[1:6] = batch[0, :, 1:3]
    np.testing.assert_array_equal(got_smaller, want_smaller)
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.random_contrast(batch[0], 1.0, 0.5)
    with pytest.raises(ValueError, match="height and width must be known"):
        tf.image.resize_image_with_crop_or_pad(tf.placeholder(tf.float32, [None, None, 3]), 2, 2)


def test_rot90_and_transpose_match_tensorflow():
    from tests.tf1 import image_programs
    from tests.tf1.test_image_color import _compare
    with tf.Graph().as_default():
        got = image_programs.geometry_program(tf, np)
    _compare(got, image_programs.load_reference()["geometry_program"], atol=0)
    k = tf.placeholder(tf.int32, [])
    rotated = tf.image.rot90(tf.placeholder(tf.float32, [2, 4, 5, 3]), k)
    assert rotated.shape.as_list() == [2, None, None, 3]  # a fed k: the size of each side unknown
    with pytest.raises(ValueError, match="rot90: 'image' must have either 3 or 4"):
        tf.image.rot90(np.zeros((2, 2)))


def test_random_brightness_and_contrast_repeat_under_the_same_seeds():
    def draws(graph_seed, op_seed):
        with tf.Graph().as_default():
            tf.set_random_seed(graph_seed)
            out = [tf.image.random_brightness(IMAGE, 0.3, seed=op_seed),
                   tf.image.random_contrast(IMAGE, 0.4, 1.6, seed=op_seed)]
            with tf.Session() as sess:
                return [sess.run(out) for _ in range(5)]

    first, again, other = draws(1, 2), draws(1, 2), draws(1, 3)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(first[0][0], other[0][0])
    deltas = [(b - IMAGE).flat[0] for b, _ in first]
    assert len(set(np.round(deltas, 6))) == 5 and all(-0.3 <= d <= 0.3 for d in deltas)
