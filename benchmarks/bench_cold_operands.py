"""Kernels of the CIFAR-shaped training step and of the digits CNN, timed with their operands in the
cache and with them cold: why an op takes longer in a step (where its operands were last touched
many megabytes ago) than when it is called back to back.

    python benchmarks/bench_cold_operands.py [--repeat 41] [--sets 8]

Each kernel runs on its own arrays called back to back ("warm": the same arrays every call, so
they stay in the cache), then cycling through `--sets` copies of all its arrays ("cold": every call
reads and writes arrays that `sets - 1` other calls' traffic has passed over since). Median ms of
`--repeat` calls, on 2 threads the way graphflow runs them:
  adam        Adam on a 4096x512 float32 variable (`jit_updates`), the CIFAR step's largest update;
              "in place": as the run's last op, writing the variable and its slots in place;
  dense       the CIFAR step's dense forward product, [64, 4096] @ [4096, 512] + bias + Relu
              (`dnnl_matmul`), cycling its weights;
  digits conv2, digits conv3   the digits CNN's 8x8x32 -> 32 and 4x4x32 -> 64 3x3 convolutions at
              batch 256 with bias and Relu (`dnnl_conv`), cycling the input (the output is a new
              array each call, as in a step).
Needs numba (adam) and the optional oneDNN library (the others); a kernel that cannot run is left
out.
"""

import argparse
import itertools

import numpy as np
from common import median_ms

from graphflow.kernels.cpu.numba import jit_updates
from graphflow.kernels.cpu.onednn import dnnl, dnnl_conv, dnnl_matmul
from graphflow.kernels.cpu.reference.conv_geometry import Geometry
from graphflow.kernels.cpu.threads import omp_team


def _cycled(make, run, sets):
    """A call of `run(*arrays)` on the next of `sets` copies of `make()`'s arrays."""
    copies = [make() for _ in range(sets)]
    order = itertools.cycle(range(sets))
    return lambda: run(*copies[next(order)])


def kernels(rng):
    """{name: (make() -> arrays, run(*arrays))}."""
    found = {}
    loops = jit_updates.loops()
    if loops is not None:
        n, f32 = 4096 * 512, np.float32

        def make_adam():
            var, m, g = (rng.standard_normal(n).astype(f32) for _ in range(3))
            v = np.abs(rng.standard_normal(n)).astype(f32)
            return var, m, v, g, np.empty(n, f32), np.empty(n, f32), np.empty(n, f32)

        def adam(var, m, v, g, var_out, m_out, v_out):
            jit_updates.run(loops["adam"], n, (var, m, v, g, f32(1e-3), f32(0.1), f32(1e-3),
                                               f32(0.9), f32(1e-8), False, var_out, m_out, v_out), 2)
        def adam_in_place(var, m, v, g, *unused):  # a run's last update (update_kernels.py)
            omp_team.run_holding_gil(loops["adam_in_place"], n,
                                        (var, m, v, g, f32(1e-3), f32(0.1), f32(1e-3), f32(0.9),
                                         f32(1e-8), False), 2)
        found["adam 4096x512"] = (make_adam, adam)
        found["adam 4096x512 in place"] = (make_adam, adam_in_place)
    if dnnl.library() is not None:
        x = rng.standard_normal((64, 4096)).astype(np.float32)
        bias = np.zeros(512, np.float32)
        relu = dnnl.activation_post_ops("Relu", {})
        found["dense 64x4096x512"] = (
            lambda: (rng.standard_normal((4096, 512)).astype(np.float32),),
            lambda w: dnnl_matmul.matmul(x, w, 2, bias, relu))
        for name, (h, c, oc) in (("digits conv2 8x8x32->32", (8, 32, 32)),
                                 ("digits conv3 4x4x32->64", (4, 32, 64))):
            geo = Geometry(h, h, 3, 3, 1, 1, 1, 1, "SAME")
            f = rng.standard_normal((3, 3, c, oc)).astype(np.float32)
            b = np.zeros(oc, np.float32)
            found[name] = (
                lambda h=h, c=c: (rng.standard_normal((256, h, h, c)).astype(np.float32),),
                lambda xs, f=f, b=b, geo=geo: dnnl_conv.conv2d(xs, f, geo, 2, b, relu))
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=41)
    parser.add_argument("--sets", type=int, default=8)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{'kernel':26s} {'warm ms':>8s} {'cold ms':>8s}  (cold: {args.sets} sets of its arrays)")
    for name, (make, run) in kernels(rng).items():
        warm = median_ms(_cycled(make, run, 1), args.repeat, warmup=5)
        cold = median_ms(_cycled(make, run, args.sets), args.repeat, warmup=5)
        print(f"{name:26s} {warm:8.3f} {cold:8.3f}", flush=True)


if __name__ == "__main__":
    main()
