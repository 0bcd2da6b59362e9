"""oneDNN primitive executions ("tasks": a convolution's blocks of images) run by the OpenMP team,
while the threading chooser runs products as a team (`omp_team.py` says when the team is used
and how numba's parallel loops reach it).

The convolutions' gradients are cut into blocks of images whose bounds do not depend on the thread
count (`dnnl_conv.image_blocks`), so that the filter gradient's per-block partials, summed in
block order, give the same bits on any number of threads. `dnnl_conv.run_tasks` shares the blocks
with graphflow's intra-op pool: Python threads, woken through a queue. Here the same blocks run
on the team's threads instead, one compiled loop calling oneDNN through its C functions (numba
calls them as ctypes function pointers): the team is awake after the step's team calls, and no
Python runs between two blocks. Each of the team's threads (a worker) executes every `workers`-th
task with memory objects, a stream and a scratchpad of its own; oneDNN, called inside the parallel
region, runs each primitive on the calling thread alone. The tasks and the buffers are the pool's,
so the values are the same bits. The loop is compiled on its first call, about a second once per
process (it calls function pointers of this process: not cached on disk).

Measured (a one-off script, the ResNet rows' layers, batch 64, 8 blocks of the filter gradient,
two threads, ms, the intra-op pool / the team): 32x32x16 -> 16 3x3 1.98 / 1.58, 16x16x32 -> 32
1.81 / 1.37, 8x8x64 -> 64 1.49 / 1.29, 32x32x16 -> 32 3x3 stride 2 0.90 / 0.72; oneDNN's own
whole-batch primitive on the team took 1.34-1.50 for the 3x3 layers (its sums depend on the
team's size).
"""

import ctypes
import threading

import numpy as np

from graphflow.kernels.cpu import dnnl, omp_team

# False: the blocks always run on the intra-op pool (`dnnl_conv.run_tasks`), as before this module
ENABLED = True

_lock = threading.Lock()
_run_lock = threading.Lock()  # one set of tasks on the team at a time
_state = None  # None: not set up yet; False: unusable here; else (the runner, its C functions)
_streams = []  # per worker slot
_scratch = []  # per worker slot: its scratchpad buffer


def _setup():
    """The compiled runner (oneDNN's C functions as ctypes function pointers), or False."""
    global _state
    if _state is None:
        with _lock:
            if _state is None:
                _state = _compile() if omp_team.usable() else False
    return _state


def _compile():
    from numba import njit, prange, set_num_threads
    lib = dnnl.library()
    i64 = ctypes.c_int64

    def pointer(name):
        return ctypes.cast(lib.function(name), ctypes.c_void_p).value
    set_handle = ctypes.CFUNCTYPE(ctypes.c_int, i64, i64)(pointer("dnnl_memory_set_data_handle"))
    execute = ctypes.CFUNCTYPE(ctypes.c_int, i64, i64, ctypes.c_int, i64)(
        pointer("dnnl_primitive_execute"))

    @njit(parallel=True, nogil=True, cache=False)
    def run(workers, prims, binding, mems, exec_args, nargs, pointers, streams, status):
        set_num_threads(workers)  # the team as large as oneDNN's (libgomp keeps its threads)
        for k in prange(workers):
            for i in range(k, prims.size, workers):  # task i on worker i % workers
                b = binding[i]
                for a in range(nargs[b]):
                    code = set_handle(mems[b, k, a], pointers[i, a])
                    if code != 0:
                        status[i] = code
                if status[i] == 0:
                    status[i] = execute(prims[i], streams[k], nargs[b], exec_args[b, k])
    return run, set_handle, execute  # the function pointers stay alive with the runner


class Task:
    """One primitive execution: `prim` (a `dnnl.Primitive`) with the buffers at `pointers`
    (addresses) as its arguments `args` (ARG_*, the scratchpad not among them); `keep`: the
    arrays those addresses point into (kept alive with the task)."""

    __slots__ = ("prim", "args", "pointers", "keep")

    def __init__(self, prim, args, pointers, keep=()):
        self.prim, self.args, self.pointers, self.keep = prim, tuple(args), pointers, keep


def wanted(threads, n_tasks):
    """Whether `run` would run `n_tasks` tasks on the team now (see `omp_team.wanted`)."""
    return ENABLED and n_tasks > 1 and omp_team.wanted(threads) and _setup() is not False


def run(tasks, threads):
    """Execute `tasks` (a list of `Task`) on the OpenMP team, task i on worker i % workers, and
    return True; False (nothing ran) while another thread runs tasks here (the workers' memory
    objects, streams and scratchpads are one set). The caller checks `wanted` first. Raises
    `dnnl.DnnlError` if a call failed."""
    if not _run_lock.acquire(blocking=False):
        return False
    try:
        _run(tasks, threads)
    finally:
        _run_lock.release()
    return True


def _run(tasks, threads):
    runner = _setup()[0]
    workers = max(1, min(len(tasks), omp_team.team_size(threads)))
    streams = _worker_streams(workers)
    scratch = _worker_scratch(workers, max(t.prim.scratchpad_bytes for t in tasks))
    keys = {}  # (primitive, args) -> its binding's index
    for task in tasks:
        keys.setdefault((task.prim, task.args), len(keys))
    width = 1 + max(len(args) for _, args in keys)  # + the scratchpad
    mems = np.zeros((len(keys), workers, width), np.int64)
    exec_args = np.zeros((len(keys), workers), np.int64)
    nargs = np.zeros(len(keys), np.int64)
    for (prim, args), b in keys.items():
        full = args + ((dnnl.ARG_SCRATCHPAD,) if prim.scratchpad_bytes else ())
        nargs[b] = len(full)
        for k in range(workers):
            memories, arg_array = prim.bound(("team", k), full)  # the worker's own
            mems[b, k, :len(full)] = [m.value for m in memories]
            exec_args[b, k] = ctypes.addressof(arg_array)
    pointers = np.zeros((len(tasks), width), np.int64)
    prims = np.empty(len(tasks), np.int64)
    binding = np.empty(len(tasks), np.int64)
    for i, task in enumerate(tasks):
        prims[i], binding[i] = task.prim.handle.value, keys[(task.prim, task.args)]
        pointers[i, :len(task.args)] = task.pointers
        if task.prim.scratchpad_bytes:
            pointers[i, len(task.args)] = scratch[i % workers]
    status = np.zeros(len(tasks), np.int64)
    omp_team.mark()
    with dnnl.library().openmp_threads(workers):
        runner(np.int64(workers), prims, binding, mems, exec_args, nargs, pointers, streams,
               status)
    if status.any():
        code = int(status[status != 0][0])
        raise dnnl.DnnlError(f"oneDNN: a primitive run by the team failed with status {code}",
                             code)


def _worker_streams(workers):
    """The first `workers` worker slots' oneDNN streams (made on first use), as addresses."""
    with _lock:
        while len(_streams) < workers:
            _streams.append(dnnl.library().new_stream())
        return np.array([s.value for s in _streams[:workers]], np.int64)


def _worker_scratch(workers, nbytes):
    """64-byte aligned addresses of the first `workers` slots' scratchpads of `nbytes` or more."""
    with _lock:
        _scratch.extend([None] * (workers - len(_scratch)))
        addresses = []
        for k in range(workers):
            _scratch[k], address = dnnl.grown_scratchpad(_scratch[k], nbytes)
            addresses.append(address)
        return addresses
