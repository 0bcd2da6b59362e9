"""graphflow.tf1.seq2seq_beam_search against constructions with known answers (TF 2.21 no longer
ships tf.contrib.seq2seq or its GatherTree kernel): `tile_batch` and `gather_tree` against numpy
ports of TF1's definitions, a beam search whose logits depend only on the previous word against a
numpy beam search of TF1's algorithm (log-probabilities, finished beams, GNMT length penalty,
parents), and beam width 1 against greedy decoding through an AttentionWrapper."""

import numpy as np
import pytest

import graphflow as tf

seq2seq = tf.contrib.seq2seq


def test_tile_batch_repeats_each_entry_in_a_row():
    x = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    tiled = seq2seq.tile_batch((tf.constant(x), tf.constant([1, 2, 3])), 2)
    assert tiled[0].shape.as_list() == [6, 2, 2]
    with tf.Session() as sess:
        got, lengths = sess.run(tiled)
    np.testing.assert_array_equal(got, np.repeat(x, 2, axis=0))
    np.testing.assert_array_equal(lengths, [1, 1, 2, 2, 3, 3])


def _gather_tree_numpy(step_ids, parent_ids, max_lengths, end_token):
    """TF's GatherTree kernel, written as its loops."""
    max_time, batch, beam = step_ids.shape
    beams = np.full_like(step_ids, end_token)
    for b in range(batch):
        length = min(max_time, max_lengths[b])
        for k in range(beam):
            if length <= 0:
                continue
            beams[length - 1, b, k] = step_ids[length - 1, b, k]
            parent = parent_ids[length - 1, b, k]
            for level in range(length - 2, -1, -1):
                beams[level, b, k] = step_ids[level, b, parent]
                parent = parent_ids[level, b, parent]
            finished = False
            for t in range(length):
                if finished:
                    beams[t, b, k] = end_token
                elif beams[t, b, k] == end_token:
                    finished = True
    return beams


def test_gather_tree_follows_the_parents_back():
    rng = np.random.default_rng(0)
    max_time, batch, beam, end = 6, 4, 3, 9
    step_ids = rng.integers(0, 10, (max_time, batch, beam)).astype(np.int32)
    parent_ids = rng.integers(0, beam, (max_time, batch, beam)).astype(np.int32)
    lengths = np.array([6, 3, 0, 9], np.int32)
    got = seq2seq.gather_tree(tf.constant(step_ids), tf.constant(parent_ids),
                              tf.constant(lengths), end)
    with tf.Session() as sess:
        got = sess.run(got)
    np.testing.assert_array_equal(got, _gather_tree_numpy(step_ids, parent_ids, lengths, end))
    # by hand: beam 2 ends with 9 (parent 2), whose step-1 word is 6 (parent 1), after 2
    ids = np.array([[[1, 2, 3]], [[4, 5, 6]], [[7, 8, 9]]], np.int32)
    parents = np.array([[[0, 0, 0]], [[0, 1, 1]], [[2, 1, 2]]], np.int32)
    with tf.Session() as sess:
        got = sess.run(seq2seq.gather_tree(ids, parents, [3], 10))
    np.testing.assert_array_equal(got[:, 0].T, [[2, 6, 7], [2, 5, 8], [2, 6, 9]])


