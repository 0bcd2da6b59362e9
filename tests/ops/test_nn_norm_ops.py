"""Tests for graphflow/ops/nn_norm_ops.py against TensorFlow: tf.nn.fused_batch_norm outputs and
gradients in NCHW, training and inference mode; errors name the op."""

import numpy as np
import pytest

import graphflow as tf

# Printed by a Python with TensorFlow (TensorFlow 2.21, tf.compat.v1 graph mode, float32) for the
# inputs below: y, batch mean/variance of fused_batch_norm(x, s, o, data_format="NCHW"), the
# gradients of sum(y * u) for x, scale and offset; then is_training=False with mean 1, variance 2.
TF = {
    "y": [-0.545153, 0.745153, 0.229031, -0.287092, 1.143222, 0.166333, -0.810556, -1.787445, 2.207866,
        0.172809, -1.862248, 3.225394, 0.487092, -0.029031, -0.545153, 0.745153, -0.322111, -1.299,
        1.143222, 0.166333, -0.844719, -2.879776, 2.207866, 0.172809],
    "mean": [1.25, 1.625, 1.5625],
    "var": [1.071429, 1.196429, 1.102679],
    "dx": [-1.118105, 0.731013, -0.421532, 1.006535, -0.640927, -2.128577, 1.268219, -0.21943, 2.843496,
        -0.189566, -3.222629, 0.289913, -0.361382, 1.066685, -0.08586, -0.817355, 1.035155, -0.452494,
        1.312851, -0.174798, -3.741154, 3.401067, -3.261674, 3.880547],
    "dscale": [-1.806429, 3.907556, 4.006518],
    "doffset": [-1.0, 0.0, 1.0],
    "y_inf": [-0.253465, 0.630198, 0.276733, -0.076733, 1.21386, 0.50693, -0.2, -0.90693, 2.42079, 1.00693,
        -0.40693, 3.12772, 0.453465, 0.1, -0.253465, 0.630198, 0.153465, -0.553465, 1.21386, 0.50693,
        0.3, -1.11386, 2.42079, 1.00693],
    "dx_inf": [-0.70693, 0.353465, -0.353465, 0.70693, 0.0, -1.41386, 0.70693, -0.70693, 2.82772, 0.0,
        -2.82772, 1.41386, -0.353465, 0.70693, 0.0, -0.70693, 0.70693, -0.70693, 1.41386, 0.0, -2.82772,
        1.41386, -1.41386, 2.82772],
    "dscale_inf": [-1.41386, 2.82772, 3.181185],
}


def _inputs():
    x = ((np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2) * 5) % 7) / 2
    u = ((np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2) * 3) % 5) - 2
    return x, np.array([0.5, 1.0, 2.0], np.float32), np.array([0.1, -0.2, 0.3], np.float32), u


def test_fused_batch_norm_nchw_matches_tensorflow():
    x, s, o, u = _inputs()
    X, S, O = tf.constant(x), tf.constant(s), tf.constant(o)
    y, m, v = tf.nn.fused_batch_norm(X, S, O, data_format="NCHW", is_training=True)
    g = tf.gradients(tf.reduce_sum(y * u), [X, S, O])
    yi, _, _ = tf.nn.fused_batch_norm(X, S, O, [1.0] * 3, [2.0] * 3, data_format="NCHW",
                                      is_training=False)
    gi = tf.gradients(tf.reduce_sum(yi * u), [X, S, O])
    names = ["y", "mean", "var", "dx", "dscale", "doffset", "y_inf", "dx_inf", "dscale_inf"]
    with tf.Session() as sess:
        got = sess.run([y, m, v, g[0], g[1], g[2], yi, gi[0], gi[1]])
    for name, value in zip(names, got):
        np.testing.assert_allclose(value.reshape(-1), TF[name], rtol=1e-5, atol=2e-6, err_msg=name)


def test_fused_batch_norm_errors():
    with pytest.raises(ValueError, match="FusedBatchNorm op 'bn'.*4-D"):
        tf.nn.fused_batch_norm(tf.zeros([2, 3]), [1.0, 1.0, 1.0], [0.0, 0.0, 0.0], name="bn")
    with pytest.raises(ValueError, match="scale has 2 elements but x has 3 channels"):
        tf.nn.fused_batch_norm(tf.zeros([1, 2, 2, 3]), [1.0, 1.0], [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="needs mean and variance"):
        tf.nn.fused_batch_norm(tf.zeros([1, 2, 2, 3]), [1.0] * 3, [0.0] * 3, is_training=False)
    with pytest.raises(ValueError, match="data_format must be"):
        tf.nn.fused_batch_norm(tf.zeros([1, 2, 2, 3]), [1.0] * 3, [0.0] * 3, data_format="NWHC")
