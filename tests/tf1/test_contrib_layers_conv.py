"""Tests for graphflow/tf1/contrib_layers_conv.py (and the numbers of contrib_layers_norm.py, which
share the recorded TensorFlow run): contrib's scopes and variable names, output shapes, and
numbers against TensorFlow (TF-Slim's layer logic rebuilt there from tf.compat.v1.nn ops with the
same weights, checked against tf_slim's own layers), arg_scope, and the errors on bad input."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf_reference import run_in_tensorflow, tf_python

layers = tf.contrib.layers


def _weights(np):
    rng = np.random.RandomState(0)
    f = np.float32
    return {"x": rng.randn(2, 4, 4, 3).astype(f), "x1": rng.randn(2, 6, 3).astype(f),
            "x8": rng.randn(2, 3, 3, 8).astype(f), "wt": (rng.randn(3, 3, 5, 3) * 0.3).astype(f),
            "bt": (rng.randn(5) * 0.1).astype(f), "dw": (rng.randn(3, 3, 3, 2) * 0.3).astype(f),
            "pw": (rng.randn(1, 1, 6, 4) * 0.3).astype(f), "bs": (rng.randn(4) * 0.1).astype(f),
            "w1": (rng.randn(3, 3, 4) * 0.3).astype(f), "g3": (rng.rand(3) + 0.5).astype(f),
            "b3": (rng.randn(3) * 0.1).astype(f), "g8": (rng.rand(8) + 0.5).astype(f),
            "b8": (rng.randn(8) * 0.1).astype(f)}


def tf_core_program(tf, np):
    """TF-Slim's layers written with tf.compat.v1.nn ops (tf_slim is not installed there)."""
    w = _weights(np)
    x = tf.constant(w["x"])
    out = {}
    out["transpose_same"] = tf.nn.relu(tf.nn.conv2d_transpose(
        x, w["wt"], [2, 8, 8, 5], [1, 2, 2, 1], "SAME") + w["bt"])
    out["transpose_valid"] = tf.nn.conv2d_transpose(x, w["wt"], [2, 9, 9, 5], [1, 2, 2, 1],
                                                    "VALID") + w["bt"]
    out["separable"] = tf.nn.relu(tf.nn.separable_conv2d(x, w["dw"], w["pw"], [1, 1, 1, 1],
                                                         "SAME", rate=[2, 2]) + w["bs"])
    out["depthwise"] = tf.nn.depthwise_conv2d(x, w["dw"], [1, 2, 2, 1], "SAME")
    out["conv1d"] = tf.nn.relu(tf.nn.conv1d(w["x1"], w["w1"], 1, "SAME"))
    mean, var = tf.nn.moments(x, [1, 2], keep_dims=True)
    out["instance"] = tf.nn.batch_normalization(x, mean, var, w["b3"], w["g3"], 1e-6)
    grouped = tf.reshape(w["x8"], [2, 3, 3, 4, 2])
    mean, var = tf.nn.moments(grouped, [4, 1, 2], keep_dims=True)
    gain = tf.rsqrt(var + 1e-6)
    gamma, beta = tf.reshape(w["g8"], [1, 1, 1, 4, 2]), tf.reshape(w["b8"], [1, 1, 1, 4, 2])
    out["group"] = tf.nn.relu(tf.reshape(grouped * gain * gamma + (beta - mean * gain * gamma),
                                         [2, 3, 3, 8]))
    with tf.Session() as sess:
        return sess.run(out)


def _fingerprint(a):
    a = np.asarray(a, np.float64).ravel()
    return [a.sum(), (a * np.cos(np.arange(a.size))).sum(), np.abs(a).max()]


# Made by a Python with TensorFlow 2.21 (tf.compat.v1, graph mode) running tf_core_program, and
# checked there against tf_slim 1.1's own layers: per output [sum, sum(out * cos(index)), max|out|].
TF_FINGERPRINTS = {
    "transpose_same": [203.446451, -4.384343, 2.090513],
    "transpose_valid": [64.212713, 0.530796, 2.28212],
    "separable": [25.862475, 4.225048, 1.583883],
    "depthwise": [-1.059508, 0.306027, 1.810964],
    "conv1d": [17.046934, 2.458981, 1.843552],
    "instance": [-1.142869, -4.854961, 1.79362],
    "group": [48.764318, -2.220736, 2.714067],
}


