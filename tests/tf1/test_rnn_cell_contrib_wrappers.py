"""graphflow.tf1.rnn_cell_contrib_wrappers: HighwayWrapper and AttentionCellWrapper against numpy
of TF1's contrib formulas (TF 2.21 no longer ships them) from the same weights, their variable
names, tuple and flat states, and use under dynamic_rnn; ResidualWrapper through tf.contrib.rnn."""

import numpy as np
import pytest

import graphflow as tf

rnn = tf.contrib.rnn


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


@pytest.mark.parametrize("coupled", [True, False])
def test_highway_wrapper_mixes_input_and_output(coupled):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    cell = rnn.HighwayWrapper(tf.nn.rnn_cell.BasicRNNCell(4), couple_carry_transform_gates=coupled,
                              carry_bias_init=0.5)
    out, state = cell(tf.constant(x), tf.zeros([3, 4]))
    names = sorted(v.op.name for v in tf.global_variables())
    want = ["basic_rnn_cell/bias", "basic_rnn_cell/kernel", "carry_b", "carry_w"]
    want += [] if coupled else ["transform_b", "transform_w"]
    assert names == sorted(want)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, cell_out, w = sess.run([out, state, {v.op.name: v for v in tf.global_variables()}])
    np.testing.assert_allclose(w["carry_b"], 0.5)
    carry = _sigmoid(x @ w["carry_w"] + w["carry_b"])
    transform = 1 - carry if coupled else _sigmoid(x @ w["transform_w"] + w["transform_b"])
    if not coupled:
        np.testing.assert_allclose(w["transform_b"], -0.5)
    np.testing.assert_allclose(got, x * carry + cell_out * transform, rtol=1e-5, atol=1e-6)


def test_highway_wrapper_needs_matching_shapes():
    cell = rnn.HighwayWrapper(tf.nn.rnn_cell.BasicRNNCell(5))
    with pytest.raises(ValueError, match="HighwayWrapper: input shape"):
        cell(tf.zeros([2, 4]), tf.zeros([2, 5]))


def _np_attention_cell_step(x, state, w, size, length, vec):
    (c, h), attns, window = state
    window = window.reshape(-1, length, size)
    inp = np.concatenate([x, attns], 1) @ w["kernel"] + w["bias"]
    gates = np.concatenate([inp, h], 1) @ w["lstm_cell/kernel"] + w["lstm_cell/bias"]
    i, j, f, o = np.split(gates, 4, 1)
    c = c * _sigmoid(f + 1.0) + _sigmoid(i) * np.tanh(j)
    h = np.tanh(c) * _sigmoid(o)
    query = np.concatenate([c, h], 1)
    hidden = window @ w["attention/attn_w"].reshape(size, vec)
    y = (query @ w["attention/kernel"] + w["attention/bias"])[:, None, :]
    s = (w["attention/attn_v"] * np.tanh(hidden + y)).sum(2)
    a = np.exp(s - s.max(1, keepdims=True))
    a /= a.sum(1, keepdims=True)
    new_attns = (a[:, :, None] * window).sum(1)
    out = (np.concatenate([h, new_attns], 1) @ w["attn_output_projection/kernel"]
           + w["attn_output_projection/bias"])
    window = np.concatenate([window[:, 1:], out[:, None]], 1).reshape(-1, length * size)
    return out, ((c, h), new_attns, window)


