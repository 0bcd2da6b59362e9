"""Tests for graphflow/tf1/contrib_layers_norm.py (`instance_norm`, `group_norm`) beyond the
TensorFlow numbers in test_contrib_layers_conv.py: unknown batch sizes, NCHW, numpy references,
and the errors on bad input."""

import numpy as np
import pytest

import graphflow as tf

layers = tf.contrib.layers


def test_group_norm_with_unknown_batch_and_nchw_instance_norm():
    x = tf.placeholder(tf.float32, [None, 3, 3, 8])
    y = layers.group_norm(x, groups=2)
    data = np.random.RandomState(1).randn(2, 3, 3, 8).astype(np.float32)
    nchw = layers.instance_norm(tf.constant(data.transpose(0, 3, 1, 2)), data_format="NCHW")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, out_nchw = sess.run([y, nchw], {x: data})
    g = data.reshape(2, 3, 3, 2, 4)
    want = (g - g.mean((1, 2, 4), keepdims=True)) / np.sqrt(g.var((1, 2, 4), keepdims=True) + 1e-6)
    np.testing.assert_allclose(out, want.reshape(2, 3, 3, 8), rtol=1e-4, atol=1e-5)
    m, v = data.mean((2, 3), keepdims=True), data.var((2, 3), keepdims=True)
    d = data.transpose(0, 3, 1, 2)
    m, v = d.mean((2, 3), keepdims=True), d.var((2, 3), keepdims=True)
    np.testing.assert_allclose(out_nchw, (d - m) / np.sqrt(v + 1e-6), rtol=1e-4, atol=1e-5)


def test_bad_input_errors():
    with pytest.raises(ValueError, match="commensurate"):
        layers.group_norm(tf.zeros([1, 2, 2, 6]), groups=4)
    with pytest.raises(ValueError, match="Invalid groups"):
        layers.group_norm(tf.zeros([1, 2, 2, 2]), groups=4)
    with pytest.raises(ValueError, match="data_format"):
        layers.instance_norm(tf.zeros([1, 2, 2, 2]), data_format="NWC")
