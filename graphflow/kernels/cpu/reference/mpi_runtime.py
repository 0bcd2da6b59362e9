"""The MPI communicator behind graphflow's collective ops (through `mpi4py`, imported when needed).

Every collective is MPI's non-blocking one (`Iallreduce`, `Iallgatherv`, `Ibcast`), completed by
testing its request with a deadline: if another process died, raised before reaching the same
collective, or hangs, this process gives up after `timeout()` seconds (GRAPHFLOW_MPI_TIMEOUT,
default 60) instead of waiting forever: it prints the error naming the collective and ends the
whole job with `MPI_Abort`, so that `mpirun` returns within the timeout even while another
process is stuck (with GRAPHFLOW_MPI_ABORT_ON_TIMEOUT=0 it raises `CollectiveTimeoutError`
instead, and the job ends when every process does). The deadline costs no extra message: the
transfer itself is what is polled. Before its data moves, every collective is agreed on by all
processes (name, dtype, shape, root: `mpi_negotiation.py`, on a duplicate of the world's
communicator); a mismatch raises `CollectiveMismatchError` on every process.

An allreduce can also be split in two (`start_allreduce` / `finish`): the request is posted, the
caller goes on computing, and a progress thread posts it once its negotiation agreed and tests it
meanwhile (MPI moves data only inside MPI calls), so the negotiation and the reduction overlap with
that computation; `finish` waits for it with the deadline (asleep while the thread completes it).

Results are written into buffers a kernel keeps (`BufferPool`) and hands out again once nothing
refers to them any more, so a large reduction neither allocates nor page-faults fresh memory; a
variable assigned the result keeps the buffer itself (two per shape alternate).
Processes must issue collectives in the same order; they do when every process runs the same graph,
since a plan runs its ops in one fixed order.
"""

import atexit
import collections
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
_state = {"comm": None, "negotiation": None, "progress": None}


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
        # negotiations travel on a communicator of their own (see "split allreduce" below)
        _state["negotiation"] = MPI.COMM_WORLD.Dup()
    return _state["comm"]


def comm():
    if _state["comm"] is None:
        raise RuntimeError("graphflow.distribute is not initialized: call init() first")
    return _state["comm"]


def negotiation_comm():
    """The communicator negotiations travel on (a duplicate of the world's, made by `init`)."""
    if _state["negotiation"] is None:
        raise RuntimeError("graphflow.distribute is not initialized: call init() first")
    return _state["negotiation"]


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
    negotiate(what, send.dtype, send.shape)
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
    negotiate(what, send.dtype, (None,) + send.shape[1:])
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
    negotiate(what, buf.dtype, buf.shape)
    _wait(comm().Ibcast(buf, root=root), what)
    return buf


def negotiate(what, dtype, shape):
    """Agree on a collective with every other process before running it (mpi_negotiation), once
    the split allreduces started before it have posted theirs (`_drain`)."""
    pending = mpi_negotiation.post(_self, what, dtype, shape)
    _drain(what)
    mpi_negotiation.resolve(_self, pending)


def barrier(what="barrier"):
    _drain(what)
    _wait(comm().Ibarrier(), what)


