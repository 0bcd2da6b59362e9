"""graphflow.tf1.seq2seq: tf.contrib.seq2seq.sequence_loss and the legacy_seq2seq sequence losses
against numpy, in each averaging mode, and the PTB-style use (a per-word loss from an RNN's
logits)."""

import numpy as np
import pytest

import graphflow as tf


def _xent(logits, targets):
    shifted = logits - logits.max(-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -np.take_along_axis(log_p, targets[..., None], -1)[..., 0]


@pytest.mark.parametrize("across_time,across_batch", [(True, True), (True, False), (False, True),
                                                      (False, False)])
def test_sequence_loss_averages_as_tf1(across_time, across_batch):
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((3, 4, 5))
    targets = rng.integers(0, 5, (3, 4)).astype(np.int32)
    weights = np.array([[1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 1, 1]], np.float64)
    loss = tf.contrib.seq2seq.sequence_loss(tf.constant(logits), tf.constant(targets),
                                            tf.constant(weights),
                                            average_across_timesteps=across_time,
                                            average_across_batch=across_batch)
    with tf.Session() as sess:
        got = sess.run(loss)
    per = _xent(logits, targets) * weights
    if across_time and across_batch:
        want = per.sum() / (weights.sum() + 1e-12)
    elif across_time:
        want = per.sum(1) / (weights.sum(1) + 1e-12)
    elif across_batch:
        want = per.sum(0) / (weights.sum(0) + 1e-12)
    else:
        want = per
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_legacy_sequence_losses_take_lists_of_timesteps():
    rng = np.random.default_rng(1)
    logits = [rng.standard_normal((2, 3)) for _ in range(4)]
    targets = [rng.integers(0, 3, 2).astype(np.int32) for _ in range(4)]
    weights = [np.ones(2) for _ in range(4)]
    by_example = tf.contrib.legacy_seq2seq.sequence_loss_by_example(
        [tf.constant(v) for v in logits], [tf.constant(v) for v in targets],
        [tf.constant(v) for v in weights])
    total = tf.contrib.legacy_seq2seq.sequence_loss(
        [tf.constant(v) for v in logits], [tf.constant(v) for v in targets],
        [tf.constant(v) for v in weights])
    with tf.Session() as sess:
        got_example, got_total = sess.run([by_example, total])
    want = sum(_xent(lg, t) for lg, t in zip(logits, targets)) / 4
    np.testing.assert_allclose(got_example, want, rtol=1e-10)
    np.testing.assert_allclose(got_total, want.sum() / 2, rtol=1e-10)


def test_a_word_level_language_model_loss_trains():
    vocab, steps, batch = 7, 5, 4
    rng = np.random.default_rng(2)
    words = rng.integers(0, vocab, (batch, steps + 1)).astype(np.int32)
    inputs = tf.placeholder(tf.int32, [batch, steps])
    targets = tf.placeholder(tf.int32, [batch, steps])
    embedding = tf.get_variable("embedding", [vocab, 8])
    cell = tf.nn.rnn_cell.BasicLSTMCell(8)
    outputs, _ = tf.nn.dynamic_rnn(cell, tf.nn.embedding_lookup(embedding, inputs),
                                   dtype=tf.float32)
    logits = tf.reshape(tf.layers.dense(tf.reshape(outputs, [-1, 8]), vocab),
                        [batch, steps, vocab])
    loss = tf.contrib.seq2seq.sequence_loss(logits, targets, tf.ones([batch, steps]),
                                            average_across_timesteps=False,
                                            average_across_batch=True)
    cost = tf.reduce_sum(loss)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(cost)
    feed = {inputs: words[:, :-1], targets: words[:, 1:]}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(cost, feed)
        assert first == pytest.approx(steps * np.log(vocab), rel=0.1)
        for _ in range(60):
            sess.run(train, feed)
        assert sess.run(cost, feed) < first / 2
