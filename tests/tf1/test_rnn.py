"""Tests for graphflow.tf1.rnn: static_rnn and static_bidirectional_rnn against a numpy loop with the
cells' own weights, TF1's sequence_length semantics (zero outputs past a sequence's end, state
copied through), scopes and variable names, reverse_sequence, and gradients through the unrolled
steps checked by finite differences."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework import nest

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


# ------------------------------------------------------------------ dynamic_rnn
@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("lengths", [None, [3, 1, 0, 2]])
def test_dynamic_rnn_matches_numpy_loop(rng, time_major, lengths):
    xs = rng.standard_normal((3, 4, 2))               # [time, batch, depth]
    feed = xs if time_major else xs.transpose(1, 0, 2)
    x = tf.placeholder(tf.float64, [None, None, 2])   # the number of steps is known at run time
    cell = rnn_cell.BasicLSTMCell(5)
    outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float64,
                                       time_major=time_major)
    time_axis = 0 if time_major else 1
    assert outputs.shape.as_list()[time_axis] is None and outputs.shape.as_list()[2] == 5
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out_v, state_v = sess.run([outputs, state], {x: feed})
        w = _weights(sess)
    assert sorted(w) == ["rnn/basic_lstm_cell/bias", "rnn/basic_lstm_cell/kernel"]
    ref, c, h = np_lstm(xs, w["rnn/basic_lstm_cell/kernel"], w["rnn/basic_lstm_cell/bias"],
                        lengths)
    np.testing.assert_allclose(out_v, ref if time_major else ref.transpose(1, 0, 2), rtol=1e-10,
                               atol=1e-14)
    np.testing.assert_allclose(state_v.c, c, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(state_v.h, h, rtol=1e-10, atol=1e-14)


def test_dynamic_rnn_runs_any_number_of_steps_with_initial_state(rng):
    x = tf.placeholder(tf.float64, [2, None, 3])
    h0 = tf.placeholder(tf.float64, [2, 4])
    cell = rnn_cell.GRUCell(4)
    outputs, state = tf.nn.dynamic_rnn(cell, x, initial_state=h0, swap_memory=True,
                                       parallel_iterations=8, scope="encoder")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w = _weights(sess)
        for steps in (1, 6):
            xs, h_init = rng.standard_normal((2, steps, 3)), rng.standard_normal((2, 4))
            out_v, state_v = sess.run([outputs, state], {x: xs, h0: h_init})
            h, ref = h_init, []
            g = "encoder/gru_cell/"
            for t in range(steps):
                gates = sigmoid(np.concatenate([xs[:, t], h], 1) @ w[g + "gates/kernel"]
                                + w[g + "gates/bias"])
                r, u = np.split(gates, 2, axis=1)
                cand = np.tanh(np.concatenate([xs[:, t], r * h], 1) @ w[g + "candidate/kernel"]
                               + w[g + "candidate/bias"])
                h = u * h + (1 - u) * cand
                ref.append(h)
            np.testing.assert_allclose(out_v, np.stack(ref, 1), rtol=1e-10)
            np.testing.assert_allclose(state_v, h, rtol=1e-10)
    with pytest.raises(ValueError, match="dtype must be specified"):
        tf.nn.dynamic_rnn(rnn_cell.GRUCell(2), x)


def _stacked_cell():
    return rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(3), rnn_cell.GRUCell(2)])


def test_dynamic_rnn_values_and_gradients_equal_static_rnn(rng):
    xs = rng.standard_normal((2, 4, 3))               # [batch, time, depth]
    x = tf.placeholder(tf.float64, xs.shape)
    lengths = [4, 2]
    init = tf.random_uniform_initializer(-0.6, 0.6, seed=2)
    with tf.variable_scope("model", initializer=init):
        cell = _stacked_cell()
        dyn_out, dyn_state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths,
                                               dtype=tf.float64)
        stat_out, stat_state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1),
                                                sequence_length=lengths, dtype=tf.float64)
    stat_out = tf.stack(stat_out, axis=1)

    def loss(out, state):
        return (tf.reduce_sum(tf.sin(out)) + tf.reduce_sum(state[0].c ** 2)
                + tf.reduce_sum(state[1] * 3.0))

    variables = cell.variables
    assert len(variables) == 6                       # the same weights serve both graphs
    dyn_grads = tf.gradients(loss(dyn_out, dyn_state), [x] + variables)
    stat_grads = tf.gradients(loss(stat_out, stat_state), [x] + variables)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a = sess.run([dyn_out, dyn_state, dyn_grads], {x: xs})
        b = sess.run([stat_out, stat_state, stat_grads], {x: xs})
    for got, want in zip(nest.flatten(a), nest.flatten(b)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)


def test_dynamic_rnn_gradient_matches_finite_differences(rng):
    xs = rng.standard_normal((2, 3, 2))
    x = tf.placeholder(tf.float64, [None, None, 2])
    cell = rnn_cell.LSTMCell(3, use_peepholes=True, num_proj=2,
                             initializer=tf.random_uniform_initializer(-0.7, 0.7, seed=4))
    outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[3, 1], dtype=tf.float64)
    loss = tf.reduce_sum(outputs ** 2) + tf.reduce_sum(tf.tanh(state.c))
    kernel = cell.variables[0]
    gx, gk = tf.gradients(loss, [x, kernel])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        gx_v, gk_v = sess.run([gx, gk], {x: xs})
        eps, num = 1e-6, np.zeros_like(xs)
        for idx in np.ndindex(*xs.shape):
            d = np.zeros_like(xs)
            d[idx] = eps
            num[idx] = (sess.run(loss, {x: xs + d}) - sess.run(loss, {x: xs - d})) / (2 * eps)
        k0, num_k = sess.run(kernel), np.zeros(4)
        for n, idx in enumerate([(0, 0), (1, 5), (2, 11), (3, 7)]):
            d = np.zeros_like(k0)
            d[idx] = eps
            kernel.load(k0 + d, sess)
            up = sess.run(loss, {x: xs})
            kernel.load(k0 - d, sess)
            num_k[n] = (up - sess.run(loss, {x: xs})) / (2 * eps)
    np.testing.assert_allclose(gx_v, num, rtol=1e-6, atol=1e-9)
    assert not gx_v[1, 1:].any()                      # steps past the length get no gradient
    np.testing.assert_allclose([gk_v[i] for i in [(0, 0), (1, 5), (2, 11), (3, 7)]], num_k,
                               rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("lengths", [None, [4, 2]])
def test_bidirectional_dynamic_rnn_equals_static_bidirectional_rnn(rng, lengths):
    xs = rng.standard_normal((2, 4, 3))
    x = tf.constant(xs)
    fw, bw = rnn_cell.BasicLSTMCell(3), rnn_cell.GRUCell(2)
    (out_fw, out_bw), (state_fw, state_bw) = tf.nn.bidirectional_dynamic_rnn(
        fw, bw, x, sequence_length=lengths, dtype=tf.float64)
    names = sorted(v.name for v in tf.global_variables())
    assert names[0] == "bidirectional_rnn/bw/gru_cell/candidate/bias:0"
    assert "bidirectional_rnn/fw/basic_lstm_cell/kernel:0" in names
    static_out, s_fw, s_bw = tf.nn.static_bidirectional_rnn(
        fw, bw, tf.unstack(x, axis=1), dtype=tf.float64, sequence_length=lengths)
    assert len(tf.global_variables()) == len(names)    # the cells keep their weights
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([tf.concat([out_fw, out_bw], 2), state_fw, state_bw])
        want = sess.run([tf.stack(static_out, 1), s_fw, s_bw])
    for a, b in zip(nest.flatten(got), nest.flatten(want)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)


def test_dynamic_rnn_with_dropout_and_concatenated_states(rng):
    keep = tf.placeholder_with_default(tf.constant(1.0, tf.float64), [])
    layers = [rnn_cell.DropoutWrapper(rnn_cell.BasicLSTMCell(4, state_is_tuple=False),
                                      output_keep_prob=keep) for _ in range(2)]
    cell = rnn_cell.MultiRNNCell(layers, state_is_tuple=False)
    assert cell.state_size == 16
    x = tf.constant(rng.standard_normal((3, 5, 2)))
    outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float64)
    static, static_state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float64)
    assert [v.name for v in tf.global_variables()][:2] == [
        "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel:0",
        "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, got_state, want, want_state = sess.run([outputs, state, tf.stack(static, 1),
                                                     static_state])
        dropped = sess.run(outputs, {keep: 0.5})
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got_state, want_state, rtol=1e-12)
    assert got_state.shape == (3, 16)
    assert 0.2 < (dropped == 0).mean() < 0.8          # a fresh mask at every step inside the loop


def test_dynamic_rnn_graph_saves_and_loads(rng, tmp_path):
    x = tf.placeholder(tf.float32, [None, None, 3], name="x")
    lengths = tf.placeholder(tf.int32, [None], name="lengths")
    outputs, state = tf.nn.dynamic_rnn(rnn_cell.GRUCell(4), x, sequence_length=lengths,
                                       dtype=tf.float32)
    xs, ls = rng.standard_normal((2, 6, 3)).astype(np.float32), np.array([6, 3], np.int32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        want = sess.run(outputs, {x: xs, lengths: ls})
        tf.save(str(tmp_path / "gru.gfz"), {"x": x, "lengths": lengths},
                {"outputs": outputs, "state": state}, session=sess)
    loaded = tf.load(str(tmp_path / "gru.gfz"))
    got = loaded.run({"x": xs, "lengths": ls})
    np.testing.assert_array_equal(got["outputs"], want)
    assert not got["outputs"][1, 3:].any()
    np.testing.assert_array_equal(got["state"][1], want[1, 2])


def test_dynamic_rnn_errors():
    cell = rnn_cell.GRUCell(2)
    with pytest.raises(ValueError, match="known last dimension"):
        tf.nn.dynamic_rnn(cell, tf.placeholder(tf.float32, [2, 3, None]), dtype=tf.float32)
    with pytest.raises(ValueError, match="rank at least 2"):
        tf.nn.dynamic_rnn(rnn_cell.GRUCell(2), tf.placeholder(tf.float32, [3]), dtype=tf.float32)
    with pytest.raises(ValueError, match="sequence_length must be a vector"):
        tf.nn.dynamic_rnn(rnn_cell.GRUCell(2), tf.placeholder(tf.float32, [2, 3, 1]),
                          sequence_length=[[1, 2]], dtype=tf.float32)


def test_dynamic_rnn_gradient_reaches_the_initial_state(rng):
    x = tf.constant(rng.standard_normal((2, 4, 3)))
    c0 = tf.constant(rng.standard_normal((2, 3)))
    h0 = tf.constant(rng.standard_normal((2, 3)))
    cell = rnn_cell.BasicLSTMCell(3)
    init = rnn_cell.LSTMStateTuple(c0, h0)
    dyn, dyn_state = tf.nn.dynamic_rnn(cell, x, initial_state=init, sequence_length=[4, 0])
    stat, stat_state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), initial_state=init,
                                        sequence_length=[4, 0])
    dyn_loss = tf.reduce_sum(dyn * dyn) + tf.reduce_sum(dyn_state.c)
    stat_loss = tf.reduce_sum(tf.stack(stat, 1) ** 2) + tf.reduce_sum(stat_state.c)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(tf.gradients(dyn_loss, [c0, h0]))
        want = sess.run(tf.gradients(stat_loss, [c0, h0]))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)
    np.testing.assert_array_equal(got[0][1], np.ones(3))  # length 0: c passes straight through
