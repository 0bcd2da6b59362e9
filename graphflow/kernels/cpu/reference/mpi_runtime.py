"""The MPI communicator behind graphflow's collective ops (through `mpi4py`, imported when needed).

Every collective is MPI's non-blocking one (`Iallreduce`, `Iallgatherv`, `Ibcast`), completed by
testing its request with a deadline: if another process died, raised before reaching the same
collective, or hangs, this process gives up after `timeout()` seconds (GRAPHFLOW_MPI_TIMEOUT,
default 60) instead of waiting forever: it prints the error naming the collective and ends the
whole job with `MPI_Abort`, so that `mpirun` returns within the timeout even while another
process is stuck (with GRAPHFLOW_MPI_ABORT_ON_TIMEOUT=0 it raises `CollectiveTimeoutError`
instead, and the job ends when every process does). The deadline costs no extra message: the
transfer itself is what is polled. Before its data moves, every collective is agreed on by all
processes (name, dtype, shape, root: `mpi_negotiation.py`); a mismatch raises
`CollectiveMismatchError` on every process.

An allreduce can also be split in two (`start_allreduce` / `finish`): the request is posted, the
caller goes on computing, and a progress thread tests it meanwhile (MPI moves data only inside MPI
calls), so the reduction overlaps with that computation; `finish` waits for it with the deadline
(asleep while the thread completes it).

Results are written into buffers a kernel keeps (`BufferPool`) and hands out again once nothing
refers to them any more, so a large reduction neither allocates nor page-faults fresh memory; a
variable assigned the result keeps the buffer itself (two per shape alternate).
Processes must issue collectives in the same order; they do when every process runs the same graph,
since a plan runs its ops in one fixed order.
"""

import atexit
import itertools
import os
import sys
import threading
import time

import numpy as np

from graphflow.kernels.cpu.reference import mpi_negotiation
from graphflow.kernels.cpu.reference.mpi_negotiation import CollectiveMismatchError  # noqa: F401

ENV_TIMEOUT = "GRAPHFLOW_MPI_TIMEOUT"
ENV_ABORT = "GRAPHFLOW_MPI_ABORT_ON_TIMEOUT"
SPIN_SECONDS = 0.1  # test in a tight loop this long before backing off to sleeps
PROGRESS_PAUSE = 100e-6  # how often the progress thread tests the requests in flight
# a split allreduce whose wait came this soon after its start in the previous run had nothing to
# overlap with: its caller completes it directly, without the progress thread
DIRECT_GAP = 50e-6
_state = {"comm": None, "progress": None}


class CollectiveTimeoutError(RuntimeError):
    """A collective did not complete in time: another process failed, exited or is stuck."""


# Open MPI's non-blocking allreduce (its `libnbc` component) reduces to one process and broadcasts
# back (binomial trees) whenever fewer than 4 processes take part, whatever the size: two transfers
# of the whole buffer one after the other, and one process doing every sum. Its ring algorithm
# splits the buffer among the processes instead (each sums its part, then the parts are gathered):
# with 2 processes, 1.3x the throughput at 64 KiB and 1.5-2x from 256 KiB to 4 MiB, in as many
# message rounds as the trees for 2 or 3 processes. From 4 processes on, libnbc picks Rabenseifner's
# algorithm for large buffers and is left alone; a setting of the user's wins.
LIBNBC_ALLREDUCE = "OMPI_MCA_coll_libnbc_iallreduce_algorithm"
LIBNBC_RING = "1"


def _prefer_ring(environ=os.environ, modules=sys.modules):
    """Ask Open MPI for its ring `Iallreduce` when the job has 2 or 3 processes (read before MPI
    starts: the launcher's OMPI_COMM_WORLD_SIZE); True if the setting was made."""
    if LIBNBC_ALLREDUCE in environ or "mpi4py.MPI" in modules:  # set, or too late to matter
        return False
    try:
        procs = int(environ.get("OMPI_COMM_WORLD_SIZE", ""))
    except ValueError:
        return False
    if procs not in (2, 3):
        return False
    environ[LIBNBC_ALLREDUCE] = LIBNBC_RING
    return True


