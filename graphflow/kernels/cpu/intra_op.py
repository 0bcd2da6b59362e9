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

Placement: a worker woken by a caller is often put by Linux on the caller's own CPU (the waker's
CPU, "wake affine"), where it waits for the caller's time slice while another CPU idles; the load
balancer moves it only at its next tick (milliseconds), after a kernel of a few hundred
microseconds has finished on one core. So before queuing a job, the caller keeps the workers off
the CPU it runs on (`sched_setaffinity` to the process's other CPUs; a system call only when the
caller's CPU changed since the last job). Measured on 2 cores (load 1.0), a 2x2 MaxPool of
[64, 32, 32, 32] in two blocks: without it the worker ran on the caller's CPU, or not at all, in 6
of 8 calls (0.42 ms, as one thread); with it the worker ran on the other CPU every call (0.30 ms).
But whole training steps were no faster (CIFAR CNN, 4 interleaved runs each, quiet machine: step
median 29.4-32.8 ms with, 29.7-32.2 without), and with other processes busy on the machine (load
3) the digits CNN's single-threaded pools, reading what a placed worker had just written on the
other CPU, took 15-20 us longer: so placement is off unless `GRAPHFLOW_WORKER_PLACEMENT=1` (or
`PLACE_WORKERS = True`). Where CPU numbers or affinity are unavailable (not Linux, one allowed
CPU) nothing is changed.
"""

import ctypes
import os
import queue
import sys
import threading

import numpy as np

_local = threading.local()

# Keep the workers off the calling thread's CPU (module docstring; off unless asked for).
PLACE_WORKERS = os.environ.get("GRAPHFLOW_WORKER_PLACEMENT", "").strip() not in ("", "0")


def _cpu_getter():
    """libc's sched_getcpu (the calling thread's CPU), or None where it or affinity is missing."""
    if not sys.platform.startswith("linux") or not hasattr(os, "sched_setaffinity"):
        return None
    try:
        getcpu = ctypes.CDLL(None).sched_getcpu
    except (OSError, AttributeError):
        return None
    getcpu.argtypes, getcpu.restype = [], ctypes.c_int
    return getcpu


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
        self._getcpu = _cpu_getter()
        self._allowed = None      # the CPUs of the thread that made the pool
        if self._getcpu is not None:
            self._allowed = frozenset(os.sched_getaffinity(0))
        self._excluded = None     # the CPU the workers are kept off now (None: none)
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
        if PLACE_WORKERS and self._getcpu is not None:
            self._place()
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
            self._excluded = None  # the new workers are placed at the next job

    def _place(self):
        """Keep the workers off the calling thread's CPU (module docstring): their affinity is
        the process's CPUs but this one, set again only when the caller moved to another CPU."""
        cpu = self._getcpu()
        if cpu == self._excluded or cpu < 0:
            return
        try:
            others = self._allowed - {cpu}
            if not others or cpu not in self._allowed:  # one CPU, or the caller moved outside
                self._stop_placing()  # the CPUs the process started with
                return
            for worker in list(self._workers):
                os.sched_setaffinity(worker.native_id, others)
            self._excluded = cpu
        except OSError:  # CPUs taken away (cpuset changed): the scheduler places the workers
            self._stop_placing()

    def _stop_placing(self):
        self._getcpu = None
        for worker in list(self._workers):
            try:
                os.sched_setaffinity(worker.native_id, self._allowed or os.sched_getaffinity(0))
            except OSError:
                pass

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
