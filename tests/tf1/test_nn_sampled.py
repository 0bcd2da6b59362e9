"""Candidate samplers, nce_loss and sampled_softmax_loss against numpy (TensorFlow's numbers for
nce_loss are checked in tests/test_tf1_programs.py)."""

import numpy as np
import pytest

import graphflow as tf


def _log_uniform(k, range_max):
    return np.log((k + 2.0) / (k + 1.0)) / np.log(range_max + 1.0)


def test_log_uniform_sampler_distribution_and_expected_counts():
    true = tf.constant([[0], [9]], dtype=tf.int64)
    sampled, true_count, sampled_count = tf.nn.log_uniform_candidate_sampler(
        true, 1, 3, False, 10, seed=7)
    unique = tf.nn.log_uniform_candidate_sampler(true, 1, 6, True, 10, seed=8)
    draws = []
    with tf.Session() as sess:
        for _ in range(400):
            s, tc, sc = sess.run([sampled, true_count, sampled_count])
            draws.extend(s.tolist())
            np.testing.assert_allclose(tc[:, 0], 3 * _log_uniform(np.array([0, 9]), 10),
                                       rtol=1e-6)
            np.testing.assert_allclose(sc, 3 * _log_uniform(s, 10), rtol=1e-6)
        u, utc, usc = sess.run(unique)
    frequencies = np.bincount(draws, minlength=10) / len(draws)
    np.testing.assert_allclose(frequencies, _log_uniform(np.arange(10), 10), atol=0.03)
    assert len(set(u.tolist())) == 6
    assert np.all((usc > 0) & (usc <= 1)) and usc.dtype == np.float32


def test_uniform_sampler_and_shape_checks():
    sampled, tc, _ = tf.nn.uniform_candidate_sampler(tf.constant([[1, 2]]), 2, 4, True, 4,
                                                     seed=1)
    with tf.Session() as sess:
        s, t = sess.run([sampled, tc])
    assert sorted(s.tolist()) == [0, 1, 2, 3]
    # unique sampling: 1 - (1 - 1/4) ** tries, the same for every class, tries >= 4
    tries = np.log1p(-t) / np.log1p(-0.25)
    assert t[0, 0] == t[0, 1] and tries[0, 0] == pytest.approx(round(tries[0, 0]), abs=1e-3)
    assert tries[0, 0] > 3.5
    with pytest.raises(ValueError, match="num_sampled"):
        tf.nn.uniform_candidate_sampler(tf.constant([[1]]), 1, 5, True, 4)
    with pytest.raises(ValueError, match="num_true"):
        tf.nn.uniform_candidate_sampler(tf.constant([[1, 2]]), 1, 2, True, 4)


def _sampled_logits(w, b, labels, x, sampled, tc, sc, remove_hits):
    true_logits = np.einsum("nd,ntd->nt", x, w[labels]) + b[labels] - np.log(tc)
    sampled_logits = x @ w[sampled].T + b[sampled] - np.log(sc)
    if remove_hits:
        hits = (labels[:, :, None] == sampled[None, None, :]).any(axis=1)
        sampled_logits = np.where(hits, sampled_logits - np.finfo(np.float32).max,
                                  sampled_logits)
    return np.concatenate([true_logits, sampled_logits], 1)


def test_nce_and_sampled_softmax_losses_against_numpy():
    rng = np.random.default_rng(0)
    w, b = rng.normal(size=(10, 3)), rng.normal(size=10)
    x, labels = rng.normal(size=(4, 3)), np.array([[1, 2], [3, 4], [5, 0], [7, 7]])
    sampled = np.array([2, 6, 9])
    tc, sc = rng.uniform(0.1, 1, size=(4, 2)), rng.uniform(0.1, 1, size=3)
    values = (tf.constant(sampled, tf.int64), tf.constant(tc), tf.constant(sc))
    nce = tf.nn.nce_loss(tf.constant(w), tf.constant(b), labels, tf.constant(x), 3, 10,
                         num_true=2, sampled_values=values)
    softmax = tf.nn.sampled_softmax_loss(tf.constant(w), tf.constant(b), labels, tf.constant(x),
                                         3, 10, num_true=2, sampled_values=values)
    with tf.Session() as sess:
        got_nce, got_softmax = sess.run([nce, softmax])
    logits = _sampled_logits(w, b, labels, x, sampled, tc, sc, remove_hits=False)
    targets = np.concatenate([np.full((4, 2), 0.5), np.zeros((4, 3))], 1)
    sigmoid_xent = np.maximum(logits, 0) - logits * targets + np.log1p(np.exp(-np.abs(logits)))
    np.testing.assert_allclose(got_nce, sigmoid_xent.sum(1), rtol=1e-10)
    hit_logits = _sampled_logits(w, b, labels, x, sampled, tc, sc, remove_hits=True)
    shifted = hit_logits - hit_logits.max(1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    np.testing.assert_allclose(got_softmax, -(targets * log_softmax).sum(1), rtol=1e-10)


def test_sampled_softmax_trains_with_the_default_sampler():
    rng = np.random.default_rng(1)
    x = tf.constant(rng.normal(size=(16, 4)).astype(np.float32))
    labels = tf.constant((np.arange(16) % 5)[:, None])
    w = tf.Variable(np.zeros((20, 4), np.float32))
    b = tf.Variable(np.zeros(20, np.float32))
    loss = tf.reduce_mean(tf.nn.sampled_softmax_loss(w, b, labels, x, 5, 20, seed=3))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([train, loss])[1] for _ in range(30)]
    assert np.mean(losses[-5:]) < 0.7 * np.mean(losses[:5])
