"""Tests for graphflow/ops/segment_ops.py beyond the op cases: the run-time checks of sorted
segment ids, negative counts for bincount, and the static shapes."""

import numpy as np
import pytest

import graphflow as tf


def test_sorted_segment_ids_are_checked_at_run_time():
    ids = tf.placeholder(tf.int32, [None])
    total = tf.segment_sum(tf.constant([1.0, 2.0, 3.0]), ids)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(total, {ids: [0, 2, 2]}), [1.0, 0.0, 5.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="not increasing"):
            sess.run(total, {ids: [1, 0, 2]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
            sess.run(total, {ids: [-1, 0, 0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="one id per row"):
            sess.run(total, {ids: [0, 0]})


def test_static_shapes_and_build_errors():
    data = tf.zeros([5, 3])
    assert tf.segment_max(data, tf.zeros([5], tf.int32)).shape.as_list() == [None, 3]
    assert tf.unsorted_segment_min(data, tf.zeros([5], tf.int32), 4).shape.as_list() == [4, 3]
    assert tf.bincount(tf.zeros([4], tf.int32), minlength=6, maxlength=6).shape.as_list() == [6]
    with pytest.raises(ValueError, match="vector"):
        tf.segment_sum(data, tf.zeros([5, 1], tf.int32))
    with pytest.raises(ValueError, match="first dimension"):
        tf.segment_mean(data, tf.zeros([4], tf.int32))
    with pytest.raises(TypeError, match="int32 or int64"):
        tf.segment_sum(data, tf.zeros([5]))
    with pytest.raises(TypeError, match="int32"):
        tf.bincount(tf.zeros([3], tf.int64))


def test_bincount_refuses_negative_values():
    arr = tf.placeholder(tf.int32, [None])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        sess.run(tf.bincount(arr), {arr: [1, -1]})
