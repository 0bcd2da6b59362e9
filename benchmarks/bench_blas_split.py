"""graphflow's matrix products on its own threads (`kernels/cpu/blas.py`: BLAS pinned to one thread,
row or column blocks shared by the intra-op pool) against numpy's BLAS on one thread and on its
own two threads, on the 784-512-512-10 MLP's shapes.

    python benchmarks/bench_blas_split.py [--threads 2] [--rounds 9]

Medians of `--rounds` rounds of 30 calls, interleaved per shape; GFLOP/s in parentheses.
"""

import argparse
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits

from graphflow.kernels.cpu import blas

SHAPES = [((256, 784), (784, 512)), ((256, 512), (512, 512)), ((784, 256), (256, 512)),
          ((256, 512), (512, 784))]


def _ms(fn, rounds, inner=30):
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times) * 1e3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    blas.owns_blas_threads()  # pins numpy's BLAS to one thread, as graphflow's kernels do
    rng = np.random.default_rng(0)
    print(f"{'a x b':<24} {'graphflow split':>18} {'BLAS 1 thread':>16} "
          f"{f'BLAS {args.threads} threads':>18}")
    for sa, sb in SHAPES:
        a = rng.standard_normal(sa).astype(np.float32)
        b = rng.standard_normal(sb).astype(np.float32)
        gflop = 2 * sa[0] * sa[1] * sb[1] / 1e9
        split = _ms(lambda a=a, b=b: blas.matmul(a, b, args.threads), args.rounds)
        one = _ms(lambda a=a, b=b: a @ b, args.rounds)
        with threadpool_limits(args.threads, user_api="blas"):
            native = _ms(lambda a=a, b=b: a @ b, args.rounds)
        cells = [f"{t:.3f} ms ({gflop / t * 1e3:.0f})" for t in (split, one, native)]
        print(f"{str(sa) + 'x' + str(sb):<24} {cells[0]:>18} {cells[1]:>16} {cells[2]:>18}")


if __name__ == "__main__":
    main()
