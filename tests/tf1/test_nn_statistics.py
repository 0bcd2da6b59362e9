"""graphflow.tf1.nn_statistics: tf.nn.sufficient_statistics + normalize_moments, weighted_moments
and log_poisson_loss against numpy."""

import math

import numpy as np
import pytest

import graphflow as tf


@pytest.mark.parametrize("shift,known", [(None, True), (0.5, True), (None, False)])
def test_sufficient_statistics_then_normalize_moments_give_mean_and_variance(shift, known):
    x = np.random.default_rng(0).standard_normal((4, 3, 5))
    xs = tf.placeholder(tf.float64, x.shape if known else None)
    counts, m_ss, v_ss, s = tf.nn.sufficient_statistics(xs, [0, 2], shift=shift)
    mean, var = tf.nn.normalize_moments(counts, m_ss, v_ss, s)
    with tf.Session() as sess:
        got_count, got_mean, got_var = sess.run([counts, mean, var], {xs: x})
    assert got_count == 20
    np.testing.assert_allclose(got_mean, x.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(got_var, x.var(axis=(0, 2)), rtol=1e-10)


@pytest.mark.parametrize("keep", [False, True])
def test_weighted_moments(keep):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((4, 3)), rng.integers(1, 4, (4, 1)).astype(np.float64)
    mean, var = tf.nn.weighted_moments(tf.constant(x), [0], tf.constant(w), keep_dims=keep)
    with tf.Session() as sess:
        got_mean, got_var = sess.run([mean, var])
    repeated = np.repeat(x, w[:, 0].astype(int), axis=0)
    np.testing.assert_allclose(got_mean, repeated.mean(0, keepdims=keep), rtol=1e-12)
    np.testing.assert_allclose(got_var, repeated.var(0, keepdims=keep), rtol=1e-10)


def test_log_poisson_loss_with_and_without_the_full_loss():
    targets = np.array([0.0, 1.0, 3.0, 7.0])
    log_input = np.array([0.2, -0.3, 1.1, 2.0])
    plain = tf.nn.log_poisson_loss(tf.constant(targets), tf.constant(log_input))
    full = tf.nn.log_poisson_loss(tf.constant(targets), tf.constant(log_input),
                                  compute_full_loss=True)
    with tf.Session() as sess:
        got_plain, got_full = sess.run([plain, full])
    want = np.exp(log_input) - log_input * targets
    np.testing.assert_allclose(got_plain, want, rtol=1e-12)
    stirling = [t * math.log(t) - t + 0.5 * math.log(2 * math.pi * t) if t > 1 else 0.0
                for t in targets]
    np.testing.assert_allclose(got_full, want + stirling, rtol=1e-12)
