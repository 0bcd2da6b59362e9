"""Keras optimizers: names, Keras's defaults, and RMSprop's mean square starting at zeros (one
step against numpy)."""

import numpy as np
import pytest

import graphflow as tf


def test_names_and_defaults():
    assert isinstance(tf.keras.optimizers.get("adam"), tf.keras.optimizers.Adam)
    adam = tf.keras.optimizers.Adam()
    assert (adam._lr, adam._beta1, adam._beta2, adam._epsilon) == (0.001, 0.9, 0.999, 1e-7)
    assert tf.keras.optimizers.SGD()._learning_rate == 0.01
    assert tf.keras.optimizers.SGD(lr=0.5)._learning_rate == 0.5
    given = tf.train.GradientDescentOptimizer(0.1)
    assert tf.keras.optimizers.get(given) is given
    with pytest.raises(NotImplementedError, match="decay"):
        tf.keras.optimizers.Adam(decay=0.1)


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_one_step_of_rmsprop_and_sgd_against_numpy(momentum):
    w = tf.Variable([1.0, -2.0])
    loss = tf.reduce_sum(w * w)
    rms = tf.keras.optimizers.RMSprop(0.01).minimize(loss)
    sgd_w = tf.Variable([1.0, -2.0])
    sgd = tf.keras.optimizers.SGD(0.1, momentum=momentum).minimize(tf.reduce_sum(sgd_w * sgd_w))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([rms, sgd])
        sess.run([rms, sgd])
        got_rms, got_sgd = sess.run([w, sgd_w])
    x, ms = np.array([1.0, -2.0]), np.zeros(2)
    for _ in range(2):
        g = 2 * x
        ms = 0.9 * ms + 0.1 * g * g
        x = x - 0.01 * g / np.sqrt(ms + 1e-7)
    np.testing.assert_allclose(got_rms, x, rtol=1e-5)
    y, accum = np.array([1.0, -2.0]), np.zeros(2)
    for _ in range(2):
        accum = momentum * accum + 2 * y
        y = y - 0.1 * accum
    np.testing.assert_allclose(got_sgd, y, rtol=1e-6)
