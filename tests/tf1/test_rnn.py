"""Tests for graphflow.tf1.rnn: static_rnn and static_bidirectional_rnn against a numpy loop with the
cells' own weights, TF1's sequence_length semantics (zero outputs past a sequence's end, state
copied through), scopes and variable names, reverse_sequence, and gradients through the unrolled
steps checked by finite differences."""

import numpy as np
import pytest

import graphflow as tf

rnn_cell = tf.nn.rnn_cell


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_lstm(xs, kernel, bias, lengths=None, c0=None, h0=None):
    """BasicLSTMCell along time (xs [T, B, D]) with TF1's sequence_length semantics."""
    steps, batch, _ = xs.shape
    n = bias.shape[0] // 4
    c = np.zeros((batch, n)) if c0 is None else c0
    h = np.zeros((batch, n)) if h0 is None else h0
    lengths = np.full(batch, steps) if lengths is None else np.asarray(lengths)
    outputs = []
    for t in range(steps):
        i, j, f, o = np.split(np.concatenate([xs[t], h], 1) @ kernel + bias, 4, axis=1)
        new_c = c * sigmoid(f + 1.0) + sigmoid(i) * np.tanh(j)
        new_h = np.tanh(new_c) * sigmoid(o)
        alive = (t < lengths)[:, None]
        outputs.append(np.where(alive, new_h, 0.0))
        c, h = np.where(alive, new_c, c), np.where(alive, new_h, h)
    return np.stack(outputs), c, h


def _weights(sess):
    return {v.name[:-2]: sess.run(v) for v in tf.global_variables()}


