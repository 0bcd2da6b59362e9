"""Tests for graphflow/ops/einsum_ops.py beyond the generic cases: numbers and gradients against
TensorFlow for a broadcast-ellipsis batched matmul, the implicit output form, equation errors."""

import numpy as np
import pytest

import graphflow as tf

# Printed by a Python with TensorFlow (TensorFlow 2.21, tf.compat.v1 graph mode, float32) for
# y = einsum('...ij,...jk->...ik', a, b), z = einsum('ij,kj', c, c) and the gradients of
# sum(y * y) with respect to a and b; the inputs are built below exactly as there.
TF_Y = [1.55, 1.1, 0.2, 0.2, -1.15, -1.6, 0.2, 0.2, -3.85, -4.3, 0.2, 0.2, -1.15, -0.7, -2.5, -1.6,
        1.55, 2.0, 2.9, 3.8, 4.25, 4.7, 8.3, 9.2]
TF_Z = [5.0, -4.0, -4.0, 14.0]
TF_GA = [-31.14, -37.74, -44.34, 0.72, 1.68, 2.64, 32.58, 41.1, 49.62, 64.44, 80.52, 96.6]
TF_GB = [-10.6, -7.0, -11.55, -7.5, -12.5, -8.0, 11.0, 14.6, 12.75, 16.8, 14.5, 19.0, 32.6, 36.2,
         37.05, 41.1, 41.5, 46.0]


def test_einsum_matches_tensorflow_with_gradients():
    a = np.arange(12, dtype=np.float32).reshape(2, 1, 2, 3) / 4 - 1
    b = np.arange(18, dtype=np.float32).reshape(3, 3, 2) / 5 - 1
    c = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    A, B, C = tf.constant(a), tf.constant(b), tf.constant(c)
    y = tf.einsum("...ij,...jk->...ik", A, B)
    z = tf.einsum("ij,kj", C, C)
    assert y.shape.as_list() == [2, 3, 2, 2] and z.shape.as_list() == [2, 2]
    ga, gb = tf.gradients(tf.reduce_sum(y * y), [A, B])
    with tf.Session() as sess:
        got = sess.run([y, z, ga, gb])
    for value, want, shape in zip(got, (TF_Y, TF_Z, TF_GA, TF_GB),
                                  ((2, 3, 2, 2), (2, 2), a.shape, b.shape)):
        assert value.shape == shape
        np.testing.assert_allclose(value.reshape(-1), want, rtol=1e-5, atol=1e-5)


def test_einsum_unknown_dims_and_list_operands():
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.placeholder(tf.float32, [3, None])
    y = tf.einsum("bi,io->bo", [x, w], name="proj")
    assert y.shape.as_list() == [None, None] and y.op.name == "proj"
    with tf.Session() as sess:
        got = sess.run(y, {x: np.ones((2, 3)), w: np.ones((3, 4))})
    np.testing.assert_array_equal(got, np.full((2, 4), 3.0))


@pytest.mark.parametrize("equation, shapes, message", [
    ("ij,jk->ik", [(2, 3), (4, 5)], "letter 'j' has sizes 3 and 4"),
    ("ij,jk->il", [(2, 3), (3, 5)], "output letter 'l'"),
    ("ij->", [(2, 3), (3,)], "names 1 operands, got 2"),
    ("ijk->i", [(2, 3)], "rank 3"),
    ("i1->i", [(2, 3)], "must be letters"),
])
def test_einsum_errors(equation, shapes, message):
    with pytest.raises(ValueError, match=message):
        tf.einsum(equation, *[tf.zeros(s) for s in shapes])


def test_diagonal_forward_works_but_its_gradient_says_why_not():
    x = tf.constant(np.arange(9.0).reshape(3, 3))
    trace = tf.einsum("ii->", x)
    with tf.Session() as sess:
        assert sess.run(trace) == 12.0
    with pytest.raises(NotImplementedError, match="repeat a letter"):
        tf.gradients(trace, x)
