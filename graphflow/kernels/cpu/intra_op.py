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

`run_beside(first, second)` runs two independent kernel calls at the same time (the executor's
inter-op overlap, `engine/overlap.py`): `first` on the calling thread, `second` on a worker, which
runs it alone (as any call on a worker). The calling thread is marked `beside_another()` meanwhile:
its kernel still shares its work out through `run_shared` (the worker joins in once `second` is
done), but takes no route that starts threads of its own (oneDNN's OpenMP teams). When no worker
starts `second` before `first` is done, the calling thread runs it too: a busy machine never waits.
"""

import os
import queue
import sys
import threading

import numpy as np

_local = threading.local()
# A thread waiting for a pair's other call looks for pool jobs to help with this often.
HELP_POLL_SECONDS = 0.0002


def in_worker():
    """True on a pool worker thread (where kernels must not parallelize again)."""
    return getattr(_local, "worker", False)


def beside_another():
    """True on a thread running one kernel call beside another one (`run_beside`): its kernels
    may share work with the pool but must not start threads of their own."""
    return getattr(_local, "beside", False)


def mark_pair_position(exc, position):
    """Note on `exc` which call of a pair raised it (0: the first, 1: the second); read back by
    `pair_position`."""
    try:
        exc.graphflow_pair_position = position
    except AttributeError:  # an exception type without a __dict__: the pair's first step is named
        pass


def pair_position(exc):
    """Which call of a pair raised `exc` (`mark_pair_position`), or None."""
    return getattr(exc, "graphflow_pair_position", None)


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

    def run_beside(self, first, second, positions=(0, 1)):
        """(first(), second()), the two calls running at the same time: `first` on this thread,
        `second` on a worker (or after `first` on this thread when no worker has started it).
        Both calls may share their work out: whichever thread is done first helps with the other
        call's pieces (the calling thread takes pool jobs while it waits). An exception is raised
        as it is, marked with the call that raised it (`pair_position`: the entry of `positions`
        for that call)."""
        results = [None, None]

        def call(index):
            try:
                results[index] = (first, second)[index]()
            except Exception as exc:
                mark_pair_position(exc, positions[index])
                raise
        if in_worker():
            call(0)
            call(1)
            return results
        if not self._workers:
            self._grow(1)
        rest = shared_iter((1,))  # `second`: taken by a worker, or by this thread after `first`

        def second_on_worker():  # a worker running `second` shares its work like a caller
            was_beside = beside_another()
            _local.worker, _local.beside = False, True
            try:
                for index in rest:
                    call(index)
            finally:
                _local.worker, _local.beside = True, was_beside
        job = _Job(second_on_worker, np.geterr())
        self._queue.put(job)
        was_beside, _local.beside = beside_another(), True
        try:
            try:
                call(0)
                for index in rest:
                    call(index)
            finally:
                with job.lock:
                    job.open = False
                    wait = job.running > 0
                if wait:
                    self._help_until(job.finished)
        finally:
            _local.beside = was_beside
        if job.error is not None:
            raise job.error
        return results

    def _help_until(self, finished):
        """Run pool jobs on this thread (as a worker would) until `finished` is released."""
        own_errstate = np.geterr()
        was_worker, _local.worker = in_worker(), True
        try:
            while not finished.acquire(blocking=False):
                try:
                    job = self._queue.get(timeout=HELP_POLL_SECONDS)
                except queue.Empty:
                    continue
                self._help(job, own_errstate)
        finally:
            _local.worker = was_worker

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
            self._help(get(), own_errstate)

    def _help(self, job, own_errstate):
        """Run one queued job's work on this thread, unless its caller has closed it."""
        with job.lock:
            if not job.open:
                return
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
