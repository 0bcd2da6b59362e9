"""The MPI communicator behind graphflow's collective ops (through `mpi4py`, imported when needed).

Every collective first waits for all processes at a non-blocking barrier, polled with a deadline:
if another process died, raised before reaching the same collective, or hangs, this process fails
with `CollectiveTimeoutError` naming the collective after `timeout()` seconds (GRAPHFLOW_MPI_TIMEOUT,
default 60) instead of waiting forever. The data then moves with MPI's blocking collective.
Processes must issue collectives in the same order; they do when every process runs the same graph,
since a plan runs its ops in one fixed order.
"""

import os
import time

import numpy as np

ENV_TIMEOUT = "GRAPHFLOW_MPI_TIMEOUT"
SPIN_SECONDS = 0.05  # test without pausing this long before backing off to short sleeps
_state = {"comm": None}


class CollectiveTimeoutError(RuntimeError):
    """A collective did not complete in time: another process failed, exited or is stuck."""


def mpi():
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


def _wait(request, what):
    """Complete `request`, testing it in a tight loop first (MPI progresses inside Test, so sleeping
    early would stall the transfer), then with growing pauses; past the deadline, fail clearly."""
    start = time.monotonic()
    deadline = start + timeout()
    spin_until = start + SPIN_SECONDS
    pause = 1e-5
    while not request.Test():
        now = time.monotonic()
        if now > deadline:
            raise CollectiveTimeoutError(
                f"{what} did not complete within {timeout():g} s on rank {comm().Get_rank()} of "
                f"{comm().Get_size()}: another process failed, exited or did not reach the same "
                f"collective (set {ENV_TIMEOUT} to wait longer)")
        if now > spin_until:
            time.sleep(pause)
            pause = min(pause * 2, 1e-3)


def _arrive(what):
    """Wait (with the deadline) until every process has reached this collective. The transfer
    itself then uses MPI's blocking collective, whose tuned algorithms are several times faster
    than the non-blocking ones for the buffer sizes of gradients."""
    _wait(comm().Ibarrier(), what)


def allreduce(array, what="allreduce"):
    """Elementwise sum over all processes."""
    MPI = mpi()
    send = np.require(array, requirements="C")  # (ascontiguousarray would make 0-d arrays 1-d)
    _arrive(what)
    if send.dtype == np.float16:  # MPI has no float16 sum: move the halves, add in float32
        everyone = np.empty((comm().Get_size(),) + send.shape, np.uint16)
        comm().Allgather(send.view(np.uint16), everyone)
        return everyone.view(np.float16).sum(axis=0, dtype=np.float32).astype(np.float16)
    recv = np.empty_like(send)
    comm().Allreduce(send, recv, op=MPI.SUM)
    return recv


def allgather(array, what="allgather"):
    """Concatenation along axis 0 of every process's array (first dims may differ)."""
    send = np.require(array, requirements="C")
    c = comm()
    _arrive(what)
    counts = np.empty(c.Get_size(), dtype=np.int64)
    c.Allgather(np.array([send.shape[0] if send.ndim else 1], np.int64), counts)
    row = int(np.prod(send.shape[1:])) if send.ndim > 1 else 1
    recv = np.empty((int(counts.sum()),) + send.shape[1:], dtype=send.dtype)
    c.Allgatherv(send, [recv, counts * row])
    return recv


def broadcast(array, root, what="broadcast"):
    """The root process's array on every process."""
    buf = np.array(array, copy=True, order="C")
    _arrive(what)
    comm().Bcast(buf, root=root)
    return buf


def barrier(what="barrier"):
    _wait(comm().Ibarrier(), what)