def _graphflow_outputs():
    w = _weights(np)
    init = tf.constant_initializer
    x = tf.constant(w["x"])
    out = {}
    out["transpose_same"] = layers.conv2d_transpose(
        x, 5, 3, stride=2, weights_initializer=init(w["wt"]), biases_initializer=init(w["bt"]))
    out["transpose_valid"] = layers.convolution2d_transpose(
        x, 5, [3, 3], stride=2, padding="VALID", activation_fn=None,
        weights_initializer=init(w["wt"]), biases_initializer=init(w["bt"]))
    out["separable"] = layers.separable_conv2d(
        x, 4, 3, depth_multiplier=2, rate=2, weights_initializer=init(w["dw"]),
        pointwise_initializer=init(w["pw"]), biases_initializer=init(w["bs"]))
    out["depthwise"] = layers.separable_convolution2d(
        x, None, 3, depth_multiplier=2, stride=2, activation_fn=None,
        weights_initializer=init(w["dw"]), biases_initializer=None)
    out["conv1d"] = layers.convolution(tf.constant(w["x1"]), 4, 3,
                                       weights_initializer=init(w["w1"]), conv_dims=1)
    out["instance"] = layers.instance_norm(x, param_initializers={"gamma": init(w["g3"]),
                                                                  "beta": init(w["b3"])})
    out["group"] = layers.group_norm(tf.constant(w["x8"]), groups=4, activation_fn=tf.nn.relu,
                                     param_initializers={"gamma": init(w["g8"]),
                                                         "beta": init(w["b8"])})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return out, sess.run(out)


def test_variable_names_and_shapes_are_contribs():
    out, _ = _graphflow_outputs()
    shapes = {k: v.shape.as_list() for k, v in out.items()}
    assert shapes == {"transpose_same": [2, 8, 8, 5], "transpose_valid": [2, 9, 9, 5],
                      "separable": [2, 4, 4, 4], "depthwise": [2, 2, 2, 6], "conv1d": [2, 6, 4],
                      "instance": [2, 4, 4, 3], "group": [2, 3, 3, 8]}
    names = {v.op.name: v.shape.as_list() for v in tf.global_variables()}
    assert names == {
        "Conv2d_transpose/weights": [3, 3, 5, 3], "Conv2d_transpose/biases": [5],
        "Conv2d_transpose_1/weights": [3, 3, 5, 3], "Conv2d_transpose_1/biases": [5],
        "SeparableConv2d/depthwise_weights": [3, 3, 3, 2],
        "SeparableConv2d/pointwise_weights": [1, 1, 6, 4], "SeparableConv2d/biases": [4],
        "SeparableConv2d_1/depthwise_weights": [3, 3, 3, 2],
        "Conv/weights": [3, 3, 4], "Conv/biases": [4],
        "InstanceNorm/beta": [3], "InstanceNorm/gamma": [3],
        "GroupNorm/beta": [8], "GroupNorm/gamma": [8]}
    assert len(tf.get_collection(tf.GraphKeys.MODEL_VARIABLES)) == len(names)


def test_numbers_match_recorded_tensorflow():
    _, values = _graphflow_outputs()
    for key, expected in TF_FINGERPRINTS.items():
        np.testing.assert_allclose(_fingerprint(values[key]), expected, rtol=2e-5, atol=2e-5,
                                   err_msg=key)
    assert set(TF_FINGERPRINTS) == set(values)


def test_numbers_match_tensorflow_live():
    if tf_python() is None:
        pytest.skip("TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON to compare with it)")
    expected = run_in_tensorflow([(None, _weights, None), ("core", tf_core_program, {})])["core"]
    _, values = _graphflow_outputs()
    for key, value in expected.items():
        np.testing.assert_allclose(values[key], value, rtol=1e-4, atol=1e-5, err_msg=key)


def test_dynamic_batch_and_spatial_sizes_and_arg_scope():
    x = tf.placeholder(tf.float32, [None, None, None, 3])
    with tf.contrib.framework.arg_scope([layers.conv2d_transpose, layers.separable_conv2d],
                                        activation_fn=None, padding="VALID"):
        up = layers.conv2d_transpose(x, 2, 3, stride=2)
        sep = layers.separable_conv2d(x, 4, [3, 3])
    assert up.shape.as_list() == [None, None, None, 2]
    data = np.ones((3, 5, 4, 3), np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run([up, sep], {x: data})
    assert a.shape == (3, 11, 9, 2) and b.shape == (3, 3, 2, 4)


def test_bad_input_errors():
    with pytest.raises(ValueError, match="rank 3, got 4"):
        layers.convolution(tf.zeros([1, 2, 2, 2]), 3, 3, conv_dims=1)
    with pytest.raises(ValueError, match="4-D"):
        layers.conv2d_transpose(tf.zeros([1, 2, 2]), 3, 3)
