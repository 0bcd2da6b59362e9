"""Blocks of a convolution shared with the CPU another process keeps busy, on a machine where that
leaves graphflow one free core (2 CPUs, one busy: `free_cores.py`).

There the kernels run on one thread: a split over both CPUs waits, at each op's end, for the part
whose thread the scheduler parked behind the other process. That leaves the busy CPU to the other
process alone, while TF1's threads get part of it. Here one helper thread, pinned to the busy CPU,
takes blocks from the same list as the calling thread, which is pinned to the other CPUs for the
call (its own affinity mask is restored after). Unpinned, the scheduler wakes the helper next to
the caller and the two share one core (measured: no gain).

Nobody waits for the helper. It computes each block into buffers of its own and publishes it, a
copy into the op's outputs, only if the block is still its own: once the list is empty, the
calling thread computes every block the helper has not published yet itself (the helper's copy
of such a block is dropped). So the op ends as soon as the caller is done; the caller waits only
for a copy already under way (a few microseconds of memory, unless the scheduler parks the
helper in it). A block the helper is still computing after the op returned only reads the op's
inputs (kept alive by the job) and writes the helper's buffers.

A block is `(work_on, lo, hi, outputs)`: `work_on(lo, hi)` writes the arrays `outputs(lo, hi)`
returns (views of the op's results, C-contiguous), `work_on(lo, hi, into)` the same values into
the arrays `into` instead (the helper's, of those shapes). Which thread computed a block does not
change its bits, so the results are the one-thread results.

The sensor names a busy CPU only while another CPU is left mostly free and no other graphflow
process runs kernels on the machine (it would share this one's CPU back); convolutions under
`MIN_MACS` and callers the user pinned away from the busy CPU are not shared.
GRAPHFLOW_SHARE_BUSY_CORE=0 turns sharing off.

Measured (a one-off script, 2 CPUs, one busy with a CPU-burning process, the CIFAR-shaped CNN's
three forward convolutions and two input gradients in a row with a numpy op between them, medians
of 60 rounds, ms): one thread 19.2-19.3; shared in blocks of 4 images with the caller pinned
14.8-15.4, unpinned 21.1; the caller waiting for the helper's block instead of computing it
16.6-16.9. In bench_vs_tf1's steps (--setting busy) the CIFAR-shaped CNN went from TF1's speed
to 0.82-0.87 of it, the tf.layers ResNet to 0.83-0.94 (docs/performance.md, eleventh round).
"""

import os
import threading
import time

import numpy as np

from graphflow.kernels.cpu import free_cores
from graphflow.kernels.cpu.threads import intra_op

ENV_SWITCH = "GRAPHFLOW_SHARE_BUSY_CORE"
ENABLED = os.environ.get(ENV_SWITCH, "1").strip() != "0"

# Blocks of images for a forward convolution or an input gradient shared this way (their bits do
# not depend on the blocks; the filter gradient keeps `dnnl_conv.image_blocks`'s, its partials'
# sums do): the caller recomputes at most the one block the helper holds at the end.
INPUT_BLOCKS = 16
# Convolutions of fewer multiply-adds stay on the caller: waking the helper on the busy CPU takes
# a median 60-90 us, and the caller may compute the helper's block again (bench_vs_tf1's small
# CNN, 20M multiply-adds a convolution in 2 blocks, beside a CPU hog, ms, shared / not: 1.24 / 1.16).
MIN_MACS = 1 << 25

# a block's states: not taken; being computed by the thread that took it; its result being copied in
# by the helper; computed again by the calling thread (the helper's result will be dropped); done
_FREE, _RUNNING, _PUBLISHING, _REDONE, _DONE = range(5)


def wanted(threads, blocks=2, macs=None):
    """The busy CPU to share `blocks` blocks (of `macs` multiply-adds in all, if given) with, for a
    kernel of a session allowed `threads` threads; None: run them on this thread (or as before)."""
    sensor = free_cores.SENSOR
    if (not ENABLED or threads <= 1 or blocks < 2 or (macs is not None and macs < MIN_MACS)
            or not sensor.enabled or intra_op.in_worker()
            or free_cores.usable_threads(threads) != 1):
        return None
    cpu = sensor.busy_cpu
    if cpu is None or _HELPER.failed:
        return None
    return cpu


class _Job:
    """One call's blocks and each block's state (`_FREE` .. `_DONE`), under `lock`."""

    __slots__ = ("blocks", "state", "next", "lock")

    def __init__(self, blocks):
        self.blocks = blocks
        self.state = [_FREE] * len(blocks)
        self.next = 0
        self.lock = threading.Lock()

    def claim(self):
        with self.lock:
            i = self.next
            if i >= len(self.blocks):
                return None
            self.next = i + 1
            self.state[i] = _RUNNING
            return i


