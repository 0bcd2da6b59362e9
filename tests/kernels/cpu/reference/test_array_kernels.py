"""graphflow.kernels.cpu.reference.array_kernels: Reshape by a constant (read-only) shape reads the shape once
and gives the same results run after run, also when the same kernel is then handed other shapes;
a fed (writable) shape is read on every run, so changing it in place between runs is seen."""

import numpy as np
import pytest

import graphflow as tf


def test_reshape_by_a_constant_shape_run_after_run():
    x = tf.placeholder(tf.float32, [None, 6])
    y = tf.reshape(x, [-1, 2, 3])
    with tf.Session() as sess:
        for n in (1, 4, 1):
            xs = np.arange(6 * n, dtype=np.float32).reshape(n, 6)
            np.testing.assert_array_equal(sess.run(y, {x: xs}), xs.reshape(-1, 2, 3))


def test_reshape_by_a_fed_shape_sees_it_changed_in_place():
    x = tf.placeholder(tf.float32, [6])
    shape = tf.placeholder(tf.int32, [2])
    y = tf.reshape(x, shape)
    xs = np.arange(6, dtype=np.float32)
    dims = np.array([2, 3], np.int32)
    with tf.Session() as sess:
        assert sess.run(y, {x: xs, shape: dims}).shape == (2, 3)
        dims[:] = (3, 2)  # the same array object, new contents
        assert sess.run(y, {x: xs, shape: dims}).shape == (3, 2)
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(y, {x: xs, shape: np.array([4, 2], np.int32)})


def test_reshape_by_a_read_only_fed_shape_made_writable_again_is_read_again():
    x = tf.placeholder(tf.float32, [6])
    shape = tf.placeholder(tf.int32, [2])
    y = tf.reshape(x, shape)
    xs = np.arange(6, dtype=np.float32)
    dims = np.array([2, 3], np.int32)
    dims.flags.writeable = False
    with tf.Session() as sess:
        assert sess.run(y, {x: xs, shape: dims}).shape == (2, 3)
        assert sess.run(y, {x: xs, shape: dims}).shape == (2, 3)
        dims.flags.writeable = True
        dims[:] = (3, 2)
        assert sess.run(y, {x: xs, shape: dims}).shape == (3, 2)
