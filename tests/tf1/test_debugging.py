"""tf.debugging / tf.assert_*: passing and failing checks at run time, static checks when the
values, rank or dtype are known at build time."""

import numpy as np
import pytest

import graphflow as tf

CHECKS = [  # (assertion, x, y, passing x, failing x)
    (tf.debugging.assert_equal, [1.0, 2.0], [1.0, 2.0], [1.0, 3.0]),
    (tf.debugging.assert_none_equal, [1.0, 2.0], [2.0, 1.0], [1.0, 0.0]),
    (tf.debugging.assert_less, [1.0, 2.0], [0.0, 1.0], [1.0, 2.0]),
    (tf.debugging.assert_less_equal, [1.0, 2.0], [1.0, 2.0], [1.0, 3.0]),
    (tf.debugging.assert_greater, [1.0, 2.0], [2.0, 3.0], [1.0, 3.0]),
    (tf.debugging.assert_greater_equal, [1.0, 2.0], [1.0, 2.0], [0.0, 3.0]),
]


@pytest.mark.parametrize("check,y_value,good,bad", CHECKS, ids=[c[0].__name__ for c in CHECKS])
def test_binary_assertions(check, y_value, good, bad):
    x = tf.placeholder(tf.float32, [2], name="x")
    op = check(x, tf.constant(y_value), message="custom message")
    with tf.Session() as sess:
        sess.run(op, {x: good})
        with pytest.raises(tf.errors.InvalidArgumentError, match="custom message.*x \\(x:0\\) ="):
            sess.run(op, {x: bad})


@pytest.mark.parametrize("check,good,bad", [
    (tf.assert_positive, [1, 2], [1, 0]),
    (tf.assert_non_negative, [0, 2], [0, -1]),
    (tf.assert_negative, [-1, -2], [-1, 0]),
    (tf.debugging.assert_non_positive, [0, -2], [0, 1]),
])
def test_sign_assertions_and_top_level_aliases(check, good, bad):
    x = tf.placeholder(tf.int32, [2])
    op = check(x)
    with tf.control_dependencies([op]):
        y = tf.identity(x)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: good}), good)
        with pytest.raises(tf.errors.InvalidArgumentError, match="did not hold element-wise"):
            sess.run(y, {x: bad})


def test_constant_inputs_are_checked_when_built():
    with pytest.raises(tf.errors.InvalidArgumentError, match="assertion failed"):
        tf.assert_equal(tf.constant([1, 2]), [1, 3])
    tf.assert_equal(tf.constant([1, 2]), [1, 2])


def test_assert_rank_static_and_dynamic():
    with pytest.raises(ValueError, match="must have rank 2. Received rank 1"):
        tf.assert_rank(tf.placeholder(tf.float32, [None]), 2)
    assert tf.assert_rank(tf.placeholder(tf.float32, [None, 3]), 2).type == "NoOp"
    u = tf.placeholder(tf.float32)
    op = tf.debugging.assert_rank(u, 2)
    with tf.Session() as sess:
        sess.run(op, {u: np.zeros([2, 2])})
        with pytest.raises(tf.errors.InvalidArgumentError, match="must have rank"):
            sess.run(op, {u: np.zeros([2])})


def test_assert_type_is_static():
    x = tf.constant([1, 2])
    assert tf.assert_type(x, tf.int32).type == "NoOp"
    with pytest.raises(TypeError, match="must be of type tf.float32"):
        tf.debugging.assert_type(x, tf.float32, message="ids:")
