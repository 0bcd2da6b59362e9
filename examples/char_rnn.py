"""Character-level LSTM language model, written as a TF1 program (`import graphflow as tf`).

    python examples/char_rnn.py --steps 300            # train, print the loss and a sample
    graphflow run char_rnn.gfz --text --input seed='"The mill"' --input length=200

A 2-layer LSTM (hidden 256, `tf.nn.dynamic_rnn`) reads 50-character windows of
examples/data/char_rnn_text.txt (batch 32) and learns to predict the next character with Adam. The
saved file holds a sampling graph: the LSTM reads the seed text (Unicode code points), then a
`tf.while_loop` draws `length` characters one at a time, each fed back as the next input, so
`graphflow run` writes new text without this script.
"""

import argparse
import os
import time

import numpy as np

import graphflow as tf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "char_rnn_text.txt")


def load_text(path=DATA):
    with open(path, encoding="utf-8") as f:
        return f.read()


class Vocabulary:
    """Characters <-> ids (sorted characters of the text) and the code point table the saved
    sampling graph uses to read its seed."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.ids = {c: i for i, c in enumerate(self.chars)}
        self.codepoints = np.array([ord(c) for c in self.chars], dtype=np.int32)
        unknown = self.ids.get(" ", 0)
        self.id_of_codepoint = np.full(int(self.codepoints.max()) + 1, unknown, dtype=np.int32)
        self.id_of_codepoint[self.codepoints] = np.arange(len(self.chars), dtype=np.int32)

    def __len__(self):
        return len(self.chars)

    def encode(self, text):
        return np.array([self.ids[c] for c in text], dtype=np.int32)


def build_training(vocab_size, hidden, layers, learning_rate):
    """The training graph; returns (cell, softmax weights, placeholders, loss, train_op)."""
    inputs = tf.placeholder(tf.int32, [None, None], name="inputs")
    targets = tf.placeholder(tf.int32, [None, None], name="targets")
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(hidden)
                                        for _ in range(layers)])
    outputs, _ = tf.nn.dynamic_rnn(cell, tf.one_hot(inputs, vocab_size), dtype=tf.float32)
    with tf.variable_scope("softmax"):
        softmax_w = tf.get_variable("w", [hidden, vocab_size])
        softmax_b = tf.get_variable("b", [vocab_size], initializer=tf.zeros_initializer())
    logits = tf.matmul(tf.reshape(outputs, [-1, hidden]), softmax_w) + softmax_b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.reshape(targets, [-1]), logits=logits), name="loss")
    optimizer = tf.train.AdamOptimizer(learning_rate)
    grads, variables = zip(*optimizer.compute_gradients(loss))
    grads, _ = tf.clip_by_global_norm(grads, 5.0)
    train_op = optimizer.apply_gradients(zip(grads, variables))
    return cell, (softmax_w, softmax_b), (inputs, targets), loss, train_op


def build_sampler(cell, softmax, vocab):
    """The sampling graph: seed code points in, `length` sampled code points out."""
    softmax_w, softmax_b = softmax
    seed = tf.placeholder(tf.int32, [None], name="seed")
    length = tf.placeholder_with_default(200, [], name="length")
    temperature = tf.placeholder_with_default(1.0, [], name="temperature")
    with tf.name_scope("sampler"):
        table = tf.constant(vocab.id_of_codepoint)
        seed_ids = tf.gather(table, tf.clip_by_value(seed, 0, len(vocab.id_of_codepoint) - 1))
        seed_inputs = tf.expand_dims(tf.one_hot(seed_ids, len(vocab)), 0)
        _, state = tf.nn.dynamic_rnn(cell, seed_inputs, dtype=tf.float32, scope="rnn")
        last_output = state[-1].h

        def draw(step, state, output, chosen):
            logits = (tf.matmul(output, softmax_w) + softmax_b) / temperature
            uniform = tf.random_uniform(tf.shape(logits), minval=1e-10, maxval=1.0)
            gumbel = -tf.log(-tf.log(uniform))        # argmax(logits + gumbel) ~ softmax(logits)
            next_id = tf.cast(tf.argmax(logits + gumbel, axis=1), tf.int32)
            chosen = chosen.write(step, next_id[0])
            output, state = cell(tf.one_hot(next_id, len(vocab)), state)
            return step + 1, state, output, chosen

        chosen = tf.TensorArray(tf.int32, size=length)
        _, _, _, chosen = tf.while_loop(lambda step, *_: step < length, draw,
                                        (tf.constant(0), state, last_output, chosen))
        sample = tf.gather(tf.constant(vocab.codepoints), chosen.stack(), name="sample")
    return seed, length, temperature, sample


def batches(ids, batch, seq_len, rng):
    """Random windows: inputs [batch, seq_len] and the next characters as targets."""
    while True:
        starts = rng.integers(0, len(ids) - seq_len - 1, size=batch)
        windows = np.stack([ids[s:s + seq_len + 1] for s in starts])
        yield windows[:, :-1], windows[:, 1:]


def decode(codepoints):
    return "".join(chr(int(c)) for c in codepoints)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300, help="training steps")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seq-len", type=int, default=50)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=0.002)
    parser.add_argument("--print-every", type=int, default=25)
    parser.add_argument("--sample-length", type=int, default=200)
    parser.add_argument("--seed-text", default="The mill")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument("--text", default=DATA, help="training text (UTF-8)")
    parser.add_argument("--save", default="char_rnn.gfz", help="where to save the sampling graph")
    args = parser.parse_args(argv)

    text = load_text(args.text)
    vocab = Vocabulary(text)
    ids = vocab.encode(text)
    rng = np.random.default_rng(args.seed)
    tf.set_random_seed(args.seed)
    print(f"text: {len(text)} characters, vocabulary {len(vocab)}; model: {args.layers} x LSTM "
          f"{args.hidden}, windows of {args.seq_len}, batch {args.batch}")
    cell, softmax, (inputs, targets), loss, train_op = build_training(
        len(vocab), args.hidden, args.layers, args.learning_rate)
    seed, length, _, sample = build_sampler(cell, softmax, vocab)
    data = batches(ids, args.batch, args.seq_len, rng)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        started, recent = time.perf_counter(), []
        for step in range(1, args.steps + 1):
            x, y = next(data)
            value, _ = sess.run([loss, train_op], {inputs: x, targets: y})
            recent.append(value)
            if step % args.print_every == 0 or step in (1, args.steps):
                print(f"step {step:5d}  loss {np.mean(recent):.3f}  "
                      f"({(time.perf_counter() - started) / step:.3f} s/step)", flush=True)
                recent = []
        seed_codes = np.array([ord(c) for c in args.seed_text], dtype=np.int32)
        drawn = sess.run(sample, {seed: seed_codes, length: args.sample_length})
        print(f"sample: {args.seed_text}{decode(drawn)}")
        tf.save(args.save, inputs={"seed": seed, "length": length}, outputs={"sample": sample},
                session=sess)
    print(f"saved {args.save}; sample from it with:\n  graphflow run {args.save} --text "
          f"--input seed='\"{args.seed_text}\"' --input length={args.sample_length}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
