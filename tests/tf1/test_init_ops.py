"""Tests for graphflow.tf1.init_ops: each initializer's values (range, spread, exact constants), fan
computation, variance scaling in every mode and distribution, and argument checks."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.tf1 import init_ops


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def test_glorot_uniform_range_and_spread():
    tf.set_random_seed(3)
    init = tf.glorot_uniform_initializer()
    value = _run(init([300, 200]))
    limit = np.sqrt(6 / 500)
    assert value.dtype == np.float32 and value.shape == (300, 200)
    assert np.abs(value).max() <= limit
    np.testing.assert_allclose(value.std(), limit / np.sqrt(3), rtol=0.02)
    assert abs(value.mean()) < 0.01 * limit


def test_compute_fans_and_conv_kernel_limit():
    assert tf.layers.compute_fans([3, 3, 4, 8]) == (36, 72)
    assert init_ops.compute_fans([5]) == (5, 5)
    assert init_ops.compute_fans([]) == (1, 1)
    tf.set_random_seed(0)
    value = _run(tf.glorot_uniform_initializer()([3, 3, 4, 8]))
    assert np.abs(value).max() <= np.sqrt(6 / (36 + 72))


def test_other_initializers():
    ones = tf.ones_initializer()([2, 2], dtype=tf.float64)
    const = tf.constant_initializer(0.5)([3])
    arr = tf.constant_initializer([[1, 2], [3, 4]])([2, 2])
    normal = tf.glorot_normal_initializer(seed=1)([100, 100])
    zeros = tf.zeros_initializer(dtype=tf.int32)([2])
    values = _run([ones, const, arr, normal, zeros])
    np.testing.assert_array_equal(values[0], np.ones((2, 2)))
    np.testing.assert_array_equal(values[1], np.full(3, 0.5, np.float32))
    np.testing.assert_array_equal(values[2], [[1, 2], [3, 4]])
    np.testing.assert_allclose(values[3].std(), np.sqrt(2 / 200), rtol=0.05)
    assert values[4].dtype == np.int32
    with pytest.raises(TypeError, match="verify_shape"):
        tf.constant_initializer([1, 2, 3, 4], verify_shape=True)([2, 2])


@pytest.mark.parametrize("mode,n", [("fan_in", 400), ("fan_out", 100), ("fan_avg", 250)])
@pytest.mark.parametrize("distribution", ["truncated_normal", "untruncated_normal", "uniform"])
def test_variance_scaling_spread(mode, n, distribution):
    tf.set_random_seed(7)
    init = tf.variance_scaling_initializer(scale=2.0, mode=mode, distribution=distribution)
    value = _run(init([400, 100]))
    std = np.sqrt(2.0 / n)
    np.testing.assert_allclose(value.std(), std, rtol=0.03)
    if distribution == "uniform":
        assert np.abs(value).max() <= np.sqrt(3.0) * std
    if distribution == "truncated_normal":  # cut at 2 stddev of the untruncated normal
        assert np.abs(value).max() <= 2 * std / 0.87962566103423978


def test_variance_scaling_argument_checks():
    with pytest.raises(ValueError, match="positive"):
        tf.variance_scaling_initializer(scale=0.0)
    with pytest.raises(ValueError, match="mode"):
        tf.variance_scaling_initializer(mode="fan_sum")
    with pytest.raises(ValueError, match="distribution"):
        tf.variance_scaling_initializer(distribution="cauchy")


def test_seeded_initializers_repeat():
    a = tf.random_normal_initializer(seed=5)([50])
    b = tf.random_normal_initializer(seed=5)([50])
    c = tf.truncated_normal_initializer(stddev=0.1, seed=5)([1000])
    a_v, b_v, c_v = _run([a, b, c])
    np.testing.assert_array_equal(a_v, b_v)
    assert np.abs(c_v).max() <= 0.2


@pytest.mark.parametrize("shape", [[6, 6], [3, 2, 8], [10, 4]])
def test_orthogonal_initializer(shape):
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        v = tf.get_variable("w", shape, initializer=tf.orthogonal_initializer(gain=2.0))
        again = tf.get_variable("u", shape, initializer=tf.orthogonal_initializer(seed=3))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w, u = sess.run([v, again])
    flat = w.reshape(-1, shape[-1]) / 2.0
    gram = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
    np.testing.assert_allclose(gram, np.eye(len(gram)), atol=1e-5)
    assert w.dtype == np.float32 and not np.allclose(w / 2.0, u)
    with pytest.raises(ValueError, match="at least two-dimensional"):
        tf.orthogonal_initializer()([4])
