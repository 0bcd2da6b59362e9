"""Variables: creation, naming, collections, initializers, assign ops, uninitialized errors."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework import errors


def test_variable_naming_and_collections():
    w = tf.Variable(np.ones((2, 3), np.float32), name="w")
    b = tf.Variable(0.0, name="b", trainable=False)
    w2 = tf.Variable(np.ones(2), name="w")
    assert w.name == "w:0" and w.op.name == "w" and w2.op.name == "w_1"
    assert w.shape.as_list() == [2, 3] and w.dtype == tf.float32
    assert w2.dtype == tf.float64  # numpy float64 data keeps its dtype (TF1)
    assert tf.global_variables() == [w, b, w2]
    assert tf.trainable_variables() == [w, w2]
    assert w.initializer.name == "w/Assign"


def test_initializers_and_reads():
    w = tf.Variable(tf.constant([1.0, 2.0]) * 3.0, name="w")
    c = tf.Variable(lambda: np.int32(7), name="c")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(w), [3.0, 6.0])
        assert sess.run(c) == 7
        assert w.eval() is not None


def test_uninitialized_read_names_variable():
    v = tf.Variable(1.0, name="weights")
    y = v * 2.0
    with tf.Session() as sess:
        with pytest.raises(errors.FailedPreconditionError, match="weights.*test_state_ops.py"):
            sess.run(y)
        sess.run(tf.variables_initializer([v]))
        assert sess.run(y) == 2.0
        assert sess.run(tf.is_variable_initialized(v))


def test_read_value_inside_control_dependencies_sees_update():
    v = tf.Variable(1.0)
    with tf.control_dependencies([v.assign_add(5.0)]):
        fresh = v.read_value()
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(fresh) == 6.0
        assert sess.run(fresh) == 11.0


def test_assign_ops_and_tf_functions():
    v = tf.Variable(np.array([1.0, 2.0], np.float32))
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(v.assign([5.0, 6.0])), [5.0, 6.0])
        np.testing.assert_array_equal(sess.run(tf.assign_add(v, [1.0, 1.0])), [6.0, 7.0])
        np.testing.assert_array_equal(sess.run(tf.assign_sub(v, [2.0, 2.0])), [4.0, 5.0])
        np.testing.assert_array_equal(sess.run(tf.assign(v.value(), [0.0, 1.0])), [0.0, 1.0])
        np.testing.assert_array_equal(sess.run(v), [0.0, 1.0])
        v.load([9.0, 9.0], sess)
        np.testing.assert_array_equal(sess.run(v), [9.0, 9.0])


def test_assign_checks_dtype_and_shape():
    v = tf.Variable(np.zeros((2, 2), np.float32), name="v")
    with pytest.raises(ValueError, match="shape"):
        v.assign(np.zeros((3, 3), np.float32))
    with pytest.raises(TypeError):
        v.assign(tf.constant(np.zeros((2, 2), np.float64)))


def test_variables_are_per_session():
    v = tf.Variable(1.0)
    inc = v.assign_add(1.0)
    with tf.Session() as s1, tf.Session() as s2:
        s1.run(v.initializer)
        s2.run(v.initializer)
        s1.run(inc)
        assert s1.run(v) == 2.0 and s2.run(v) == 1.0


def test_variable_in_expressions_and_control_dependencies():
    v = tf.Variable(np.array([1.0, 2.0], np.float32))
    y = v * 2.0 + v
    with tf.control_dependencies([v.assign([10.0, 20.0])]):
        after = tf.identity(v.read_value() * 1.0)
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(y), [3.0, 6.0])
        np.testing.assert_array_equal(sess.run(after), [10.0, 20.0])
