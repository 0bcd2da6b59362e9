"""The character-level LSTM language model's training step: graphflow against TensorFlow 1
(`tf.compat.v1` graph mode, TF1's BasicLSTMCell and dynamic_rnn) in the same process.

    python benchmarks/bench_rnn.py [--repeat 20] [--threads 1]
    # with TensorFlow: PYTHONPATH=. /path/to/tf-python benchmarks/bench_rnn.py

Model (issue 11): vocabulary 65, 2 x BasicLSTMCell(256) under `tf.nn.dynamic_rnn`, sequence 50,
batch 32, softmax cross-entropy, Adam. Printed per framework: the time to build the graph
(forward + `gradients` + Adam updates), the first training step (plan compile + run), and the
median step time over interleaved rounds, with the ratio graphflow / TF1. Both run on `--threads`
threads (default 1: on a busy shared machine multi-threaded BLAS spins and a 0.4 ms matmul takes
90 ms): graphflow's BLAS is limited with threadpoolctl and both sessions get
`ConfigProto(intra_op_parallelism_threads=N, inter_op_parallelism_threads=N)`.
"""

import argparse
import time

import numpy as np
from common import interleaved_medians, session_step, tensorflow_v1

import graphflow as gf

VOCAB, HIDDEN, LAYERS, SEQ, BATCH = 65, 256, 2, 50, 32


def tf1_with_cells():
    """(tf.compat.v1, TF1's rnn cell module) or None where TensorFlow is missing. TF1's cells live
    in TensorFlow's bundled legacy Keras (Keras 3 refuses `tf.compat.v1.nn.rnn_cell`)."""
    tf1 = tensorflow_v1()
    if tf1 is None:
        return None
    from tensorflow.python.keras.layers.legacy_rnn import rnn_cell_impl
    return tf1, rnn_cell_impl


def data(rng):
    ids = rng.integers(0, VOCAB, size=(BATCH, SEQ + 1)).astype(np.int32)
    return ids[:, :-1], ids[:, 1:]


def build(tf, cells):
    """Graph, init op, placeholders, [loss, train_op] and the seconds the build took."""
    graph = tf.Graph()
    started = time.perf_counter()
    with graph.as_default():
        tf.set_random_seed(0)
        inputs = tf.placeholder(tf.int32, [BATCH, SEQ], name="inputs")
        targets = tf.placeholder(tf.int32, [BATCH, SEQ], name="targets")
        cell = cells.MultiRNNCell([cells.BasicLSTMCell(HIDDEN) for _ in range(LAYERS)])
        outputs, _ = tf.nn.dynamic_rnn(cell, tf.one_hot(inputs, VOCAB), dtype=tf.float32)
        with tf.variable_scope("softmax"):
            w = tf.get_variable("w", [HIDDEN, VOCAB])
            b = tf.get_variable("b", [VOCAB], initializer=tf.zeros_initializer())
        logits = tf.matmul(tf.reshape(outputs, [-1, HIDDEN]), w) + b
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.reshape(targets, [-1]), logits=logits))
        train_op = tf.train.AdamOptimizer(0.002).minimize(loss)
        init = tf.global_variables_initializer()
    return graph, init, (inputs, targets), [loss, train_op], time.perf_counter() - started


def contender(tf, cells, batch, threads):
    """(step function, build seconds, first-step seconds) for one framework."""
    graph, init, (inputs, targets), fetches, build_s = build(tf, cells)
    step, first_s = session_step(tf, graph, init, fetches, {inputs: batch[0], targets: batch[1]}, threads)
    return step, build_s, first_s


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="timed rounds per framework")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for both frameworks (BLAS and the session's pools)")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits
    threadpool_limits(limits=args.threads, user_api="blas")
    batch = data(np.random.default_rng(0))
    contenders = {"graphflow": contender(gf, gf.nn.rnn_cell, batch, args.threads)}
    tf1 = tf1_with_cells()
    if tf1 is not None:
        contenders["tf.compat.v1"] = contender(tf1[0], tf1[1], batch, args.threads)
    medians = interleaved_medians({name: c[0] for name, c in contenders.items()}, args.repeat,
                                  args.warmup)
    print(f"char LSTM: vocab {VOCAB}, {LAYERS} x BasicLSTMCell({HIDDEN}), dynamic_rnn, seq {SEQ}, "
          f"batch {BATCH}, Adam; {args.repeat} rounds, {args.threads} thread(s)")
    print(f"  {'':<14} {'build+grad':>11} {'first step':>11} {'step (median)':>14}")
    for name, (_, build_s, first_s) in contenders.items():
        print(f"  {name:<14} {build_s:10.3f}s {first_s:10.3f}s {medians[name] * 1e3:11.1f} ms")
    if tf1 is None:
        print("  (tensorflow not installed: tf.compat.v1 skipped)")
    else:
        print(f"  graphflow / tf.compat.v1 step time: "
              f"{medians['graphflow'] / medians['tf.compat.v1']:.2f}x")
    return medians


if __name__ == "__main__":
    main()
