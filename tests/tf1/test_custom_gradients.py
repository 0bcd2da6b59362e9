"""graphflow.tf1.custom_gradients: tf.RegisterGradient with gradient_override_map (the
straight-through estimator as quantization papers wrote it) and tf.custom_gradient (a clipped
gradient, a numerically stable log1pexp, variables read inside the function)."""

import numpy as np
import pytest

import graphflow as tf


def test_straight_through_round_and_a_registered_sign_gradient():
    @tf.RegisterGradient("ClippedSignGrad_test")
    def _clipped(op, grad):
        return grad * tf.cast(tf.abs(op.inputs[0]) <= 1.0, grad.dtype)

    x = tf.placeholder(tf.float64, [4])
    graph = tf.get_default_graph()
    with graph.gradient_override_map({"Round": "Identity", "Sign": "ClippedSignGrad_test"}):
        rounded = tf.round(x * 3.0) / 3.0
        signs = tf.sign(x)
    plain = tf.round(x)
    g_round, g_sign = tf.gradients(tf.reduce_sum(rounded), x)[0], \
        tf.gradients(tf.reduce_sum(signs * [1.0, 2.0, 3.0, 4.0]), x)[0]
    with tf.Session() as sess:
        got_round, got_sign = sess.run([g_round, g_sign], {x: [0.1, -0.7, 2.0, -1.5]})
    np.testing.assert_allclose(got_round, np.ones(4))  # d round / dx passed straight through
    np.testing.assert_allclose(got_sign, [1.0, 2.0, 0.0, 0.0])
    with tf.Session() as sess:  # outside the block: Round's own (zero) gradient
        g_plain = tf.gradients(tf.reduce_sum(plain), x)[0]
        assert g_plain is None or not np.any(sess.run(g_plain, {x: [0.1, -0.7, 2.0, -1.5]}))
    with pytest.raises(KeyError, match="Registering two gradient"):
        tf.RegisterGradient("ClippedSignGrad_test")(lambda op, g: g)


def test_an_override_naming_no_gradient_is_a_clear_error():
    x = tf.placeholder(tf.float32, [2])
    with tf.get_default_graph().gradient_override_map({"Square": "NoSuchGradient_test"}):
        y = tf.square(x)
    with pytest.raises(LookupError, match="No gradient registered under the name "
                                          "'NoSuchGradient_test'"):
        tf.gradients(y, x)


def test_custom_gradient_replaces_the_inner_gradient():
    @tf.custom_gradient
    def clip_gradient(x):
        def grad(dy):
            return tf.clip_by_value(dy, -0.1, 0.1)
        return tf.identity(x), grad

    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return tf.log(1 + e), grad

    x = tf.placeholder(tf.float64, [3])
    y = clip_gradient(x * 5.0)
    gx, = tf.gradients(tf.reduce_sum(y * [1.0, -3.0, 0.05]), x)
    z = log1pexp(x)
    gz, = tf.gradients(tf.reduce_sum(z), x)
    with tf.Session() as sess:
        got_y, got_gx, got_z, got_gz = sess.run([y, gx, z, gz], {x: [1.0, 2.0, 800.0]})
    np.testing.assert_allclose(got_y, [5.0, 10.0, 4000.0])
    np.testing.assert_allclose(got_gx, [0.5, -0.5, 0.25])  # clipped dy, times d(5x)/dx
    assert np.isinf(got_z[2])  # the forward pass overflows as written ...
    np.testing.assert_allclose(got_gz, 1 / (1 + np.exp(-np.array([1.0, 2.0, 800.0]))))  # ... not
    # the custom gradient


def test_custom_gradient_with_variables_and_several_outputs():
    w = tf.Variable(np.array([2.0, 3.0]))

    @tf.custom_gradient
    def scaled(x):
        def grad(dy_sum, dy_prod, variables=None):
            assert len(variables) == 1
            return [dy_sum * 10.0 + 0.0 * dy_prod], [dy_prod * 100.0 + 0.0 * variables[0]]
        return [tf.reduce_sum(x * w), x * w], grad

    x = tf.placeholder(tf.float64, [2])
    total, prod = scaled(x)
    gx, gw = tf.gradients(total + tf.reduce_sum(prod), [x, w])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_total, got_gx, got_gw = sess.run([total, gx, gw], {x: [1.0, 1.0]})
    assert got_total == 5.0
    np.testing.assert_allclose(got_gx, [10.0, 10.0])
    np.testing.assert_allclose(got_gw, [100.0, 100.0])


def test_identity_n_passes_tensors_and_gradients_through():
    a, b = tf.placeholder(tf.float64, [2]), tf.placeholder(tf.float64, [])
    c, d = tf.identity_n([a, b])
    ga, gb = tf.gradients(tf.reduce_sum(c * 2.0) + d * 3.0, [a, b])
    with tf.Session() as sess:
        got = sess.run([c, d, ga, gb], {a: [1.0, 2.0], b: 4.0})
    np.testing.assert_allclose(got[0], [1.0, 2.0])
    assert got[1] == 4.0 and list(got[2]) == [2.0, 2.0] and got[3] == 3.0
