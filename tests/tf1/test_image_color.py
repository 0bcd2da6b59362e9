"""Tests for graphflow/tf1/image_color.py: RGB <-> HSV, hue / saturation / gamma adjustments,
YIQ / YUV and grayscale -> RGB against TensorFlow 2.21's numbers (tests/tf1/image_reference.json,
recorded by image_programs.py; compared live with GRAPHFLOW_TF_PYTHON set), the random forms'
ranges and seeds, gradients and errors."""

import pathlib
import sys

import numpy as np
import pytest

import graphflow as tf
from tests.tf1 import image_programs

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from tf_reference import run_in_tensorflow, tf_python  # noqa: E402

REFERENCE = image_programs.load_reference()


def _compare(got, want, atol):
    assert sorted(got) == sorted(want)
    for name in want:
        g = np.asarray(got[name])
        assert g.dtype == want[name].dtype and g.shape == want[name].shape, name
        if g.dtype == np.uint8:  # one step of rounding where float32 sums differ in the last bit
            assert np.abs(g.astype(int) - want[name].astype(int)).max() <= 1, name
        else:
            np.testing.assert_allclose(g, want[name], rtol=1e-5, atol=atol, err_msg=name)


def _run(program):
    with tf.Graph().as_default():
        return program(tf, np)


def test_color_functions_match_tensorflow():
    _compare(_run(image_programs.color_program), REFERENCE["color_program"], atol=2e-6)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_color_functions_match_tensorflow_live():
    want = run_in_tensorflow([(None, image_programs._images, None),
                              ("r", image_programs.color_program, {})])["r"]
    _compare(_run(image_programs.color_program), want, atol=2e-6)


def test_random_hue_and_saturation_ranges_and_seeds():
    images = image_programs._images(np)[0]
    hsv = tf.image.rgb_to_hsv(images)

    def draws(seed):
        with tf.Graph().as_default():
            tf.set_random_seed(seed)
            hue = tf.image.random_hue(images, 0.2)
            sat = tf.image.random_saturation(images, 0.5, 1.5)
            with tf.Session() as sess:
                return [sess.run([hue, sat]) for _ in range(12)]

    first, again, other = draws(1), draws(1), draws(2)
    for (h1, s1), (h2, s2) in zip(first, again):  # the same graph seed: the same draws
        np.testing.assert_array_equal(h1, h2)
        np.testing.assert_array_equal(s1, s2)
    assert not np.array_equal(first[0][0], other[0][0])
    with tf.Session() as sess:
        h, s, v = np.moveaxis(sess.run(hsv), -1, 0)
    deltas, factors = [], []
    for hue, sat in first:
        with tf.Session() as sess:
            hh, hs, hv = np.moveaxis(sess.run(tf.image.rgb_to_hsv(hue)), -1, 0)
            sh, ss, sv = np.moveaxis(sess.run(tf.image.rgb_to_hsv(sat)), -1, 0)
        np.testing.assert_allclose(hv, v, atol=1e-6)  # hue: value and saturation kept
        np.testing.assert_allclose(hs, s, atol=1e-5)
        colored = s > 0.1
        d = (hh - h)[colored]
        d = (d + 0.5) % 1.0 - 0.5
        assert np.allclose(d, d[0], atol=1e-4) and abs(d[0]) <= 0.2 + 1e-5
        deltas.append(d[0])
        ratio = ss[colored & (s < 0.5)] / s[colored & (s < 0.5)]  # unclipped pixels
        assert np.allclose(ratio, ratio[0], rtol=1e-4) and 0.5 <= ratio[0] < 1.5
        factors.append(ratio[0])
        np.testing.assert_allclose(sv, v, atol=1e-6)
    assert len(set(np.round(deltas, 4))) > 6 and len(set(np.round(factors, 4))) > 6
    with pytest.raises(ValueError, match="max_delta must be <= 0.5"):
        tf.image.random_hue(images, 0.6)
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.random_saturation(images, 1.0, 1.0)
    with pytest.raises(ValueError, match="lower must be non-negative"):
        tf.image.random_saturation(images, -0.5, 1.0)


@pytest.mark.parametrize("fn,eps,tol", [
    (tf.image.rgb_to_hsv, 1e-6, 1e-5), (tf.image.hsv_to_rgb, 1e-6, 1e-5),
    (tf.image.rgb_to_yiq, 1e-6, 1e-5),
    # these run in float32 as TF1's (a float64 image is converted there and back)
    (lambda t: tf.image.adjust_hue(t, 0.3), 1e-3, 2e-2),
    (lambda t: tf.image.adjust_saturation(t, 1.4), 1e-3, 2e-2)],
    ids=["rgb_to_hsv", "hsv_to_rgb", "rgb_to_yiq", "adjust_hue", "adjust_saturation"])
def test_color_gradients_match_finite_differences(fn, eps, tol):
    rng = np.random.default_rng(0)
    x0 = (rng.random((2, 3, 3)) * 0.8 + 0.1).astype(np.float64)
    x = tf.placeholder(tf.float64, [2, 3, 3])
    y = tf.reduce_sum(fn(x) * np.arange(18).reshape(2, 3, 3))
    (g,) = tf.gradients(y, x)
    with tf.Session() as sess:
        got = sess.run(g, {x: x0})
        num = np.zeros_like(x0)
        for idx in np.ndindex(*x0.shape):
            d = np.zeros_like(x0)
            d[idx] = eps
            num[idx] = (sess.run(y, {x: x0 + d}) - sess.run(y, {x: x0 - d})) / (2 * eps)
    np.testing.assert_allclose(got, num, rtol=tol, atol=tol)


def test_color_errors():
    with pytest.raises(ValueError, match="rgb_to_hsv: the last dimension of 'images' must be 3"):
        tf.image.rgb_to_hsv(np.zeros((2, 2, 4), np.float32))
    with pytest.raises(TypeError, match="float"):
        tf.image.rgb_to_hsv(np.zeros((2, 2, 3), np.uint8))
    with pytest.raises(ValueError, match="adjust_hue"):
        tf.image.adjust_hue(np.zeros((2, 2, 1), np.float32), 0.1)
    with pytest.raises(ValueError, match="grayscale_to_rgb"):
        tf.image.grayscale_to_rgb(np.zeros((2, 2, 3), np.float32))
    with pytest.raises(ValueError, match="Gamma should be a non-negative"):
        tf.image.adjust_gamma(np.zeros((2, 2, 3), np.float32), -1.0)
