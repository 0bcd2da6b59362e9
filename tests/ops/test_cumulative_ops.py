"""Tests for graphflow/ops/cumulative_ops.py beyond the op cases: the axis is an attr when it is
known when the graph is built and a run-time input otherwise (TF1's placeholder-fed axis, with
its gradient), scalars are refused, empty axes and integer dtypes work."""

import numpy as np
import pytest

import graphflow as tf


def test_axis_from_a_constant_tensor_or_numpy_integer():
    x = tf.constant([[1, 2], [3, 4]])
    with tf.Session() as sess:
        a, b = sess.run([tf.cumsum(x, axis=tf.constant(1)), tf.cumprod(x, axis=np.int64(0))])
    np.testing.assert_array_equal(a, [[1, 3], [3, 7]])
    np.testing.assert_array_equal(b, [[1, 2], [3, 8]])


def test_axis_fed_at_run_time():
    x = tf.placeholder(tf.float32, [2, 3])
    axis = tf.placeholder(tf.int32, [])
    y = tf.cumsum(x, axis=axis, reverse=True)
    p = tf.cumprod(x, axis=axis, exclusive=True)
    assert y.op.attrs["axis"] is None and y.shape.as_list() == [2, 3]
    dx = tf.gradients(tf.reduce_sum(y * [[1.0, 2.0, 3.0]]), x)[0]
    xs = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
    with tf.Session() as sess:
        for a in (0, 1, -1):
            got, prod, grad = sess.run([y, p, dx], {x: xs, axis: a})
            want = np.flip(np.cumsum(np.flip(xs, a), a), a)
            np.testing.assert_allclose(got, want)
            shifted = np.cumprod(xs, a) / xs
            np.testing.assert_allclose(prod, shifted, rtol=1e-6)
            weights = np.broadcast_to(np.array([[1.0, 2.0, 3.0]], np.float32), xs.shape)
            np.testing.assert_allclose(grad, np.cumsum(weights, a), rtol=1e-6)
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
            sess.run(y, {x: xs, axis: 2})


def test_run_time_axis_must_be_an_integer_scalar():
    with pytest.raises(TypeError):
        tf.cumsum(tf.zeros([3]), axis=tf.placeholder(tf.float32, []))
    with pytest.raises(ValueError, match="scalar"):
        tf.cumsum(tf.zeros([3]), axis=tf.placeholder(tf.int32, [1]))


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