class BigramCell(tf.nn.rnn_cell.RNNCell):
    """Outputs its input (the previous word's embedding); the state is a counter."""

    state_size = property(lambda self: 1)
    output_size = property(lambda self: 4)

    def call(self, inputs, state):
        return inputs, state + 1


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _beam_search_numpy(table, start, end, beam, steps, penalty, align_table=None,
                       coverage=0.0):
    """TF1's BeamSearchDecoder step for logits table[previous word] (and attention
    align_table[previous word] for the coverage penalty), run `steps` times."""
    batch, vocab = len(start), table.shape[1]
    log_probs = np.full((batch, beam), -np.inf, np.float32)
    log_probs[:, 0] = 0
    finished = np.ones((batch, beam), bool)
    finished[:, 0] = False
    lengths = np.zeros((batch, beam), np.int64)
    words = np.repeat(np.asarray(start)[:, None], beam, 1)
    if coverage:
        accumulated = np.zeros((batch, beam, align_table.shape[1]), np.float32)
    scores_out, ids_out, parents_out = [], [], []
    for _ in range(steps):
        step = _log_softmax(table[words])
        step = np.where(finished[..., None], np.float32(np.finfo(np.float32).min), step)
        step[..., end] = np.where(finished, 0, step[..., end])
        total = log_probs[..., None] + step
        new_lengths = lengths[..., None] + (~finished)[..., None] * (np.arange(vocab) != end)
        scores = total / (((5.0 + new_lengths) / 6.0) ** penalty if penalty else 1.0)
        if coverage:
            accumulated = accumulated + align_table[words] * (~finished)[..., None]
            attended = np.where(accumulated == 0, 1, accumulated)
            cover = np.log(np.minimum(attended, 1)).sum(2) * finished * coverage
            scores = scores + cover[..., None]
        flat = scores.reshape(batch, -1)
        order = np.argsort(-flat, axis=1, kind="stable")[:, :beam]
        parent, words = order // vocab, (order % vocab).astype(np.int32)
        rows = np.arange(batch)[:, None]
        if coverage:
            accumulated = accumulated[rows, parent]
        log_probs = total.reshape(batch, -1)[rows, order]
        was_finished = finished[rows, parent]
        lengths = lengths[rows, parent] + ~was_finished
        finished = was_finished | (words == end)
        scores_out.append(flat[rows, order])
        ids_out.append(words)
        parents_out.append(parent)
        if finished.all():
            break
    return (np.stack(scores_out), np.stack(ids_out), np.stack(parents_out), lengths, log_probs)


@pytest.mark.parametrize("penalty", [0.0, 0.8])
def test_beam_search_is_tf1s_algorithm(penalty):
    rng = np.random.default_rng(1)
    vocab, beam, end = 6, 3, 5
    emb = rng.standard_normal((vocab, 4)).astype(np.float32)
    proj = (rng.standard_normal((4, vocab)) * 2).astype(np.float32)
    start = np.array([0, 2], np.int32)
    layer = tf.layers.Dense(vocab, use_bias=False,
                            kernel_initializer=tf.constant_initializer(proj))
    cell = BigramCell()
    initial = seq2seq.tile_batch(tf.zeros([2, 1]), beam)
    decoder = seq2seq.BeamSearchDecoder(cell, tf.constant(emb), tf.constant(start), end,
                                        initial, beam, output_layer=layer,
                                        length_penalty_weight=penalty)
    outputs, state, lengths = seq2seq.dynamic_decode(decoder, maximum_iterations=7)
    assert isinstance(outputs, seq2seq.FinalBeamSearchDecoderOutput)
    assert outputs.predicted_ids.shape.as_list() == [2, None, beam]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, got_state, got_lengths = sess.run([outputs, state, lengths])
    scores, ids, parents, want_lengths, log_probs = _beam_search_numpy(
        emb @ proj, start, end, beam, 7, penalty)
    raw = got.beam_search_decoder_output
    np.testing.assert_array_equal(raw.predicted_ids.transpose(1, 0, 2), ids)
    np.testing.assert_array_equal(raw.parent_ids.transpose(1, 0, 2), parents)
    np.testing.assert_allclose(raw.scores.transpose(1, 0, 2), scores, rtol=1e-5)
    np.testing.assert_array_equal(got_state.lengths, want_lengths)
    np.testing.assert_allclose(got_state.log_probs, log_probs, rtol=1e-5)
    want_ids = _gather_tree_numpy(ids, parents, want_lengths.max(1), end)
    np.testing.assert_array_equal(got.predicted_ids.transpose(1, 0, 2), want_ids)
    assert got_lengths.shape == (2, beam)


