"""The convolutions with few input channels or tiny images of the two CNN benchmarks, each way
graphflow can run them, timed in one process (interleaved rounds, medians, ms), called back to back
and after the machine idled for a millisecond, with the intra-op pool's wake-up latencies.

    python benchmarks/bench_conv_few.py                 # every layer, 9 rounds
    python benchmarks/bench_conv_few.py --rounds 15 --layers cifar1
    python benchmarks/bench_conv_few.py --layers digits1,cifar1,small1 --batches 1,2,8,64

Layers (float32, NHWC, 3x3 SAME, + bias + Relu forward): `cifar1` bench_vs_tf1's CIFAR-shaped CNN's
first layer (64x32x32x3 -> 32) and its filter + bias gradient; `digits1` and `digits3`
bench_onnx's digits CNN at batch 256 (8x8x1 -> 32, 4x4x32 -> 64); `small1` bench_vs_tf1's small
CNN's first layer (64x28x28x1 -> 16, 5x5).

Forward ways: oneDNN's primitive run by an OpenMP team of two (`team`), one block of images per
thread on the intra-op pool (`blocks`), one thread (`one`), and for few filter taps the compiled loop
of `jit_conv` on one thread (`loop1`, graphflow's route) and, for comparison only, on two
(`loop2`, image blocks on the intra-op pool). Filter gradient: graphflow's blocks of
images on two threads and on one (`blocks2`, `blocks1`), and, for comparison only, the whole batch as
one primitive on one thread (`whole1`) or an OpenMP team of two (`team2`: not a route graphflow
takes, its sums depend on the thread count). After an idle millisecond a thread that went to sleep
(a pool worker, an OpenMP team member, the calling thread waiting for them) has to be woken first:
the `pool` rows time that for the intra-op pool alone (work() on the calling thread starting after
run_shared was called, the worker's start, the caller's return after the worker finished, us).
Needs the optional oneDNN library and numba; a way that does not apply is left out.
"""

import argparse
import statistics
import threading
import time

import numpy as np
from threadpoolctl import threadpool_limits

from graphflow.kernels.cpu.numba import jit_conv
from graphflow.kernels.cpu.onednn import dnnl, dnnl_conv, dnnl_conv_grads, dnnl_matmul
from graphflow.kernels.cpu.onednn.dnnl_matmul import BLOCKS, TEAM
from graphflow.kernels.cpu.reference.conv_geometry import Geometry
from graphflow.kernels.cpu.threads import intra_op

LAYERS = {"cifar1": (64, 32, 32, 3, 32), "digits1": (256, 8, 8, 1, 32),
          "digits3": (256, 4, 4, 32, 64), "small1": (64, 28, 28, 1, 16, 5)}


def _operands(n, h, w, c, oc, k=3):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, h, w, c), dtype=np.float32)
    f = rng.standard_normal((k, k, c, oc), dtype=np.float32)
    b = rng.standard_normal(oc, dtype=np.float32)
    g = rng.standard_normal((n, h, w, oc), dtype=np.float32)
    return x, f, b, g, Geometry(h, w, k, k, 1, 1, 1, 1, "SAME")


def _forward(mode, threads, x, f, b, geo):
    def run():
        saved = dnnl_matmul.fixed_mode
        dnnl_matmul.fixed_mode = lambda: mode
        try:
            dnnl_conv.conv2d(x, f, geo, threads, b, dnnl.RELU_POST_OPS)
        finally:
            dnnl_matmul.fixed_mode = saved
    return run


def _loop(threads, x, f, b, geo):
    """jit_conv's loop on `threads` threads: two blocks of images per thread on the intra-op pool
    (for comparison: graphflow runs it on the calling thread)."""
    prepared = jit_conv.Prepared(x, f, geo, True)
    if threads == 1:
        return lambda: prepared(x, f, b)
    flat = jit_conv._padded(x, geo).reshape(-1).copy()
    fm, out = f.reshape(-1, f.shape[3]), np.empty(prepared.out_shape, np.float32)
    bounds = [int(v) for v in np.linspace(0, x.shape[0], min(x.shape[0], 2 * threads) + 1)]

    def run():
        pieces = intra_op.shared_iter(range(len(bounds) - 1))

        def work():
            for k in pieces:
                prepared.loop(flat, fm, b, out.reshape(-1), bounds[k], bounds[k + 1])
        intra_op.POOL.run_shared(work, threads)
    return run


