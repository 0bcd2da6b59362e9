"""EagerTensor (graphflow/framework/eager_tensor.py): a tensor with its value."""

import numpy as np
import pytest

import graphflow as tf


def test_value_conversions(eager):
    t = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.asarray(t), [[1.0, 2.0], [3.0, 4.0]])
    copy = t.numpy()
    copy[0, 0] = 9.0  # numpy() is the caller's own array
    assert t.numpy()[0, 0] == 1.0
    s = tf.constant(2.5)
    assert float(s) == 2.5 and bool(s) and int(tf.constant(3)) == 3
    assert [1, 2, 3][tf.constant(1)] == 2  # __index__
    with pytest.raises(TypeError, match="one element"):
        float(t)
    with pytest.raises(TypeError, match="integer scalar"):
        [1, 2][tf.constant(1.0)]


def test_text_and_iteration(eager):
    t = tf.constant([1.0, 2.0])
    assert str(t) == "tf.Tensor([1. 2.], shape=(2,), dtype=float32)"
    assert "numpy=array([1., 2.], dtype=float32)" in repr(t)
    assert str(tf.constant(3)) == "tf.Tensor(3, shape=(), dtype=int32)"
    rows = list(tf.constant([[1, 2], [3, 4]]))
    assert len(rows) == 2 and rows[1].numpy().tolist() == [3, 4]
    assert len(tf.constant([[1, 2], [3, 4]])) == 2
    with pytest.raises(TypeError, match="scalar"):
        iter(tf.constant(1.0))


def test_equality_is_identity_as_in_tf1(eager):
    a, b = tf.constant(1.0), tf.constant(1.0)
    assert a != b and a == a
    assert bool(tf.equal(a, b))
