"""A split allreduce's start returns before its negotiation completes, and its data still moves
only once every process agreed, in the order the starts ran: with stand-in communicators whose
requests complete when a test says so, the progress thread posts each reduction after its own
negotiation and after every earlier one; a mismatch surfaces at the wait (its report gathered
where the data would have gone, the later reductions still posted); a blocking collective waits
until the queue is posted before it posts. Real processes run in tests/interop/distribute."""

import threading
import time

import numpy as np
import pytest

from graphflow.kernels.cpu.reference import mpi_negotiation, mpi_runtime


class _Request:
    def __init__(self, log, name):
        self.done = threading.Event()
        self.log, self.name = log, name

    def Test(self):
        return self.done.is_set()


class _Comm:
    """Records what is posted; `others` is the hash the other process sent (None: ours)."""

    def __init__(self, log, label, others=None):
        self.log, self.label, self.others = log, label, others
        self.requests = []

    def Get_size(self):
        return 2

    def Get_rank(self):
        return 0

    def _post(self, name):
        request = _Request(self.log, name)
        self.log.append(f"{self.label}:{name}")
        self.requests.append(request)
        return request

    def Iallreduce(self, send, recv, op):
        if op == "max":
            other = self.others.pop(0) if self.others else None
            np.maximum(send, send if other is None else np.array([other, -other]), out=recv)
            return self._post(f"negotiate{len(self.requests)}")
        np.copyto(recv, send * 2)
        return self._post(f"sum{send[0]:g}")

    def Iallgather(self, send, recv):
        recv[:] = send
        return self._post("report")

    def Ibarrier(self):
        request = self._post("barrier")
        request.done.set()
        return request


@pytest.fixture
def runtime(monkeypatch):
    log = []
    data, negotiation = _Comm(log, "data"), _Comm(log, "negotiation", [])
    progress = mpi_runtime._Progress()
    monkeypatch.setitem(mpi_runtime._state, "comm", data)
    monkeypatch.setitem(mpi_runtime._state, "negotiation", negotiation)
    monkeypatch.setitem(mpi_runtime._state, "progress", progress)
    monkeypatch.setattr(mpi_runtime, "mpi", lambda: type("MPI", (), {"SUM": "sum", "MAX": "max"}))
    monkeypatch.setenv(mpi_negotiation.ENV_NEGOTIATE, "1")
    monkeypatch.setenv(mpi_runtime.ENV_TIMEOUT, "5")
    try:
        yield log, data, negotiation
    finally:
        progress.stop()


def _start(value, name):
    send = np.full(3, float(value))
    return mpi_runtime.start_allreduce(send, np.empty(3), name, agree=(np.float64, (3,)))


def _eventually(condition):
    deadline = time.monotonic() + 5
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.001)


def test_starts_return_at_once_and_their_data_moves_in_order_once_agreed(runtime):
    log, data, negotiation = runtime
    first, second = _start(1, "first"), _start(2, "second")
    assert log == ["negotiation:negotiate0", "negotiation:negotiate1"]  # no data moved yet
    negotiation.requests[1].done.set()  # the second is agreed first: it still waits its turn
    time.sleep(0.01)
    assert not data.requests
    negotiation.requests[0].done.set()
    _eventually(lambda: len(data.requests) == 2)
    assert log[2:] == ["data:sum1", "data:sum2"]
    for request in data.requests:
        request.done.set()
    total, _ = mpi_runtime.finish(first, "first")
    np.testing.assert_array_equal(total, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(mpi_runtime.finish(second, "second")[0], [4.0, 4.0, 4.0])


def test_a_mismatch_raises_at_the_wait_and_later_starts_go_on(runtime):
    log, data, negotiation = runtime
    negotiation.others[:] = [12345, None]  # the other process described another collective
    bad, good = _start(1, "bad"), _start(2, "good")
    for request in negotiation.requests:
        request.done.set()
    _eventually(lambda: len(data.requests) == 1)
    assert log[2:] == ["data:report"]  # in the bad one's place, on both processes
    data.requests[0].done.set()
    _eventually(lambda: len(data.requests) == 2)
    assert log[3:] == ["data:sum2"]
    with pytest.raises(mpi_runtime.CollectiveMismatchError, match="rank 0: bad of float64"):
        mpi_runtime.finish(bad, "bad")
    data.requests[1].done.set()
    np.testing.assert_array_equal(mpi_runtime.finish(good, "good")[0], [4.0, 4.0, 4.0])


def test_a_blocking_collective_posts_after_the_queued_reductions(runtime):
    log, data, negotiation = runtime
    token = _start(1, "queued")
    threading.Timer(0.05, negotiation.requests[0].done.set).start()
    mpi_runtime.barrier("barrier")  # waits until the queued reduction is posted
    assert log == ["negotiation:negotiate0", "data:sum1", "data:barrier"]
    data.requests[0].done.set()
    mpi_runtime.finish(token, "queued")


def test_without_negotiation_a_start_posts_at_once(runtime, monkeypatch):
    log, data, _ = runtime
    monkeypatch.setenv(mpi_negotiation.ENV_NEGOTIATE, "0")
    token = _start(1, "plain")
    assert log == ["data:sum1"]
    data.requests[0].done.set()
    mpi_runtime.finish(token, "plain")
