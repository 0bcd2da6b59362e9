"""graphflow.tf1.seq2seq_decoder and seq2seq_helpers: BasicDecoder + dynamic_decode against
constructions with known answers (TF 2.21 no longer ships tf.contrib.seq2seq): teacher forcing
with `impute_finished` equals `tf.nn.dynamic_rnn` on the same cell, greedy decoding equals a numpy
loop over the same weights (finishing at `end_token`, lengths as TF 1.x counts them,
`maximum_iterations`), sampling at a vanishing temperature equals greedy decoding, and scheduled
sampling at probability 0 equals teacher forcing."""

import numpy as np
import pytest

import graphflow as tf

seq2seq = tf.contrib.seq2seq


def _np_rnn_step(x, h, kernel, bias):
    return np.tanh(np.concatenate([x, h], 1) @ kernel + bias)


def test_training_helper_with_impute_finished_equals_dynamic_rnn():
    tf.set_random_seed(11)  # fixed weights: no near-ties between runs
    rng = np.random.default_rng(0)
    batch, steps, depth, units = 3, 5, 4, 6
    inputs = tf.constant(rng.standard_normal((batch, steps, depth)).astype(np.float32))
    lengths = tf.constant([5, 2, 4])
    cell = tf.nn.rnn_cell.BasicLSTMCell(units)
    want_out, want_state = tf.nn.dynamic_rnn(cell, inputs, sequence_length=lengths,
                                             dtype=tf.float32)
    helper = seq2seq.TrainingHelper(inputs, lengths)
    decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(batch, tf.float32))
    outputs, state, got_lengths = seq2seq.dynamic_decode(decoder, impute_finished=True)
    assert isinstance(outputs, seq2seq.BasicDecoderOutput)
    assert outputs.rnn_output.shape.as_list() == [batch, None, units]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, want, got_state, want_st, lens = sess.run(
            [outputs, want_out, state, want_state, got_lengths])
    np.testing.assert_allclose(got.rnn_output, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got.sample_id, np.argmax(got.rnn_output, -1))
    np.testing.assert_allclose(got_state.c, want_st.c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_state.h, want_st.h, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(lens, [5, 2, 4])
    assert [v.op.name for v in tf.trainable_variables()] == ["rnn/basic_lstm_cell/kernel",
                                                             "rnn/basic_lstm_cell/bias"]


def _greedy_numpy(emb, kernel, bias, proj, start, end, max_iter):
    batch = len(start)
    h = np.zeros((batch, kernel.shape[1]), np.float32)
    x = emb[start]
    finished = np.zeros(batch, bool)
    lengths = np.zeros(batch, np.int32)
    outs, ids = [], []
    for t in range(max_iter):
        if finished.all():
            break
        h = _np_rnn_step(x, h, kernel, bias)
        logits = h @ proj
        sample = logits.argmax(-1)
        lengths = np.where(~finished, t + 1, lengths)
        finished = finished | (sample == end)
        outs.append(logits)
        ids.append(sample)
        x = emb[sample]
    return np.stack(outs, 1), np.stack(ids, 1), lengths


@pytest.mark.parametrize("time_major", [False, True])
def test_greedy_decoding_follows_a_numpy_loop(time_major):
    tf.set_random_seed(11)  # fixed weights: no near-ties between runs
    rng = np.random.default_rng(1)
    vocab, units, batch, end = 5, 8, 4, 2
    emb = rng.standard_normal((vocab, 3)).astype(np.float32)
    embedding = tf.constant(emb)
    cell = tf.nn.rnn_cell.BasicRNNCell(units)
    layer = tf.layers.Dense(vocab, use_bias=False, name="output_projection")
    start = np.array([0, 1, 3, 4], np.int32)
    helper = seq2seq.GreedyEmbeddingHelper(embedding, tf.constant(start), end)
    decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(batch, tf.float32),
                                   output_layer=layer)
    assert decoder.output_size.rnn_output.as_list() == [vocab]
    outputs, _, lengths = seq2seq.dynamic_decode(decoder, output_time_major=time_major,
                                                 maximum_iterations=6)
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["decoder/basic_rnn_cell/bias", "decoder/basic_rnn_cell/kernel",
                     "decoder/output_projection/kernel"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, lens = sess.run([outputs, lengths])
        kernel, bias, proj = sess.run([cell._kernel, cell._bias, layer.kernel])
    want_logits, want_ids, want_lengths = _greedy_numpy(emb, kernel, bias, proj, start, end, 6)
    logits, ids = got.rnn_output, got.sample_id
    if time_major:
        logits, ids = logits.transpose(1, 0, 2), ids.T
    np.testing.assert_allclose(logits, want_logits, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_array_equal(lens, want_lengths)


def test_sampling_at_a_vanishing_temperature_is_greedy():
    tf.set_random_seed(11)  # fixed weights: no near-ties between runs
    rng = np.random.default_rng(2)
    vocab, units, batch = 6, 8, 3
    embedding = tf.constant(rng.standard_normal((vocab, 4)).astype(np.float32))
    cell = tf.nn.rnn_cell.GRUCell(units)
    layer = tf.layers.Dense(vocab)
    start = tf.constant([1, 2, 3])
    decoded = []
    for helper in (seq2seq.GreedyEmbeddingHelper(embedding, start, 0),
                   seq2seq.SampleEmbeddingHelper(embedding, start, 0, softmax_temperature=1e-4,
                                                 seed=3)):
        decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(batch, tf.float32), layer)
        decoded.append(seq2seq.dynamic_decode(decoder, maximum_iterations=5)[0].sample_id)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        greedy, sampled = sess.run(decoded)
    assert greedy.shape[0] == batch
    np.testing.assert_array_equal(sampled, greedy)


def test_scheduled_sampling_at_probability_zero_is_teacher_forcing():
    tf.set_random_seed(11)  # fixed weights: no near-ties between runs
    rng = np.random.default_rng(3)
    vocab, batch, steps = 5, 3, 4
    emb = tf.constant(rng.standard_normal((vocab, 4)).astype(np.float32))
    tokens = tf.constant(rng.integers(0, vocab, (batch, steps)).astype(np.int32))
    inputs = tf.nn.embedding_lookup(emb, tokens)
    lengths = tf.constant([4, 3, 4])
    cell = tf.nn.rnn_cell.BasicRNNCell(6)
    layer = tf.layers.Dense(vocab)
    results = []
    for helper in (seq2seq.TrainingHelper(inputs, lengths),
                   seq2seq.ScheduledEmbeddingTrainingHelper(inputs, lengths, emb, 0.0),
                   seq2seq.ScheduledEmbeddingTrainingHelper(inputs, lengths, emb, 1.0)):
        decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(batch, tf.float32), layer)
        results.append(seq2seq.dynamic_decode(decoder)[0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        forced, never, always = sess.run(results)
    np.testing.assert_allclose(never.rnn_output, forced.rnn_output, rtol=1e-6)
    assert (never.sample_id == -1).all()
    assert (always.sample_id >= 0).all()
    assert not np.allclose(always.rnn_output[:, 1:], forced.rnn_output[:, 1:])


def test_bad_arguments_say_what_is_wrong():
    emb = tf.zeros([4, 3])
    with pytest.raises(ValueError, match="sequence_length to be a vector"):
        seq2seq.TrainingHelper(tf.zeros([2, 3, 3]), tf.constant([[1, 2]]))
    with pytest.raises(ValueError, match="start_tokens must be a vector"):
        seq2seq.GreedyEmbeddingHelper(emb, tf.constant(1), 0)
    with pytest.raises(ValueError, match="end_token must be a scalar"):
        seq2seq.GreedyEmbeddingHelper(emb, tf.constant([1]), [0])
    cell = tf.nn.rnn_cell.BasicRNNCell(3)
    with pytest.raises(TypeError, match="helper must be a Helper"):
        seq2seq.BasicDecoder(cell, object(), cell.zero_state(1, tf.float32))
    with pytest.raises(TypeError, match="Expected decoder to be type Decoder"):
        seq2seq.dynamic_decode(object())


def test_a_custom_helper_drives_the_decoder():
    cell = tf.nn.rnn_cell.BasicRNNCell(2)
    batch = 3

    def initialize():
        return tf.constant([False, False, True]), tf.ones([batch, 2])

    def sample(time, outputs, state):
        return tf.fill([batch], time)

    def next_inputs(time, outputs, state, sample_ids):
        return tf.greater_equal(time + 1, tf.constant([2, 3, 1])), outputs, state
    helper = seq2seq.CustomHelper(initialize, sample, next_inputs)
    decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(batch, tf.float32))
    outputs, _, lengths = seq2seq.dynamic_decode(decoder, impute_finished=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, lens = sess.run([outputs.sample_id, lengths])
    np.testing.assert_array_equal(lens, [2, 3, 0])
    np.testing.assert_array_equal(got, [[0, 1, 0], [0, 1, 2], [0, 0, 0]])


def test_an_inference_helper_feeds_back_continuous_samples():
    cell = tf.nn.rnn_cell.BasicRNNCell(2)
    start = tf.constant([[0.5, -0.5], [0.2, 0.1]])
    helper = seq2seq.InferenceHelper(
        sample_fn=lambda outputs: outputs * 2, sample_shape=[2], sample_dtype=tf.float32,
        start_inputs=start, end_fn=lambda samples: tf.reduce_all(samples > 10, axis=1))
    decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(2, tf.float32))
    outputs, _, lengths = seq2seq.dynamic_decode(decoder, maximum_iterations=3)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, lens, kernel, bias = sess.run([outputs, lengths, cell._kernel, cell._bias])
    x, h = np.array([[0.5, -0.5], [0.2, 0.1]], np.float32), np.zeros((2, 2), np.float32)
    for t in range(3):
        h = _np_rnn_step(x, h, kernel, bias)
        np.testing.assert_allclose(got.rnn_output[:, t], h, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got.sample_id[:, t], 2 * h, rtol=1e-5, atol=1e-6)
        x = 2 * h
    np.testing.assert_array_equal(lens, [3, 3])


def test_no_iterations_give_empty_outputs():
    cell = tf.nn.rnn_cell.BasicRNNCell(3)
    helper = seq2seq.GreedyEmbeddingHelper(tf.ones([5, 2]), tf.constant([0, 1]), 4)
    decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(2, tf.float32),
                                   tf.layers.Dense(5))
    outputs, _, lengths = seq2seq.dynamic_decode(decoder, maximum_iterations=0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, lens = sess.run([outputs, lengths])
    assert got.rnn_output.shape == (2, 0, 5) and got.sample_id.shape == (2, 0)
    np.testing.assert_array_equal(lens, [0, 0])