def _whole_batch(omp, x, g, geo, f_shape):
    lib = dnnl.library()
    plan = dnnl_conv._plan("backward_weights", geo, x.shape[0], x.shape[3], f_shape[3], omp=omp)

    def run():
        out = np.empty(plan.weights_bytes // 4, np.float32)
        df = np.empty(f_shape, np.float32)
        with lib.openmp_threads(omp):
            plan.prim.execute({dnnl.ARG_SRC: x, dnnl.ARG_DIFF_DST: g, dnnl.ARG_DIFF_WEIGHTS: out})
        with lib.openmp_threads(1):
            if plan.reorder is not None:
                plan.reorder.execute({dnnl.ARG_FROM: out, dnnl.ARG_TO: df})
        return df
    return run


def ways(layer, batch=None):
    n, *rest = LAYERS[layer]
    x, f, b, g, geo = _operands(batch or n, *rest)
    forward = {"team": _forward(TEAM, 2, x, f, b, geo), "blocks": _forward(BLOCKS, 2, x, f, b, geo),
               "one": _forward(None, 1, x, f, b, geo)}
    if 0 < f.shape[0] * f.shape[1] * f.shape[2] <= jit_conv.MAX_TAPS and jit_conv.available():
        forward["loop1"] = _loop(1, x, f, b, geo)
        forward["loop2"] = _loop(2, x, f, b, geo)
    rows = {"forward": forward}
    if layer == "cifar1":
        f_shape = f.shape
        rows["filter+bias gradient"] = {
            "blocks2": lambda: dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f_shape, 2, bias=True),
            "blocks1": lambda: dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f_shape, 1, bias=True)}
        rows["filter gradient"] = {
            "blocks2": lambda: dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f_shape, 2),
            "blocks1": lambda: dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f_shape, 1),
            "whole1": _whole_batch(1, x, g, geo, f_shape),
            "team2": _whole_batch(2, x, g, geo, f_shape)}
    return rows


def timed(fns, rounds, idle):
    """{name: median ms} of single calls, `fns` interleaved round by round (each called twice
    untimed first), after `idle` seconds of sleep or back to back."""
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            fn()
            fn()
            for _ in range(5):
                if idle:
                    time.sleep(idle)
                t0 = time.perf_counter()
                fn()
                times[name].append((time.perf_counter() - t0) * 1e3)
    return {k: statistics.median(v) for k, v in times.items()}


def pool_latencies(calls=200, idle=0.0):
    """Medians (us) over `calls` run_shared calls on two threads of a job of two pieces of about
    200 us (one BLAS product each, the GIL released): (the calling thread's work() starts, the
    worker starts, the caller returns after the worker's piece ended)."""
    size = 64
    a = np.ones((size, size), np.float32)
    while _seconds(lambda a=a: a @ a, 5) < 200e-6:
        size = int(size * 1.25)
        a = np.ones((size, size), np.float32)
    main = threading.get_ident()
    starts, worker_starts, joins = [], [], []
    for _ in range(calls):
        if idle:
            time.sleep(idle)
        seen, ends = {}, {}
        pieces = intra_op.shared_iter(range(2))
        t0 = time.perf_counter()

        def work(seen=seen, ends=ends, pieces=pieces, t0=t0):
            me = threading.get_ident()
            seen[me] = time.perf_counter() - t0
            for _ in pieces:
                np.matmul(a, a)
                ends[me] = time.perf_counter()
        intra_op.POOL.run_shared(work, 2)
        done = time.perf_counter()
        starts.append(seen[main])
        workers = [k for k in ends if k != main]
        if workers:
            worker_starts.append(seen[workers[0]])
            joins.append(done - ends[workers[0]])
    med = [statistics.median(v) * 1e6 if v else float("nan") for v in (starts, worker_starts, joins)]
    return med + [len(joins)]


def _seconds(fn, reps=50):
    fn()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--layers", default=",".join(LAYERS))
    parser.add_argument("--batches", default="",
                        help="comma-separated batch sizes to time the layers at instead of their "
                             "own (e.g. 1,2,8: where jit_conv's loop and oneDNN cross)")
    args = parser.parse_args(argv)
    if dnnl.library() is None:
        parser.exit(0, "oneDNN is not installed: nothing to compare\n")
    threadpool_limits(limits=1, user_api="blas")  # BLAS on one thread, as inside a graphflow run
    batches = [int(b) for b in args.batches.split(",") if b] or [None]
    for layer in args.layers.split(","):
        for batch in batches:
            name = layer if batch is None else f"{layer}@{batch}"
            for row, fns in ways(layer, batch).items():
                for label, idle in (("back to back", 0.0), ("after 1 ms idle", 1e-3)):
                    got = timed(fns, args.rounds, idle)
                    print(f"{name:11s} {row:21s} {label:16s} "
                          + "  ".join(f"{k} {v:.3f}" for k, v in got.items()))
    for label, idle in (("back to back", 0.0), ("after 1 ms idle", 1e-3)):
        start, worker, join, used = pool_latencies(idle=idle)
        print(f"pool {label:16s} caller's work() starts {start:.1f} us, worker starts {worker:.1f} "
              f"us, caller returns {join:.1f} us after the worker ended ({used} of 200 shared)")
    with open("/proc/loadavg") as f:
        print("load average:", " ".join(f.read().split()[:3]))


if __name__ == "__main__":
    main()
