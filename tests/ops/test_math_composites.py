"""Tests for graphflow/ops/math_composites.py beyond the op cases: argument errors of tensordot,
norm and meshgrid, linspace with a num fed at run time, meshgrid of one vector."""

import numpy as np
import pytest

import graphflow as tf


def test_argument_errors():
    a, b = tf.zeros([2, 3]), tf.zeros([3, 4])
    with pytest.raises(ValueError, match="axes"):
        tf.tensordot(a, b, axes=3)
    with pytest.raises(ValueError, match="axes of a"):
        tf.tensordot(a, b, axes=[[1], [0, 1]])
    with pytest.raises(ValueError, match="not supported"):
        tf.norm(a, ord=2, axis=[0, 1])
    with pytest.raises(ValueError, match="not supported"):
        tf.norm(a, ord=-1)
    with pytest.raises(ValueError, match="indexing"):
        tf.meshgrid(tf.zeros([2]), indexing="yx")
    with pytest.raises(TypeError):
        tf.linspace(0, 1, 3)  # integer start: TF1's LinSpace takes floats


def test_linspace_with_num_at_run_time_and_one_vector_meshgrid():
    num = tf.placeholder(tf.int32, [])
    values = tf.linspace(2.0, 3.0, num)
    (grid,) = tf.meshgrid(tf.constant([1.0, 2.0]))
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(values, {num: 5}), np.linspace(2, 3, 5))
        np.testing.assert_array_equal(sess.run(grid), [1.0, 2.0])


def test_reduce_logsumexp_with_keep_dims_and_reduction_indices():
    x = np.array([[1.0, 2.0], [3.0, 1000.0]])
    with tf.Session() as sess:
        got = sess.run(tf.reduce_logsumexp(tf.constant(x), reduction_indices=[1], keep_dims=True))
    want = np.log(np.sum(np.exp(x - x.max(1, keepdims=True)), 1, keepdims=True)) + x.max(1,
                                                                                        keepdims=True)
    np.testing.assert_allclose(got, want)