def mpi():
    _prefer_ring()
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise ImportError("graphflow's distributed training needs mpi4py and an MPI library: "
                          'pip install "graphflow[distributed]" and the OS\'s Open MPI '
                          "(see docs/distributed.md)") from exc
    return MPI


def init():
    """Initialize MPI (once per process); returns the world communicator."""
    if _state["comm"] is None:
        MPI = mpi()
        if not MPI.Is_initialized():
            MPI.Init()
        _state["comm"] = MPI.COMM_WORLD
    return _state["comm"]


def comm():
    if _state["comm"] is None:
        raise RuntimeError("graphflow.distribute is not initialized: call init() first")
    return _state["comm"]


def is_initialized():
    return _state["comm"] is not None


def timeout():
    value = os.environ.get(ENV_TIMEOUT, "").strip()
    return float(value) if value else 60.0


def _timeout_error(what):
    """The error of a collective past its deadline; unless GRAPHFLOW_MPI_ABORT_ON_TIMEOUT=0, it
    is printed and the job aborted (a process stuck elsewhere would keep `mpirun` waiting)."""
    error = CollectiveTimeoutError(
        f"{what} did not complete within {timeout():g} s on rank {comm().Get_rank()} of "
        f"{comm().Get_size()}: another process failed, exited or did not reach the same "
        f"collective (set {ENV_TIMEOUT} to wait longer)")
    if os.environ.get(ENV_ABORT, "1").strip() != "0":
        sys.stderr.write(f"graphflow: CollectiveTimeoutError: {error}; aborting the job "
                         "(MPI_Abort)\n")
        sys.stderr.flush()
        comm().Abort(1)
    return error


def _wait(request, what):
    """Complete `request`: test it in a tight loop first (MPI progresses inside Test, so sleeping
    early would stall the transfer; yielding the core costs whole scheduler slices on a busy
    machine), then with growing pauses; past the deadline, fail clearly."""
    if request.Test():
        return
    start = time.monotonic()
    deadline = start + timeout()
    spin_until = start + SPIN_SECONDS
    pause = 1e-5
    while not request.Test():
        now = time.monotonic()
        if now > deadline:
            raise _timeout_error(what)
        if now > spin_until:
            time.sleep(pause)
            pause = min(pause * 2, 1e-3)


wait_request = _wait  # (for mpi_negotiation)


class BufferPool:
    """Output buffers one kernel reuses from run to run, two per shape. A buffer is handed out
    again only when nothing but the pool refers to it (CPython's reference count: a fetched value
    the user keeps, a variable that stored it, a view of it or a request in flight all hold a
    reference), so a value still in use is never overwritten. Two buffers let a variable keep the
    result of one run (stored without a copy, see the Assign kernel) while the next run reduces
    into the other; the stored value is released when the next one is committed. When both are
    held, a fresh buffer replaces the older in the pool."""

    MAX_SHAPES = 4
    PER_SHAPE = 2
    _FREE = 3  # the pool's list, the loop's name in get() and getrefcount's argument

    def __init__(self):
        self._buffers = {}

    def get(self, shape, dtype):
        key = (tuple(shape), np.dtype(dtype).str)
        buffers = self._buffers.get(key)
        if buffers is None:
            if len(self._buffers) >= self.MAX_SHAPES:
                self._buffers.clear()
            buffers = self._buffers[key] = []
        for buf in buffers:
            if sys.getrefcount(buf) <= self._FREE:
                buf.flags.writeable = True  # a variable that stored it marked it read-only
                return buf
        buf = np.empty(key[0], dtype)
        if len(buffers) >= self.PER_SHAPE:
            buffers.pop(0)
        buffers.append(buf)
        return buf


