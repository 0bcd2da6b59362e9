"""tf.train.FtrlOptimizer against a numpy transcription of TensorFlow's ApplyFtrl update."""

import numpy as np
import pytest

import graphflow as tf


def _numpy_ftrl(var, accum, linear, grad, lr, l1, l2, power=-0.5):
    new_accum = accum + grad * grad
    linear = linear + grad - (new_accum ** -power - accum ** -power) / lr * var
    quadratic = new_accum ** -power / lr + 2 * l2
    var = np.where(np.abs(linear) > l1, (np.sign(linear) * l1 - linear) / quadratic, 0.0)
    return var, new_accum, linear


@pytest.mark.parametrize("l1,l2", [(0.0, 0.0), (0.05, 0.1)])
def test_ftrl_matches_numpy_over_steps(l1, l2):
    x = np.array([[1.0, -2.0, 0.5], [0.3, 0.1, -1.0]], np.float32)
    target = np.array([1.0, -1.0], np.float32)
    w0 = np.array([0.2, -0.1, 0.4], np.float32)
    with tf.Graph().as_default():
        w = tf.Variable(w0)
        loss = tf.reduce_sum(tf.square(tf.reduce_sum(x * w, 1) - target))
        opt = tf.train.FtrlOptimizer(0.3, l1_regularization_strength=l1,
                                     l2_regularization_strength=l2)
        step = opt.minimize(loss)
        grad = tf.gradients(loss, [w])[0]
        assert {v.name for v in tf.global_variables()} == {"Variable:0", "Variable/Ftrl:0",
                                                          "Variable/Ftrl_1:0"}
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            var, accum, linear = w0.astype(np.float64), np.full(3, 0.1), np.zeros(3)
            for _ in range(4):
                g = session.run(grad)
                session.run(step)
                var, accum, linear = _numpy_ftrl(var, accum, linear, g, 0.3, l1, l2)
                np.testing.assert_allclose(session.run(w), var, rtol=1e-5, atol=1e-6)
