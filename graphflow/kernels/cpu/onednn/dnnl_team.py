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
so the values are the same bits. A filter gradient's task may first run its block's pass over dy
(`DyPass`, `conv_dy_pass.block_pass`: the bias sums, the ReLU mask into the worker's buffer, which
its primitive then reads), the same compiled function the pool's threads call. The loop is
compiled on its first call, about a second once per process (it calls function pointers of this
process: not cached on disk).

Measured (a one-off script, the ResNet rows' layers, batch 64, 8 blocks of the filter gradient,
two threads, ms, the intra-op pool / the team): 32x32x16 -> 16 3x3 1.98 / 1.58, 16x16x32 -> 32
1.81 / 1.37, 8x8x64 -> 64 1.49 / 1.29, 32x32x16 -> 32 3x3 stride 2 0.90 / 0.72; oneDNN's own
whole-batch primitive on the team took 1.34-1.50 for the 3x3 layers (its sums depend on the
team's size).
"""

import ctypes
import threading

import numpy as np

from graphflow.kernels.cpu.numba import conv_dy_pass
from graphflow.kernels.cpu.onednn import dnnl
from graphflow.kernels.cpu.threads import omp_team

# False: the blocks always run on the intra-op pool (`dnnl_conv.run_tasks`), as before this module
ENABLED = True

_lock = threading.Lock()
_run_lock = threading.Lock()  # one set of tasks on the team at a time
_state = None  # None: not set up yet; False: unusable here; else (the runner, its C functions)
_streams = []  # per worker slot
_scratch = []  # per worker slot: its scratchpad buffer
_mask_storage = np.empty(0, np.float32)  # the workers' buffers for masked blocks of dy, grown as needed

# a task's pass over its block of dy before its primitive (`DyPass`): none, the bias sums, or the
# ReLU mask and the sums of the masked block
NO_PASS, SUMS, MASK = 0, 1, 2


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

    block_pass = conv_dy_pass.block_pass()

    @njit(parallel=True, nogil=True, cache=False)
    def run(workers, prims, binding, mems, exec_args, nargs, pointers, streams, status, passes,
            dy, y, sums, buffers, buffer_pointers):
        set_num_threads(workers)  # the team as large as oneDNN's (libgomp keeps its threads)
        for k in prange(workers):
            for i in range(k, prims.size, workers):  # task i on worker i % workers
                mode, lo, hi, row, slot = (passes[i, 0], passes[i, 1], passes[i, 2], passes[i, 3],
                                           passes[i, 4])
                if mode != NO_PASS:  # the block's dy pass first (`conv_dy_pass`)
                    block_pass(dy[lo:hi], y[lo:hi], buffers[k, :hi - lo], sums[row], mode == MASK)
                b = binding[i]
                for a in range(nargs[b]):
                    pointer = pointers[i, a]
                    if mode == MASK and a == slot:  # the primitive reads the masked block
                        pointer = buffer_pointers[k]
                    code = set_handle(mems[b, k, a], pointer)
                    if code != 0:
                        status[i] = code
                if status[i] == 0:
                    status[i] = execute(prims[i], streams[k], nargs[b], exec_args[b, k])
    return run, set_handle, execute  # the function pointers stay alive with the runner


class Task:
    """One primitive execution: `prim` (a `dnnl.Primitive`) with the buffers at `pointers`
    (addresses) as its arguments `args` (ARG_*, the scratchpad not among them); `keep`: the
    arrays those addresses point into (kept alive with the task); `dy_pass`: None, or (a `DyPass`,
    the sums' row, the block's first row and end row in the pass's dy) for the block pass run
    first by the same worker."""

    __slots__ = ("prim", "args", "pointers", "keep", "dy_pass")

    def __init__(self, prim, args, pointers, keep=(), dy_pass=None):
        self.prim, self.args, self.pointers, self.keep = prim, tuple(args), pointers, keep
        self.dy_pass = dy_pass


class DyPass:
    """A filter gradient's pass over each block of dy (`conv_dy_pass.block_pass`), shared by its
    tasks: dy and, with a ReLU mask, the ReLU output `y` as [rows, channels] float32 C-contiguous
    arrays (y None without the mask), and `sums` [blocks, channels], the per-block bias sums it
    writes. With the mask, each task's primitive reads its block masked, from its worker's buffer,
    in place of its ARG_DIFF_DST pointer."""

    __slots__ = ("dy", "y", "sums")

    def __init__(self, dy, y, sums):
        self.dy, self.y, self.sums = dy, y, sums


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
    passes, dy_arrays = _passes(tasks, workers)
    status = np.zeros(len(tasks), np.int64)
    omp_team.mark()
    with dnnl.library().openmp_threads(workers):
        runner(np.int64(workers), prims, binding, mems, exec_args, nargs, pointers, streams,
               status, passes, *dy_arrays)
    if status.any():
        code = int(status[status != 0][0])
        raise dnnl.DnnlError(f"oneDNN: a primitive run by the team failed with status {code}",
                             code)


def _passes(tasks, workers):
    """([tasks, 5] int64: each task's (pass, first row, end row, sums' row, the ARG_DIFF_DST
    argument's index), the runner's (dy, y, sums, buffers, buffer addresses)) of `tasks`, whose
    passes (if any) share one `DyPass`."""
    passes = np.zeros((len(tasks), 5), np.int64)
    shared = {id(t.dy_pass[0]): t.dy_pass[0] for t in tasks if t.dy_pass is not None}
    if not shared:
        none = np.zeros((0, 1), np.float32)
        return passes, (none, none, none, np.zeros((workers, 0, 1), np.float32),
                        np.zeros(workers, np.int64))
    if len(shared) > 1:
        raise ValueError("the tasks of one team run share one DyPass")
    (dy_pass,) = shared.values()
    rows = max(t.dy_pass[3] - t.dy_pass[2] for t in tasks if t.dy_pass is not None)
    channels = dy_pass.dy.shape[1]
    buffers = _masked_buffers(workers, rows if dy_pass.y is not None else 0, channels)
    for i, task in enumerate(tasks):
        if task.dy_pass is not None:
            _, row, lo, hi = task.dy_pass
            mode = SUMS if dy_pass.y is None else MASK
            passes[i] = (mode, lo, hi, row, task.args.index(dnnl.ARG_DIFF_DST))
    y = dy_pass.dy if dy_pass.y is None else dy_pass.y
    addresses = np.array([buffers[k].ctypes.data for k in range(workers)], np.int64)
    return passes, (dy_pass.dy, y, dy_pass.sums, buffers, addresses)


def _masked_buffers(workers, rows, channels):
    """[workers, rows, channels] float32: each worker's buffer for its masked blocks (kept and
    grown, so a step's runs reuse one allocation)."""
    global _mask_storage
    size = workers * rows * channels
    with _lock:
        if _mask_storage.size < size:
            _mask_storage = np.empty(size, np.float32)
        return _mask_storage[:size].reshape(workers, rows, channels)


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