@pytest.mark.parametrize("state_is_tuple", [True, False])
def test_attention_cell_wrapper_steps_as_tf1(state_is_tuple):
    rng = np.random.default_rng(1)
    batch, depth, units, length, vec = 2, 3, 4, 3, 5
    xs = rng.standard_normal((2, batch, depth)).astype(np.float32)
    inner = tf.nn.rnn_cell.LSTMCell(units, state_is_tuple=state_is_tuple)
    cell = rnn.AttentionCellWrapper(inner, length, attn_vec_size=vec,
                                    state_is_tuple=state_is_tuple)
    assert cell.output_size == units
    state = cell.zero_state(batch, tf.float32)
    outs = []
    for x in xs:
        out, state = cell(tf.constant(x), state)
        outs.append(out)
    prefix = "attention_cell_wrapper/"
    names = sorted(v.op.name[len(prefix):] for v in tf.global_variables())
    assert names == sorted(["kernel", "bias", "lstm_cell/kernel", "lstm_cell/bias",
                            "attention/attn_w", "attention/attn_v", "attention/kernel",
                            "attention/bias", "attn_output_projection/kernel",
                            "attn_output_projection/bias"])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([tf.assign(v, v + 0.1) for v in tf.global_variables() if "bias" in v.op.name])
        got = sess.run(outs)
        w = sess.run({v.op.name[len(prefix):]: v for v in tf.global_variables()})
    zeros = np.zeros((batch, units), np.float32)
    np_state = ((zeros, zeros), zeros, np.zeros((batch, units * length), np.float32))
    for x, out in zip(xs, got):
        want, np_state = _np_attention_cell_step(x, np_state, w, units, length, vec)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_attention_cell_wrapper_runs_in_dynamic_rnn():
    cell = rnn.AttentionCellWrapper(rnn.LSTMBlockCell(4), attn_length=2)
    outputs, (cell_state, attns, window) = tf.nn.dynamic_rnn(cell, tf.ones([2, 5, 3]),
                                                             dtype=tf.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, last = sess.run([outputs, window])
    assert out.shape == (2, 5, 4)
    np.testing.assert_allclose(last[:, 4:], out[:, -1], rtol=1e-6)
    with pytest.raises(ValueError, match="attn_length should be greater than zero"):
        rnn.AttentionCellWrapper(rnn.LSTMBlockCell(4), attn_length=0)
    with pytest.raises(ValueError, match="state_is_tuple is not set"):
        rnn.AttentionCellWrapper(rnn.LSTMBlockCell(4), 2, state_is_tuple=False)


def test_residual_wrapper_is_in_contrib_rnn():
    cell = rnn.ResidualWrapper(rnn.GRUBlockCellV2(3))
    out, state = cell(tf.ones([2, 3]), tf.zeros([2, 3]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, new_h = sess.run([out, state])
    np.testing.assert_allclose(got, 1 + new_h, rtol=1e-6)


def test_projection_and_embedding_wrappers_nest_the_cells_scope():
    rng = np.random.default_rng(2)
    ids = np.array([3, 0, 4], np.int32)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    embedded = rnn.EmbeddingWrapper(tf.nn.rnn_cell.BasicRNNCell(4), embedding_classes=6,
                                    embedding_size=2)
    e_out, _ = embedded(tf.constant(ids), tf.zeros([3, 4]))
    projected_in = rnn.InputProjectionWrapper(tf.nn.rnn_cell.BasicRNNCell(4), num_proj=3,
                                              activation=tf.tanh)
    i_out, _ = projected_in(tf.constant(x), tf.zeros([3, 4]))
    projected_out = rnn.OutputProjectionWrapper(tf.nn.rnn_cell.BasicRNNCell(4), output_size=7)
    assert projected_out.output_size == 7 and projected_out.state_size == 4
    o_out, o_state = projected_out(tf.constant(x), tf.zeros([3, 4]))
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == sorted(
        [f"embedding_wrapper/{n}" for n in ("embedding", "basic_rnn_cell/kernel",
                                            "basic_rnn_cell/bias")]
        + [f"input_projection_wrapper/{n}" for n in ("kernel", "bias", "basic_rnn_cell/kernel",
                                                     "basic_rnn_cell/bias")]
        + [f"output_projection_wrapper/{n}" for n in ("kernel", "bias",
                                                      "basic_rnn_cell/kernel",
                                                      "basic_rnn_cell/bias")]), names
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([tf.assign(v, v + 0.1) for v in tf.global_variables() if "bias" in v.op.name])
        got = sess.run([e_out, i_out, o_out, o_state])
        w = sess.run({v.op.name: v for v in tf.global_variables()})

    def rnn_step(prefix, inp):
        kernel, bias = w[prefix + "basic_rnn_cell/kernel"], w[prefix + "basic_rnn_cell/bias"]
        return np.tanh(np.concatenate([inp, np.zeros((3, 4), np.float32)], 1) @ kernel + bias)
    emb = w["embedding_wrapper/embedding"]
    assert np.abs(emb).max() <= np.sqrt(3)
    np.testing.assert_allclose(got[0], rnn_step("embedding_wrapper/", emb[ids]), rtol=1e-5)
    proj = np.tanh(x @ w["input_projection_wrapper/kernel"] + w["input_projection_wrapper/bias"])
    np.testing.assert_allclose(got[1], rnn_step("input_projection_wrapper/", proj), rtol=1e-5)
    np.testing.assert_allclose(got[3], rnn_step("output_projection_wrapper/", x), rtol=1e-5)
    np.testing.assert_allclose(got[2], got[3] @ w["output_projection_wrapper/kernel"]
                               + w["output_projection_wrapper/bias"], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="output_size must be > 0"):
        rnn.OutputProjectionWrapper(tf.nn.rnn_cell.BasicRNNCell(4), 0)
