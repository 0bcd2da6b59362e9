"""Matrix products on graphflow's own threads: one thread pool for the whole process, never two.

numpy's BLAS (OpenBLAS, MKL, ...) keeps a pool of its own whose threads busy-wait between calls. Next
to graphflow's intra-op pool (`intra_op.py`) that oversubscribes the cores, and on a machine where
another process keeps a core busy, BLAS's barrier waits for a thread the scheduler has parked: a
64x1000x100 product then takes milliseconds instead of microseconds.

So graphflow owns the threads while a session runs plans, and only then: a session's first run
holds numpy's BLAS to one thread (`hold()`, through `threadpoolctl`'s controller of whichever BLAS
numpy loaded) and closing the session gives the BLAS its thread count back when no other session
that has run is open (sessions share one hold). Holding per session rather than per run costs a run
nothing (setting OpenBLAS's thread count twice per run took 4-12 us, as long as a small graph's
whole run). Importing graphflow, building graphs and creating sessions change nothing. Inside a
run a large product is cut into row (or column) blocks that the calling thread and the intra-op
pool's workers take from one shared iterator, each block one single-threaded BLAS call on its own
slice of the output. The pool's callers never wait for a worker that has not started
(`IntraOpPool.run_shared`): on a busy machine the calling thread simply computes every block itself,
so a parked thread costs nothing.

While such a session is open, numpy code of the user's in the same process also runs BLAS on one
thread; `with blas.run_scope():` holds it for a block of code (the tests' way).
`GRAPHFLOW_KEEP_BLAS_THREADS=1` leaves BLAS alone, and graphflow then also stops splitting products
itself.
"""

import os
import sys
import threading

import numpy as np

from graphflow.framework import config
from graphflow.kernels.cpu.threads import intra_op

# Products of fewer multiply-adds than this run as one call: splitting costs a few microseconds.
PARALLEL_MIN_MACS = 1 << 21
# No block narrower than this many rows (or columns): thin blocks run BLAS below its best speed.
MIN_BLOCK = 32

_lock = threading.Lock()
_owns = None      # None: not decided yet; True: runs hold BLAS to one thread; False: left alone
_blas_libs = ()   # threadpoolctl's controllers of the BLAS libraries numpy loaded
_holds = 0        # runs in progress holding BLAS to one thread
_saved = ()       # the thread counts to give back when the last of them ends
_modules_seen = 0  # len(sys.modules) when _blas_libs was last read: an import may load a BLAS


def owns_blas_threads():
    """True when graphflow's runs hold numpy's BLAS to one thread (`run_scope`) and graphflow
    splits products itself; False with GRAPHFLOW_KEEP_BLAS_THREADS=1 or without threadpoolctl.
    Decided once per process; changes nothing by itself."""
    global _owns, _blas_libs
    if _owns is not None:
        return _owns
    with _lock:
        if _owns is None:
            if os.environ.get("GRAPHFLOW_KEEP_BLAS_THREADS", "").strip() not in ("", "0"):
                _owns = False
            else:
                _blas_libs = _find_blas()
                _owns = _blas_libs is not None
    return _owns


def _find_blas():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # threadpoolctl is a dependency; a broken install keeps BLAS as it is
        return None
    return tuple(lib for lib in ThreadpoolController().lib_controllers if lib.user_api == "blas")


class _RunScope:
    """`with run_scope():` numpy's BLAS on one thread inside, its own thread count back after the
    last scope open in the process ends (see the module docstring)."""

    __slots__ = ()

    def __enter__(self):
        global _holds, _saved
        if _owns is False or (_owns is None and not owns_blas_threads()):
            return self
        with _lock:
            if _holds == 0:
                _rescan_after_imports()
                saved = []
                for lib in _blas_libs:
                    n = lib.get_num_threads()
                    saved.append(n)
                    if n != 1:
                        lib.set_num_threads(1)
                _saved = tuple(saved)
            _holds += 1
        return self

    def __exit__(self, *exc):
        global _holds
        if not _owns:
            return False
        with _lock:
            _holds -= 1
            if _holds == 0:
                for lib, n in zip(_blas_libs, _saved):
                    if n != 1:
                        lib.set_num_threads(n)
        return False


def _rescan_after_imports():
    """Read the loaded BLAS libraries again when modules were imported since the last reading (a
    compile or a scipy function can load a second BLAS, e.g. scipy's own OpenBLAS): a few
    milliseconds, paid only after imports."""
    global _blas_libs, _modules_seen
    if len(sys.modules) != _modules_seen:
        _modules_seen = len(sys.modules)
        found = _find_blas()
        if found is not None:
            _blas_libs = found


_SCOPE = _RunScope()


def run_scope():
    """A context holding numpy's BLAS to one thread inside (when `owns_blas_threads()`)."""
    return _SCOPE


def hold():
    """Hold numpy's BLAS to one thread until the matching `release()` (a session's runs: from its
    first run to its close; holds made by several sessions share one)."""
    _SCOPE.__enter__()


def release():
    """End one `hold()`: the last one gives BLAS its own thread count back."""
    _SCOPE.__exit__(None, None, None)


def _reset_after_fork():
    global _owns, _holds
    # a child re-checks; a run in progress in the parent's other threads does not exist here
    _owns, _holds = None, 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def matmul(a, b, threads):
    """`np.matmul(a, b)` on up to `threads` threads (2-D products; batched ones run as numpy's)."""
    owns = owns_blas_threads()  # (inside a run BLAS is on one thread: `run_scope`)
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
