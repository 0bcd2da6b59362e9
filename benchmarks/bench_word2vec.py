"""word2vec's skip-gram training step (`tf.nn.embedding_lookup` + `tf.nn.nce_loss` on a
vocabulary-sized embedding): graphflow against TensorFlow 1 (`tf.compat.v1` graph mode) in the
same process.

    python benchmarks/bench_word2vec.py [--repeat 50] [--optimizer sgd] [--vocab 50000]
    # with TensorFlow: PYTHONPATH=. /path/to/tf-python benchmarks/bench_word2vec.py

Model (TensorFlow's word2vec_basic tutorial): vocabulary 50,000, embedding 128, batch 128, 64
sampled negative classes per step, NCE loss, `GradientDescentOptimizer(1.0)` (or `--optimizer`
adagrad / momentum / adam / rmsprop). The gradients of the embedding, the NCE weights and biases
are `tf.IndexedSlices` of the rows the step touched, so each update costs rows x 128, not the
vocabulary (except Adam, whose TF1 sparse update decays both moments densely). Printed per
framework: graph build, first step, median step time over interleaved rounds, and the ratio
graphflow / TF1. Both run on `--threads` threads (default 1).
"""

import argparse
import time

import numpy as np
from common import interleaved_medians, session_step, tensorflow_v1

import graphflow as gf

EMBED, BATCH, SAMPLED = 128, 128, 64


def _optimizer(tf, kind):
    return {"sgd": lambda: tf.train.GradientDescentOptimizer(1.0),
            "adagrad": lambda: tf.train.AdagradOptimizer(0.5),
            "momentum": lambda: tf.train.MomentumOptimizer(0.5, 0.9),
            "rmsprop": lambda: tf.train.RMSPropOptimizer(0.01),
            "adam": lambda: tf.train.AdamOptimizer(0.01)}[kind]()


def build(tf, vocab, kind):
    """Graph, init op, placeholders, [loss, train_op] and the seconds the build took."""
    graph = tf.Graph()
    started = time.perf_counter()
    with graph.as_default():
        tf.set_random_seed(0)
        inputs = tf.placeholder(tf.int32, [BATCH], name="inputs")
        labels = tf.placeholder(tf.int64, [BATCH, 1], name="labels")
        embeddings = tf.Variable(tf.random_uniform([vocab, EMBED], -1.0, 1.0), name="embeddings")
        embed = tf.nn.embedding_lookup(embeddings, inputs)
        nce_w = tf.Variable(tf.truncated_normal([vocab, EMBED], stddev=1.0 / np.sqrt(EMBED)),
                            name="nce_weights")
        nce_b = tf.Variable(tf.zeros([vocab]), name="nce_biases")
        loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_w, biases=nce_b, labels=labels,
                                             inputs=embed, num_sampled=SAMPLED,
                                             num_classes=vocab))
        train_op = _optimizer(tf, kind).minimize(loss)
        init = tf.global_variables_initializer()
    return graph, init, (inputs, labels), [loss, train_op], time.perf_counter() - started


def contender(tf, vocab, kind, batch, threads):
    """(step function, build seconds, first-step seconds) for one framework."""
    graph, init, (inputs, labels), fetches, build_s = build(tf, vocab, kind)
    step, first_s = session_step(tf, graph, init, fetches, {inputs: batch[0], labels: batch[1]}, threads)
    return step, build_s, first_s


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50, help="timed rounds per framework")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--vocab", type=int, default=50000)
    parser.add_argument("--optimizer", default="sgd",
                        choices=["sgd", "adagrad", "momentum", "rmsprop", "adam"])
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for both frameworks (BLAS and the session's pools)")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits
    threadpool_limits(limits=args.threads, user_api="blas")
    rng = np.random.default_rng(0)
    batch = (rng.integers(0, args.vocab, BATCH).astype(np.int32),
             rng.integers(0, args.vocab, (BATCH, 1)).astype(np.int64))
    contenders = {"graphflow": contender(gf, args.vocab, args.optimizer, batch, args.threads)}
    tf1 = tensorflow_v1()
    if tf1 is not None:
        contenders["tf.compat.v1"] = contender(tf1, args.vocab, args.optimizer, batch,
                                               args.threads)
    medians = interleaved_medians({name: c[0] for name, c in contenders.items()}, args.repeat,
                                  args.warmup)
    print(f"word2vec skip-gram: vocab {args.vocab}, embedding {EMBED}, batch {BATCH}, nce_loss "
          f"with {SAMPLED} sampled, {args.optimizer}; {args.repeat} rounds, "
          f"{args.threads} thread(s)")
    print(f"  {'':<14} {'build+grad':>11} {'first step':>11} {'step (median)':>14}")
    for name, (_, build_s, first_s) in contenders.items():
        print(f"  {name:<14} {build_s:10.3f}s {first_s:10.3f}s {medians[name] * 1e3:11.2f} ms")
    if tf1 is None:
        print("  (tensorflow not installed: tf.compat.v1 skipped)")
    else:
        print(f"  graphflow / tf.compat.v1 step time: "
              f"{medians['graphflow'] / medians['tf.compat.v1']:.2f}x")
    return medians


if __name__ == "__main__":
    main()