def allreduce(array, what="allreduce", pool=None):
    """Elementwise sum over all processes (into a buffer of `pool` when given)."""
    MPI = mpi()
    send = np.require(array, requirements="C")  # (ascontiguousarray would make 0-d arrays 1-d)
    mpi_negotiation.negotiate(_self, what, send.dtype, send.shape)
    c = comm()
    if send.dtype == np.float16:
        everyone = np.empty((c.Get_size(),) + send.shape, np.uint16)
        _wait(c.Iallgather(send.view(np.uint16), everyone), what)
        return everyone.view(np.float16).sum(axis=0, dtype=np.float32).astype(np.float16)
    recv = pool.get(send.shape, send.dtype) if pool is not None else np.empty_like(send)
    _wait(c.Iallreduce(send, recv, op=MPI.SUM), what)
    return recv


def allgather(array, what="allgather"):
    """Concatenation along axis 0 of every process's array (first dims may differ)."""
    send = np.require(array, requirements="C")
    mpi_negotiation.negotiate(_self, what, send.dtype, (None,) + send.shape[1:])
    c = comm()
    counts = np.empty(c.Get_size(), dtype=np.int64)
    _wait(c.Iallgather(np.array([send.shape[0] if send.ndim else 1], np.int64), counts), what)
    row = int(np.prod(send.shape[1:])) if send.ndim > 1 else 1
    recv = np.empty((int(counts.sum()),) + send.shape[1:], dtype=send.dtype)
    _wait(c.Iallgatherv(send, [recv, counts * row]), what)
    return recv


def broadcast(array, root, what=None):
    """The root process's array on every process (`what` names the collective and its root)."""
    what = what or f"broadcast from rank {root}"
    buf = np.array(array, copy=True, order="C")
    mpi_negotiation.negotiate(_self, what, buf.dtype, buf.shape)
    _wait(comm().Ibcast(buf, root=root), what)
    return buf


def negotiate(what, dtype, shape):
    """Agree on a collective with every other process before running it (mpi_negotiation)."""
    mpi_negotiation.negotiate(_self, what, dtype, shape)


def barrier(what="barrier"):
    _wait(comm().Ibarrier(), what)


# ---------------------------------------------------------------- split (overlapped) allreduce
class _InFlight:
    """A posted allreduce: its request and the buffers MPI reads and writes until it completes.
    With a progress thread, only that thread tests the request; `completed` is set once it did."""

    __slots__ = ("request", "send", "recv", "what", "float16", "completed", "divide_after",
                 "threaded", "posted", "gap")

    def __init__(self, request, send, recv, what, float16, divide_after=False, gap=None):
        self.request, self.send, self.recv, self.what = request, send, recv, what
        self.float16, self.divide_after = float16, divide_after
        self.completed = threading.Event()
        self.threaded = False  # handed to the progress thread
        self.posted = time.perf_counter()
        self.gap = gap


class _Progress:
    """A daemon thread testing the requests in flight (under MPI_THREAD_MULTIPLE only), so that
    their data moves while the calling thread computes. It sleeps while nothing is in flight and
    tests every `PROGRESS_PAUSE` otherwise.

    A caller that needs a request (`wait_for`) does not test it itself: it sleeps until the thread
    has completed it, and the thread tests without pauses meanwhile. Two Python threads testing at
    once would hand the GIL back and forth on every test, and on a machine whose cores are all
    busy each handover waits for the scheduler (measured: a thread that merely woke every 100 us
    during a 1 MB allreduce made it 1.8x slower); one sleeping caller costs one wake-up."""

    def __init__(self):
        self.active = []
        self.wake = threading.Event()     # something was posted
        self.hurry = threading.Event()    # a caller waits: test without pauses
        self.waiting = 0                  # callers in wait_for (changed by the calling threads)
        self.lock = threading.Lock()
        self.stopped = False
        self.thread = threading.Thread(target=self._loop, name="graphflow-mpi-progress",
                                       daemon=True)
        self.thread.start()

    def add(self, item):
        self.active.append(item)
        self.wake.set()

    def wait_for(self, item, seconds):
        """Sleep until the thread completed `item`; False if `seconds` passed first."""
        if item.completed.is_set():
            return True
        with self.lock:
            self.waiting += 1
            self.hurry.set()
        try:
            return item.completed.wait(seconds)
        finally:
            with self.lock:
                self.waiting -= 1
                if not self.waiting:
                    self.hurry.clear()

    def _loop(self):
        while not self.stopped:
            if not self.active:
                self.wake.wait()
                self.wake.clear()
                continue
            if not self.hurry.is_set():
                # let the caller go on computing (the thread would take the GIL from it), then
                # test; a caller that starts waiting cuts the pause short
                self.hurry.wait(PROGRESS_PAUSE)
            for item in list(self.active):
                if item.request.Test():
                    self.active.remove(item)
                    item.completed.set()

    def stop(self):
        self.stopped = True
        self.wake.set()
        self.hurry.set()
        self.thread.join(timeout=1.0)


