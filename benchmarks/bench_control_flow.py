"""Per-iteration overhead of `tf.while_loop`: graphflow against TF1 graph mode in the same run.

    python benchmarks/bench_control_flow.py [--iterations 10000] [--repeat 7]
    PYTHONPATH=. /path/to/tf-venv/bin/python benchmarks/bench_control_flow.py   # with TF1

Two loops of trivial bodies, their trip count fed at run time (so nothing folds it away):
  counter:  i -> i + 1                      (one int32 loop variable)
  scalar:   (i, x) -> (i + 1, x * 0.5 + 1)  (an int32 counter and a float32 scalar)
Each session.run of the loop is timed for N iterations and for 0 iterations; the per-iteration
overhead is (t(N) - t(0)) / N, the median over `--repeat` runs after a warmup. With tensorflow
installed, the same loops in `tf.compat.v1` graph mode are measured in the same process; a plain
Python loop doing the same numpy work is shown for scale.
"""

import argparse
import statistics
import time

import numpy as np
from common import tensorflow_v1

import graphflow as gf


def build_loops(tf):
    graph = tf.Graph()
    with graph.as_default():
        n = tf.placeholder(tf.int32, [], name="n")
        counter = tf.while_loop(lambda i: i < n, lambda i: i + 1, [tf.constant(0)])
        scalar = tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * 0.5 + 1.0),
                               [tf.constant(0), tf.constant(0.0)])[1]
    return graph, n, {"counter": counter, "scalar": scalar}


def python_loops():
    def counter(n):
        i = np.int32(0)
        while i < n:
            i = i + np.int32(1)
        return i

    def scalar(n):
        i, x = np.int32(0), np.float32(0.0)
        while i < n:
            i, x = i + np.int32(1), x * np.float32(0.5) + np.float32(1.0)
        return x
    return {"counter": counter, "scalar": scalar}


def per_iteration_us(run, iterations, repeat):
    """Median over runs of (t(iterations) - t(0)) / iterations, in microseconds."""
    for _ in range(2):
        run(iterations)
        run(0)
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run(iterations)
        t1 = time.perf_counter()
        run(0)
        t2 = time.perf_counter()
        samples.append(((t1 - t0) - (t2 - t1)) / iterations * 1e6)
    return statistics.median(samples)



def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    frameworks = {"graphflow": gf}
    tf1 = tensorflow_v1()
    if tf1 is not None:
        frameworks["tf.compat.v1"] = tf1
    results = {}
    for fw_name, tf in frameworks.items():
        graph, n, loops = build_loops(tf)
        sess = tf.Session(graph=graph)
        for loop_name, fetch in loops.items():
            expected = sess.run(fetch, {n: 3})
            assert np.isclose(expected, {"counter": 3, "scalar": 1.75}[loop_name]), expected
            results[(loop_name, fw_name)] = per_iteration_us(
                lambda k, fetch=fetch, sess=sess, n=n: sess.run(fetch, {n: k}), args.iterations,
                args.repeat)
        sess.close()
    for loop_name, fn in python_loops().items():
        results[(loop_name, "python + numpy scalars")] = per_iteration_us(fn, args.iterations,
                                                                           args.repeat)
    print(f"while_loop of {args.iterations} trivial iterations: overhead per iteration "
          f"(median of {args.repeat} runs)")
    for loop_name in ("counter", "scalar"):
        print(f"\n{loop_name}")
        base = results.get((loop_name, "tf.compat.v1"))
        for (name, fw), us in results.items():
            if name != loop_name:
                continue
            ratio = f"   {us / base:5.2f}x TF1" if base else ""
            print(f"  {fw:<24} {us:8.2f} us{ratio}")
    if tf1 is None:
        print("\n(tensorflow not installed: tf.compat.v1 skipped)")
    return results


if __name__ == "__main__":
    main()
