"""Tests for graphflow/ops/linalg_ops.py beyond the op cases: the Cholesky gradient (TF1's
symmetric rule) against finite differences along symmetric directions, first and second order,
also through logdet; composites (eye, diag/diag_part of rank 4, matrix_transpose of unknown rank)
and the errors for bad inputs."""

import numpy as np
import pytest

import graphflow as tf


def _spd(n, batch=(), seed=0):
    a = np.random.default_rng(seed).uniform(-1, 1, size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _symmetric_direction(shape, rng):
    v = rng.standard_normal(shape)
    return 0.5 * (v + np.swapaxes(v, -1, -2))


@pytest.mark.parametrize("build", [tf.cholesky, tf.linalg.logdet], ids=["cholesky", "logdet"])
def test_cholesky_gradient_along_symmetric_directions(build):
    rng = np.random.default_rng(1)
    a0 = _spd(3, (2,))
    a = tf.placeholder(tf.float64, a0.shape)
    out = build(a)
    u = tf.constant(rng.standard_normal(a0.shape[:-2] + tuple(out.shape.dims[len(a0.shape) - 2:])))
    f = tf.reduce_sum(out * u)
    (g,) = tf.gradients(f, [a])
    w = tf.constant(_symmetric_direction(a0.shape, rng))
    (gg,) = tf.gradients(tf.reduce_sum(g * w), [a])  # second order: d<grad f, w>
    eps = 1e-6
    with tf.Session() as sess:
        grad, grad2 = sess.run([g, gg], {a: a0})
        np.testing.assert_allclose(grad, np.swapaxes(grad, -1, -2), atol=1e-12)  # symmetric
        for _ in range(3):
            v = _symmetric_direction(a0.shape, rng)
            numeric = (sess.run(f, {a: a0 + eps * v}) - sess.run(f, {a: a0 - eps * v})) / (2 * eps)
            np.testing.assert_allclose(np.sum(grad * v), numeric, rtol=1e-5, atol=1e-7)
            gw_plus = np.sum(sess.run(g, {a: a0 + eps * v}) * sess.run(w))
            gw_minus = np.sum(sess.run(g, {a: a0 - eps * v}) * sess.run(w))
            np.testing.assert_allclose(np.sum(grad2 * v), (gw_plus - gw_minus) / (2 * eps),
                                       rtol=1e-4, atol=1e-6)


def test_cholesky_of_a_matrix_that_is_not_positive_definite_fails():
    x = tf.placeholder(tf.float64, [2, 2])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="not positive definite"):
        sess.run(tf.cholesky(x), {x: [[1.0, 2.0], [2.0, 1.0]]})


def test_inverse_of_a_singular_matrix_fails():
    x = tf.placeholder(tf.float64, [2, 2])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="not invertible"):
        sess.run(tf.matrix_inverse(x), {x: [[1.0, 2.0], [2.0, 4.0]]})


def test_eye_and_rank_4_diag():
    d = np.arange(6.0).reshape(2, 3)
    with tf.Session() as sess:
        eye, rect, batch, big, back = sess.run([
            tf.eye(3), tf.eye(2, 4, dtype=tf.int32), tf.linalg.eye(2, batch_shape=[3]),
            tf.diag(d), tf.diag_part(tf.diag(d))])
    np.testing.assert_array_equal(eye, np.eye(3, dtype=np.float32))
    np.testing.assert_array_equal(rect, np.eye(2, 4, dtype=np.int32))
    np.testing.assert_array_equal(batch, np.broadcast_to(np.eye(2), (3, 2, 2)))
    np.testing.assert_array_equal(big, np.diag(d.ravel()).reshape(2, 3, 2, 3))
    np.testing.assert_array_equal(back, d)


def test_matrix_transpose_of_unknown_rank():
    x = tf.placeholder(tf.float32)
    y = tf.matrix_transpose(x)
    value = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: value}), np.swapaxes(value, 1, 2))
    assert tf.linalg.adjoint(tf.zeros([2, 5, 3])).shape.as_list() == [2, 3, 5]


def test_shape_errors():
    with pytest.raises(ValueError, match="square"):
        tf.matrix_inverse(tf.zeros([2, 3]))
    with pytest.raises(ValueError, match="rank >= 2"):
        tf.matrix_determinant(tf.zeros([3]))
    with pytest.raises(ValueError, match="does not fit"):
        tf.matrix_set_diag(tf.zeros([3, 4]), tf.zeros([4]))
    with pytest.raises(TypeError):
        tf.cholesky(tf.zeros([2, 2], tf.int32))
    with pytest.raises(ValueError, match="known when the graph is built"):
        tf.matrix_band_part(tf.zeros([2, 2]), tf.placeholder(tf.int32, []), 0)
