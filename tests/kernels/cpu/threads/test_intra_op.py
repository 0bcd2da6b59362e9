"""The intra-op thread pool: work shared by the caller and the workers, errors and numpy error
handling carried across threads, no nesting, no waiting on jobs no worker started."""

import threading

import numpy as np
import pytest

from graphflow.kernels.cpu.threads import intra_op


def test_caller_and_workers_run_the_work_at_once_and_share_one_sequence():
    pool = intra_op.IntraOpPool()
    items = intra_op.shared_iter(range(200))
    barrier = threading.Barrier(3, timeout=10)
    taken = {}

    def work():
        barrier.wait()  # only passes once the caller and both helpers are inside
        mine = taken.setdefault(threading.get_ident(), [])
        for i in items:
            mine.append(i)
    pool.run_shared(work, threads=3)
    assert len(taken) == 3 and threading.get_ident() in taken
    assert sorted(i for got in taken.values() for i in got) == list(range(200))
    assert pool.num_workers == 2 and pool.helper_calls == 2


def test_one_thread_or_a_worker_runs_the_work_alone():
    pool = intra_op.IntraOpPool()
    calls = []
    pool.run_shared(lambda: calls.append(threading.get_ident()), threads=1)
    assert calls == [threading.get_ident()] and pool.num_workers == 0

    nested = []

    def outer():
        if intra_op.in_worker():  # a kernel running on a worker asks for threads again
            pool.run_shared(lambda: nested.append(threading.get_ident()), threads=4)
            nested.append(("outer", threading.get_ident()))
    started = threading.Event()

    def work():
        outer()
        if intra_op.in_worker():
            started.set()
        else:
            assert started.wait(10)
    pool.run_shared(work, threads=2)
    assert len(nested) == 2 and nested[0] == nested[1][1]  # inline, on the same worker
    assert pool.num_workers == 1                           # the pool did not grow for it


def test_an_error_on_a_worker_is_raised_by_the_caller():
    pool = intra_op.IntraOpPool()
    raised = threading.Event()

    def work():
        if intra_op.in_worker():
            raised.set()
            raise KeyError("from the worker")
        assert raised.wait(10)
    with pytest.raises(KeyError, match="from the worker"):
        pool.run_shared(work, threads=2)
    pool.run_shared(lambda: None, threads=2)  # the pool still works afterwards


def test_workers_use_the_callers_numpy_error_handling():
    pool = intra_op.IntraOpPool()
    seen = []
    done = threading.Event()

    def work():
        if intra_op.in_worker():
            seen.append(np.geterr()["over"])
            done.set()
        else:
            assert done.wait(10)
    with np.errstate(over="raise"):
        pool.run_shared(work, threads=2)
    assert seen == ["raise"]
    done.clear()
    pool.run_shared(work, threads=2)
    assert seen == ["raise", "warn"]


def test_jobs_no_worker_started_are_skipped():
    pool = intra_op.IntraOpPool()
    release = threading.Event()
    blocked = threading.Event()

    def hold():  # keeps the only worker busy
        if intra_op.in_worker():
            blocked.set()
            assert release.wait(10)
        else:
            assert blocked.wait(10)
    t = threading.Thread(target=pool.run_shared, args=(hold, 2))
    t.start()
    assert blocked.wait(10)
    ran = []
    pool.run_shared(lambda: ran.append(intra_op.in_worker()), threads=2)  # returns at once
    assert ran == [False]
    release.set()
    t.join(10)
    assert not t.is_alive()
    helped = threading.Event()

    def needs_a_worker():  # the worker still serves jobs after skipping one
        if intra_op.in_worker():
            helped.set()
        else:
            assert helped.wait(10)
    pool.run_shared(needs_a_worker, threads=2)
    assert pool.helper_calls == 2  # hold's helper and the last call's, never the skipped job's
