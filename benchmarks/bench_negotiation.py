"""What agreeing on every collective (mpi_runtime's negotiation) costs the distributed MLP step of
bench_distributed.py: 2 processes, overlapped buckets (1 MiB) and one bucket without overlap, each
with the negotiation on and off (GRAPHFLOW_MPI_NEGOTIATE, switched in the same processes), the
four variants interleaved step by step; medians and the load average before and after.

    python benchmarks/bench_negotiation.py [--repeat 60] [--rounds 3]
"""

import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_distributed  # noqa: E402


def _switched(fn, negotiate):
    def run():
        os.environ["GRAPHFLOW_MPI_NEGOTIATE"] = "1" if negotiate else "0"
        fn()
    return run


def _rotated(fns, repeat, barrier, waited, deciles):
    """As bench_distributed._interleaved, but the order of the variants turns by one each
    repetition: on a loaded machine the step in a given position of the cycle was measured 3x
    slower than the others, whichever variant ran there."""
    from graphflow.kernels.cpu.reference import mpi_runtime

    names = list(fns)
    for fn in fns.values():
        fn()
    times = {name: [] for name in names}
    waits = {name: [] for name in names}
    for k in range(repeat * len(names)):
        if k % len(names) == 0:
            names = names[1:] + names[:1]
        name = names[k % len(names)]
        barrier()
        w0 = mpi_runtime.wait_stats["seconds"]
        t0 = time.perf_counter()
        fns[name]()
        times[name].append(time.perf_counter() - t0)
        waits[name].append(mpi_runtime.wait_stats["seconds"] - w0)
    waited.update((name, statistics.median(w)) for name, w in waits.items())
    deciles.update((name, statistics.quantiles(t, n=10)) for name, t in times.items())
    return {name: statistics.median(t) for name, t in times.items()}


def child(repeat):
    import graphflow as tf
    from graphflow import horovod as hvd
    from graphflow.kernels.cpu.reference import mpi_runtime

    hvd.init()
    comm = mpi_runtime.comm()
    on, _ = bench_distributed._mlp(tf, hvd, 2, True)
    off, _ = bench_distributed._mlp(tf, hvd, 2, False)
    steps = {}
    order = os.environ.get("BENCH_ORDER", "on_neg,on_plain,off_neg,off_plain").split(",")
    for key in order:
        fn = on if key.startswith("on") else off
        negotiate = key.endswith("neg")
        label = "overlap" if fn is on else "no_overlap"
        steps[f"{label} negotiate={'on' if negotiate else 'off'}"] = _switched(fn, negotiate)
    load = os.getloadavg()[0]
    waited, deciles = {}, {}
    med = _rotated(steps, repeat, comm.Barrier, waited, deciles)
    if hvd.rank() == 0:
        print("RESULT " + json.dumps({"median": med, "waited": waited, "deciles": deciles,
                                      "load": [load, os.getloadavg()[0]]}), flush=True)


def main():
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 60
    if "--child" in sys.argv:
        child(repeat)
        return
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(name, bench_distributed._threads(2))
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    results = []
    for _ in range(rounds):
        out = subprocess.run(["mpirun", "-np", "2", sys.executable, __file__, "--child",
                              "--repeat", str(repeat)], capture_output=True, text=True, env=env,
                             check=True).stdout
        line = next(line for line in out.splitlines() if line.startswith("RESULT "))
        results.append(json.loads(line[len("RESULT "):]))
        r = results[-1]
        print(f"round {len(results)}: load average {r['load'][0]:.2f} -> {r['load'][1]:.2f}")
        for name, seconds in r["median"].items():
            deciles = r["deciles"][name]
            print(f"   {name:28s} {seconds * 1e3:7.2f} ms (10% {deciles[0] * 1e3:5.2f}, 25% "
                  f"{statistics.quantiles(deciles, n=4)[0] * 1e3:5.2f}, 90% {deciles[-1] * 1e3:6.2f}; "
                  f"waiting {r['waited'][name] * 1e3:5.2f})")
        time.sleep(1)
    print("median over rounds:")
    for name in results[0]["median"]:
        print(f"   {name:28s} {statistics.median(r['median'][name] for r in results) * 1e3:7.2f} ms")


if __name__ == "__main__":
    main()
