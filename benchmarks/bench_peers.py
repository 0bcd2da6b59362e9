"""graphflow against every peer a user would pick, on the same workloads, in one process:
TensorFlow's `tf.compat.v1` graph mode, PyTorch eager, JAX (`jax.jit` of the whole step) and, for
inference, onnxruntime on graphflow's own ONNX export.

    PYTHONPATH=. python benchmarks/bench_peers.py --rounds 7               # default threads
    PYTHONPATH=. python benchmarks/bench_peers.py --rounds 7 --threads 1
    PYTHONPATH=. python benchmarks/bench_peers.py --rows LSTM inference --busy

Each setting runs in a fresh child process whose environment is set before any framework loads
(BLAS and OpenMP read their thread counts once): `--threads N` sets OMP/OPENBLAS/MKL_NUM_THREADS
and XLA's flags to N and gives every session N threads (graphflow's and TF1's ConfigProto,
`torch.set_num_threads`, onnxruntime's intra/inter-op threads); the default leaves each framework
its own default. `OMP_WAIT_POLICY=passive` is set in both (`--omp-wait-policy` changes it):
PyTorch's OpenMP threads otherwise spin between ops and collapse on a shared machine (a cs231n
step alternating between 0.7 and 350 ms). It applies to every OpenMP user in the process (oneDNN
built on GNU OpenMP included). `--busy` keeps one core busy with another process throughout.

Each peer runs in its own child process beside graphflow (TensorFlow, PyTorch and JAX bundle
native libraries that crash when all three load in one process): every row builds both versions
(peer_workloads.py), warms each up, then times them in interleaved rounds (`bench_vs_tf1.measure`:
graphflow, peer, graphflow, ...). The table prints each peer's median in ms, graphflow's (the
median of its medians over the children) and graphflow / the fastest peer, each ratio taken within
one child's rounds (below 1: graphflow is faster), naming that peer. A framework that is not
installed, or has no form of a row, prints "-" and the reasons are listed under the table. The
build row times whole builds (graph + Adam's minimize), graphflow and TF1 only. The load average
is printed before and after.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

COLUMNS = (("graphflow", "graphflow"), ("tf1", "TF1"), ("torch", "PyTorch"), ("jax", "JAX jit"),
           ("onnxruntime", "onnxrt"))


def _thread_env(threads, wait_policy):
    env = dict(os.environ, OMP_WAIT_POLICY=wait_policy, TF_CPP_MIN_LOG_LEVEL="2")
    if threads:
        n = str(threads)
        env.update(OMP_NUM_THREADS=n, OPENBLAS_NUM_THREADS=n, MKL_NUM_THREADS=n,
                   XLA_FLAGS=f"--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads={n}")
    return env


def _versions():
    import importlib.metadata as metadata
    out = []
    for dist in ("numpy", "tensorflow", "torch", "jax", "onnxruntime", "onednn-cpu-gomp", "numba"):
        try:
            out.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            out.append(f"{dist} -")
    return ", ".join(out)


def _load():
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _time_builds(contenders, rounds):
    """{name: median seconds of one whole build}, interleaved, one build per round each."""
    samples = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(s) for name, s in samples.items()}


MARK = "ROW "  # a child's result line: MARK + json


def run_rows(args):
    """In a child: graphflow and one peer (args.frameworks), interleaved, each row's medians
    printed as one MARK line for the parent."""
    from bench_vs_tf1 import measure
    from peer_frameworks import Unavailable
    from peer_workloads import workloads

    for row in workloads(chain_links=args.chain_links, build_layers=args.build_layers):
        if args.rows and not any(r.lower() in row.title.lower() for r in args.rows):
            continue
        contenders, reasons = {}, {}
        for key in args.frameworks:
            builder = row.builders.get(key)
            if builder is None:
                continue
            try:
                contenders[key] = builder(args.threads)
            except Unavailable as why:
                reasons[key] = str(why)
        if len(contenders) == 2:
            if row.kind == "build":
                t = _time_builds(contenders, max(1, min(args.rounds, args.build_rounds)))
            else:
                t = measure(contenders, args.rounds)
        else:
            t = {}
        print(MARK + json.dumps({"row": row.title, "times": t, "reasons": reasons}), flush=True)


def _child(args, argv, peer):
    """{row title: {"times": ..., "reasons": ...}} of graphflow against `peer` in a fresh process."""
    command = [sys.executable, os.path.abspath(__file__), "--child", "--frameworks", "graphflow",
               peer] + [a for a in argv if a != "--busy"]
    done = subprocess.run(command, env=_thread_env(args.threads, args.omp_wait_policy),
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    rows = {}
    for line in done.stdout.splitlines():
        if line.startswith(MARK):
            entry = json.loads(line[len(MARK):])
            rows[entry["row"]] = entry
    if done.returncode != 0:
        rows["__failed__"] = f"exited with {done.returncode}"
    return rows


def compare(args, argv):
    """The table: each peer timed against graphflow in its own process (TensorFlow, PyTorch and
    JAX each bundle native libraries that do not load safely side by side), so every ratio is
    graphflow's and the peer's medians from the same interleaved rounds; graphflow's column is the
    median of its medians over those processes."""
    print(f"== threads: {args.threads or 'default'}; OMP_WAIT_POLICY={args.omp_wait_policy}; "
          f"{_load()}", flush=True)
    print(f"   {_versions()}", flush=True)
    peers = [key for key, _ in COLUMNS[1:] if not args.frameworks or key in args.frameworks]
    results = {peer: _child(args, argv, peer) for peer in peers}
    from peer_workloads import workloads
    titles = [w.title for w in workloads(chain_links=args.chain_links, build_layers=args.build_layers)
              if not args.rows or any(r.lower() in w.title.lower() for r in args.rows)]
    labels = dict(COLUMNS)
    print(f"{'workload':44s}" + "".join(f" {labels[k]:>10s}" for k in ["graphflow"] + peers)
          + f" {'gf/best':>8s}  best peer", flush=True)
    reasons = {}
    for title in titles:
        gf_times, cells, ratios = [], [], {}
        for peer in peers:
            entry = results[peer].get(title, {})
            reasons.update({labels[k]: why for k, why in entry.get("reasons", {}).items()})
            t = entry.get("times", {})
            if peer in t and "graphflow" in t:
                gf_times.append(t["graphflow"])
                ratios[peer] = t["graphflow"] / t[peer]
                cells.append(f" {t[peer] * 1e3:8.3f}ms")
            else:
                cells.append(f" {'-':>10s}")
        if not gf_times:
            continue
        gf = statistics.median(gf_times)
        best = max(ratios, key=ratios.get) if ratios else None
        ratio = f" {ratios[best]:8.2f}  {labels[best]}" if best else ""
        print(f"{title:44s} {gf * 1e3:8.3f}ms{''.join(cells)}{ratio}", flush=True)
    for peer in peers:
        if "__failed__" in results[peer]:
            reasons.setdefault(labels[peer], results[peer]["__failed__"])
    for label, why in reasons.items():
        print(f"   {label}: {why}")
    print(f"   after: {_load()}", flush=True)


def main(argv=None):
    argv = list(argv if argv is not None else sys.argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds per row")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads for every framework (default: each framework's own default)")
    parser.add_argument("--rows", nargs="*", help="only rows whose title contains one of these")
    parser.add_argument("--frameworks", nargs="*", choices=[k for k, _ in COLUMNS],
                        help="only these peers (default: every installed one)")
    parser.add_argument("--busy", action="store_true", help="one other process keeps a core busy")
    parser.add_argument("--omp-wait-policy", default="passive")
    parser.add_argument("--chain-links", type=int, default=2500,
                        help="the long chain's tanh(x*a+b) links (3 ops each)")
    parser.add_argument("--build-layers", type=int, default=10000)
    parser.add_argument("--build-rounds", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        run_rows(args)
        return
    if args.frameworks:  # the parent passes its own --frameworks to each child itself
        i = argv.index("--frameworks")
        j = i + 1
        while j < len(argv) and not argv[j].startswith("--"):
            j += 1
        argv = argv[:i] + argv[j:]
    burner = None
    if args.busy:
        burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        compare(args, argv)
    finally:
        if burner is not None:
            burner.kill()


if __name__ == "__main__":
    main()
