"""Tests for graphflow.ops.sort_ops beyond the op cases: tf.sort / tf.argsort (TopKV2 composites)
against numpy's stable sort on every axis and direction, with ties, and their gradient."""

import numpy as np
import pytest

import graphflow as tf


@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
@pytest.mark.parametrize("direction", ["ASCENDING", "DESCENDING"])
def test_sort_and_argsort_match_numpy(axis, direction):
    x = np.random.default_rng(0).integers(0, 4, (3, 4, 5)).astype(np.float32)  # many ties
    with tf.Graph().as_default():
        values = tf.sort(x, axis=axis, direction=direction)
        indices = tf.argsort(x, axis=axis, direction=direction, stable=True)
        ints = tf.sort(x.astype(np.int32), axis=axis, direction=direction)
        with tf.Session() as sess:
            v, i, n = sess.run([values, indices, ints])
    key = x if direction == "ASCENDING" else -x
    expected = np.argsort(key, axis=axis, kind="stable")
    assert i.dtype == np.int32
    np.testing.assert_array_equal(i, expected)
    np.testing.assert_array_equal(v, np.take_along_axis(x, expected, axis=axis))
    np.testing.assert_array_equal(n, np.take_along_axis(x, expected, axis=axis).astype(np.int32))


def test_unsigned_values_sort_ascending():
    x = np.array([200, 3, 255, 0, 3], np.uint8)
    with tf.Graph().as_default():
        v, i = tf.sort(x), tf.argsort(x)
        with tf.Session() as sess:
            v, i = sess.run([v, i])
    assert v.dtype == np.uint8
    np.testing.assert_array_equal(v, np.sort(x))
    np.testing.assert_array_equal(i, np.argsort(x, kind="stable"))


def test_sort_gradient_goes_back_to_each_entry():
    x = np.array([[3.0, 1.0, 2.0], [0.5, 2.5, -1.0]])
    with tf.Graph().as_default():
        t = tf.constant(x)
        y = tf.sort(t, axis=0, direction="DESCENDING")
        weights = np.arange(6.0).reshape(2, 3)
        (g,) = tf.gradients(tf.reduce_sum(y * weights), [t])
        with tf.Session() as sess:
            grad = sess.run(g)
    order = np.argsort(-x, axis=0, kind="stable")
    expected = np.zeros_like(x)
    np.put_along_axis(expected, order, weights, axis=0)
    np.testing.assert_array_equal(grad, expected)


def test_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Unknown direction"):
            tf.sort([1.0, 2.0], direction="UP")
        with pytest.raises(ValueError, match="out of range"):
            tf.argsort([1.0, 2.0], axis=1)
        with pytest.raises(ValueError, match="1-D"):
            tf.unique([[1, 2]])
        with pytest.raises(ValueError, match="side"):
            tf.searchsorted([1, 2], [1], side="middle")


def test_unique_keeps_nans_apart():
    with tf.Graph().as_default():
        y, idx = tf.unique(tf.constant([np.nan, 1.0, np.nan, 1.0]))
        with tf.Session() as sess:
            y, idx = sess.run([y, idx])
    assert len(y) == 3 and y[1] == 1.0 and np.isnan(y[0]) and np.isnan(y[2])
    np.testing.assert_array_equal(idx, [0, 1, 2, 1])
