"""Tests for graphflow/ops/scatter_ops.py: scatter_update / scatter_add / scatter_sub on variables
(rows, repeated indices, multi-dimensional indices, the returned value, the control-dependency
idiom), and that a failed scatter leaves the variable unchanged."""

import numpy as np
import pytest

import graphflow as tf


def _var(value):
    return tf.Variable(np.array(value, np.float32))


def test_scatter_update_add_sub():
    v = _var(np.zeros((4, 2)))
    up = tf.scatter_update(v, [1, 3], [[1, 2], [3, 4]])
    add = tf.scatter_add(v, [0, 0, 2], [[1, 1], [2, 2], [5, 5]])
    sub = tf.scatter_sub(v, tf.constant([[3]], tf.int64), [[[1, 1]]])
    assert up.shape.as_list() == [4, 2] and up.dtype == tf.float32
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(up), [[0, 0], [1, 2], [0, 0], [3, 4]])
        np.testing.assert_array_equal(sess.run(add), [[3, 3], [1, 2], [5, 5], [3, 4]])
        np.testing.assert_array_equal(sess.run(sub), [[3, 3], [1, 2], [5, 5], [2, 3]])
        np.testing.assert_array_equal(sess.run(v), [[3, 3], [1, 2], [5, 5], [2, 3]])


def test_scatter_update_repeated_index_last_wins_and_vector_variable():
    v = _var([0, 0, 0])
    up = tf.scatter_update(v, [2, 2], [7, 9])
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(up), [0, 0, 9])


def test_failed_scatter_changes_nothing():
    v = _var([1, 2, 3])
    idx = tf.placeholder(tf.int32, [None])
    add = tf.scatter_add(v, idx, tf.ones_like(tf.cast(idx, tf.float32)), name="bump")
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(Exception, match="bump"):
            sess.run(add, {idx: [0, 5]})
        np.testing.assert_array_equal(sess.run(v), [1, 2, 3])


def test_scatter_build_errors():
    v = _var(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="must have shape"):
        tf.scatter_update(v, [0], [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="dtype"):
        tf.scatter_add(v, [0], tf.zeros([1, 2], tf.int32))
