"""Per-run overhead of Session.run on the lecture notes' tiny graph, against plain numpy.

    python benchmarks/bench_session.py [--repeat 2000]

Prints the median time of one `sess.run([c, a], feed_dict)` next to the same arithmetic in plain
numpy in the same process, and the ratio (target: within 3x; TF1's Session.run is ~40x there).
With tensorflow installed, `tf.compat.v1` graph mode is measured in the same run too.
"""

import argparse
import statistics
import time

import numpy as np

import graphflow as gf


def median_us(fn, repeat, inner=20):
    for _ in range(50):
        fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t0) / inner)
    return statistics.median(samples) * 1e6


def seed_graph(tf):
    x = tf.placeholder(tf.float32)
    y = tf.placeholder(tf.float32)
    z = tf.placeholder(tf.float32)
    a = x * y
    b = a + z
    c = tf.reduce_sum(b)
    return x, y, z, a, c


def measure(label, dtype, rng, repeat):
    """Rows (data, runner, median us, ratio to numpy) for one data dtype."""
    xv, yv, zv = (rng.standard_normal((3, 4)).astype(dtype) for _ in range(3))

    def plain_numpy():
        a = xv * yv
        b = a + zv
        return np.sum(b), a

    graph = gf.Graph()
    with graph.as_default():
        x, y, z, a, c = seed_graph(gf)
    sess = gf.Session(graph=graph)
    feeds = {x: xv, y: yv, z: zv}
    call = sess.make_callable([c, a], [x, y, z])
    t_np = median_us(plain_numpy, repeat)
    t_run = median_us(lambda: sess.run([c, a], feed_dict=feeds), repeat)
    t_call = median_us(lambda: call(xv, yv, zv), repeat)
    rows = [(label, "numpy", t_np, 1.0),
            (label, "graphflow Session.run", t_run, t_run / t_np),
            (label, "graphflow make_callable", t_call, t_call / t_np)]
    try:
        import tensorflow as real_tf
    except ImportError:
        return rows
    tf1 = real_tf.compat.v1
    tf1.disable_eager_execution()
    tgraph = tf1.Graph()
    with tgraph.as_default():
        tx, ty, tz, ta, tc = seed_graph(tf1)
    tsess = tf1.Session(graph=tgraph)
    tfeeds = {tx: xv, ty: yv, tz: zv}
    t_tf = median_us(lambda: tsess.run([tc, ta], feed_dict=tfeeds), max(repeat // 10, 50))
    rows.append((label, "tf.compat.v1 Session.run", t_tf, t_tf / t_np))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = measure("float32 data", np.float32, rng, args.repeat)
    rows += measure("float64 data (np.random.randn)", np.float64, rng, args.repeat)
    print(f"{'data':32s} {'runner':28s} {'median us':>10s} {'x numpy':>8s}")
    for label, runner, t, ratio in rows:
        print(f"{label:32s} {runner:28s} {t:10.2f} {ratio:8.2f}")


if __name__ == "__main__":
    main()
