"""Restoring a ~100 MB V2 checkpoint: graphflow's `Saver.restore` against TensorFlow's.

    python benchmarks/bench_tf_checkpoint.py [--variables 25] [--size 1000000] [--runs 5]
        [--tf-python /path/to/python-with-tensorflow]

graphflow saves `--variables` float32 variables of `--size` elements each (25 x 1M = 100 MB) as a
V2 checkpoint. Each run restores it in a fresh process, graphflow's and TensorFlow's
(`tf.compat.v1.train.Saver().restore` of the same file, a graph of the same variables) in turn,
and reports the restore's wall time and its memory: the process's peak resident size during the
restore beyond its resident size just before it (VmHWM, reset before the restore: `ru_maxrss`
would include what a child inherits from its parent at fork), and for graphflow the traced
Python heap peak (tracemalloc, in a separate run: tracing slows allocation). Medians over
`--runs`; the machine's load average is printed with them, since a busy machine moves them.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

_GRAPHFLOW = r"""
import json, os, sys, time, tracemalloc
import graphflow as tf
def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # VmHWM := VmRSS
    except OSError:
        pass

prefix, n, size, trace = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
vs = [tf.Variable(tf.zeros([size]), name=f"layer{i}/kernel") for i in range(n)]
saver = tf.train.Saver()
with tf.Session() as sess:
    reset_peak()
    rss = status("VmRSS")
    if trace:
        tracemalloc.start()
    start = time.perf_counter()
    saver.restore(sess, prefix)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    maxrss = status("VmHWM")
    check = float(sess.run(vs[-1])[-1])
print(json.dumps({"seconds": seconds, "rss": maxrss - rss, "traced": peak, "check": check}))
"""

_TENSORFLOW = r"""
import json, os, sys, time
import tensorflow.compat.v1 as tf
def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # VmHWM := VmRSS
    except OSError:
        pass

tf.disable_v2_behavior()
prefix, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
vs = [tf.Variable(tf.zeros([size]), name=f"layer{i}/kernel") for i in range(n)]
saver = tf.train.Saver()
with tf.Session() as sess:
    reset_peak()
    rss = status("VmRSS")
    start = time.perf_counter()
    saver.restore(sess, prefix)
    seconds = time.perf_counter() - start
    maxrss = status("VmHWM")
    check = float(sess.run(vs[-1])[-1])
print(json.dumps({"seconds": seconds, "rss": maxrss - rss, "traced": 0, "check": check}))
"""


def _run(python, script, args, env):
    done = subprocess.run([python, "-c", script, *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variables", type=int, default=25)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tf-python", default=os.environ.get("GRAPHFLOW_TF_PYTHON", ""))
    args = parser.parse_args(argv)
    import numpy as np

    import graphflow as tf
    root = os.path.dirname(os.path.dirname(os.path.abspath(tf.__file__)))
    gf_env = dict(os.environ, PYTHONPATH=root)
    tf_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    tf_env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    with tempfile.TemporaryDirectory() as tmp:
        rng = np.random.default_rng(0)
        values = [rng.standard_normal(args.size, dtype=np.float32) for _ in range(args.variables)]
        with tf.Graph().as_default():
            vs = [tf.Variable(v, name=f"layer{i}/kernel") for i, v in enumerate(values)]
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                prefix = tf.train.Saver(vs).save(sess, os.path.join(tmp, "model"),
                                                 write_meta_graph=False)
        file_bytes = sum(os.path.getsize(os.path.join(tmp, f)) for f in os.listdir(tmp))
        expected = float(values[-1][-1])
        del values, vs
        results = {"graphflow": [], "tensorflow": []}
        traced = []
        for _ in range(args.runs):
            results["graphflow"].append(
                _run(sys.executable, _GRAPHFLOW, [prefix, args.variables, args.size, 0], gf_env))
            if args.tf_python:
                results["tensorflow"].append(
                    _run(args.tf_python, _TENSORFLOW, [prefix, args.variables, args.size],
                         tf_env))
            traced.append(_run(sys.executable, _GRAPHFLOW,
                               [prefix, args.variables, args.size, 1], gf_env)["traced"])
        load = os.getloadavg()
    mib = 2 ** 20
    print(f"checkpoint: {args.variables} float32 variables x {args.size:,} = "
          f"{file_bytes / mib:.1f} MiB on disk; {args.runs} runs each, interleaved, medians; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    for who, runs in results.items():
        if not runs:
            print(f"{who:10s}: skipped (pass --tf-python or set GRAPHFLOW_TF_PYTHON)")
            continue
        assert all(r["check"] == expected for r in runs), runs
        seconds = statistics.median(r["seconds"] for r in runs)
        rss = statistics.median(r["rss"] for r in runs)
        line = (f"{who:10s}: restore {seconds * 1000:7.1f} ms "
                f"({file_bytes / mib / seconds:6.0f} MiB/s), peak RSS growth {rss / mib:6.1f} "
                f"MiB ({rss / file_bytes:.2f}x the files)")
        if who == "graphflow":
            line += f", traced heap peak {statistics.median(traced) / mib:.1f} MiB"
        print(line)


if __name__ == "__main__":
    main()
