"""Input pipelines: tf.data feeding the digits CNN against feed_dict, and the overlap prefetch gives.

    python benchmarks/bench_data.py [--rounds 5] [--steps 20] [--batch 64]
    PYTHONPATH=. /path/to/tf-venv/bin/python benchmarks/bench_data.py --framework tensorflow

1. Training images/s of the digits CNN (examples/train_digits.py's architecture, Adam, batch 64)
   when its batches come from
     feed_dict  numpy per step: next indices of a permutation, the one-pixel random shift done in
                numpy, fed through `Session.run` (what the example did before tf.data);
     tf.data    from_tensor_slices -> shuffle -> map(shift, num_parallel_calls=2) -> batch ->
                prefetch(2), read by the model through `get_next` (no feeds);
     tf.data, no prefetch   the same pipeline without `prefetch`.
2. Overlap: shuffle -> batch -> a deliberately slow map (a chain of 192x192 matmuls per batch,
   sized to take about as long as a training step) with and without `prefetch(2)`. Without
   prefetch a step costs produce + train; with it, ideally max(produce, train). Printed: each
   time per step and overlap = (t_without - t_with) / min(t_produce, t_train) (1.0 = fully hidden).
3. Overlap with a source that waits (sleeps, like reading files) as long as a training step per
   batch: `from_generator` with and without `prefetch(2)`; waiting needs no core, so prefetch can
   hide it even on a machine with no idle core (where part 2 cannot show much).
The contenders run in interleaved rounds (machine-load drift hits all alike); medians are printed.
The data are scikit-learn's 8x8 digits when scikit-learn is installed, else random images of the
same shape (throughput does not depend on pixel values).
"""

import argparse
import statistics
import time

import numpy as np


def load_images():
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        rng = np.random.default_rng(0)
        return (rng.random((1437, 64), dtype=np.float32),
                rng.integers(0, 10, 1437).astype(np.int64), "random 8x8 images")
    digits = load_digits()
    return ((digits.data[:1437] / 16.0).astype(np.float32),
            digits.target[:1437].astype(np.int64), "scikit-learn digits")


# ------------------------------------------------------------------ the model (either framework)
def cnn_train_op(tf, x, labels):
    """The digits CNN of examples/train_digits.py in plain ops (so TensorFlow builds it too)."""
    rng = np.random.default_rng(0)

    def weight(*shape):
        return tf.Variable((rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[:-1])))
                           .astype(np.float32))

    def conv(h, cin, cout):
        return tf.nn.relu(tf.nn.conv2d(h, weight(3, 3, cin, cout), [1, 1, 1, 1], "SAME")
                          + tf.Variable(np.zeros(cout, np.float32)))

    def pool(h):
        return tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")

    h = pool(conv(conv(tf.reshape(x, [-1, 8, 8, 1]), 1, 32), 32, 32))
    h = pool(conv(h, 32, 64))
    h = tf.nn.relu(tf.matmul(tf.reshape(h, [-1, 256]), weight(256, 128)))
    logits = tf.matmul(h, weight(128, 10))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                         logits=logits))
    return tf.train.AdamOptimizer(1e-3).minimize(loss)


def shift_fn(tf):
    def shift(image, label):
        padded = tf.pad(tf.reshape(image, [8, 8]), [[1, 1], [1, 1]])
        offset = tf.random_uniform([2], 0, 3, dtype=tf.int32)
        return tf.reshape(tf.slice(padded, offset, [8, 8]), [64]), label
    return shift


def slow_fn(tf, matmuls):
    """A map over a batch that costs `matmuls` 192x192 matmuls and returns the batch unchanged."""
    def slow(images, labels):
        # depends on the batch, so that constant folding cannot precompute it
        m = tf.ones([192, 192]) * (1e-3 + tf.reduce_sum(images) * 0.0)
        for _ in range(matmuls):
            m = tf.matmul(m, m)
        return images + tf.reduce_sum(m) * 0.0, labels
    return slow


