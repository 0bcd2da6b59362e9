"""Gradient rules of the array ops in situations the generic finite-difference harness does not
cover: unknown batch dims, repeated gather indices, partly used multi-output ops, the static
shapes of the gradients, and ops declared not differentiable."""

import numpy as np
import pytest

import graphflow as tf


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_getitem_with_tensor_index_and_unknown_batch():
    x = tf.placeholder(tf.float64, [None, 4])
    i = tf.placeholder(tf.int32, [])
    y = tf.reduce_sum(x[i, ::-2] * tf.constant([1.0, 10.0], tf.float64)) + tf.reduce_sum(x[-1:])
    (g,) = tf.gradients(y, [x])
    assert g.shape.as_list() == [None, 4]
    want = np.zeros((3, 4))
    want[1, 3], want[1, 1] = 1.0, 10.0
    want[-1] += 1.0
    np.testing.assert_array_equal(run(g, {x: np.ones((3, 4)), i: 1}), want)


def test_gather_repeated_indices_accumulate():
    p = tf.placeholder(tf.float64, [None, 2])
    y = tf.reduce_sum(tf.gather(p, [0, 2, 0, 0]))
    (g,) = tf.gradients(y, [p])
    assert isinstance(g, tf.IndexedSlices)  # TF1: the gradient of an axis-0 gather is sparse
    with pytest.warns(UserWarning, match="dense Tensor of unknown shape"):
        dense = tf.convert_to_tensor(g)
    np.testing.assert_array_equal(run(dense, {p: np.zeros((4, 2))}),
                                  [[3, 3], [0, 0], [1, 1], [0, 0]])


def test_partly_used_unstack_and_split():
    x = tf.placeholder(tf.float64, [3, 2])
    parts = tf.unstack(x)
    left, _ = tf.split(x, 2, axis=1)
    y = tf.reduce_sum(parts[1] * 2.0) + tf.reduce_sum(left)
    (g,) = tf.gradients(y, [x])
    np.testing.assert_array_equal(run(g, {x: np.zeros((3, 2))}), [[1, 0], [3, 2], [1, 0]])


def test_gradient_shapes_stay_static():
    a = tf.placeholder(tf.float32, [None, 2])
    b = tf.placeholder(tf.float32, [None, 3])
    c = tf.concat([a, b], axis=-1)
    flat = tf.reshape(c, [tf.shape(c)[0], -1])
    y = tf.reduce_sum(tf.pad(flat, [[0, 1], [2, 0]]) ** 2)
    ga, gb = tf.gradients(y, [a, b])
    assert ga.shape.as_list() == [None, 2] and gb.shape.as_list() == [None, 3]
    va, vb = np.ones((2, 2), np.float32), np.full((2, 3), 2.0, np.float32)
    got_a, got_b = run([ga, gb], {a: va, b: vb})
    np.testing.assert_allclose(got_a, 2 * va)
    np.testing.assert_allclose(got_b, 2 * vb)


def test_second_derivative_through_slices_and_tiles():
    x = tf.placeholder(tf.float64, [3])
    y = tf.reduce_sum(tf.tile(x[::-1], [2]) ** 3)  # = 2 * sum(x^3)
    (g,) = tf.gradients(y, [x])
    (h,) = tf.gradients(tf.reduce_sum(g), [x])
    v = np.array([1.0, -2.0, 0.5])
    got_g, got_h = run([g, h], {x: v})
    np.testing.assert_allclose(got_g, 6 * v ** 2)
    np.testing.assert_allclose(got_h, 12 * v)


def test_not_differentiable_ops_pass_nothing():
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.reduce_sum(tf.zeros_like(x)) + tf.cast(tf.reduce_sum(tf.shape(x)), tf.float32)
    assert tf.gradients(y, [x]) == [None]
    z = tf.reduce_sum(x * tf.ones_like(x))
    (g,) = tf.gradients(z, [x])
    np.testing.assert_array_equal(run(g, {x: np.zeros((2, 2))}), np.ones((2, 2)))
