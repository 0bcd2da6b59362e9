"""A char-RNN as TF1 tutorials wrote it: MultiRNNCell of dropout-wrapped LSTMCells, static_rnn,
legacy sequence loss, clipped gradients, a state tuple fed back every batch, Saver restore and a
sampling loop feeding the state."""
import numpy as np, tempfile, os
import graphflow as tf
tf.set_random_seed(1234)
text = "hello world, this is a tiny corpus for a char rnn. " * 40
chars = sorted(set(text)); vocab = len(chars); idx = {c: i for i, c in enumerate(chars)}
data = np.array([idx[c] for c in text], np.int32)
batch_size, seq_length, rnn_size, num_layers = 8, 20, 32, 2
class Model:
    def __init__(self, training=True):
        bs, sl = (batch_size, seq_length) if training else (1, 1)
        cells = []
        for _ in range(num_layers):
            cell = tf.contrib.rnn.LSTMCell(rnn_size)
            if training:
                cell = tf.contrib.rnn.DropoutWrapper(cell, output_keep_prob=0.9)
            cells.append(cell)
        self.cell = cell = tf.contrib.rnn.MultiRNNCell(cells, state_is_tuple=True)
        self.input_data = tf.placeholder(tf.int32, [bs, sl])
        self.targets = tf.placeholder(tf.int32, [bs, sl])
        self.initial_state = cell.zero_state(bs, tf.float32)
        with tf.variable_scope('rnnlm', reuse=tf.AUTO_REUSE):
            softmax_w = tf.get_variable("softmax_w", [rnn_size, vocab])
            softmax_b = tf.get_variable("softmax_b", [vocab])
            embedding = tf.get_variable("embedding", [vocab, rnn_size])
        inputs = tf.nn.embedding_lookup(embedding, self.input_data)
        inputs = tf.split(inputs, sl, 1)
        inputs = [tf.squeeze(input_, [1]) for input_ in inputs]
        with tf.variable_scope('rnnlm', reuse=tf.AUTO_REUSE):
            outputs, last_state = tf.contrib.rnn.static_rnn(cell, inputs, self.initial_state, scope='rnnlm')
        output = tf.reshape(tf.concat(outputs, 1), [-1, rnn_size])
        self.logits = tf.matmul(output, softmax_w) + softmax_b
        self.probs = tf.nn.softmax(self.logits)
        loss = tf.contrib.legacy_seq2seq.sequence_loss_by_example([self.logits], [tf.reshape(self.targets, [-1])], [tf.ones([bs * sl])])
        with tf.name_scope('cost'):
            self.cost = tf.reduce_sum(loss) / bs / sl
        self.final_state = last_state
        self.lr = tf.Variable(0.0, trainable=False)
        tvars = tf.trainable_variables()
        grads, _ = tf.clip_by_global_norm(tf.gradients(self.cost, tvars), 5.0)
        optimizer = tf.train.AdamOptimizer(self.lr)
        self.train_op = optimizer.apply_gradients(zip(grads, tvars))
with tf.variable_scope("model"):
    model = Model()
with tf.variable_scope("model", reuse=True):
    sampler = Model(training=False)
saver = tf.train.Saver(tf.global_variables())
ckpt_dir = tempfile.mkdtemp()
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    n_batches = len(data) // (batch_size * seq_length + 1)
    for e in range(4):
        sess.run(tf.assign(model.lr, 0.01 * (0.97 ** e)))
        state = sess.run(model.initial_state)
        for b in range(n_batches):
            start = b * batch_size * seq_length
            x = data[start:start + batch_size * seq_length].reshape(batch_size, seq_length)
            y = data[start + 1:start + batch_size * seq_length + 1].reshape(batch_size, seq_length)
            feed = {model.input_data: x, model.targets: y}
            for i, (c, h) in enumerate(model.initial_state):
                feed[c] = state[i].c; feed[h] = state[i].h
            train_loss, state, _ = sess.run([model.cost, model.final_state, model.train_op], feed)
        print("epoch", e, "loss", train_loss)
    saver.save(sess, os.path.join(ckpt_dir, 'model.ckpt'), global_step=e)
with tf.Session() as sess:
    saver.restore(sess, tf.train.latest_checkpoint(ckpt_dir))
    state = sess.run(sampler.cell.zero_state(1, tf.float32))
    out = "h"
    for _ in range(30):
        x = np.array([[idx[out[-1]]]])
        feed = {sampler.input_data: x, sampler.initial_state: state}
        probs, state = sess.run([sampler.probs, sampler.final_state], feed)
        out += chars[int(np.argmax(probs[0]))]
    print(repr(out))
assert train_loss < 2.2, train_loss
assert len(out) == 31