def numpy_shift(images, rng):
    out = np.zeros_like(images).reshape(-1, 8, 8)
    src = images.reshape(-1, 8, 8)
    moves = rng.integers(-1, 2, size=(len(images), 2))
    for (dy, dx) in set(map(tuple, moves)):
        rows = np.all(moves == (dy, dx), axis=1)
        ys, yd = (slice(0, 8 - dy), slice(dy, 8)) if dy >= 0 else (slice(-dy, 8), slice(0, 8 + dy))
        xs, xd = (slice(0, 8 - dx), slice(dx, 8)) if dx >= 0 else (slice(-dx, 8), slice(0, 8 + dx))
        out[rows, yd, xd] = src[rows][:, ys, xs]
    return out.reshape(-1, 64)


# ------------------------------------------------------------------ contenders
class Contender:
    """A graph + session with a `step()` that trains on one batch."""

    def __init__(self, tf, build):
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.step = build()
            self.sess = tf.Session(graph=self.graph)
            self.sess.run(tf.global_variables_initializer())
        self.run = self.step if callable(self.step) else (lambda: self.sess.run(self.step))


def feed_dict_contender(tf, x_all, y_all, batch):
    rng = np.random.default_rng(0)
    state = {"order": rng.permutation(len(x_all)), "at": 0}

    def build():
        x = tf.placeholder(tf.float32, [None, 64])
        y = tf.placeholder(tf.int64, [None])
        train = cnn_train_op(tf, x, y)

        def step():
            if state["at"] + batch > len(x_all):
                state["order"], state["at"] = rng.permutation(len(x_all)), 0
            idx = state["order"][state["at"]:state["at"] + batch]
            state["at"] += batch
            contender.sess.run(train, {x: numpy_shift(x_all[idx], rng), y: y_all[idx]})
        return step
    contender = Contender(tf, build)
    return contender


def pipeline_contender(tf, x_all, y_all, batch, prefetch, slow_matmuls=0, map_workers=2):
    """The map+shuffle+batch(+prefetch) pipeline; with `slow_matmuls`, the per-image shift is
    replaced by the slow per-batch map (so the producer's cost is that map's)."""
    def build():
        ds = tf.data.Dataset.from_tensor_slices((x_all, y_all)).shuffle(len(x_all))
        if not slow_matmuls:
            ds = ds.map(shift_fn(tf), num_parallel_calls=map_workers)
        ds = ds.batch(batch).repeat()
        if slow_matmuls:
            ds = ds.map(slow_fn(tf, slow_matmuls))
        if prefetch:
            ds = ds.prefetch(2)
        x, y = tf.data.make_one_shot_iterator(ds).get_next()
        return cnn_train_op(tf, x, y)
    return Contender(tf, build)


def waiting_contender(tf, x_all, y_all, batch, prefetch, wait_seconds):
    """Batches from a source that waits `wait_seconds` per batch (like reading files), then
    trains; with `prefetch`, the waiting happens on the producer thread."""
    def batches():
        rng = np.random.default_rng(0)
        while True:
            time.sleep(wait_seconds)
            idx = rng.integers(0, len(x_all), batch)
            yield x_all[idx], y_all[idx]

    def build():
        ds = tf.data.Dataset.from_generator(batches, (tf.float32, tf.int64), ([None, 64], [None]))
        if prefetch:
            ds = ds.prefetch(2)
        x, y = tf.data.make_one_shot_iterator(ds).get_next()
        return cnn_train_op(tf, x, y)
    return Contender(tf, build)


def produce_only(tf, x_all, y_all, batch, slow_matmuls):
    def build():
        ds = tf.data.Dataset.from_tensor_slices((x_all, y_all)).shuffle(len(x_all))
        ds = ds.batch(batch).repeat().map(slow_fn(tf, slow_matmuls))
        return tf.data.make_one_shot_iterator(ds).get_next()
    return Contender(tf, build)


def train_only(tf, x_all, y_all, batch):
    def build():
        x = tf.constant(x_all[:batch])
        y = tf.constant(y_all[:batch])
        return cnn_train_op(tf, x, y)
    return Contender(tf, build)


def compare(contenders, rounds, steps, warmup=3):
    """{name: median seconds per step}, measured in interleaved rounds."""
    for c in contenders.values():
        for _ in range(warmup):
            c.run()
    samples = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, c in contenders.items():
            t0 = time.perf_counter()
            for _ in range(steps):
                c.run()
            samples[name].append((time.perf_counter() - t0) / steps)
    return {name: statistics.median(s) for name, s in samples.items()}


