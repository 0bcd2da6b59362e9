"""What the threading chooser (`kernels/cpu/dnnl_matmul._Chooser`: OpenMP teams or the intra-op
pool's blocks, for every oneDNN product and convolution of the process) picks for a training step
of `bench_vs_tf1.py`, in fresh processes, and the step time either way.

    python benchmarks/bench_chooser.py mlp --processes 6
    python benchmarks/bench_chooser.py cifar --processes 3
    python benchmarks/bench_chooser.py mlp --disturb   # another process busy 5 ms every 0.3 s

Each process builds the step, runs it three times and then for `--seconds` (the chooser times both
ways and chooses on the way), then times 25 rounds of `--inner` steps: the way it kept, and in the
same session the step with the way fixed, team and blocks alternated round by round. One line per
process.
`--disturb` runs a process beside them that keeps a core busy for 5 ms every 0.3 s (short
disturbances, as from other programs on a desktop), the condition in which one slow team call
used to decide the chooser's way.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_vs_tf1  # noqa: E402

ROWS = {"mlp": bench_vs_tf1.mlp_adam, "cifar": bench_vs_tf1.cifar_cnn,
        "small": bench_vs_tf1.small_cnn}


def one_process(workload, seconds, inner):
    import graphflow as tf
    from graphflow.kernels.cpu.onednn import dnnl_matmul
    step, _, _ = bench_vs_tf1.build(tf, ROWS[workload])
    for _ in range(3):  # the first steps compile (plans, numba loops, oneDNN primitives)
        step()
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
    chooser = dnnl_matmul.CHOOSER
    kept = chooser.kept

    def rounds(ways):
        samples = {way: [] for way in ways}
        for _ in range(25):
            for way in ways:
                if way is not None:
                    chooser.pick = lambda way=way: way
                t0 = time.perf_counter()
                for _ in range(inner):
                    step()
                samples[way].append((time.perf_counter() - t0) / inner * 1e3)
        return {way: statistics.median(v) for way, v in samples.items()}
    chosen = rounds([None])[None]  # the chooser's own way (it may still probe the other)
    chooser.record = lambda *args: None  # the fixed ways below must not move its choice
    fixed = rounds([dnnl_matmul.TEAM, dnnl_matmul.BLOCKS])
    print(f"kept {kept or '-':6s} step {chosen:7.3f} ms   team {fixed['team']:7.3f}   "
          f"blocks {fixed['blocks']:7.3f}   (load {os.getloadavg()[0]:.2f})", flush=True)


DISTURB = """
import time
while True:
    end = time.perf_counter() + 0.005
    while time.perf_counter() < end:
        pass
    time.sleep(0.3)
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("workload", choices=list(ROWS))
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--inner", type=int, default=0, help="steps per round (0: ~30 ms of them)")
    parser.add_argument("--disturb", action="store_true",
                        help="another process keeps a core busy for 5 ms every 0.3 s")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    inner = args.inner or {"mlp": 6, "small": 12, "cifar": 1}[args.workload]
    if args.child:
        np.random.seed(0)
        one_process(args.workload, args.seconds, inner)
        return
    print(f"{args.workload}: {args.processes} fresh processes, {args.seconds:.0f} s each before "
          f"timing, {inner} steps a round{', disturbed' if args.disturb else ''}")
    disturber = subprocess.Popen([sys.executable, "-c", DISTURB]) if args.disturb else None
    try:
        for _ in range(args.processes):
            subprocess.run([sys.executable, __file__, args.workload, "--child", "--seconds",
                            str(args.seconds), "--inner", str(inner)], check=True)
    finally:
        if disturber is not None:
            disturber.kill()
            disturber.wait()


if __name__ == "__main__":
    main()
