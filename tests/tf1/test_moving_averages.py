"""Tests for graphflow.tf1.moving_averages (tf.train.ExponentialMovingAverage); the training use
with num_updates is in tests/tf1/test_training_programs.py."""

import numpy as np
import pytest

import graphflow as tf


def test_averages_of_a_variable_and_a_tensor():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        t = tf.placeholder(tf.float32, [2], name="t")
        ema = tf.train.ExponentialMovingAverage(0.75)
        assert ema.average_name(v) == "v/ExponentialMovingAverage"
        update = ema.apply([v, t])
        assert update.name == "ExponentialMovingAverage"
        assert ema.average(v).name == "v/ExponentialMovingAverage:0"
        assert ema.average(t).name == "t/ExponentialMovingAverage:0"
        assert not ema.average(v).trainable
        assert tf.moving_average_variables() == [v]
        assign = v.assign([5.0, 6.0])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(ema.average(v)), [1.0, 2.0])  # starts at v
            np.testing.assert_array_equal(sess.run(ema.average(t)), [0.0, 0.0])  # at zero
            sess.run(assign)
            sess.run(update, {t: [4.0, 8.0]})
            np.testing.assert_allclose(sess.run(ema.average(v)), [2.0, 3.0])
            np.testing.assert_allclose(sess.run(ema.average(t)), [1.0, 2.0])
        restore = ema.variables_to_restore()
        assert restore["v/ExponentialMovingAverage"] is v
        assert "v" not in restore


def test_errors():
    with tf.Graph().as_default():
        v = tf.Variable([1.0], name="v")
        ema = tf.train.ExponentialMovingAverage(0.9)
        ema.apply([v])
        with pytest.raises(ValueError, match="already computed"):
            ema.apply([v])
        with pytest.raises(TypeError, match="half, float, or double"):
            ema.apply([tf.Variable([1], name="i")])
        with pytest.raises(NotImplementedError, match="zero debiasing"):
            tf.train.ExponentialMovingAverage(0.9, zero_debias=True).apply([tf.constant([1.0])])
