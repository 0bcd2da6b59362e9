"""Images split over the intra-op pool (`intra_op.py`) with one compiled call per thread: for
numba loops (`jit_pool.py`) that take an image range `lo, hi` as their last two arguments and write
every output element once, from values held in registers.

The usual split (`jit_pool.over_images`) hands out blocks of images, one loop call each, and a
thread takes the GIL back after every call; on 2 cores under KVM each hand-over of the GIL between
CPUs wakes the other thread (tens of microseconds). Here the images are cut into units of about
`CLAIM_ELEMENTS` input elements, the units into `(threads + 1) // 2` segments, and each thread
(the caller, then the pool's workers) takes a (segment, end) slot and runs one compiled loop that
claims units from that end of its segment until the two ends meet, then takes the next slot (a late
worker finds its units taken and leaves at once).

The claims are plain reads and writes of one shared int64 pair per segment, no atomics: two threads
can take the same unit when they meet, and both then compute it; a loop that writes each output
element once from registers writes the same values twice, so the result is one thread's bits. No
unit is left out: an end stops only at a unit the other end has already committed to (each end
publishes a claim before computing the unit, and reads of the other end's claim return a value it
wrote, which only moves toward this end). Loops that add into their output (a gradient scatter) or
keep a running maximum in it must not run here.
"""

import threading

import numpy as np

from graphflow.kernels.cpu.threads import intra_op

CLAIM_ELEMENTS = 1 << 15

_drivers = {}
_lock = threading.Lock()


def _driver(loop):
    """The claiming loop around `loop` (compiled once per loop)."""
    run = _drivers.get(loop)
    if run is not None:
        return run
    from graphflow.kernels.cpu.numba.jit_cache import njit

    @njit(nogil=True, cache=True, error_model="numpy")
    def claim_and_run(args, claims, front, step, n):
        while True:
            if front:
                u = claims[0]
                if u >= claims[1]:
                    return
                claims[0] = u + 1
            else:
                u = claims[1] - 1
                if u < claims[0]:
                    return
                claims[1] = u
            loop(*args, u * step, min(u * step + step, n))
    with _lock:
        return _drivers.setdefault(loop, claim_and_run)


def run(loop, args, n, size, threads):
    """`loop(*args, lo, hi)` over images 0..n (`size` input elements in all) on up to `threads`
    threads (the caller decided that the split pays)."""
    step = max(1, CLAIM_ELEMENTS // max(size // n, 1))
    units = -(-n // step)
    segments = max(1, min((threads + 1) // 2, units // 2))
    edges = np.linspace(0, units, segments + 1).astype(np.int64)
    claims = np.stack([edges[:-1], edges[1:]], axis=1)  # [segment] -> (front unit, back end)
    driver = _driver(loop)
    slots = intra_op.shared_iter(range(2 * segments))

    def work():
        for slot in slots:
            driver(args, claims[slot // 2], slot % 2 == 0, step, n)
    intra_op.POOL.run_shared(work, threads)
