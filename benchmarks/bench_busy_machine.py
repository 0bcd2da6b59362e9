"""A CNN training step beside 0, 1 and 3 CPU-burning processes (Python busy loops), the settings
interleaved round by round; medians of the rounds' medians. graphflow uses the session's
`intra_op_parallelism_threads` as given, whatever the load (docs/performance.md, "A busy machine").

    PYTHONPATH=. python benchmarks/bench_busy_machine.py [--model cifar_cnn] [--rounds 5]
        [--steps 10] [--busy 0 1 3] [--threads 0]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import bench_vs_tf1

import graphflow as tf

BURN = "import time\nend = time.time() + 600\nwhile time.time() < end:\n    pass"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="cifar_cnn", help="a model function of bench_vs_tf1")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10, help="timed steps per setting and round")
    parser.add_argument("--busy", type=int, nargs="+", default=[0, 1, 3])
    parser.add_argument("--threads", type=int, default=0, help="intra-op threads (0: default)")
    args = parser.parse_args(argv)
    if args.threads:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    step, _, _ = bench_vs_tf1.build(tf, getattr(bench_vs_tf1, args.model))
    for _ in range(5):
        step()
    threads = args.threads or tf.config.default_intra_op_threads()
    print(f"{args.model}, intra-op threads {threads}, {len(os.sched_getaffinity(0))} cores, "
          f"load average {os.getloadavg()}")
    per = {n: [] for n in args.busy}
    for r in range(args.rounds):
        order = args.busy if r % 2 == 0 else args.busy[::-1]
        for n in order:
            burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(n)]
            try:
                time.sleep(0.3 if n else 0)  # the burners running
                step()
                times = []
                for _ in range(args.steps):
                    t0 = time.perf_counter()
                    step()
                    times.append(time.perf_counter() - t0)
            finally:
                for p in burners:
                    p.kill()
                    p.wait()
            per[n].append(statistics.median(times))
        print(f"round {r}: " + ", ".join(f"{n} busy {per[n][-1] * 1e3:.2f} ms" for n in args.busy)
              + f"  (load {os.getloadavg()[0]:.2f})", flush=True)
    print("medians: " + ", ".join(f"{n} busy {statistics.median(per[n]) * 1e3:.2f} ms"
                                  for n in args.busy))


if __name__ == "__main__":
    main()
