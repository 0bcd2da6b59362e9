"""Compiled loops over images run by the OpenMP team that oneDNN's team products and convolutions
use (`dnnl_matmul.py`), while the threading chooser has them run as a team.

Between two team calls of a step (the digits CNN: convolution, MaxPool, convolution, MaxPool,
dense layer) a pool or a first-layer convolution ran on the calling thread alone: waking
graphflow's intra-op pool costs more than its second half saves (`jit_pool.py`, `jit_conv.py`),
while the team's second thread spun idle and then went to sleep, so that the next team call had to
wake it. numba's `omp` threading layer runs a `prange` on libgomp, the library oneDNN's teams run
on, and from the same calling thread it is the same team (no new threads): here a loop taking an
image range `lo, hi` as its last two arguments runs as one block of images per team thread.
The blocks are the images split evenly in thread order, as oneDNN splits a batch, so each thread
mostly reads what it wrote in the team call before. Each image's output is computed by one call
of the same loop, so the values are the one-thread loop's.

What runs here besides the pools (inference's, and a training step's forward pass recording
argmaxes and its recorded gradient) and the few-tap convolution: the batch norm's block passes
(`jit_batch_norm.py`, blocks whose bounds do not depend on the thread count), a FusedElementwise
program that is one compiled run (`fused_jit.Run.ranged_loop`: a batch norm's affine + ReLU
between two convolutions, a ReLU gradient's select), and the in-place optimizer updates.

Used only where it can be: numba and oneDNN installed, numba's threading layer `omp` (graphflow
asks for it when numba has not started one and the user chose none; with another layer running,
or `NUMBA_THREADING_LAYER` set to one, nothing runs here), not on an intra-op pool worker, not in a
process forked after a team ran (libgomp's threads do not survive a fork), and only while the
chooser runs products as a team (with another process keeping a core busy it picks graphflow's
blocks, and these loops keep their own split). `GRAPHFLOW_TEAM_LOOPS=0` turns this off.
"""

import os
import threading

import numpy as np

from graphflow.kernels.cpu.numba import jit_updates
from graphflow.kernels.cpu.onednn import dnnl, dnnl_matmul
from graphflow.kernels.cpu.onednn.dnnl_matmul import TEAM
from graphflow.kernels.cpu.threads import intra_op

_lock = threading.Lock()
_runners = {}   # loop -> its team runner
_usable = None  # whether numba's parallel loops run on libgomp here (checked once)
_max_threads = 1  # numba's thread count (NUMBA_NUM_THREADS), read with _usable


def _check():
    if (os.environ.get("GRAPHFLOW_TEAM_LOOPS", "1").strip() == "0" or jit_updates.loops() is None
            or dnnl.library() is None):
        return False
    import numba
    from numba.np.ufunc import parallel
    if not parallel._is_initialized:
        chosen = os.environ.get("NUMBA_THREADING_LAYER", "").strip().lower()
        if chosen not in ("", "default", "omp"):
            return False
        saved = numba.config.THREADING_LAYER
        numba.config.THREADING_LAYER = "omp"
        try:
            parallel._launch_threads()
        except (ValueError, OSError):  # no omp layer in this numba: nothing runs here
            numba.config.THREADING_LAYER = saved
            return False
    global _max_threads
    _max_threads = numba.config.NUMBA_NUM_THREADS
    return numba.threading_layer() == "omp"


def usable():
    """Whether numba's parallel loops run on libgomp in this process (numba and oneDNN installed,
    numba's threading layer `omp`)."""
    global _usable
    if _usable is None:
        with _lock:
            if _usable is None:
                _usable = _check()
    return _usable


def wanted(threads):
    """Whether a loop split over `threads` threads runs on the team now: several threads, the
    chooser running products as a team, and the team usable from this thread."""
    return (threads > 1 and dnnl_matmul.current_way() == TEAM
            and not intra_op.in_worker() and usable())


def _runner(loop, hold_gil):
    """The team loop around `loop` (compiled once per loop and GIL choice)."""
    run = _runners.get((loop, hold_gil))
    if run is not None:
        return run
    from numba import njit, prange, set_num_threads

    @njit(parallel=True, nogil=not hold_gil, cache=False, error_model="numpy")
    def over_team(args, n, blocks):
        set_num_threads(blocks)  # the team as large as oneDNN's (libgomp keeps its threads)
        for k in prange(blocks):
            loop(*args, k * n // blocks, (k + 1) * n // blocks)
    with _lock:
        return _runners.setdefault((loop, hold_gil), over_team)


def team_size(threads):
    """The team's size for a call on `threads` threads: at most numba's thread count."""
    return min(threads, _max_threads)


def mark():
    """Record that the team ran (a forked child must not use it: `dnnl_matmul.mark_team`)."""
    dnnl_matmul.mark_team()


def run(loop, args, n, threads, hold_gil=False):
    """`loop(*args, lo, hi)` over images (or elements) 0..n, one block per thread of a team of
    `threads` (callers check `wanted(threads)`, or at least `usable()`, first); `hold_gil`: the
    calling thread keeps the GIL meanwhile (no other Python thread runs)."""
    mark()
    blocks = min(n, team_size(threads))
    _runner(loop, hold_gil)(args, np.int64(n), np.int64(blocks))


# The in-place updates run on the team from this many elements (two of jit_updates' blocks). A 1M
# bound was tried: Adam on a 784x512 variable had taken 0.9 ms on the team in a step with dropout,
# but the cause was numpy's BLAS left unpinned (`blas.matmul`); with it pinned the team takes
# 0.21 ms there against 0.25 on one thread (that step 3.35-3.39 ms here, 3.49-3.50 with 1M;
# one-off scripts, docs/performance.md).
IN_PLACE_TEAM_MIN_ELEMENTS = 2 * jit_updates.BLOCK_ELEMENTS


def run_holding_gil(loop, size, args, threads):
    """Call `loop(*args, lo, hi)` over elements [0, size) without releasing the GIL (the in-place
    optimizer updates, `jit_updates.py`): one block per thread of the team where it is usable
    (from IN_PLACE_TEAM_MIN_ELEMENTS elements; not in a child forked after a team ran), else on
    this thread alone."""
    threads = threads if size >= IN_PLACE_TEAM_MIN_ELEMENTS else 1
    if threads > 1 and not intra_op.in_worker() and dnnl_matmul.teams_allowed() and usable():
        run(loop, args, size, threads, True)  # hold_gil
    else:
        loop(*args, 0, size)
