"""Tests for graphflow/ops/indexed_slices.py: `tf.IndexedSlices` as the gradient of gather and
embedding_lookup (what `tf.gradients` returns and `Session.run` fetches), its densification with
TF's warnings, the aggregation of several gradients, and the clipping functions that take it.
TF numbers recorded from TensorFlow 2.21's tf.compat.v1."""

import warnings

import numpy as np
import pytest

import graphflow as tf


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_embedding_lookup_gradient_is_indexed_slices_and_fetches_as_a_value():
    v = tf.Variable(np.arange(12, dtype=np.float32).reshape(6, 2))
    ids = tf.constant([[1, 3], [1, 5]])
    y = tf.reduce_sum(tf.nn.embedding_lookup(v, ids) * 2.0)
    (g,) = tf.gradients(y, [v])
    assert isinstance(g, tf.IndexedSlices)
    assert g.dtype == tf.float32 and g.shape.as_list() == [6, 2]
    assert g.values.shape.as_list() == [4, 2] and g.indices.shape.as_list() == [4]
    got = _run(g)
    assert isinstance(got, tf.IndexedSlicesValue)
    np.testing.assert_array_equal(got.values, np.full((4, 2), 2.0))
    np.testing.assert_array_equal(got.indices, [1, 3, 1, 5])
    np.testing.assert_array_equal(got.dense_shape, [6, 2])
    dense = _run(tf.convert_to_tensor(g))  # repeated indices add up
    np.testing.assert_array_equal(dense, [[0, 0], [4, 4], [0, 0], [2, 2], [0, 0], [2, 2]])


def test_gradients_of_several_lookups_concatenate_and_a_dense_use_makes_them_dense():
    v = tf.Variable(np.ones((5, 3), np.float32))
    a = tf.reduce_sum(tf.gather(v, [0, 4]))
    b = tf.reduce_sum(tf.gather(v, tf.constant([2], tf.int64)) * 3.0)
    (sparse,) = tf.gradients(a + b, [v])
    assert isinstance(sparse, tf.IndexedSlices)
    assert sparse.indices.dtype == tf.int64  # int32 and int64 indices meet as int64
    got = _run(sparse)
    np.testing.assert_array_equal(np.sort(got.indices), [0, 2, 4])
    (dense,) = tf.gradients(a + b + tf.reduce_sum(v), [v])
    assert isinstance(dense, tf.Tensor) and dense.shape.as_list() == [5, 3]
    want = np.ones((5, 3))
    want[[0, 4]] += 1
    want[2] += 3
    np.testing.assert_array_equal(_run(dense), want)


def test_gradient_through_identity_stays_sparse_and_other_axes_are_dense():
    v = tf.Variable(np.ones((4, 3), np.float32))
    (g,) = tf.gradients(tf.reduce_sum(tf.identity(tf.gather(v, [1]))), [v])
    assert isinstance(g, tf.IndexedSlices)
    (g1,) = tf.gradients(tf.reduce_sum(tf.gather(v, [0, 0], axis=1)), [v])
    assert isinstance(g1, tf.Tensor)
    np.testing.assert_array_equal(_run(g1), [[2, 0, 0]] * 4)


def test_second_order_gradient_through_a_sparse_gradient():
    p = tf.constant(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    w = tf.placeholder(tf.float64, [3, 2])
    (g,) = tf.gradients(tf.reduce_sum(tf.square(tf.gather(p * w, [2, 0, 2]))), [w])
    assert isinstance(g, tf.Tensor)  # densified on its way through p * w's gradient
    (h,) = tf.gradients(tf.reduce_sum(g), [w])
    ones = np.ones((3, 2))
    np.testing.assert_allclose(_run(h, {w: ones}),
                               2 * np.array([[1, 4], [0, 0], [25, 36]]) * [[1], [0], [2]])


def test_densifying_warns_like_tensorflow():
    unknown = tf.placeholder(tf.float32, [None, 4])
    (g,) = tf.gradients(tf.reduce_sum(tf.gather(unknown, [0])), [unknown])
    with pytest.warns(UserWarning, match="dense Tensor of unknown shape"):
        tf.convert_to_tensor(g)
    huge = tf.IndexedSlices(tf.zeros([1, 1001]), tf.constant([0]), tf.constant([100000, 1001]))
    with pytest.warns(UserWarning, match="with 100100000 elements"):
        tf.convert_to_tensor(huge)
    small = tf.IndexedSlices(tf.zeros([1, 2]), tf.constant([0]), tf.constant([3, 2]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.convert_to_tensor(small)


def test_conversion_errors_name_the_fault():
    s = tf.IndexedSlices(tf.zeros([1, 2]), tf.constant([0]), tf.constant([3, 2]))
    with pytest.raises(ValueError, match="Incompatible tensor conversion requested to dtype "
                                         "float64"):
        tf.convert_to_tensor(s, dtype=tf.float64)
    with pytest.raises(ValueError, match="without dense_shape"):
        tf.convert_to_tensor(tf.IndexedSlices(tf.zeros([1, 2]), tf.constant([0])))
    with pytest.raises(TypeError, match="indices must be int32 or int64"):
        tf.IndexedSlices(tf.zeros([1, 2]), tf.constant([0.0]))
    assert tf.convert_to_tensor_or_indexed_slices(s) is s
    with pytest.raises(ValueError, match="requested dtype float64"):
        tf.convert_to_tensor_or_indexed_slices(s, dtype=tf.float64)


def test_shapeless_indexed_slices_fetch_and_negation():
    s = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([4]))
    assert s.shape.as_list() == [None, 2]
    got = _run(-s)
    assert isinstance(got, tf.IndexedSlicesValue) and got.dense_shape is None
    np.testing.assert_array_equal(got.values, [[-1, -2]])
    np.testing.assert_array_equal(got.indices, [4])


def _clip_model():
    v = tf.Variable(np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32))
    w = tf.Variable(np.array([0.5, -2.0], np.float32))
    loss = tf.reduce_sum(tf.square(tf.gather(v, [0, 2, 0]))) + tf.reduce_sum(w * 3.0)
    return tf.gradients(loss, [v, w])


def test_clip_by_global_norm_and_clip_by_norm_take_indexed_slices():
    gv, gw = _clip_model()
    clipped, norm = tf.clip_by_global_norm([gv, gw, None], 2.0)
    by_norm = tf.clip_by_norm(gv, 1.5)
    assert isinstance(clipped[0], tf.IndexedSlices) and clipped[2] is None
    assert isinstance(by_norm, tf.IndexedSlices)
    c, n, b = _run([clipped[:2], norm, by_norm])
    # tf.compat.v1: the norms are of the values (the repeated row 0 counts twice)
    row0 = [-0.6689742803573608, -0.5473425984382629, -0.42571088671684265]
    np.testing.assert_allclose(
        c[0].values, [row0, [0.06081584468483925, 0.18244753777980804, 0.30407923460006714],
                      row0], rtol=1e-6)
    np.testing.assert_array_equal(c[0].indices, [0, 2, 0])
    np.testing.assert_allclose(c[1], [1.0034613609313965] * 2, rtol=1e-6)
    np.testing.assert_allclose(n, 5.979303359985352, rtol=1e-6)
    row0 = [-0.7120275497436523, -0.5825679898262024, -0.45310842990875244]
    np.testing.assert_allclose(
        b.values, [row0, [0.06472977995872498, 0.19418933987617493, 0.3236488699913025], row0],
        rtol=1e-6)
    np.testing.assert_array_equal(b.indices, [0, 2, 0])
