"""Saving and loading a large graph: `graphflow.save` / `graphflow.load` on a ~100k-op model.

    python benchmarks/bench_serialization.py [--ops 100000] [--repeat 3] [--verify]

The graph is a deep stack of small dense blocks (matmul by a stored 16x16 constant, bias add,
relu, scale) with a trainable variable layer every 50 blocks, so it has tens of thousands of
tensors in the .npz, inline scalar constants and variable values. Prints the file size and the
median wall and CPU time of save, of load (split into reading/validating the file and rebuilding the graph
through every op's shape inference), and with --verify checks that the loaded graph computes
bit-identical outputs.
"""

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

import graphflow as gf
from graphflow.fileformat import file_io, serialization


def build(target_ops, seed=0):
    """A graph of about `target_ops` ops; returns (graph, x, y, session with variables set)."""
    rng = np.random.default_rng(seed)
    graph = gf.Graph()
    with graph.as_default():
        x = gf.placeholder(gf.float32, [None, 16], name="x")
        h = x
        block = 0
        while graph.num_ops() < target_ops - 10:
            with gf.name_scope(f"block{block}"):
                w = rng.normal(scale=0.25, size=(16, 16)).astype(np.float32)
                if block % 50 == 0:
                    w = gf.Variable(w, name="w")
                h = gf.nn.relu(gf.matmul(h, w) + rng.normal(size=16).astype(np.float32))
                h = h * 0.9
            block += 1
        y = gf.reduce_sum(h, axis=1, name="y")
        sess = gf.Session(graph=graph)
        sess.run(gf.global_variables_initializer())
    return graph, x, y, sess


class Timing:
    """Median wall-clock and CPU (process) seconds over repeats; CPU time is what the work costs
    when other processes compete for the cores."""

    def __init__(self, wall, cpu):
        self.wall, self.cpu = wall, cpu

    def __str__(self):
        return f"{self.wall:.2f} s wall, {self.cpu:.2f} s CPU"


def median_seconds(fn, repeat):
    walls, cpus = [], []
    result = None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return Timing(statistics.median(walls), statistics.median(cpus)), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--verify", action="store_true", help="also run both graphs and compare")
    args = parser.parse_args()

    t0 = time.perf_counter()
    graph, x, y, sess = build(args.ops)
    t_build = time.perf_counter() - t0
    variables = graph.get_collection(gf.GraphKeys.GLOBAL_VARIABLES)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.gfz")
        t_save, _ = median_seconds(lambda: gf.save(path, {"x": x}, {"y": y}, session=sess),
                                   args.repeat)
        size = os.path.getsize(path)
        t_read, (doc, tensors) = median_seconds(lambda: serialization.read_file(path),
                                                args.repeat)

        def rebuild():
            return serialization._decode(doc, tensors, gf.Graph(), file_io.DEFAULT_LIMITS)

        t_rebuild, _ = median_seconds(rebuild, args.repeat)
        t_load, model = median_seconds(lambda: gf.load(path), args.repeat)
        print(f"graph: {graph.num_ops()} ops, {len(variables)} variables, {len(tensors)} arrays "
              f"in tensors.npz (built in {t_build:.2f} s)")
        print(f"file:  {size / 2**20:.1f} MiB ({size / graph.num_ops():.0f} bytes per op)")
        print(f"save:  {t_save}")
        print(f"load:  {t_load}")
        print(f"         read + validate the file: {t_read}")
        print(f"         rebuild the graph through every OpDef: {t_rebuild}")
        assert model.graph.num_ops() == graph.num_ops()
        if args.verify:
            batch = np.random.default_rng(1).normal(size=(4, 16)).astype(np.float32)
            t0 = time.perf_counter()
            want = sess.run(y, {x: batch})
            got = model.run({"x": batch})["y"]
            assert got.tobytes() == want.tobytes(), "loaded graph computes different values"
            print(f"verify: bit-identical outputs ({time.perf_counter() - t0:.2f} s for both runs)")


if __name__ == "__main__":
    main()