@pytest.mark.parametrize("lengths", [None, [3, 1, 0, 2]])
def test_static_rnn_matches_numpy_loop(rng, lengths):
    xs = rng.standard_normal((3, 4, 2))
    inputs = [tf.constant(x) for x in xs]
    cell = rnn_cell.BasicLSTMCell(5)
    outputs, state = tf.nn.static_rnn(cell, inputs, dtype=tf.float64, sequence_length=lengths)
    assert len(outputs) == 3
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out_v, state_v = sess.run([outputs, state])
        w = _weights(sess)
    assert sorted(w) == ["rnn/basic_lstm_cell/bias", "rnn/basic_lstm_cell/kernel"]
    ref, c, h = np_lstm(xs, w["rnn/basic_lstm_cell/kernel"], w["rnn/basic_lstm_cell/bias"],
                        lengths)
    np.testing.assert_allclose(np.stack(out_v), ref, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(state_v.c, c, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(state_v.h, h, rtol=1e-10, atol=1e-14)
    if lengths is not None:
        assert not np.stack(out_v)[:, 2].any()    # a sequence of length 0: zero outputs...
        assert not state_v.c[2].any()             # ...and the initial (zero) state


def test_static_rnn_initial_state_scope_and_errors(rng):
    xs = rng.standard_normal((2, 3, 4))
    c0, h0 = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    cell = rnn_cell.BasicLSTMCell(2)
    init = rnn_cell.LSTMStateTuple(tf.constant(c0), tf.constant(h0))
    outputs, state = tf.nn.static_rnn(cell, [tf.constant(x) for x in xs], initial_state=init,
                                      scope="encoder")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out_v = sess.run(outputs)
        w = _weights(sess)
    ref, _, _ = np_lstm(xs, w["encoder/basic_lstm_cell/kernel"], w["encoder/basic_lstm_cell/bias"],
                        c0=c0, h0=h0)
    np.testing.assert_allclose(np.stack(out_v), ref, rtol=1e-10)
    with pytest.raises(ValueError, match="dtype must be specified"):
        tf.nn.static_rnn(rnn_cell.GRUCell(2), [tf.constant(xs[0])])
    with pytest.raises(TypeError, match="inputs must be a sequence"):
        tf.nn.static_rnn(rnn_cell.GRUCell(2), tf.constant(xs[0]), dtype=tf.float64)
    with pytest.raises(TypeError, match="RNNCell"):
        tf.nn.static_rnn(lambda x, s: (x, s), [tf.constant(xs[0])], dtype=tf.float64)


def test_reverse_sequence(rng):
    x = rng.standard_normal((3, 5, 2))
    lengths = np.array([5, 2, 0])
    out = tf.reverse_sequence(tf.constant(x), lengths, seq_axis=1, batch_axis=0)
    time_major = tf.reverse_sequence(tf.constant(x.transpose(1, 0, 2)), lengths, seq_axis=0,
                                     batch_axis=1)
    with tf.Session() as sess:
        got, got_tm = sess.run([out, time_major])
    ref = x.copy()
    for b, n in enumerate(lengths):
        ref[b, :n] = x[b, :n][::-1]
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got_tm, ref.transpose(1, 0, 2))


def test_static_bidirectional_rnn(rng):
    xs = rng.standard_normal((4, 2, 3))
    lengths = [4, 2]
    outputs, state_fw, state_bw = tf.nn.static_bidirectional_rnn(
        rnn_cell.BasicLSTMCell(3), rnn_cell.BasicLSTMCell(2), [tf.constant(x) for x in xs],
        dtype=tf.float64, sequence_length=lengths)
    assert outputs[0].shape.as_list() == [2, 5]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out_v, fw_v, bw_v = sess.run([outputs, state_fw, state_bw])
        w = _weights(sess)
    fw = "bidirectional_rnn/fw/basic_lstm_cell/"
    bw = "bidirectional_rnn/bw/basic_lstm_cell/"
    ref_fw, c_fw, _ = np_lstm(xs, w[fw + "kernel"], w[fw + "bias"], lengths)
    rev = xs.copy()
    for b, n in enumerate(lengths):
        rev[:n, b] = xs[:n, b][::-1]
    ref_bw_rev, c_bw, _ = np_lstm(rev, w[bw + "kernel"], w[bw + "bias"], lengths)
    ref_bw = ref_bw_rev.copy()
    for b, n in enumerate(lengths):
        ref_bw[:n, b] = ref_bw_rev[:n, b][::-1]
    np.testing.assert_allclose(np.stack(out_v), np.concatenate([ref_fw, ref_bw], 2), rtol=1e-10,
                               atol=1e-14)
    np.testing.assert_allclose(fw_v.c, c_fw, rtol=1e-10)
    np.testing.assert_allclose(bw_v.c, c_bw, rtol=1e-10)


def test_static_rnn_gradient_matches_finite_differences(rng):
    xs = rng.standard_normal((3, 2, 2))
    x = tf.placeholder(tf.float64, [3, 2, 2])
    cell = rnn_cell.GRUCell(3, kernel_initializer=tf.random_uniform_initializer(-0.5, 0.5, seed=1))
    outputs, state = tf.nn.static_rnn(cell, tf.unstack(x), dtype=tf.float64,
                                      sequence_length=[3, 2])
    loss = tf.reduce_sum(tf.stack(outputs) ** 2) + tf.reduce_sum(tf.sin(state))
    kernel = cell.variables[0]
    gx, gk = tf.gradients(loss, [x, kernel])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        gx_v, gk_v = sess.run([gx, gk], {x: xs})
        k0 = sess.run(kernel)
        eps = 1e-6
        num = np.zeros_like(xs)
        for idx in np.ndindex(*xs.shape):
            d = np.zeros_like(xs)
            d[idx] = eps
            num[idx] = (sess.run(loss, {x: xs + d}) - sess.run(loss, {x: xs - d})) / (2 * eps)
        idx = (1, 2)
        d = np.zeros_like(k0)
        d[idx] = eps
        kernel.load(k0 + d, sess)
        up = sess.run(loss, {x: xs})
        kernel.load(k0 - d, sess)
        down = sess.run(loss, {x: xs})
    np.testing.assert_allclose(gx_v, num, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gk_v[idx], (up - down) / (2 * eps), rtol=1e-6)
