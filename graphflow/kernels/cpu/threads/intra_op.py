"""The intra-op thread pool: persistent worker threads that let one CPU kernel call use several cores.

numpy ufuncs release the GIL while they loop, so threads calling them on disjoint parts of an array
run in parallel. `run_shared(work, threads)` calls `work()` on the calling thread and on up to
`threads - 1` pool workers at once; `work` must pull its pieces from a shared source (a
`shared_iter`) until none is left, so any number of callers, including only the calling thread,
completes the job, and which thread computes which piece does not change what is computed.

The workers are started once per process (the pool grows to the largest count asked for) and are
reused by every later call: a call only queues its job (a few microseconds to wake a worker). A
job that a worker has not started when the calling thread finishes the work is skipped, so a busy
pool (several sessions running at once) never delays a caller beyond its own work. Calls from
inside a worker run on that worker alone: pools never nest.
"""

import os
import queue
import sys
import threading

import numpy as np

_local = threading.local()


def in_worker():
    """True on a pool worker thread (where kernels must not parallelize again)."""
    return getattr(_local, "worker", False)


def shared_iter(iterable):
    """An iterator several threads may draw from at once, each item going to exactly one of them."""
    it = iter(iterable)
    if getattr(sys, "_is_gil_enabled", lambda: True)():
        return it  # built-in iterators over ranges hand out each item once under the GIL
    return _LockedIterator(it)


class _LockedIterator:
    __slots__ = ("_it", "_lock")

    def __init__(self, it):
        self._it, self._lock = it, threading.Lock()

    def __iter__(self):
        return self

    def __next__(self):
        with self._lock:
            return next(self._it)


class _Job:
    """One `run_shared` call as the workers see it: whether it still takes helpers, how many run."""

    __slots__ = ("work", "errstate", "lock", "open", "running", "finished", "error")

    def __init__(self, work, errstate):
        self.work, self.errstate = work, errstate
        self.lock = threading.Lock()
        self.open = True          # False once the calling thread is done: later helpers skip it
        self.running = 0          # helpers inside work()
        self.finished = threading.Lock()
        self.finished.acquire()   # released by the last helper to leave after the job closed
        self.error = None


class IntraOpPool:
    """Worker threads shared by every kernel of the process (see the module docstring)."""

    def __init__(self):
        self._queue = queue.SimpleQueue()
        self._workers = []
        self._grow_lock = threading.Lock()
        # work() calls made by workers: how often the pool really helped (exact for one job at a
        # time; jobs running at once may lose a count)
        self.helper_calls = 0

    @property
    def num_workers(self):
        return len(self._workers)

    def run_shared(self, work, threads):
        """Call `work()` on this thread and on up to `threads - 1` workers concurrently; return
        once every call that started has returned, raising the first error one of them raised."""
        helpers = threads - 1
        if helpers <= 0 or in_worker():
            work()
            return
        if len(self._workers) < helpers:
            self._grow(helpers)
        job = _Job(work, np.geterr())  # numpy's error handling is per thread: helpers use the caller's
        put = self._queue.put
        for _ in range(helpers):
            put(job)
        try:
            work()
        finally:
            with job.lock:
                job.open = False
                wait = job.running > 0
            if wait:
                job.finished.acquire()
        if job.error is not None:
            raise job.error

    def _grow(self, n):
        with self._grow_lock:
            while len(self._workers) < n:
                worker = threading.Thread(target=self._serve, daemon=True,
                                          name=f"graphflow-intra-op-{len(self._workers)}")
                worker.start()
                self._workers.append(worker)

    def _serve(self):
        _local.worker = True
        own_errstate = np.geterr()
        get = self._queue.get
        while True:
            job = get()
            with job.lock:
                if not job.open:
                    continue
                job.running += 1
                self.helper_calls += 1
            try:
                if job.errstate == own_errstate:
                    job.work()
                else:
                    with np.errstate(**job.errstate):
                        job.work()
            except BaseException as exc:  # handed to the calling thread
                if job.error is None:
                    job.error = exc
            finally:
                with job.lock:
                    job.running -= 1
                    if not job.open and job.running == 0:
                        job.finished.release()


POOL = IntraOpPool()


def _reset_after_fork():
    # the child process has none of the parent's worker threads: start over
    global POOL
    POOL = IntraOpPool()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
