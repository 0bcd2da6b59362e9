"""Tests for graphflow/tf1/contrib_summaries.py and `apply_regularization`: contrib's summary
tags for activations, tensors and collections, their values, and the summed penalty."""

import numpy as np
import pytest

import graphflow as tf

layers = tf.contrib.layers


def test_summarize_activation_tags_and_zero_fraction():
    pre = tf.constant([[-1.0, 2.0, 7.0, -3.0]])
    relu6 = tf.nn.relu6(pre, name="act")
    tf.add_to_collection(tf.GraphKeys.ACTIVATIONS, relu6)
    tf.add_to_collection(tf.GraphKeys.ACTIVATIONS, tf.nn.tanh(pre, name="other"))
    layers.summarize_activations(name_filter="act")
    summaries = tf.get_collection(tf.GraphKeys.SUMMARIES)
    assert [t.op.name for t in summaries] == ["act/zeros", "act/sixes", "act/activation"]
    summary = tf.summary.Summary()
    with tf.Session() as sess:
        for blob in sess.run(summaries):
            summary.MergeFromString(blob)
    values = {v.tag: v for v in summary.value}
    assert values["act/zeros"].simple_value == pytest.approx(0.5)
    assert values["act/sixes"].simple_value == pytest.approx(0.25)
    assert values["act/activation"].histo.num == 4


def test_summarize_tensor_scalar_histogram_and_skips():
    assert layers.summarize_tensor(tf.constant(["a"])) is None
    s = layers.summarize_tensor(tf.constant(2.0, name="two"))
    h = layers.summarize_tensor(tf.constant([1.0, 2.0], name="pair"), tag="my_tag")
    assert s.op.name == "two_summary" and h.op.name == "my_tag"
    tf.Variable([1.0, 2.0], name="v")
    assert [t.op.name for t in layers.summarize_variables()] == ["v_summary"]


def test_apply_regularization_sums_over_the_weights():
    weights = [tf.constant([1.0, -2.0]), tf.constant([[3.0]])]
    penalty = layers.apply_regularization(layers.l1_regularizer(0.5), weights)
    assert penalty.op.name == "get_regularization_penalty"
    assert tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES) == [penalty]
    zero = layers.apply_regularization(layers.l2_regularizer(0.0), weights)
    with tf.Session() as sess:
        assert sess.run(penalty) == pytest.approx(3.0)
        assert sess.run(zero) == 0.0
    with pytest.raises(ValueError, match="No weights to regularize"):
        layers.apply_regularization(layers.l1_regularizer(0.5))
    with pytest.raises(ValueError, match="scalar"):
        layers.apply_regularization(lambda w: w, weights)


def test_linear_has_no_activation():
    x = tf.constant([[-1.0, 2.0]])
    y = layers.linear(x, 3, weights_initializer=tf.constant_initializer(np.ones((2, 3))))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(y), [[1.0, 1.0, 1.0]])
