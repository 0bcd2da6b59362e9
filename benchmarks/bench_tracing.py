"""What tracing costs: one Adam step of a 64-256-128-10 ReLU MLP (batch 32, the digits example's
sizes) and a 50-op chain of small elementwise ops, untraced and with
`RunOptions(trace_level=FULL_TRACE)` + `RunMetadata`, graphflow against TF1 (`tf.compat.v1` graph
mode, when TensorFlow is importable) in the same run. Medians of per-run wall times.

    python benchmarks/bench_tracing.py [--repeat 300]

Untraced graphflow runs execute the same generated plan function as before tracing existed; the
traced variant is a second function with a clock read around each kernel call.
"""

import argparse
import statistics
import time

import numpy as np


def _median_us(fn, repeat, warmup=20):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def _mlp(tf):
    x = tf.placeholder(tf.float32, [None, 64])
    labels = tf.placeholder(tf.int64, [None])
    rng = np.random.default_rng(0)
    h = x
    for i, (n_in, n_out) in enumerate(((64, 256), (256, 128), (128, 10))):
        w = tf.Variable(rng.normal(0, 0.1, (n_in, n_out)).astype(np.float32))
        h = tf.matmul(h, w) + tf.Variable(np.zeros(n_out, np.float32))
        h = tf.nn.relu(h) if i < 2 else h
    logits = h  # explicit variables: TF's tf.compat.v1.layers needs Keras 2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                         logits=logits))
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    feed = {x: rng.random((32, 64), np.float32), labels: rng.integers(0, 10, 32)}
    return [train, loss], feed


def _chain(tf):
    x = tf.placeholder(tf.float32, [16])
    y = x
    for i in range(50):
        y = tf.tanh(y) if i % 2 else y * 1.01
    return [y], {x: np.ones(16, np.float32)}


def measure(tf, build, repeat, **session_args):
    graph = tf.Graph()
    with graph.as_default():
        fetches, feed = build(tf)
        init = tf.global_variables_initializer()
        sess = tf.Session(graph=graph, **session_args)
        sess.run(init)
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    plain = _median_us(lambda: sess.run(fetches, feed), repeat)
    traced = _median_us(lambda: sess.run(fetches, feed, options=options,
                                         run_metadata=tf.RunMetadata()), repeat)
    sess.close()
    return plain, traced


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args(argv)
    import graphflow
    frameworks = [("graphflow", graphflow)]
    try:
        import tensorflow.compat.v1 as tf1
        tf1.disable_eager_execution()
        frameworks.append(("TF1", tf1))
    except ImportError:
        print("(TensorFlow is not importable here: graphflow only)")
    print(f"{'workload':<22} {'framework':<10} {'untraced us':>12} {'traced us':>10} {'ratio':>6}")
    for name, build in (("MLP Adam step", _mlp), ("50-op elementwise", _chain)):
        for label, module in frameworks:
            plain, traced = measure(module, build, args.repeat)
            print(f"{name:<22} {label:<10} {plain:>12.1f} {traced:>10.1f} {traced / plain:>6.2f}")


if __name__ == "__main__":
    main()