class AttendingBigramCell(tf.nn.rnn_cell.RNNCell):
    """Outputs its input; its AttentionWrapperState's alignments are softmax(3 * input[:3])."""

    output_size = property(lambda self: 4)
    state_size = property(lambda self: seq2seq.AttentionWrapperState(
        cell_state=1, attention=1, time=tf.TensorShape([]), alignments=3, alignment_history=(),
        attention_state=1))

    def call(self, inputs, state):
        return inputs, state._replace(alignments=tf.nn.softmax(3 * inputs[:, :3]),
                                      time=state.time + 1)


def test_the_coverage_penalty_scores_finished_beams_by_their_attention():
    rng = np.random.default_rng(4)
    vocab, beam, end = 6, 3, 5
    emb = rng.standard_normal((vocab, 4)).astype(np.float32)
    proj = (rng.standard_normal((4, vocab)) * 2).astype(np.float32)
    start = np.array([0, 2], np.int32)
    layer = tf.layers.Dense(vocab, use_bias=False,
                            kernel_initializer=tf.constant_initializer(proj))
    zeros = tf.zeros([2 * beam, 1])
    initial = seq2seq.AttentionWrapperState(
        cell_state=zeros, attention=zeros, time=tf.constant(0), alignments=tf.zeros([6, 3]),
        alignment_history=(), attention_state=zeros)
    decoder = seq2seq.BeamSearchDecoder(AttendingBigramCell(), tf.constant(emb),
                                        tf.constant(start), end, initial, beam,
                                        output_layer=layer, length_penalty_weight=0.5,
                                        coverage_penalty_weight=0.4)
    outputs, state, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=7)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, accumulated = sess.run([outputs, state.accumulated_attention_probs])
    e = np.exp(3 * emb[:, :3])
    scores, ids, parents, _, _ = _beam_search_numpy(
        emb @ proj, start, end, beam, 7, 0.5, align_table=e / e.sum(1, keepdims=True),
        coverage=0.4)
    raw = got.beam_search_decoder_output
    np.testing.assert_array_equal(raw.predicted_ids.transpose(1, 0, 2), ids)
    np.testing.assert_array_equal(raw.parent_ids.transpose(1, 0, 2), parents)
    np.testing.assert_allclose(raw.scores.transpose(1, 0, 2), scores, rtol=1e-5)
    assert accumulated.shape == (2, beam, 3) and (accumulated > 0).all()
    with pytest.raises(ValueError, match="no cell is attentional"):
        seq2seq.BeamSearchDecoder(BigramCell(), tf.constant(emb), tf.constant(start), end,
                                  tf.zeros([6, 1]), beam, coverage_penalty_weight=0.4
                                  ).initialize()


def _attention_decoder(beam_width, memory, lengths, embedding, layer, beam):
    with tf.variable_scope("model", reuse=tf.AUTO_REUSE):
        mechanism = seq2seq.BahdanauAttention(
            6, seq2seq.tile_batch(memory, beam_width),
            memory_sequence_length=seq2seq.tile_batch(lengths, beam_width))
        cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.LSTMCell(6), mechanism,
                                        attention_layer_size=6, alignment_history=True,
                                        name="attention")
        batch = int(memory.shape[0]) * beam_width
        initial = cell.zero_state(batch, tf.float32)
        start = tf.fill([int(memory.shape[0])], 1)
        if beam:
            decoder = seq2seq.BeamSearchDecoder(cell, embedding, start, 2, initial, beam_width,
                                                output_layer=layer)
        else:
            helper = seq2seq.GreedyEmbeddingHelper(embedding, start, 2)
            decoder = seq2seq.BasicDecoder(cell, helper, initial, output_layer=layer)
        return seq2seq.dynamic_decode(decoder, maximum_iterations=6)


