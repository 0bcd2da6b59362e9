"""Memory a graph file makes `graphflow.load` use, against the file's size (docs/security.md).

    python benchmarks/bench_load_memory.py [--ops 100000]

Saves a graph of `--ops` NoOps (each with its source location, as user code records them), then
loads it in a fresh process under tracemalloc and prints the file's size, the load's traced peak
and what the loaded graph keeps, each also as a multiple of the file's size.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

_LOAD = r"""
import gc, json, sys, tracemalloc
import graphflow as tf
gc.collect()
tracemalloc.start()
model = tf.load(sys.argv[1])
kept, peak = tracemalloc.get_traced_memory()
print(json.dumps({"ops": model.graph.num_ops(), "peak": peak, "kept": kept}))
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=100_000)
    args = parser.parse_args(argv)
    import graphflow as tf
    root = os.path.dirname(os.path.dirname(os.path.abspath(tf.__file__)))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "noops.gfz")
        graph = tf.Graph()
        with graph.as_default():
            for i in range(args.ops):
                tf.no_op(name=f"n{i}")
            tf.save(path, graph=graph)
        size = os.path.getsize(path)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
        out = subprocess.run([sys.executable, "-c", _LOAD, path], env=env, capture_output=True,
                             text=True, check=True)
        result = json.loads(out.stdout.splitlines()[-1])
    mb = 1 << 20
    print(f"{result['ops']} NoOps: file {size / mb:.1f} MiB; load peak {result['peak'] / mb:.1f} "
          f"MiB ({result['peak'] / size:.1f}x the file); kept {result['kept'] / mb:.1f} MiB "
          f"({result['kept'] / size:.1f}x)")


if __name__ == "__main__":
    main()