def _progress():
    progress = _state["progress"]
    if progress is None:
        MPI = mpi()
        if MPI.Query_thread() < MPI.THREAD_MULTIPLE or os.environ.get(
                "GRAPHFLOW_MPI_PROGRESS_THREAD", "1") == "0":
            progress = False
        else:
            progress = _Progress()
            atexit.register(progress.stop)  # before mpi4py finalizes MPI
        _state["progress"] = progress
    return progress


_TOKENS = itertools.count(1)
_in_flight = {}
# seconds `finish` spent waiting for reductions (the communication not hidden behind computation)
# and how many it completed: benchmarks/bench_distributed.py reads them
wait_stats = {"seconds": 0.0, "count": 0}


def start_allreduce(send, recv, what, divide_after=False, gap=None):
    """Post the sum of `send` (1-d) over all processes into `recv` and return a token for
    `finish`; for float16, `recv` is a (size, n) uint16 buffer receiving everyone's halves.
    `divide_after`: the caller's note, handed back by `finish` (the mean's division is still to do).
    `gap`: a one-item list the caller keeps from run to run; `finish` stores there the seconds from
    the post to the wait. When the previous wait followed at once (less than DIRECT_GAP: nothing
    ran in between), the request is not handed to the progress thread, whose wake-ups would only
    compete with the caller testing it (a start immediately followed by its wait: a single bucket,
    or the last one)."""
    MPI = mpi()
    c = comm()
    if send.dtype == np.float16:
        request = c.Iallgather(send.view(np.uint16), recv)
    else:
        request = c.Iallreduce(send, recv, op=MPI.SUM)
    item = _InFlight(request, send, recv, what, send.dtype == np.float16, divide_after, gap)
    progress = _progress()
    if progress and not (gap is not None and gap[0] is not None and gap[0] < DIRECT_GAP):
        item.threaded = True
        progress.add(item)
    token = next(_TOKENS)
    _in_flight[token] = item
    return token


def abandon(token):
    """Forget a posted allreduce whose run failed before finishing it (its buffers stay held, so
    never reused, until the progress thread sees it complete)."""
    item = _in_flight.pop(token, None)
    progress = _progress() if item is not None and not item.threaded else None
    if progress:
        item.threaded = True
        progress.add(item)


def finish(token, what, out=None, divisor=1):
    """Complete the allreduce of `token` within the deadline; returns the summed 1-d array (float16
    sums are computed here in float32, divided by `divisor`, into `out` when given) and the
    start's `divide_after` note."""
    item = _in_flight.pop(token, None)
    if item is None:
        raise RuntimeError(f"{what}: no allreduce in flight for this step (its start did not run)")
    t0 = time.perf_counter()
    if item.gap is not None:
        item.gap[0] = t0 - item.posted
    if item.threaded:
        if not _state["progress"].wait_for(item, timeout()):
            raise _timeout_error(what)
    else:
        _wait(item.request, what)
    wait_stats["seconds"] += time.perf_counter() - t0
    wait_stats["count"] += 1
    if item.float16:
        total = item.recv.view(np.float16).sum(axis=0, dtype=np.float32)
        if divisor != 1:
            total /= divisor
        if out is None:
            return total.astype(np.float16), False
        out[...] = total
        return out, False
    return item.recv, item.divide_after


_self = sys.modules[__name__]  # (what mpi_negotiation reads the communicator and deadline from)
