"""Tests for graphflow/ops/index_ops.py beyond the generic op cases: TensorFlow's numbers for
top_k ties and NaN, top_k of integer extremes, in_top_k boundary ties, boolean_mask (axis,
dynamic output length, gradient) and sequence_mask; errors naming the op."""

import numpy as np
import pytest

import graphflow as tf

# Printed by a Python with TensorFlow (TensorFlow 2.21, tf.compat.v1 graph mode) for the same inputs.
TF_TOP_K3 = ([[3.0, 3.0, 3.0], [0.0, 0.0, 0.0], [np.nan, 5.0, 5.0]], [[1, 2, 4], [0, 1, 2], [0, 2, 4]])
TF_IN_TOP_K = {1: [True, True, False], 2: [True, True, False]}
TF_BOOLEAN_MASK = ([1.0, 3.0, 5.0, 6.0], [[2.0, 3.0], [5.0, 6.0]])
TF_SEQUENCE_MASK = ([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
                    [[[True, False, False], [True, True, False]],
                     [[False, False, False], [True, True, True]]])


def test_top_k_ties_and_nan_as_tensorflow():
    x = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [0.0] * 5, [np.nan, 1.0, 5.0, -np.inf, 5.0]], np.float32)
    values, indices = tf.nn.top_k(tf.constant(x), 3)
    assert indices.dtype == tf.int32 and values.shape.as_list() == [3, 3]
    with tf.Session() as sess:
        v, i = sess.run([values, indices])
    np.testing.assert_array_equal(v, np.array(TF_TOP_K3[0], np.float32))
    np.testing.assert_array_equal(i, TF_TOP_K3[1])


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8])
def test_top_k_of_integers_ranks_the_extremes_right(dtype):
    info = np.iinfo(dtype)  # the minimum, whose negation overflows, ranks last
    x = np.array([[info.min, 0, info.max, info.min, 1]], dtype)
    values, indices = tf.nn.top_k(tf.constant(x), 5)
    with tf.Session() as sess:
        v, i = sess.run([values, indices])
    order = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")
    np.testing.assert_array_equal(i, order)
    np.testing.assert_array_equal(v, np.take_along_axis(x, order, axis=-1))


def test_in_top_k_as_tensorflow():
    p = np.array([[1.0, 2.0, 2.0, 0.5], [3.0, 1.0, 3.0, 3.0], [np.inf, 1.0, 2.0, 2.0]], np.float32)
    t = np.array([2, 3, 0], np.int32)
    with tf.Session() as sess:
        for k, want in TF_IN_TOP_K.items():
            assert sess.run(tf.nn.in_top_k(p, t, k)).tolist() == want


def test_top_k_with_a_k_tensor_and_a_bad_k():
    x = tf.placeholder(tf.float32, [None, 4])
    k = tf.placeholder(tf.int32, [])
    values, _ = tf.nn.top_k(x, k)
    assert values.shape.as_list() == [None, None]
    with tf.Session() as sess:
        got = sess.run(values, {x: [[1, 4, 2, 3]], k: 2})
        np.testing.assert_array_equal(got, [[4, 3]])
        with pytest.raises(Exception, match="k=5"):
            sess.run(values, {x: [[1, 4, 2, 3]], k: 5})
    with pytest.raises(ValueError, match="TopKV2 op 'big'.*at least k=5"):
        tf.nn.top_k(tf.zeros([2, 3]), 5, name="big")


def test_boolean_mask_as_tensorflow_with_dynamic_length_and_gradient():
    t2 = tf.placeholder(tf.float32, [2, 3])
    mask = tf.placeholder(tf.bool, [2, 3])
    flat = tf.boolean_mask(t2, mask)
    cols = tf.boolean_mask(t2, [False, True, True], axis=1)
    assert flat.shape.as_list() == [None]
    assert cols.shape.as_list() == [2, None]
    (grad,) = tf.gradients(tf.reduce_sum(flat * flat), t2)
    values = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    m = np.array([[True, False, True], [False, True, True]])
    with tf.Session() as sess:
        a, b, g = sess.run([flat, cols, grad], {t2: values, mask: m})
    np.testing.assert_array_equal(a, TF_BOOLEAN_MASK[0])
    np.testing.assert_array_equal(b, TF_BOOLEAN_MASK[1])
    np.testing.assert_array_equal(g, 2 * values * m)


def test_boolean_mask_shape_errors():
    with pytest.raises(ValueError, match="does not match"):
        tf.boolean_mask(tf.zeros([2, 3]), tf.constant([True, False, True]))
    with pytest.raises(ValueError, match="scalar"):
        tf.boolean_mask(tf.zeros([2]), True)


def test_sequence_mask_as_tensorflow():
    with tf.Session() as sess:
        a = sess.run(tf.sequence_mask([1, 3, 0], 4, dtype=tf.float32))
        b = sess.run(tf.sequence_mask([[1, 2], [0, 3]]))
    np.testing.assert_array_equal(a, TF_SEQUENCE_MASK[0])
    assert a.dtype == np.float32
    assert b.tolist() == TF_SEQUENCE_MASK[1]


def test_gather_nd_and_scatter_nd_out_of_range_name_the_op():
    params = tf.placeholder(tf.float32, [2, 2])
    out = tf.gather_nd(params, [[0, 2]], name="pick")
    with tf.Session() as sess:
        with pytest.raises(Exception, match="pick"):
            sess.run(out, {params: np.zeros((2, 2), np.float32)})
    with pytest.raises(ValueError, match="ScatterNd op.*updates of shape"):
        tf.scatter_nd([[0], [1]], tf.zeros([3]), [4])


def test_attr_types_are_declared():
    with pytest.raises(TypeError, match="TopKV2.*attr 'sorted' must be a bool"):
        tf.nn.top_k(tf.zeros([3]), 2, sorted="yes")
