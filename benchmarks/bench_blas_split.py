"""graphflow's matrix products against numpy's BLAS on one and on its own threads, on the
784-512-512-10 MLP's shapes: the numpy path (`kernels/cpu/threads/blas.py`: BLAS pinned to one thread, row
or column blocks shared by the intra-op pool) and, where oneDNN is installed, `dnnl_matmul.py`'s
two ways to use the threads (blocks on the intra-op pool, each on one OpenMP thread; one OpenMP
team) and its choice between them (`auto`).

    python benchmarks/bench_blas_split.py [--threads 2] [--rounds 9]

Medians of `--rounds` rounds of 30 calls, interleaved per shape, with a pause before each batch so
that no way's threads still spin (OpenBLAS's and libgomp's wait a while for more work) while the
next way is timed; GFLOP/s in parentheses.
"""

import argparse
import collections
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits

from graphflow.kernels.cpu.onednn import dnnl, dnnl_matmul
from graphflow.kernels.cpu.threads import blas

SHAPES = [((256, 784), (784, 512)), ((256, 512), (512, 512)), ((784, 256), (256, 512)),
          ((256, 512), (512, 784)), ((64, 4096), (4096, 512))]


def _oneDNN(mode, a, b, threads):
    """dnnl_matmul with its threads used one way (None: its own choice), on plans of its own."""
    plans = collections.OrderedDict()

    def run():
        saved, fixed = dnnl_matmul._plans, dnnl_matmul.fixed_mode
        dnnl_matmul._plans, dnnl_matmul.fixed_mode = plans, (lambda: mode)
        try:
            dnnl_matmul.matmul(a, b, threads)
        finally:
            dnnl_matmul._plans, dnnl_matmul.fixed_mode = saved, fixed
    return run


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    threadpool_limits(limits=1, user_api="blas")  # BLAS on one thread, as inside a graphflow run
    rng = np.random.default_rng(0)
    names = ["numpy split", "BLAS 1 thread", f"BLAS {args.threads} threads"]
    if dnnl.library() is not None:
        names += ["oneDNN blocks", "oneDNN team", "oneDNN auto"]
    print(f"{'a x b':<24}" + "".join(f"{n:>19}" for n in names))
    for sa, sb in SHAPES:
        a = rng.standard_normal(sa).astype(np.float32)
        b = rng.standard_normal(sb).astype(np.float32)
        gflop = 2 * sa[0] * sa[1] * sb[1] / 1e9

        def native(a=a, b=b):
            with threadpool_limits(args.threads, user_api="blas"):
                a @ b
        fns = [lambda a=a, b=b: blas.matmul(a, b, args.threads), lambda a=a, b=b: a @ b, native]
        if dnnl.library() is not None:
            fns += [_oneDNN(m, a, b, args.threads) for m in ("blocks", "team", None)]
        for fn in fns:  # warm up (oneDNN: primitives, and the choice between team and blocks)
            for _ in range(12):
                fn()
        samples = [[] for _ in fns]
        for _ in range(args.rounds):
            for fn, s in zip(fns, samples):
                time.sleep(0.15)  # threads still spinning after the previous way's calls go idle
                t0 = time.perf_counter()
                for _ in range(30):
                    fn()
                s.append((time.perf_counter() - t0) / 30 * 1e3)
        cells = [f"{t:.3f} ms ({gflop / t * 1e3:.0f})" for t in map(statistics.median, samples)]
        print(f"{str(sa) + 'x' + str(sb):<24}" + "".join(f"{c:>19}" for c in cells))


if __name__ == "__main__":
    main()
