"""graphflow.tf1.seq2seq_attention: the attention mechanisms and AttentionWrapper against numpy
computations of TF 1.x's formulas from the same weights (TF 2.21 no longer ships
tf.contrib.seq2seq): masked softmax alignments, Bahdanau (plain and normalized) and Luong (plain
and scaled) scores, one AttentionWrapper step with and without an attention layer, several
mechanisms at once, the alignment history, TF1's variable names and `clone`."""

import numpy as np
import pytest

import graphflow as tf

seq2seq = tf.contrib.seq2seq


def _softmax_masked(score, lengths):
    mask = np.arange(score.shape[1])[None, :] < np.asarray(lengths)[:, None]
    score = np.where(mask, score, -np.inf)
    e = np.exp(score - score.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def _memory(rng, batch=3, time=5, depth=4):
    memory = rng.standard_normal((batch, time, depth)).astype(np.float32)
    lengths = np.array([5, 2, 3], np.int32)[:batch]
    masked = memory * (np.arange(time)[None, :, None] < lengths[:, None, None])
    return memory, lengths, masked


def _variables(names):
    by_name = {v.op.name: v for v in tf.global_variables()}
    return {n: by_name[n] for n in names}


@pytest.mark.parametrize("normalize", [False, True])
def test_bahdanau_alignments_are_tf1s_formula(normalize):
    tf.set_random_seed(11)  # fixed weights: no near-ties between runs
    rng = np.random.default_rng(0)
    memory, lengths, masked = _memory(rng)
    query = rng.standard_normal((3, 6)).astype(np.float32)
    mechanism = seq2seq.BahdanauAttention(7, tf.constant(memory), tf.constant(lengths),
                                          normalize=normalize)
    alignments, state = mechanism(tf.constant(query), mechanism.initial_state(3, tf.float32))
    names = ["memory_layer/kernel", "bahdanau_attention/query_layer/kernel",
             "bahdanau_attention/attention_v"]
    if normalize:
        names += ["bahdanau_attention/attention_g", "bahdanau_attention/attention_b"]
    assert sorted(v.op.name for v in tf.global_variables()) == sorted(names)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if normalize:  # a g and b other than their initial values
            sess.run([tf.assign(v, v + 0.3) for v in tf.global_variables()
                      if v.op.name.endswith(("attention_g", "attention_b"))])
        got, keys, w = sess.run([alignments, mechanism.keys, _variables(names)])
    np.testing.assert_allclose(keys, masked @ w["memory_layer/kernel"], rtol=1e-5, atol=1e-6)
    processed = (query @ w["bahdanau_attention/query_layer/kernel"])[:, None, :]
    v = w["bahdanau_attention/attention_v"]
    if normalize:
        g, b = w["bahdanau_attention/attention_g"], w["bahdanau_attention/attention_b"]
        score = (g * v / np.sqrt((v * v).sum()) * np.tanh(keys + processed + b)).sum(2)
    else:
        score = (v * np.tanh(keys + processed)).sum(2)
    np.testing.assert_allclose(got, _softmax_masked(score, lengths), rtol=1e-5, atol=1e-6)
    assert (got[1, 2:] == 0).all()


@pytest.mark.parametrize("scale", [False, True])
def test_luong_alignments_are_tf1s_formula(scale):
    tf.set_random_seed(11)  # fixed weights: no near-ties between runs
    rng = np.random.default_rng(1)
    memory, lengths, masked = _memory(rng)
    query = rng.standard_normal((3, 6)).astype(np.float32)
    mechanism = seq2seq.LuongAttention(6, tf.constant(memory), tf.constant(lengths), scale=scale)
    alignments, _ = mechanism(tf.constant(query), None)
    names = ["memory_layer/kernel"] + (["luong_attention/attention_g"] if scale else [])
    assert sorted(v.op.name for v in tf.global_variables()) == sorted(names)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if scale:
            sess.run(tf.assign(tf.global_variables()[1], 1.7))
        got, w = sess.run([alignments, _variables(names)])
    score = np.einsum("bd,btd->bt", query, masked @ w["memory_layer/kernel"])
    if scale:
        score = score * 1.7
    np.testing.assert_allclose(got, _softmax_masked(score, lengths), rtol=1e-5, atol=1e-6)


def test_luong_attention_needs_the_querys_depth():
    mechanism = seq2seq.LuongAttention(4, tf.zeros([2, 3, 5]))
    with pytest.raises(ValueError, match="Query .* has units: 6"):
        mechanism(tf.zeros([2, 6]), None)


def _lstm(x, c, h, kernel, bias):
    gates = np.concatenate([x, h], 1) @ kernel + bias
    i, j, f, o = np.split(gates, 4, 1)

    def sigmoid(z):
        return 1 / (1 + np.exp(-z))
    c = c * sigmoid(f + 1.0) + sigmoid(i) * np.tanh(j)
    return np.tanh(c) * sigmoid(o), c


@pytest.mark.parametrize("layer_size,output_attention", [(5, True), (None, True), (5, False)])
def test_an_attention_wrapper_step_is_tf1s(layer_size, output_attention):
    tf.set_random_seed(11)  # fixed weights: no near-ties between runs
    rng = np.random.default_rng(2)
    memory, lengths, masked = _memory(rng)
    inputs = rng.standard_normal((3, 2)).astype(np.float32)
    units = 6
    mechanism = seq2seq.LuongAttention(units, tf.constant(memory), tf.constant(lengths))
    cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicLSTMCell(units), mechanism,
                                    attention_layer_size=layer_size,
                                    output_attention=output_attention)
    attention_size = layer_size or 4
    assert cell.output_size == (attention_size if output_attention else units)
    state = cell.zero_state(3, tf.float32)
    out1, state1 = cell(tf.constant(inputs), state)
    out2, state2 = cell(tf.constant(inputs), state1)
    names = ["memory_layer/kernel", "attention_wrapper/basic_lstm_cell/kernel",
             "attention_wrapper/basic_lstm_cell/bias"]
    names += ["attention_wrapper/attention_layer/kernel"] if layer_size else []
    assert sorted(v.op.name for v in tf.global_variables()) == sorted(names)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([tf.assign(v, v + 0.1) for v in tf.global_variables() if "bias" in v.op.name])
        got = sess.run([out1, state1, out2, state2])
        w = sess.run(_variables(names))
    keys = masked @ w["memory_layer/kernel"]
    c = h = np.zeros((3, units), np.float32)
    attention = np.zeros((3, attention_size), np.float32)
    for step, (out, st) in enumerate([got[:2], got[2:]]):
        h, c = _lstm(np.concatenate([inputs, attention], 1), c, h,
                     w["attention_wrapper/basic_lstm_cell/kernel"],
                     w["attention_wrapper/basic_lstm_cell/bias"])
        align = _softmax_masked(np.einsum("bd,btd->bt", h, keys), lengths)
        context = np.einsum("bt,btd->bd", align, masked)
        attention = context if not layer_size else \
            np.concatenate([h, context], 1) @ w["attention_wrapper/attention_layer/kernel"]
        np.testing.assert_allclose(out, attention if output_attention else h, rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(st.attention, attention, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(st.alignments, align, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(st.cell_state.c, c, rtol=1e-5, atol=1e-6)
        assert st.time == step + 1


def test_several_mechanisms_concatenate_their_attentions_and_keep_histories():
    tf.set_random_seed(11)  # fixed weights: no near-ties between runs
    rng = np.random.default_rng(3)
    memory, lengths, _ = _memory(rng)
    mechanisms = [seq2seq.BahdanauAttention(4, tf.constant(memory), tf.constant(lengths)),
                  seq2seq.LuongAttention(5, tf.constant(memory[:, :4]))]
    cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(5), mechanisms,
                                    attention_layer_size=[3, 2], alignment_history=True)
    assert cell.output_size == 5
    assert cell.state_size.alignments == (5, 4)
    batch, steps = 3, 4
    helper = seq2seq.TrainingHelper(tf.constant(rng.standard_normal(
        (batch, steps, 2)).astype(np.float32)), tf.constant([4, 4, 4]))
    decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(batch, tf.float32))
    outputs, state, _ = seq2seq.dynamic_decode(decoder)
    histories = [h.stack() for h in state.alignment_history]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, final, hist = sess.run([outputs.rnn_output, state.alignments, histories])
    assert out.shape == (batch, steps, 5)
    assert hist[0].shape == (steps, batch, 5) and hist[1].shape == (steps, batch, 4)
    np.testing.assert_allclose(hist[0][-1], final[0], rtol=1e-6)
    np.testing.assert_allclose(hist[1].sum(-1), 1.0, rtol=1e-5)
    assert (hist[0][:, 1, 2:] == 0).all()
    assert "memory_layer_1/kernel" in [v.op.name for v in tf.global_variables()]


def test_clone_replaces_the_cell_state_and_checks_its_shape():
    memory = tf.zeros([2, 3, 4])
    cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicLSTMCell(4),
                                    seq2seq.LuongAttention(4, memory))
    state = cell.zero_state(2, tf.float32)
    encoder_state = tf.nn.rnn_cell.LSTMStateTuple(tf.ones([2, 4]), tf.ones([2, 4]))
    cloned = state.clone(cell_state=encoder_state)
    assert cloned.cell_state.c is encoder_state.c and cloned.attention is state.attention
    with pytest.raises(ValueError, match="clone"):
        state.clone(attention=tf.ones([2, 7]))
    with pytest.raises(ValueError, match="Non-matching batch sizes"):
        cell.zero_state(6, tf.float32)
    with pytest.raises(TypeError, match="attention_mechanism must be an AttentionMechanism"):
        seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicLSTMCell(4), object())