# ---------------------------------------------------------------- split (overlapped) allreduce
# A split allreduce's start does not wait for its negotiation: it posts the exchange (on the
# negotiation communicator, always from the calling thread, so in program order on every process)
# and queues the reduction; the progress thread posts the queue's head once its negotiation agreed
# (or, on a mismatch, gathers every rank's description where the data would have gone, and the
# wait raises). Data and reports travel on the world communicator strictly in queue order: the
# thread posts only the head, and a caller posts there itself (a blocking collective, a start
# completed directly) only once the queue is empty (`_drain`). The k-th negotiation agrees on every
# process or on none, so the k-th item posts its data everywhere or its report everywhere.
class _InFlight:
    """A split allreduce: how to post it, its negotiation, then its request and the buffers MPI
    reads and writes until it completes. With a progress thread, only that thread tests the
    request; `posted` is set once the data (or a mismatch's report) was posted, `completed` once
    the request completed (or `error` was set)."""

    __slots__ = ("request", "send", "recv", "what", "float16", "completed", "divide_after",
                 "threaded", "gap", "negotiation", "error", "queued", "post_time")

    def __init__(self, request, send, recv, what, float16, divide_after=False, gap=None,
                 negotiation=None):
        self.request, self.send, self.recv, self.what = request, send, recv, what
        self.float16, self.divide_after = float16, divide_after
        self.completed = threading.Event()
        self.queued = threading.Event()  # set: its data or report is posted (left the queue)
        self.threaded = False  # handed to the progress thread
        self.post_time = time.perf_counter()
        self.gap = gap
        self.negotiation, self.error = negotiation, None

    def post(self):
        c = comm()
        if self.float16:  # everyone's halves, summed in float32 by `finish`
            self.request = c.Iallgather(self.send.view(np.uint16), self.recv)
        else:
            self.request = c.Iallreduce(self.send, self.recv, op=mpi().SUM)
        self.queued.set()


class _Progress:
    """A daemon thread (under MPI_THREAD_MULTIPLE only) that posts the queued reductions once
    their negotiation agreed, in order, and tests the requests in flight, so that their data moves
    while the calling thread computes. It sleeps while nothing is queued or in flight and tests
    every `PROGRESS_PAUSE` otherwise.

    A caller that needs a request (`wait_for`) does not test it itself: it sleeps until the thread
    has completed it, and the thread tests without pauses meanwhile. Two Python threads testing at
    once would hand the GIL back and forth on every test, and on a machine whose cores are all
    busy each handover waits for the scheduler (measured: a thread that merely woke every 100 us
    during a 1 MB allreduce made it 1.8x slower); one sleeping caller costs one wake-up."""

    def __init__(self):
        self.active = []
        self.queue = collections.deque()  # started, not yet posted: appended by the caller only
        self.wake = threading.Event()     # something was posted or queued
        self.hurry = threading.Event()    # a caller waits: test without pauses
        self.waiting = 0                  # callers in wait_for (changed by the calling threads)
        self.lock = threading.Lock()
        self.stopped = False
        self.thread = threading.Thread(target=self._loop, name="graphflow-mpi-progress",
                                       daemon=True)
        self.thread.start()

    def add(self, item):
        """Test `item` (posted) until it completes."""
        self.active.append(item)
        self.wake.set()

    def submit(self, item):
        """Post `item` once its negotiation agreed and every item submitted before it is posted."""
        self.queue.append(item)
        self.wake.set()

    def wait_for(self, item, seconds, event=None):
        """Sleep until the thread completed `item` (or set `event`); False if `seconds` passed
        first."""
        event = event or item.completed
        if event.is_set():
            return True
        with self.lock:
            self.waiting += 1
            self.hurry.set()
        try:
            return event.wait(seconds)
        finally:
            with self.lock:
                self.waiting -= 1
                if not self.waiting:
                    self.hurry.clear()

    def _advance(self):
        """Post the queue's head items whose negotiation is over, in order."""
        while self.queue:
            item = self.queue[0]
            pending = item.negotiation
            try:
                if pending is not None and pending.report is None:
                    if not pending.request.Test():
                        return
                    if not pending.ok():
                        mpi_negotiation.post_report(_self, pending)
                if pending is not None and pending.report is not None:
                    if not pending.report.Test():
                        return
                    item.error = mpi_negotiation.mismatch_error(_self, pending)
                else:
                    item.post()
            except Exception as exc:  # (an MPI error: the wait raises it)
                item.error = exc
            self.queue.popleft()  # only now: a caller posts itself once the queue is empty
            item.queued.set()
            if item.error is None:
                self.active.append(item)
            else:
                item.completed.set()

    def _loop(self):
        while not self.stopped:
            if not self.active and not self.queue:
                self.wake.wait()
                self.wake.clear()
                continue
            if not self.hurry.is_set():
                # let the caller go on computing (the thread would take the GIL from it), then
                # test; a caller that starts waiting cuts the pause short
                self.hurry.wait(PROGRESS_PAUSE)
            self._advance()
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


