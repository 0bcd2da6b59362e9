"""Single-thread training step time of a small MLP, to check that a run's commit costs nothing
measurable (the commit point that snapshots read against: docs/sessions.md).

    python benchmarks/bench_step_commit.py [--steps 300] [--rounds 7] [--against DIR]

A 784-128-10 ReLU MLP, batch 64, softmax cross-entropy, Adam (its 784x128 update is the compiled
in-place one, the run's last op), plus a step counter updated in the same run. Prints the median
step time in microseconds. With `--against DIR` (another graphflow tree, e.g. an export of an
older commit), rounds alternate between DIR and this tree, each round a fresh process, and the
medians of the rounds' medians are printed side by side.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(steps):
    """Median seconds of one training step, after a warm-up."""
    import numpy as np

    import graphflow as tf
    rng = np.random.RandomState(0)
    x = tf.placeholder(tf.float32, [64, 784])
    y = tf.placeholder(tf.int64, [64])
    h = tf.layers.dense(x, 128, tf.nn.relu)
    logits = tf.layers.dense(h, 10)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    step = tf.Variable(tf.constant(0, tf.int64), trainable=False)
    train = tf.group(tf.train.AdamOptimizer(1e-3).minimize(loss), tf.assign_add(step, 1))
    feed = {x: rng.randn(64, 784).astype(np.float32), y: rng.randint(0, 10, 64)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(50):
            sess.run(train, feed)
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            sess.run(train, feed)
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _round(tree, steps):
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run([sys.executable, __file__, "--steps", str(steps), "--one"], env=env,
                         capture_output=True, text=True, check=True, cwd=tree)
    return float(out.stdout.split()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--against", help="another graphflow tree to alternate with")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(f"{measure(args.steps) * 1e6:.1f}")
        return
    trees = {"this tree": HERE}
    if args.against:
        trees = {"against": os.path.abspath(args.against), "this tree": HERE}
    samples = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            samples[name].append(_round(tree, args.steps))
    for name, values in samples.items():
        print(f"{name:>10}: median {statistics.median(values):8.1f} us/step   rounds "
              + " ".join(f"{v:.0f}" for v in values))


if __name__ == "__main__":
    main()
