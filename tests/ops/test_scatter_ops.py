"""Tests for graphflow/ops/scatter_ops.py: scatter_update / scatter_add / scatter_sub on variables
(rows, repeated indices, multi-dimensional indices, the returned value, the control-dependency
idiom), and that a failed scatter leaves the variable unchanged."""

import weakref

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


def _stored(sess, v):
    return sess._state.variables.values[v.op.attrs["shared_name"]]


def test_scatter_changes_rows_in_place_and_a_later_failure_puts_them_back():
    v = _var(np.arange(10.0).reshape(5, 2))
    sub = tf.scatter_sub(v, [1, 3, 1], tf.ones([3, 2]))
    idx = tf.placeholder(tf.int32, [])
    with tf.control_dependencies([sub]):
        after = tf.gather(tf.constant([1.0, 2.0]), idx, name="late_gather")
    with tf.Session() as sess:
        sess.run(v.initializer)
        stored = weakref.ref(_stored(sess, v))  # (a reference would keep it from in-place use)
        sess.run(sub.op)
        assert _stored(sess, v) is stored()  # only the store referred to it: changed in place
        np.testing.assert_array_equal(sess.run(v), [[0, 1], [0, 1], [4, 5], [5, 6], [8, 9]])
        with pytest.raises(Exception, match="late_gather"):
            sess.run(after, {idx: 7})  # the scatter ran in place, then the run failed
        np.testing.assert_array_equal(sess.run(v), [[0, 1], [0, 1], [4, 5], [5, 6], [8, 9]])


def test_a_fetched_value_is_never_changed_by_a_later_scatter():
    v = _var(np.zeros((3, 2)))
    add = tf.scatter_add(v, [2], [[1.0, 1.0]])
    with tf.Session() as sess:
        sess.run(v.initializer)
        held = sess.run(v)  # the user keeps the stored array: the scatter writes a new one
        sess.run(add.op)
        np.testing.assert_array_equal(held, np.zeros((3, 2)))
        np.testing.assert_array_equal(sess.run(v), [[0, 0], [0, 0], [1, 1]])


def test_scatter_build_errors():
    v = _var(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="must have shape"):
        tf.scatter_update(v, [0], [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="dtype"):
        tf.scatter_add(v, [0], tf.zeros([1, 2], tf.int32))