def _drain(what):
    """Return once every split allreduce started so far posted its data (or its mismatch
    report), so that the caller may post on the world communicator; that happens as the other
    processes reach the same collectives, which they do before reaching the caller's."""
    progress = _state["progress"]
    if progress and progress.queue:
        last = progress.queue[-1]
        if not progress.wait_for(last, timeout(), last.queued):
            raise _timeout_error(f"{last.what} (before {what})")


_TOKENS = itertools.count(1)
_in_flight = {}
# seconds `finish` spent waiting for reductions (the communication not hidden behind computation)
# and how many it completed: benchmarks/bench_distributed.py reads them
wait_stats = {"seconds": 0.0, "count": 0}


def start_allreduce(send, recv, what, divide_after=False, gap=None, agree=None):
    """Start the sum of `send` (1-d) over all processes into `recv` and return a token for
    `finish`; for float16, `recv` is a (size, n) uint16 buffer receiving everyone's halves.
    `agree`: (dtype, shape) the processes negotiate (mpi_negotiation) before the data moves; with
    a progress thread the start does not wait for that: the thread posts the reduction once it
    agreed and `finish` raises CollectiveMismatchError if not.
    `divide_after`: the caller's note, handed back by `finish` (the mean's division is still to do).
    `gap`: a one-item list the caller keeps from run to run; `finish` stores there the seconds from
    the start to the wait. When the previous wait followed at once (less than DIRECT_GAP: nothing
    ran in between) and nothing is queued, the caller negotiates and posts here and the request is
    not handed to the progress thread, whose wake-ups would only compete with the caller testing
    it (a start immediately followed by its wait: a single bucket, or the last one)."""
    negotiation = mpi_negotiation.post(_self, what, *agree) if agree is not None else None
    item = _InFlight(None, send, recv, what, send.dtype == np.float16, divide_after, gap,
                     negotiation)
    progress = _progress()
    direct = gap is not None and gap[0] is not None and gap[0] < DIRECT_GAP
    if progress and (progress.queue or (negotiation is not None and not direct)):
        item.threaded = True
        progress.submit(item)
    else:
        mpi_negotiation.resolve(_self, negotiation)  # (the queue is empty)
        item.post()
        if progress and not direct:
            item.threaded = True
            progress.add(item)
    token = next(_TOKENS)
    _in_flight[token] = item
    item.post_time = time.perf_counter()  # (the gap: what ran between this start and its wait)
    return token


def abandon(token):
    """Forget a split allreduce whose run failed before finishing it (its buffers stay held, so
    never reused, until the progress thread sees it complete)."""
    item = _in_flight.pop(token, None)
    progress = _progress() if item is not None and not item.threaded else None
    if progress:
        item.threaded = True
        progress.add(item)


def finish(token, what, out=None, divisor=1):
    """Complete the allreduce of `token` within the deadline; returns the summed 1-d array (float16
    sums are computed here in float32, divided by `divisor`, into `out` when given) and the
    start's `divide_after` note. Raises CollectiveMismatchError if its negotiation failed."""
    item = _in_flight.pop(token, None)
    if item is None:
        raise RuntimeError(f"{what}: no allreduce in flight for this step (its start did not run)")
    t0 = time.perf_counter()
    if item.gap is not None:
        item.gap[0] = t0 - item.post_time
    if item.threaded:
        if not _state["progress"].wait_for(item, timeout()):
            raise _timeout_error(what)
    else:
        _wait(item.request, what)
    wait_stats["seconds"] += time.perf_counter() - t0
    wait_stats["count"] += 1
    if item.error is not None:
        raise item.error
    if item.float16:
        total = item.recv.view(np.float16).sum(axis=0, dtype=np.float32)
        if divisor != 1:
            total /= divisor
        if out is None:
            return total.astype(np.float16), False
        out[...] = total
        return out, False
    return item.recv, item.divide_after


_self = sys.modules[__name__]  # (what mpi_negotiation reads the communicators and deadline from)