def calibrate_matmuls(tf, target_seconds):
    """How many 192x192 matmuls take about `target_seconds` in this framework."""
    graph = tf.Graph()
    with graph.as_default():
        scale = tf.placeholder(tf.float32, [])
        m = tf.ones([192, 192]) * scale
        for _ in range(8):
            m = tf.matmul(m, m)
        total = tf.reduce_sum(m)
        with tf.Session(graph=graph) as sess:
            sess.run(total, {scale: 1e-3})
            t0 = time.perf_counter()
            for _ in range(10):
                sess.run(total, {scale: 1e-3})
            per = (time.perf_counter() - t0) / 80
    return max(1, int(round(target_seconds / per)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=["graphflow", "tensorflow"], default="graphflow")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads (default 1, as examples/train_digits.py: tiny matrices)")
    args = parser.parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is not None:
        with threadpool_limits(limits=args.blas_threads, user_api="blas"):
            return run(args)
    return run(args)


def run(args):
    if args.framework == "tensorflow":
        import tensorflow.compat.v1 as tf
        tf.disable_v2_behavior()
    else:
        import graphflow as tf
    x_all, y_all, source = load_images()
    print(f"{args.framework}: digits CNN, batch {args.batch}, {source}; medians of {args.rounds} "
          f"rounds x {args.steps} steps (a shared machine: figures are noisy)")

    results = compare({
        "feed_dict (numpy shuffle + shift)": feed_dict_contender(tf, x_all, y_all, args.batch),
        "tf.data map+shuffle+batch+prefetch": pipeline_contender(tf, x_all, y_all, args.batch,
                                                                 prefetch=True),
        "tf.data, no prefetch": pipeline_contender(tf, x_all, y_all, args.batch, prefetch=False),
    }, args.rounds, args.steps)
    base = results["feed_dict (numpy shuffle + shift)"]
    print("\n1. training throughput")
    for name, seconds in results.items():
        print(f"  {name:<38} {args.batch / seconds:9.0f} images/s  ({seconds * 1e3:6.2f} ms/step,"
              f" {base / seconds:4.2f}x feed_dict)")

    train = compare({"train": train_only(tf, x_all, y_all, args.batch)}, args.rounds,
                    args.steps)["train"]
    matmuls = calibrate_matmuls(tf, train)
    timings = compare({
        "produce": produce_only(tf, x_all, y_all, args.batch, matmuls),
        "train": train_only(tf, x_all, y_all, args.batch),
        "slow map, no prefetch": pipeline_contender(tf, x_all, y_all, args.batch, False,
                                                    matmuls),
        "slow map, prefetch(2)": pipeline_contender(tf, x_all, y_all, args.batch, True, matmuls),
    }, args.rounds, args.steps)
    hidden = timings["slow map, no prefetch"] - timings["slow map, prefetch(2)"]
    overlap = hidden / min(timings["produce"], timings["train"])
    print(f"\n2. overlap with a slow map ({matmuls} matmuls of 192x192 per batch)")
    for name, seconds in timings.items():
        print(f"  {name:<38} {seconds * 1e3:7.2f} ms/step")
    print(f"  prefetch hides {hidden * 1e3:.2f} ms/step: overlap {overlap:.2f} "
          f"(1.0 = all of min(produce, train) hidden)")

    waits = compare({
        "waiting source, no prefetch": waiting_contender(tf, x_all, y_all, args.batch, False,
                                                         train),
        "waiting source, prefetch(2)": waiting_contender(tf, x_all, y_all, args.batch, True,
                                                         train),
    }, args.rounds, args.steps)
    hidden = waits["waiting source, no prefetch"] - waits["waiting source, prefetch(2)"]
    print(f"\n3. overlap with a source that waits {train * 1e3:.1f} ms per batch (I/O-like)")
    for name, seconds in waits.items():
        print(f"  {name:<38} {seconds * 1e3:7.2f} ms/step")
    print(f"  prefetch hides {hidden * 1e3:.2f} ms/step: overlap {hidden / train:.2f}")


if __name__ == "__main__":
    main()
