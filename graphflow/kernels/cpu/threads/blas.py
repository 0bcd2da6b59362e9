"""Matrix products on graphflow's own threads: one thread pool for the whole process, never two.

numpy's BLAS (OpenBLAS, MKL, ...) keeps a pool of its own whose threads busy-wait between calls. Next
to graphflow's intra-op pool (`intra_op.py`) that oversubscribes the cores, and on a machine where
another process keeps a core busy, BLAS's barrier waits for a thread the scheduler has parked: a
64x1000x100 product then takes milliseconds instead of microseconds.

So graphflow owns the threads. The first CPU kernel built (`kernels/cpu/__init__.choose`) sets
numpy's BLAS to one thread (through `threadpoolctl`, which finds whichever BLAS numpy loaded); a
large product is cut into row (or column) blocks that the calling thread and the intra-op pool's
workers take from one shared iterator, each block one single-threaded BLAS call on its own slice of
the output. The pool's callers never wait for a worker that has not started
(`IntraOpPool.run_shared`): on a busy machine the calling thread simply computes every block itself,
so a parked thread costs nothing.

This changes numpy's BLAS thread count for the whole process (numpy code of the user's in the same
process then runs BLAS on one thread); `GRAPHFLOW_KEEP_BLAS_THREADS=1` leaves BLAS alone, and
graphflow then also stops splitting products itself.
"""

import os
import threading

import numpy as np

from graphflow.framework import config
from graphflow.kernels.cpu.threads import intra_op

# Products of fewer multiply-adds than this run as one call: splitting costs a few microseconds.
PARALLEL_MIN_MACS = 1 << 21
# No block narrower than this many rows (or columns): thin blocks run BLAS below its best speed.
MIN_BLOCK = 32

_pin_lock = threading.Lock()
_pinned = None  # None: not decided yet; True: BLAS runs on one thread; False: left as it was


def owns_blas_threads():
    """Pin numpy's BLAS to one thread (once per process); True when graphflow splits products."""
    global _pinned
    if _pinned is not None:
        return _pinned
    with _pin_lock:
        if _pinned is None:
            if os.environ.get("GRAPHFLOW_KEEP_BLAS_THREADS", "").strip() not in ("", "0"):
                _pinned = False
            else:
                _pinned = _limit_blas_to_one_thread()
    return _pinned


def _limit_blas_to_one_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # threadpoolctl is a dependency; a broken install keeps BLAS as it is
        return False
    threadpool_limits(limits=1, user_api="blas")
    return True


def _reset_after_fork():
    global _pinned
    _pinned = None  # a child re-checks (the limit itself is inherited with the library state)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def matmul(a, b, threads):
    """`np.matmul(a, b)` on up to `threads` threads (2-D products; batched ones run as numpy's)."""
    owns = owns_blas_threads()  # (kernels pinned BLAS when built: `kernels/cpu/__init__.lookup`)
    if a.ndim != 2 or b.ndim != 2:
        return np.matmul(a, b)
    m, k = a.shape
    n = b.shape[1]
    if threads <= 1 or m * k * n < PARALLEL_MIN_MACS or intra_op.in_worker() or not owns:
        return np.matmul(a, b)
    by_rows = m >= n
    length = m if by_rows else n
    blocks = min(threads * 2, length // MIN_BLOCK)
    if blocks < 2:
        return np.matmul(a, b)
    out = np.empty((m, n), dtype=np.result_type(a.dtype, b.dtype))
    bounds = np.linspace(0, length, blocks + 1).astype(int)
    pieces = intra_op.shared_iter(range(blocks))

    def work():
        for i in pieces:
            lo, hi = bounds[i], bounds[i + 1]
            if by_rows:
                np.matmul(a[lo:hi], b, out=out[lo:hi])
            else:
                np.matmul(a, b[:, lo:hi], out=out[:, lo:hi])

    intra_op.POOL.run_shared(work, threads)
    return out


def session_threads(node):
    """The intra-op thread count of the session building this kernel (the process default if none)."""
    threads = getattr(node.state, "intra_op_threads", None)
    if threads is None:
        threads = config.default_intra_op_threads()
    return max(1, int(threads))
