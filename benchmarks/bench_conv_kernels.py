"""The convolution kernels alone: the blocked im2col kernels (`conv_blocked.py`) against oneDNN's
primitives (`dnnl_conv.py`), forward, input gradient and filter gradient, on the layers of
bench_vs_tf1's CNN rows (float32, NHWC, SAME, batch 64); and MaxPoolGrad (2x2 windows, stride 2)
as the numba loop (`jit_pool.py`, when numba is installed) against oneDNN (`dnnl_pool.py`).

    python benchmarks/bench_conv_kernels.py                # 1 and 2 threads
    python benchmarks/bench_conv_kernels.py --threads 2 --rounds 9

Times are medians of interleaved rounds (graphflow's kernel, oneDNN, graphflow's, ...), in
milliseconds; the first column is the blocked im2col kernel (convolutions) or the numba loop
(MaxPoolGrad). Without the oneDNN library (`onednn-cpu-gomp`, installed with graphflow on Linux
x86-64) only that column is printed.
"""

import argparse
import functools
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits

from graphflow.kernels.cpu.blocked import conv_blocked
from graphflow.kernels.cpu.numba import jit_pool
from graphflow.kernels.cpu.onednn import dnnl, dnnl_conv, dnnl_conv_grads, dnnl_pool
from graphflow.kernels.cpu.reference.conv_geometry import Geometry

LAYERS = [  # name, input NHWC, filter HWIO
    ("small CNN 28x28x1 -> 16, 5x5", (64, 28, 28, 1), (5, 5, 1, 16)),
    ("CIFAR 32x32x3 -> 32, 3x3", (64, 32, 32, 3), (3, 3, 3, 32)),
    ("CIFAR 32x32x32 -> 32, 3x3", (64, 32, 32, 32), (3, 3, 32, 32)),
    ("CIFAR 16x16x32 -> 64, 3x3", (64, 16, 16, 32), (3, 3, 32, 64)),
]

POOLS = [  # MaxPoolGrad inputs (NHWC) of the CNN rows
    ("small CNN pool 28x28x16", (64, 28, 28, 16)),
    ("CIFAR pool 32x32x32", (64, 32, 32, 32)),
    ("CIFAR pool 16x16x64", (64, 16, 16, 64)),
]


def layer_arrays(rng):
    """(name, SAME geometry, x, filter, output gradient) of each of LAYERS, float32 from `rng`."""
    for name, x_shape, f_shape in LAYERS:
        n, h, w, _ = x_shape
        kh, kw, _, oc = f_shape
        geo = Geometry(h, w, kh, kw, 1, 1, 1, 1, "SAME")
        x = rng.standard_normal(x_shape).astype(np.float32)
        f = rng.standard_normal(f_shape).astype(np.float32)
        g = rng.standard_normal((n, geo.oh, geo.ow, oc)).astype(np.float32)
        yield name, geo, x, f, g


def kernels(x, f, g, threads):
    geo = Geometry(x.shape[1], x.shape[2], f.shape[0], f.shape[1], 1, 1, 1, 1, "SAME")
    win = conv_blocked.Window.of(geo)
    n, _, _, c = x.shape
    # the blocked input gradient runs for stride 1 and c >= MIN_INPUT_GRAD_CHANNELS; conv_kernels
    # keeps its reference kernel otherwise (not timed here: marked '-')
    blocked_dx = c >= conv_blocked.MIN_INPUT_GRAD_CHANNELS
    blocked = {
        "forward": lambda: conv_blocked.conv2d(x, f, win, threads),
        "input grad": (lambda: conv_blocked.conv2d_backprop_input(g, f, geo, threads))
        if blocked_dx else None,
        "filter grad": lambda: conv_blocked.conv2d_backprop_filter(x, g, win, f.shape, threads),
    }
    onednn = {
        "forward": lambda: dnnl_conv.conv2d(x, f, geo, threads),
        "input grad": lambda: dnnl_conv.conv2d_backprop_input(g, f, geo, n, c, threads),
        "filter grad": lambda: dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f.shape, threads),
    }
    return blocked, onednn


def median_ms(fns, rounds, inner=5):
    samples = {k: [] for k in fns}
    for fn in fns.values():
        fn()
    for _ in range(rounds):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            samples[k].append((time.perf_counter() - t0) / inner * 1e3)
    return {k: statistics.median(v) for k, v in samples.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    threadpool_limits(limits=1, user_api="blas")  # BLAS on one thread, as inside a graphflow run
    have = dnnl.library() is not None
    print(f"oneDNN: {dnnl.library().path if have else 'not installed'}")
    print(f"{'layer':32s} {'op':12s} {'thr':>3s} {'numpy':>9s} {'oneDNN':>9s} {'ratio':>6s}")
    rng = np.random.default_rng(0)
    for name, _, x, f, g in layer_arrays(rng):
        for threads in args.threads:
            blocked, onednn = kernels(x, f, g, threads)
            for op in blocked:
                fns = {}
                if blocked[op] is not None:
                    fns["blocked"] = blocked[op]
                if have:
                    fns["onednn"] = onednn[op]
                t = median_ms(fns, args.rounds)
                b = f"{t['blocked']:9.3f}" if "blocked" in t else f"{'-':>9s}"
                o = f"{t['onednn']:9.3f}" if "onednn" in t else f"{'-':>9s}"
                r = f"{t['onednn'] / t['blocked']:6.2f}" if len(t) == 2 else f"{'-':>6s}"
                print(f"{name:32s} {op:12s} {threads:3d} {b} {o} {r}", flush=True)
    for name, shape in POOLS:
        x = np.maximum(rng.standard_normal(shape), 0).astype(np.float32)
        geo = Geometry(shape[1], shape[2], 2, 2, 2, 2, 1, 1, "VALID")
        g = rng.standard_normal((shape[0], geo.oh, geo.ow, shape[3])).astype(np.float32)
        for threads in args.threads:
            fns = {}
            if jit_pool.loops() is not None:
                fns["blocked"] = functools.partial(jit_pool.max_pool_grad, x, g, geo, threads)
            if have:
                fns["onednn"] = functools.partial(dnnl_pool.max_pool_grad, x, g, geo, threads)
            t = median_ms(fns, args.rounds) if fns else {}
            b = f"{t['blocked']:9.3f}" if "blocked" in t else f"{'-':>9s}"
            o = f"{t['onednn']:9.3f}" if "onednn" in t else f"{'-':>9s}"
            r = f"{t['onednn'] / t['blocked']:6.2f}" if len(t) == 2 else f"{'-':>6s}"
            print(f"{name:32s} {'MaxPoolGrad':12s} {threads:3d} {b} {o} {r}", flush=True)


if __name__ == "__main__":
    main()