def test_custom_keys_attention_functions_and_hard_attention():
    rng = np.random.default_rng(4)
    memory, lengths, masked = _memory(rng)
    query = rng.standard_normal((3, 4)).astype(np.float32)
    doubled = seq2seq.LuongAttention(
        4, tf.constant(memory), tf.constant(lengths), probability_fn=seq2seq.hardmax,
        custom_key_value_fn=lambda keys, values: (keys, values * 2))
    alignments, _ = doubled(tf.constant(query), None)

    def attention_fn(mechanism, cell_output, attention_state, attention_layer):
        alignments, state = mechanism(cell_output, attention_state)
        return tf.reduce_sum(mechanism.values, 1), alignments, state
    cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(4), doubled, attention_fn=attention_fn)
    out, _ = cell(tf.zeros([3, 2]), cell.zero_state(3, tf.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, values, keys, attention = sess.run([alignments, doubled.values, doubled.keys, out])
    np.testing.assert_allclose(values, 2 * masked, rtol=1e-6)
    score = np.einsum("bd,btd->bt", query, keys)
    score[np.arange(5)[None, :] >= lengths[:, None]] = -np.inf
    np.testing.assert_array_equal(got, np.eye(5)[score.argmax(1)])
    np.testing.assert_allclose(attention, 2 * masked.sum(1), rtol=1e-5)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(seq2seq.hardmax([[1.0, 3.0, 2.0]])), [[0, 1, 0]])
