"""A seq2seq model with attention as the TF1 NMT tutorial wrote it, on a toy task (reverse a
sequence of digits): embeddings, an LSTM encoder through dynamic_rnn, an AttentionWrapper decoder
(Luong attention) trained with a TrainingHelper and sequence_loss under Adam with clipped
gradients, then decoded with a GreedyEmbeddingHelper and a BeamSearchDecoder sharing the weights.
The decoded sequences must match the reversed sources far above chance."""
import numpy as np
import graphflow as tf

tf.set_random_seed(7)
rng = np.random.RandomState(7)
SOS, EOS, PAD = 0, 1, 2
vocab_size, num_digits = 10, 7          # digits are ids 3..9
embedding_size, num_units, batch_size, beam_width = 16, 32, 32, 3
max_len = 6

def make_batch(n):
    lengths = rng.randint(3, max_len + 1, size=n)
    src = np.full((n, max_len), PAD, np.int32)
    tgt_in = np.full((n, max_len + 1), PAD, np.int32)
    tgt_out = np.full((n, max_len + 1), PAD, np.int32)
    for i, n_i in enumerate(lengths):
        seq = rng.randint(3, 3 + num_digits, size=n_i)
        src[i, :n_i] = seq
        rev = seq[::-1]
        tgt_in[i, 0] = SOS
        tgt_in[i, 1:n_i + 1] = rev
        tgt_out[i, :n_i] = rev
        tgt_out[i, n_i] = EOS
    return src, lengths.astype(np.int32), tgt_in, tgt_out, (lengths + 1).astype(np.int32)

source = tf.placeholder(tf.int32, [None, None], name="source")
source_length = tf.placeholder(tf.int32, [None], name="source_length")
target_input = tf.placeholder(tf.int32, [None, None], name="target_input")
target_output = tf.placeholder(tf.int32, [None, None], name="target_output")
target_length = tf.placeholder(tf.int32, [None], name="target_length")
batch = tf.size(source_length)

with tf.variable_scope("dynamic_seq2seq"):
    with tf.variable_scope("embeddings"):
        embedding_encoder = tf.get_variable("embedding_encoder", [vocab_size, embedding_size])
        embedding_decoder = tf.get_variable("embedding_decoder", [vocab_size, embedding_size])
    with tf.variable_scope("encoder"):
        encoder_emb_inp = tf.nn.embedding_lookup(embedding_encoder, source)
        encoder_cell = tf.nn.rnn_cell.BasicLSTMCell(num_units)
        encoder_outputs, encoder_state = tf.nn.dynamic_rnn(
            encoder_cell, encoder_emb_inp, sequence_length=source_length, dtype=tf.float32)
    projection_layer = tf.layers.Dense(vocab_size, use_bias=False, name="output_projection")

    def build_decoder(mode):
        width = beam_width if mode == "beam" else 1
        memory = tf.contrib.seq2seq.tile_batch(encoder_outputs, multiplier=width)
        memory_length = tf.contrib.seq2seq.tile_batch(source_length, multiplier=width)
        state = tf.contrib.seq2seq.tile_batch(encoder_state, multiplier=width)
        with tf.variable_scope("decoder", reuse=tf.AUTO_REUSE) as decoder_scope:
            attention_mechanism = tf.contrib.seq2seq.LuongAttention(
                num_units, memory, memory_sequence_length=memory_length, scale=True)
            cell = tf.contrib.seq2seq.AttentionWrapper(
                tf.nn.rnn_cell.BasicLSTMCell(num_units), attention_mechanism,
                attention_layer_size=num_units, alignment_history=(mode == "train"),
                output_attention=True, name="attention")
            initial_state = cell.zero_state(batch * width, tf.float32).clone(cell_state=state)
            if mode == "train":
                decoder_emb_inp = tf.nn.embedding_lookup(embedding_decoder, target_input)
                helper = tf.contrib.seq2seq.TrainingHelper(decoder_emb_inp, target_length)
                decoder = tf.contrib.seq2seq.BasicDecoder(cell, helper, initial_state)
                outputs, final_state, _ = tf.contrib.seq2seq.dynamic_decode(
                    decoder, scope=decoder_scope)
                return projection_layer(outputs.rnn_output), final_state
            start_tokens = tf.fill([batch], SOS)
            maximum_iterations = tf.reduce_max(source_length) * 2
            if mode == "greedy":
                helper = tf.contrib.seq2seq.GreedyEmbeddingHelper(
                    embedding_decoder, start_tokens, EOS)
                decoder = tf.contrib.seq2seq.BasicDecoder(cell, helper, initial_state,
                                                          output_layer=projection_layer)
            else:
                decoder = tf.contrib.seq2seq.BeamSearchDecoder(
                    cell=cell, embedding=embedding_decoder, start_tokens=start_tokens,
                    end_token=EOS, initial_state=initial_state, beam_width=beam_width,
                    output_layer=projection_layer, length_penalty_weight=0.0)
            outputs, _, _ = tf.contrib.seq2seq.dynamic_decode(
                decoder, maximum_iterations=maximum_iterations, scope=decoder_scope)
            return outputs

    logits, train_state = build_decoder("train")
    greedy_outputs = build_decoder("greedy")
    beam_outputs = build_decoder("beam")