def test_beam_width_one_decodes_greedily_and_wider_beams_score_higher():
    tf.set_random_seed(11)  # fixed weights: no near-ties between runs
    rng = np.random.default_rng(2)
    memory = tf.constant(rng.standard_normal((3, 4, 5)).astype(np.float32))
    lengths = tf.constant([4, 2, 3])
    embedding = tf.constant(rng.standard_normal((7, 3)).astype(np.float32))
    layer = tf.layers.Dense(7, name="output_projection")
    greedy = _attention_decoder(1, memory, lengths, embedding, layer, beam=False)
    narrow = _attention_decoder(1, memory, lengths, embedding, layer, beam=True)
    wide = _attention_decoder(4, memory, lengths, embedding, layer, beam=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([tf.assign(v, v * 3) for v in tf.trainable_variables()])
        g_ids, g_lengths, g_logits = sess.run([greedy[0].sample_id, greedy[2],
                                               greedy[0].rnn_output])
        n_ids, n_lengths, n_log_probs = sess.run([narrow[0].predicted_ids, narrow[2],
                                                  narrow[1].log_probs])
        w_ids, w_log_probs = sess.run([wide[0].predicted_ids, wide[1].log_probs])
        history = sess.run(wide[1].cell_state.alignment_history.stack())
    np.testing.assert_array_equal(n_ids[..., 0], g_ids)
    np.testing.assert_array_equal(n_lengths[:, 0], g_lengths)
    log_p = _log_softmax(g_logits)
    greedy_log_prob = np.array([log_p[b, np.arange(g_lengths[b]), g_ids[b, :g_lengths[b]]].sum()
                                for b in range(3)])
    np.testing.assert_allclose(n_log_probs[:, 0], greedy_log_prob, rtol=1e-4)
    assert (w_log_probs[:, 0] >= greedy_log_prob - 1e-4).all()
    assert w_ids.shape[0] == 3 and w_ids.shape[2] == 4
    assert history.shape[1:] == (12, 4)
    np.testing.assert_allclose(history[0].sum(-1), 1.0, rtol=1e-5)


def test_bad_arguments_say_what_is_wrong():
    cell = tf.nn.rnn_cell.BasicRNNCell(3)
    with pytest.raises(ValueError, match="start_tokens must be a vector"):
        seq2seq.BeamSearchDecoder(cell, tf.zeros([4, 3]), tf.constant(1), 0,
                                  tf.zeros([2, 3]), 2)
    with pytest.raises(ValueError, match="end_token must be a scalar"):
        seq2seq.BeamSearchDecoder(cell, tf.zeros([4, 3]), tf.constant([1]), [0],
                                  tf.zeros([2, 3]), 2)
    with pytest.raises(ValueError, match="rank >= 1"):
        seq2seq.tile_batch(tf.constant(1.0), 2)


def test_a_beam_search_graph_saves_and_runs_from_its_file(tmp_path):
    tf.set_random_seed(5)
    source = tf.placeholder(tf.int32, [None, 4], name="source")
    embedding = tf.get_variable("embedding", [6, 3])
    memory, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(5),
                                  tf.nn.embedding_lookup(embedding, source), dtype=tf.float32)
    memory = seq2seq.tile_batch(memory, 2)
    cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(5),
                                    seq2seq.LuongAttention(5, memory), attention_layer_size=5)
    batch = tf.shape(source)[0]
    decoder = seq2seq.BeamSearchDecoder(cell, embedding, tf.fill([batch], 1), 2,
                                        cell.zero_state(batch * 2, tf.float32), 2,
                                        output_layer=tf.layers.Dense(6))
    outputs, _, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=5)
    ids = tf.identity(outputs.predicted_ids, name="ids")
    x = np.array([[1, 2, 3, 4], [3, 3, 0, 1], [5, 4, 2, 2]])
    path = str(tmp_path / "beam.gfz")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        want = sess.run(ids, {source: x})
        tf.save(path, session=sess, inputs={"source": source}, outputs={"ids": ids})
    np.testing.assert_array_equal(tf.load(path).run({"source": x})["ids"], want)
