"""A toy speech recognizer as TF1 CTC tutorials wrote it: utterances are frames of features, each
letter of the transcript sounding for a few frames between stretches of silence; an LSTM under
dynamic_rnn reads them, a projection gives per-frame logits (time-major, the blank last),
tf.nn.ctc_loss trains it with momentum, tf.nn.ctc_greedy_decoder (and ctc_beam_search_decoder)
transcribe and tf.edit_distance gives the label error rate, which must fall."""
import numpy as np
import graphflow as tf

num_features, num_letters = 10, 4
num_classes = num_letters + 1          # the letters, then the blank
num_hidden, batch_size = 48, 32
rng = np.random.RandomState(7)
sounds = rng.randn(num_letters, num_features).astype(np.float32)


def utterance():
    """(frames [time, features], transcript): 1-4 letters of 2-4 frames each, silence around."""
    letters = rng.randint(num_letters, size=rng.randint(1, 5))
    frames = [np.zeros((rng.randint(1, 3), num_features))]
    for i, letter in enumerate(letters):
        frames.append(np.tile(sounds[letter], (rng.randint(2, 5), 1)))
        gap = rng.randint(1 if i + 1 < len(letters) and letters[i + 1] == letter else 0, 3)
        frames.append(np.zeros((gap, num_features)))
    frames = np.concatenate(frames + [np.zeros((rng.randint(1, 3), num_features))])
    return (frames + 0.3 * rng.randn(*frames.shape)).astype(np.float32), letters


def next_batch(n):
    """Padded features [n, max_time, features], lengths, and the transcripts as a sparse triple."""
    utts = [utterance() for _ in range(n)]
    lengths = np.array([len(f) for f, _ in utts], np.int32)
    feats = np.zeros((n, lengths.max(), num_features), np.float32)
    for i, (f, _) in enumerate(utts):
        feats[i, :len(f)] = f
    indices = [[i, j] for i, (_, t) in enumerate(utts) for j in range(len(t))]
    values = np.concatenate([t for _, t in utts]).astype(np.int32)
    shape = [n, max(len(t) for _, t in utts)]
    return feats, lengths, (np.array(indices, np.int64), values, np.array(shape, np.int64))


graph = tf.Graph()
with graph.as_default():
    tf.set_random_seed(3)
    inputs = tf.placeholder(tf.float32, [None, None, num_features])
    seq_len = tf.placeholder(tf.int32, [None])
    target_ix = tf.placeholder(tf.int64)
    target_vals = tf.placeholder(tf.int32)
    target_shape = tf.placeholder(tf.int64)
    targets = tf.SparseTensor(target_ix, target_vals, target_shape)

    cell = tf.nn.rnn_cell.LSTMCell(num_hidden, state_is_tuple=True)
    outputs, _ = tf.nn.dynamic_rnn(cell, inputs, seq_len, dtype=tf.float32)
    shape = tf.shape(inputs)
    batch_s, max_timesteps = shape[0], shape[1]
    outputs = tf.reshape(outputs, [-1, num_hidden])
    W = tf.Variable(tf.truncated_normal([num_hidden, num_classes], stddev=0.1))
    b = tf.Variable(tf.constant(0., shape=[num_classes]))
    logits = tf.matmul(outputs, W) + b
    logits = tf.reshape(logits, [batch_s, -1, num_classes])
    logits = tf.transpose(logits, (1, 0, 2))        # time major

    loss = tf.nn.ctc_loss(targets, logits, seq_len)
    cost = tf.reduce_mean(loss)
    optimizer = tf.train.MomentumOptimizer(0.01, 0.9).minimize(cost)

    decoded, log_prob = tf.nn.ctc_greedy_decoder(logits, seq_len)
    hypothesis = tf.SparseTensor(decoded[0].indices, tf.cast(decoded[0].values, tf.int32),
                                 decoded[0].dense_shape)
    ler = tf.reduce_mean(tf.edit_distance(hypothesis, targets))
    # merge_repeated=False: the default merges a path's repeated labels even across blanks
    beams, beam_log_prob = tf.nn.ctc_beam_search_decoder(logits, seq_len, beam_width=10,
                                                         merge_repeated=False)
    beam_ler = tf.reduce_mean(tf.edit_distance(tf.SparseTensor(
        beams[0].indices, tf.cast(beams[0].values, tf.int32), beams[0].dense_shape), targets))

test_feats, test_len, (test_ix, test_vals, test_shape) = next_batch(64)
test_feed = {inputs: test_feats, seq_len: test_len, target_ix: test_ix,
             target_vals: test_vals, target_shape: test_shape}

with tf.Session(graph=graph) as session:
    tf.global_variables_initializer().run()
    first_ler = session.run(ler, test_feed)
    print("before training: label error rate %.3f" % first_ler)
    for step in range(1, 301):
        feats, lengths, (ix, vals, dense) = next_batch(batch_size)
        feed = {inputs: feats, seq_len: lengths, target_ix: ix, target_vals: vals,
                target_shape: dense}
        batch_cost, _ = session.run([cost, optimizer], feed)
        if step % 100 == 0:
            test_cost, test_ler = session.run([cost, ler], test_feed)
            print("step %d: train cost %.3f, test cost %.3f, label error rate %.3f"
                  % (step, batch_cost, test_cost, test_ler))
    d, test_beam_ler = session.run([decoded[0], beam_ler], test_feed)
    print("beam search: label error rate %.3f" % test_beam_ler)
    first = d.values[d.indices[:, 0] == 0]
    print("original: %s decoded: %s" % (test_vals[test_ix[:, 0] == 0], first))

assert first_ler > 0.7, first_ler
assert test_ler < 0.15 and test_ler < first_ler / 4, (first_ler, test_ler)
assert test_beam_ler < 0.15, test_beam_ler
