"""Tests for graphflow/ops/cumulative_ops.py beyond the op cases: the axis must be known when the
graph is built, scalars are refused, empty axes and integer dtypes work."""

import numpy as np
import pytest

import graphflow as tf


def test_axis_from_a_constant_tensor_or_numpy_integer():
    x = tf.constant([[1, 2], [3, 4]])
    with tf.Session() as sess:
        a, b = sess.run([tf.cumsum(x, axis=tf.constant(1)), tf.cumprod(x, axis=np.int64(0))])
    np.testing.assert_array_equal(a, [[1, 3], [3, 7]])
    np.testing.assert_array_equal(b, [[1, 2], [3, 8]])


def test_axis_known_only_at_run_time_is_refused():
    with pytest.raises(ValueError, match="known when the graph is built"):
        tf.cumsum(tf.zeros([3]), axis=tf.placeholder(tf.int32, []))


def test_bad_inputs():
    with pytest.raises(ValueError, match="rank >= 1"):
        tf.cumsum(tf.constant(1.0))
    with pytest.raises(ValueError, match="out of range"):
        tf.cumprod(tf.zeros([2, 3]), axis=2)
    with pytest.raises(TypeError):
        tf.cumsum(tf.constant([True, False]))


def test_empty_axis_and_exclusive_of_one_element():
    x = tf.placeholder(tf.float32, [None, 2])
    with tf.Session() as sess:
        empty = sess.run(tf.cumsum(x, exclusive=True, reverse=True), {x: np.zeros((0, 2))})
        one = sess.run(tf.cumprod(x, exclusive=True), {x: [[5.0, 7.0]]})
    assert empty.shape == (0, 2)
    np.testing.assert_array_equal(one, [[1.0, 1.0]])


def test_axis_out_of_range_for_the_fed_value():
    x = tf.placeholder(tf.float32)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        sess.run(tf.cumsum(x, axis=1), {x: [1.0, 2.0]})