class _Helper:
    """The thread on the busy CPU: takes the newest job's blocks until none is left."""

    def __init__(self):
        self._cond = threading.Condition()
        self._job = None
        self._thread = None
        self._cpu = None  # the CPU asked for
        self._buffers = {}  # (output index, shape) -> this thread's array
        self.failed = False  # the thread could not be pinned: sharing stays off
        self.published = 0  # blocks whose result came from this thread (tests, benchmarks)

    def post(self, job, cpu):
        """Hand `job` to the helper (started first, and pinned to `cpu` before it takes blocks)."""
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, daemon=True,
                                                name="graphflow-busy-core-share")
                self._thread.start()
            self._job, self._cpu = job, cpu
            self._cond.notify()

    def _serve(self):
        from graphflow.kernels.cpu.onednn import dnnl
        lib = dnnl.library()
        pinned = None
        while True:
            with self._cond:
                while self._job is None:
                    self._cond.wait()
                job, self._job, cpu = self._job, None, self._cpu
            if cpu != pinned:
                try:
                    os.sched_setaffinity(0, {cpu})
                except OSError:
                    self.failed = True
                    continue
                pinned = cpu
            try:
                if lib is None:
                    self._work(job)
                else:
                    with lib.openmp_threads(1):
                        self._work(job)
            except Exception:  # noqa: BLE001 - the caller computes what the helper did not publish
                continue

    def _work(self, job):
        while (i := job.claim()) is not None:
            work_on, lo, hi, outputs = job.blocks[i]
            views = outputs(lo, hi)
            into = [self._buffer(k, view.shape, view.dtype) for k, view in enumerate(views)]
            try:
                work_on(lo, hi, into)
            except Exception:  # noqa: BLE001 - the calling thread computes the block again
                continue
            with job.lock:
                if job.state[i] != _RUNNING:  # the caller computed it meanwhile
                    continue
                job.state[i] = _PUBLISHING
            published = False
            try:
                for view, own in zip(views, into):
                    np.copyto(view, own)
                published = True
            finally:
                with job.lock:  # not published: the caller computes it again
                    job.state[i] = _DONE if published else _RUNNING
            self.published += 1

    def _buffer(self, k, shape, dtype):
        buf = self._buffers.get((k, shape))
        if buf is None or buf.dtype != dtype:
            if len(self._buffers) > 64:
                self._buffers.clear()
            buf = self._buffers[(k, shape)] = np.empty(shape, dtype)
        return buf


_HELPER = _Helper()


def run(blocks, cpu):
    """Compute `blocks` ((work_on, lo, hi, outputs) each, see the module docstring) on this thread
    and the helper pinned to `cpu`; return when every block's outputs are written. Where this
    thread's affinity mask leaves it no CPU beside `cpu` (or excludes `cpu`: the user pinned it),
    on this thread alone."""
    own = os.sched_getaffinity(0)
    if cpu not in own or len(own) < 2:  # this thread may not run beside that CPU: no sharing
        for work_on, lo, hi, _ in blocks:
            work_on(lo, hi)
        return
    job = _Job(blocks)
    free_cores.SENSOR.shared = True
    _HELPER.post(job, cpu)
    os.sched_setaffinity(0, own - {cpu})
    try:
        while (i := job.claim()) is not None:
            work_on, lo, hi, _ = blocks[i]
            work_on(lo, hi)
            with job.lock:
                job.state[i] = _DONE
        while True:  # the helper's unpublished blocks, computed again here
            with job.lock:
                left = [i for i, s in enumerate(job.state) if s == _RUNNING]
                for i in left:
                    job.state[i] = _REDONE
                publishing = _PUBLISHING in job.state
            for i in left:
                work_on, lo, hi, _ = blocks[i]
                work_on(lo, hi)
            if not (left or publishing):
                break
            if publishing:  # a copy under way: it ends as done, or as the caller's to compute
                time.sleep(0)
    finally:
        with job.lock:  # (after an error too) no block is left to the helper
            job.next = len(blocks)
            job.state = [s if s == _PUBLISHING else _DONE for s in job.state]
        while True:  # a copy under way into the outputs ends before they are handed on
            with job.lock:
                if _PUBLISHING not in job.state:
                    break
            time.sleep(0)
        os.sched_setaffinity(0, own)


def reset():
    """Forget the helper thread (after a fork the child has none; tests)."""
    global _HELPER
    _HELPER = _Helper()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=reset)
