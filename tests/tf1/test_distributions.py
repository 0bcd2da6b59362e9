"""graphflow.tf1.distributions (tf.distributions / tf.contrib.distributions): densities, entropies,
KL divergences and moments against closed forms computed in numpy, samples against their
distribution's statistics, gradients through reparameterized samples, and a VAE loss written the
way TF1 tutorials wrote it."""

import math

import numpy as np
import pytest

import graphflow as tf

tfd = tf.contrib.distributions


def _run(*fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(list(fetches), feed)


def test_normal_log_prob_cdf_entropy_kl_and_moments():
    loc, scale = np.array([0.0, 1.5, -2.0]), np.array([1.0, 0.5, 3.0])
    x = np.array([0.3, 1.0, 4.0])
    a, b = tf.distributions.Normal(loc, scale), tfd.Normal(loc=np.float64(1), scale=np.float64(2))
    log_p, cdf, ent, kl, mean, std = _run(a.log_prob(x), a.cdf(x), a.entropy(),
                                          tf.distributions.kl_divergence(a, b), a.mean(),
                                          a.stddev())
    z = (x - loc) / scale
    np.testing.assert_allclose(log_p, -0.5 * z ** 2 - np.log(scale) - 0.5 * math.log(2 * math.pi))
    np.testing.assert_allclose(cdf, [0.5 * (1 + math.erf(v / math.sqrt(2))) for v in z])
    np.testing.assert_allclose(ent, 0.5 + 0.5 * math.log(2 * math.pi) + np.log(scale))
    want_kl = np.log(2.0 / scale) + (scale ** 2 + (loc - 1.0) ** 2) / (2 * 4.0) - 0.5
    np.testing.assert_allclose(kl, want_kl)
    np.testing.assert_allclose(mean, loc)
    np.testing.assert_allclose(std, scale)


def test_normal_samples_are_reparameterized_and_have_the_right_statistics():
    tf.set_random_seed(3)
    loc = tf.Variable(2.0, dtype=tf.float64)
    dist = tfd.Normal(loc=loc, scale=tf.constant(0.5, tf.float64))
    samples = dist.sample(20000, seed=1)
    grad, = tf.gradients(tf.reduce_mean(samples), [loc])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values, g = sess.run([samples, grad])
    assert values.shape == (20000,)
    assert abs(values.mean() - 2.0) < 0.02 and abs(values.std() - 0.5) < 0.02
    assert g == pytest.approx(1.0)


def test_bernoulli_and_categorical():
    logits = np.array([[0.2, -1.0, 2.0], [1.0, 1.0, 1.0]])
    cat = tfd.Categorical(logits=logits)
    bern = tf.distributions.Bernoulli(probs=[0.25, 0.9])
    other = tf.distributions.Bernoulli(logits=[0.0, 0.0])
    tf.set_random_seed(0)
    log_p, ent, mode, draws, b_log_p, b_ent, b_kl, b_draws = _run(
        cat.log_prob([2, 0]), cat.entropy(), cat.mode(), cat.sample(40000, seed=2),
        bern.log_prob([1, 0]), bern.entropy(), tf.distributions.kl_divergence(bern, other),
        bern.sample(40000, seed=4))
    p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    np.testing.assert_allclose(log_p, np.log([p[0, 2], p[1, 0]]))
    np.testing.assert_allclose(ent, -(p * np.log(p)).sum(-1))
    np.testing.assert_array_equal(mode, [2, 0])
    assert draws.shape == (40000, 2) and draws.dtype == np.int32
    for row in range(2):
        freq = np.bincount(draws[:, row], minlength=3) / len(draws)
        np.testing.assert_allclose(freq, p[row], atol=0.01)
    np.testing.assert_allclose(b_log_p, np.log([0.25, 0.1]), rtol=1e-6)
    q = np.array([0.25, 0.9])
    np.testing.assert_allclose(b_ent, -(q * np.log(q) + (1 - q) * np.log(1 - q)), rtol=1e-6)
    np.testing.assert_allclose(b_kl, q * np.log(q / 0.5) + (1 - q) * np.log((1 - q) / 0.5),
                               rtol=1e-6)
    np.testing.assert_allclose(b_draws.mean(0), q, atol=0.01)


def test_uniform():
    u = tf.distributions.Uniform(low=1.0, high=3.0)
    log_p, cdf, mean, var = _run(u.log_prob([2.0, 5.0]), u.cdf([0.0, 2.0, 4.0]), u.mean(),
                                 u.variance())
    np.testing.assert_allclose(log_p, [math.log(0.5), -np.inf])
    np.testing.assert_allclose(cdf, [0.0, 0.5, 1.0])
    assert mean == 2.0 and var == pytest.approx(4 / 12)


def test_kl_between_different_families_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="Normal and distribution_b type Bernoulli"):
        tf.distributions.kl_divergence(tfd.Normal(0.0, 1.0), tfd.Bernoulli(probs=0.5))


def test_a_vae_loss_as_tf1_tutorials_wrote_it():
    rng = np.random.default_rng(0)
    x_val = (rng.random((8, 6)) > 0.5).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 6])
    h = tf.layers.dense(x, 4, activation=tf.nn.relu)
    mu = tf.layers.dense(h, 2)
    sigma = tf.nn.softplus(tf.layers.dense(h, 2)) + 1e-4
    posterior = tfd.MultivariateNormalDiag(mu, sigma)
    prior = tfd.MultivariateNormalDiag(tf.zeros_like(mu), tf.ones_like(sigma))
    code = posterior.sample(seed=5)
    logits = tf.layers.dense(code, 6)
    likelihood = tfd.Bernoulli(logits=logits).log_prob(x)
    elbo = tf.reduce_mean(tf.reduce_sum(likelihood, 1) - tfd.kl_divergence(posterior, prior))
    train = tf.train.AdamOptimizer(0.01).minimize(-elbo)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        m, s, kl, lik = sess.run([mu, sigma, tfd.kl_divergence(posterior, prior),
                                  tf.reduce_sum(likelihood, 1)], {x: x_val})
        want_kl = 0.5 * (s ** 2 + m ** 2 - 1 - 2 * np.log(s)).sum(1)
        np.testing.assert_allclose(kl, want_kl, rtol=1e-4, atol=1e-6)
        assert lik.shape == (8,) and np.all(lik < 0)
        first = sess.run(elbo, {x: x_val})
        for _ in range(200):
            sess.run(train, {x: x_val})
        assert sess.run(elbo, {x: x_val}) > first
