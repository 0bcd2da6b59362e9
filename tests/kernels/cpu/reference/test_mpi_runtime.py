"""The MPI runtime's parts that need no MPI job: the choice of Open MPI's allreduce algorithm, the
output buffer pool (reused only when nothing else refers to a buffer, two per shape) and the
progress thread completing a request a caller waits for (with a stand-in request). Collectives
themselves run under mpirun in tests/interop/distribute."""

import threading

import numpy as np

from graphflow.kernels.cpu.reference import mpi_runtime


def test_ring_allreduce_is_asked_for_two_or_three_processes_only():
    for procs, expected in (("2", True), ("3", True), ("1", False), ("4", False), ("", False)):
        env = {"OMPI_COMM_WORLD_SIZE": procs} if procs else {}
        assert mpi_runtime._prefer_ring(env, modules={}) is expected, procs
        assert (env.get(mpi_runtime.LIBNBC_ALLREDUCE) == mpi_runtime.LIBNBC_RING) is expected
    mine = {"OMPI_COMM_WORLD_SIZE": "2", mpi_runtime.LIBNBC_ALLREDUCE: "3"}
    assert not mpi_runtime._prefer_ring(mine, modules={})           # the user's setting wins
    assert mine[mpi_runtime.LIBNBC_ALLREDUCE] == "3"
    late = {"OMPI_COMM_WORLD_SIZE": "2"}
    assert not mpi_runtime._prefer_ring(late, modules={"mpi4py.MPI": object()})  # MPI started
    assert mpi_runtime.LIBNBC_ALLREDUCE not in late


def test_pool_reuses_a_buffer_only_when_nothing_else_holds_it():
    pool = mpi_runtime.BufferPool()
    a = pool.get((4,), np.float32)
    a_address = a.ctypes.data
    del a
    a = pool.get((4,), np.float32)
    assert a.ctypes.data == a_address             # nothing held it: the same buffer
    b = pool.get((4,), np.float32)                # `a` is held: the second buffer
    b_address = b.ctypes.data
    assert b_address != a_address
    a[:] = 1.0
    view = b[1:]                                  # holds `b` through its base
    del b
    c = pool.get((4,), np.float32)                # both held: a new one replaces the older
    c_address = c.ctypes.data
    assert c_address not in (a_address, b_address)
    np.testing.assert_array_equal(a, 1.0)         # never written while held
    c.flags.writeable = False                     # as a variable that stored it
    del c
    d = pool.get((4,), np.float32)
    assert d.ctypes.data == c_address and d.flags.writeable  # released: reused, writable again
    del view
    assert pool.get((4,), np.float32).ctypes.data == b_address  # `a` left the pool for `c`


class _Request:
    """Completes at its `after`-th test (never with None)."""

    def __init__(self, after):
        self.after, self.tests = after, 0
        self.lock = threading.Lock()

    def Test(self):
        with self.lock:
            self.tests += 1
            return self.after is not None and self.tests >= self.after


def test_progress_thread_completes_what_a_caller_waits_for():
    progress = mpi_runtime._Progress()
    try:
        quick = mpi_runtime._InFlight(_Request(3), None, None, "quick", False)
        never = mpi_runtime._InFlight(_Request(None), None, None, "never", False)
        progress.add(never)
        progress.add(quick)
        assert progress.wait_for(quick, 5.0)
        assert quick.request.tests == 3 and quick.completed.is_set()
        assert not progress.wait_for(never, 0.05)  # the deadline passes: False, still in flight
        assert never in progress.active and never.request.tests > 3
        assert not progress.hurry.is_set()         # nobody waits: the thread pauses again
    finally:
        progress.stop()
    assert not progress.thread.is_alive()


class _Comm:
    """Posts stand-in requests that complete at their second test."""

    def __init__(self):
        self.posted = []

    def Iallreduce(self, send, recv, op):
        np.copyto(recv, send)
        self.posted.append(_Request(2))
        return self.posted[-1]


def test_a_wait_that_follows_its_start_at_once_skips_the_progress_thread(monkeypatch):
    progress = mpi_runtime._Progress()
    handed = []
    monkeypatch.setattr(progress, "add", lambda item: handed.append(item) or
                        mpi_runtime._Progress.add(progress, item))
    monkeypatch.setitem(mpi_runtime._state, "comm", _Comm())
    monkeypatch.setitem(mpi_runtime._state, "progress", progress)
    monkeypatch.setattr(mpi_runtime, "mpi", lambda: type("MPI", (), {"SUM": "sum"}))
    try:
        send, recv, gap = np.arange(3.0), np.empty(3), [None]
        token = mpi_runtime.start_allreduce(send, recv, "test", True, gap)
        assert len(handed) == 1                 # no gap known yet: the thread helps
        total, divide_after = mpi_runtime.finish(token, "test")
        np.testing.assert_array_equal(total, send)
        assert divide_after and 0 <= gap[0] < 5.0  # the seconds from the post to the wait
        gap[0] = 0.0             # the previous wait followed at once: the caller completes it
        token = mpi_runtime.start_allreduce(send, recv, "test", False, gap)
        assert len(handed) == 1
        total, divide_after = mpi_runtime.finish(token, "test")
        np.testing.assert_array_equal(total, send)
        assert not divide_after
        gap[0] = 1.0             # a previous run computed between start and wait: the thread helps
        token = mpi_runtime.start_allreduce(send, recv, "test", False, gap)
        assert len(handed) == 2
        mpi_runtime.finish(token, "test")
        gap[0] = 0.0             # a failed run abandons a direct request: the thread completes it
        token = mpi_runtime.start_allreduce(send, recv, "test", False, gap)
        assert len(handed) == 2
        mpi_runtime.abandon(token)
        assert len(handed) == 3 and progress.wait_for(handed[-1], 5.0)
    finally:
        progress.stop()