target_weights = tf.sequence_mask(target_length, tf.shape(target_output)[1], dtype=logits.dtype)
max_time = tf.shape(logits)[1]
loss = tf.contrib.seq2seq.sequence_loss(logits, target_output[:, :max_time],
                                        target_weights[:, :max_time])
params = tf.trainable_variables()
gradients = tf.gradients(loss, params)
clipped_gradients, _ = tf.clip_by_global_norm(gradients, 5.0)
update_step = tf.train.AdamOptimizer(0.01).apply_gradients(zip(clipped_gradients, params))
alignments = train_state.alignment_history.stack()

names = [v.op.name for v in params]
assert "dynamic_seq2seq/decoder/attention/basic_lstm_cell/kernel" in names, names
assert "dynamic_seq2seq/decoder/attention/attention_layer/kernel" in names, names
assert "dynamic_seq2seq/decoder/attention/luong_attention/attention_g" in names, names
assert "dynamic_seq2seq/decoder/memory_layer/kernel" in names, names
assert "dynamic_seq2seq/decoder/output_projection/kernel" in names, names

def accuracy(decoded, src, lengths):
    right = 0
    for row, s, n in zip(decoded, src, lengths):
        want = list(s[:n][::-1]) + [EOS]
        right += list(row[:n + 1]) == want
    return right / len(src)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    test_src, test_len, _, _, _ = make_batch(100)
    test_feed = {source: test_src, source_length: test_len}
    before = accuracy(sess.run(greedy_outputs.sample_id, test_feed), test_src, test_len)
    for step in range(200):
        src, src_len, tgt_in, tgt_out, tgt_len = make_batch(batch_size)
        feed = {source: src, source_length: src_len, target_input: tgt_in,
                target_output: tgt_out, target_length: tgt_len}
        train_loss, _ = sess.run([loss, update_step], feed)
        if step % 50 == 0:
            print("step", step, "loss", train_loss)
    att = sess.run(alignments, feed)
    greedy_ids = sess.run(greedy_outputs.sample_id, test_feed)
    beam_ids = sess.run(beam_outputs.predicted_ids, test_feed)
greedy_accuracy = accuracy(greedy_ids, test_src, test_len)
beam_accuracy = accuracy(beam_ids[:, :, 0], test_src, test_len)
print("loss", train_loss, "greedy accuracy", before, "->", greedy_accuracy,
      "beam accuracy", beam_accuracy)
assert att.shape[1:] == (batch_size, max_len), att.shape
np.testing.assert_allclose(att.sum(-1), 1.0, rtol=1e-4)
assert beam_ids.shape[0] == 100 and beam_ids.shape[2] == beam_width
# chance: a whole sequence of 3-6 digits (7 choices each) right by luck ~ 7**-3
assert before < 0.05, before
assert greedy_accuracy > 0.6, greedy_accuracy
assert beam_accuracy > 0.6, beam_accuracy
