"""2-D float32 matrix products through oneDNN's matmul primitive (`dnnl.py`), with FusedMatMul's
bias and (where oneDNN computes it exactly: `dnnl.activation_post_ops`) activation applied by the
primitive itself (post-ops), when the optional oneDNN library
is installed. MatMul's and FusedMatMul's implementation "onednn" (`dnnl_fused_matmul.py`) calls
`matmul` for the nodes its predicate takes (2-D float32 products of known shape and at least
MIN_MACS multiply-adds, a bias of the product's columns); `matmul` itself gives None where it does
not apply (no oneDNN, other dtypes, batched products, products too small, such a bias).

Operands are described as they lie in memory (no copies): a transposed operand (transpose_a/b, a
gradient's `x.T`) is the array read with swapped strides. Only an operand with neither stride 1
(or a broadcast, negative or unaligned one) is copied first.

Threads: two ways to use `threads` cores, chosen by timing both (`_Chooser`):
  team    one primitive run by an OpenMP team of `threads` threads. Fastest on a quiet machine: the
          team's threads spin between products, so they start at once, where graphflow's pool
          threads sleep and take ~0.1 ms to wake; but a team waits at its barrier for a thread the
          scheduler has parked, and with another process keeping one core busy a product takes
          several times as long.
  blocks  row (or column) blocks, each a primitive on one OpenMP thread, taken by the calling
          thread and the intra-op pool from one shared iterator (as `blas.py` does): a busy core
          only means its thread takes fewer blocks. Below `BLOCKS_MIN_MACS` this way is the
          calling thread alone (waking a pool thread costs more than it saves there).
The chooser runs every parallel product one way for a few calls, then the other, keeps the faster
(summed over the products timed both ways; the blocks must win by `TEAM_MARGIN`), and re-times
the other now and then (at growing intervals while the choice holds, soon when a product that
never ran the other way turns up, at once when a team product turns slow: then the team is timed
again right after the blocks, so one disturbed call cannot decide alone), so a machine that
becomes busy, or quiet again, or a new model's products, change the choice.
`GRAPHFLOW_MATMUL_THREADING=team|blocks` fixes it.
The ways may sum in different orders: oneDNN picks its blocking by the shape it is given, so
column or row blocks can differ from the whole product in the last bits (64x4096 @ 4096x512,
256x784 @ 784x512 and most of the CNN and MLP benchmarks' products do, 4096x64 @ 64x512 does
not: a one-off check of nine products; the tests check four),
while a team gives the one-thread primitive's bits. So that a product's values never depend on
the chooser's timing or on the machine's load, each parallel product is probed once on seeded
random operands (`_Plan.pinned_way`): only one whose team, blocks and one-thread primitive agree
there goes to the chooser; one whose blocks differ always runs as the team (the one-thread
primitive's bits), one whose team differs too always runs as blocks.
(`GRAPHFLOW_MATMUL_THREADING` still runs every product the way it names.)
Forward convolutions (`dnnl_conv.py`) are timed by the same chooser and run the way it picks: one
way for the whole step.
A process forked after a team product ran uses blocks only (libgomp's team threads do not survive a
fork: a team started in the child would wait for them forever).
"""

import collections
import ctypes
import os
import statistics
import threading
import time
import weakref

import numpy as np

from graphflow.kernels.cpu.onednn import dnnl
from graphflow.kernels.cpu.threads import intra_op

# Products of fewer multiply-adds than this keep the numpy path: a oneDNN call costs ~14 us of
# ctypes calls and oneDNN's own dispatch (8x8x8: 14 us, numpy 0.7 us; 64x100x10: 16 us, numpy 2.7 us;
# 64x1000x100 on one thread: 155 us, numpy 167 us).
MIN_MACS = 1 << 20
# ... and from this many on, they use several threads (as blas.PARALLEL_MIN_MACS).
PARALLEL_MIN_MACS = 1 << 21
# ... but as blocks (graphflow's pool threads, asleep between products) only from this many on;
# below it a product the chooser gives to the blocks runs on the calling thread: waking a pool
# thread costs more than it saves (measured as the convolutions' dnnl_conv.PARALLEL_MIN_MACS was
# at first). Measured (one call, min / median of 9 rounds, load 2.5, us; one thread / two blocks):
# 256x64x256 64 / 97, 256x256x128 114 / 143, 256x512x256 398 / 476, 512x512x256 796 / 934; the
# digits MLP's step at batch 256 (products of 4M and 8M) 0.32-0.33 ms -> 0.22-0.23 ms.
BLOCKS_MIN_MACS = 1 << 25
# Blocks (`_Plan`): column blocks of at least MIN_COLUMNS columns, two per thread, where the
# product is that wide and not taller than wide; else a row block per thread, of at least
# MIN_BLOCK rows. oneDNN packs b for each call, so row blocks each pack all of it: measured
# (2 threads, load average 4.4, ms) rows in 2 blocks / 4 blocks, columns in 2 / 4, numpy's split:
# 256x784x512 3.02 / 3.45 / 3.20 / 2.96 / 3.28; 64x4096x512 5.45 / 7.85 / 4.19 / 3.86 / 5.13;
# 784x256x512 2.74 / 2.95 / 2.95 / 3.05 / 3.33. A tall product's b is the small operand: the
# CIFAR dense layer's weight gradient x.T @ dy (4096x64x512, x.T read in place), median of 9
# rounds, cache flushed, load 1.1: 4 column blocks 1.38 ms, 2 row blocks 1.13-1.17.
MIN_BLOCK = 32
MIN_COLUMNS = 64
MAX_PLANS = 256

def _layout(x):
    """`x` (a 2-D float32 array) and its element strides as oneDNN reads them: rows or columns
    contiguous; anything else is copied."""
    r, c = x.shape
    s0, s1 = x.strides
    if s0 % 4 == 0 and s1 % 4 == 0 and x.flags.aligned:
        s0, s1 = s0 // 4, s1 // 4
        if s1 == 1 and s0 >= c and r > 1 and c > 1:
            return x, (s0, 1)
        if s0 == 1 and s1 >= r and r > 1 and c > 1:
            return x, (1, s1)
    x = np.ascontiguousarray(x)
    return x, (c, 1)


class _Product:
    """One primitive: an [m, k] x [k, n] product (+ bias [1, n]) (+ post-ops) with given strides,
    created for `omp` OpenMP threads."""

    def __init__(self, m, k, n, a_strides, b_strides, c_stride, bias, ops, omp):
        lib = self.lib = dnnl.library()
        src = dnnl.Desc.plain(lib, (m, k), a_strides)
        wei = dnnl.Desc.plain(lib, (k, n), b_strides)
        dst = dnnl.Desc.plain(lib, (m, n), (c_stride, 1))
        bmd = dnnl.Desc.plain(lib, (1, n), (n, 1)) if bias else None
        attr = dnnl.user_scratchpad_attr(lib)
        pd = ctypes.c_void_p()
        try:
            if ops:
                dnnl.set_eltwise_post_ops(lib, attr, ops)
            with lib.openmp_threads(omp):  # oneDNN picks its work split for this thread count
                lib.call("dnnl_matmul_primitive_desc_create", ctypes.byref(pd), lib.engine,
                         src.handle, wei.handle, bmd.handle if bias else None, dst.handle, attr)
        finally:
            dnnl.destroy_attr(lib, attr)
        descs = {dnnl.ARG_SRC: src.handle, dnnl.ARG_WEIGHTS: wei.handle, dnnl.ARG_DST: dst.handle}
        if bias:
            descs[dnnl.ARG_BIAS] = bmd.handle
        self.prim = dnnl.Primitive(lib, pd, descs).keep(src, wei, dst, bmd)
        self.omp = omp
        args = [dnnl.ARG_SRC, dnnl.ARG_WEIGHTS, dnnl.ARG_DST] + ([dnnl.ARG_BIAS] if bias else [])
        if self.prim.scratchpad_bytes:
            args.append(dnnl.ARG_SCRATCHPAD)
        self._args = tuple(args)  # the order of __call__'s pointers

    def __call__(self, *pointers):
        """Run on the calling thread: `pointers` are the src, weights, dst (and bias) addresses
        (the primitive keeps each thread's memory objects and only points them at this call's
        buffers)."""
        if self.prim.scratchpad_bytes:
            pointers = pointers + (dnnl.scratchpad(self.prim.scratchpad_bytes),)
        self.prim.run(self._args, pointers)

    @property
    def implementation(self):
        return self.prim.implementation


TEAM, BLOCKS = "team", "blocks"
SINGLE = "single"  # the one-thread primitive (`_Plan.run`; not a way the chooser picks)


class _Chooser:
    """Picks TEAM or BLOCKS for every parallel product of the process at once (module docstring):
    one way for a run of calls, then the other, comparing the summed median times of the products
    timed both ways. One way for all: mixing them in a step leaves a team's thread spinning while
    the pool's worker needs the core."""

    RUN = 24            # calls timed each way before a choice, and per probe of the other way
    FIRST_PROBE = 256   # calls until the other way is timed again; grows while the choice holds
    MAX_PROBE = 8192
    SLOW = 1.6          # a team product this much slower than when chosen: time the blocks now
    # the blocks are kept only when the timed calls' sum is this much lower than the team's: the
    # sum leaves out what each way costs the ops between them (the blocks wake graphflow's pool
    # for every call), and close sums came with slower steps. The CIFAR-shaped step: sums 13.99
    # (team) against 14.37 ms (blocks), steps 24.7-25.0 ms as a team, 26.5-26.7 as blocks
    # (`GRAPHFLOW_MATMUL_THREADING=team|blocks python benchmarks/bench_vs_tf1.py --rows CIFAR`)
    TEAM_MARGIN = 1.1

    def __init__(self):
        self.lock = threading.Lock()
        self.kept = None         # the chosen way (None: not chosen yet)
        self.mode = TEAM         # the way calls use now
        self.left = self.RUN     # calls until the next phase
        self.interval = self.FIRST_PROBE
        self.plans = set()       # plans timed since the last choice (ids: plans are kept by _plans)
        self.probe_seconds = 0.0
        # the process's first RUN calls run as a team untimed: a model's first steps (memory
        # first touched, OpenMP's team started, primitives' first runs) are slow whichever way,
        # and timing them made the team look twice as slow as it is (the CIFAR-shaped step's
        # 3x3x32 convolution: 6.8 ms in its first timed call, 3.7 ms from the third step on)
        self.warming = True
        # after a slow team product: the blocks are timed, then the team again (`retiming`), and
        # those two runs decide
        self.retime_team = False
        self.retiming = False
        # products that, while a choice held, ran the kept way without ever having run the other:
        # each brings the next probe forward once (`record`)
        self.newcomers = weakref.WeakSet()

    def pick(self):
        return self.mode

    def record(self, plan, mode, seconds):
        with self.lock:  # plans' times are read here too: products may run on several threads
            if plan.seen[mode]:  # the first call each way creates primitives, touches memory
                plan.times[mode].append(seconds)
            plan.seen[mode] += 1
            self.plans.add(plan)
            if (mode == TEAM == self.kept == self.mode and plan.reference
                    and not (self.retime_team or self.retiming)
                    and seconds > self.SLOW * plan.reference
                    and statistics.median(plan.times[TEAM]) > self.SLOW * plan.reference):
                self.left = 0  # a core got busy, or one call was disturbed: time the blocks at
                self.retime_team = True  # once, then the team again, and compare those runs
                for p in self.plans:
                    p.times[TEAM].clear()
            other = BLOCKS if mode == TEAM else TEAM
            if (mode == self.kept == self.mode and not plan.seen[other] and plan.seen[mode] > 1
                    and plan not in self.newcomers):
                # a product never run the other way (a new workload, other shapes): probe soon,
                # not after the interval the earlier products earned. A small product's choice
                # held the blocks through a larger model's whole first seconds (bench_vs_tf1's
                # cs231n row, then the MLP: 5.0 ms steps as blocks instead of 4.1 as a team)
                self.newcomers.add(plan)
                self.left = min(self.left, self.RUN)
            self.left -= 1
            if self.left <= 0:
                self._next()

    def _cost(self, mode):
        both = [p for p in self.plans if p.times[TEAM] and p.times[BLOCKS]]
        return sum(statistics.median(p.times[mode]) for p in both), both

    def _next(self):
        other = BLOCKS if self.mode == TEAM else TEAM
        if self.warming:  # the warm-up run is done: forget its times, now time the team
            self.warming = False
            for p in self.plans:
                p.times[TEAM].clear()
            self.plans = set()
            self.left = self.RUN
            return
        if self.kept is None and self.mode == TEAM:  # first run timed: now the other way
            self.mode, self.left = BLOCKS, self.RUN
            return
        if self.retiming:  # the team's run after the blocks' is done: choose
            self.retiming = False
        elif self.kept is not None and self.mode == self.kept:  # time to probe the other way
            self.mode, self.left = other, self.RUN
            return
        elif self.retime_team and self.mode == BLOCKS:  # the blocks are timed: the team again
            self.retime_team, self.retiming = False, True
            self.mode, self.left = TEAM, self.RUN
            return
        # a run of the other way is done: choose
        team, both = self._cost(TEAM)
        blocks, _ = self._cost(BLOCKS)
        if not both:  # no product ran both ways in this window (new ones came): keep the way,
            # probe again soon (an interval scaled by no comparison fell to 0: a probe per call)
            faster = self.kept or TEAM
            self.interval = self.FIRST_PROBE
        elif (faster := TEAM if team <= blocks * self.TEAM_MARGIN else BLOCKS) == self.kept:
            # the further off the probe, the longer until the next one
            ratio = max(team, blocks) / max(min(team, blocks), 1e-9)
            self.interval = int(min(self.interval * 2 * min(ratio, 16), self.MAX_PROBE))
        else:
            self.interval = self.FIRST_PROBE
        self.kept = self.mode = faster
        for p in both:
            p.reference = statistics.median(p.times[faster])
        self.plans = set()
        self.left = self.interval


CHOOSER = _Chooser()
_team_started = False  # a product ran as a team in this process
_no_teams = False      # this process was forked after one did: libgomp's threads are gone


def mark_team():
    """Note that a team ran in this process (a child forked from now on uses blocks only)."""
    global _team_started
    _team_started = True


def _after_fork_in_child():
    # libgomp's team threads do not survive a fork, and a child that starts a team after its
    # parent did waits for them forever: a child of such a parent uses blocks only
    global _no_teams
    _no_teams = _no_teams or _team_started


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def teams_allowed():
    """False in a process forked after a team ran (libgomp's team threads are gone)."""
    return not _no_teams


def current_way():
    """TEAM or BLOCKS: how parallel products and convolutions run now (BLOCKS in a process forked
    after a team ran, else GRAPHFLOW_MATMUL_THREADING's way, else the chooser's)."""
    return BLOCKS if _no_teams else fixed_mode() or CHOOSER.pick()


def fixed_mode():
    """TEAM or BLOCKS when GRAPHFLOW_MATMUL_THREADING fixes the way, else None."""
    mode = os.environ.get("GRAPHFLOW_MATMUL_THREADING", "").strip().lower()
    return mode if mode in (TEAM, BLOCKS) else None


class _Plan:
    """One product's primitives: one call on one thread, a team, or blocks (created when first used)."""

    def __init__(self, m, k, n, a_strides, b_strides, bias, ops, threads):
        self.m, self.k, self.n = m, k, n
        self.args = (a_strides, b_strides, bias, ops)
        self.threads = threads
        self.fixed = fixed_mode()
        self.times = {TEAM: collections.deque(maxlen=3), BLOCKS: collections.deque(maxlen=3)}
        self.seen = {TEAM: 0, BLOCKS: 0}
        self.reference = None  # median time of the chosen way when it was chosen
        self._single = self._team = self._blocks = None
        self._pinned = None  # `pinned_way`'s answer once probed ("" for none)
        # Column blocks where the product is at least as wide as it is tall (each block packs only
        # its own columns of b, where row blocks each pack all of b), else row blocks (each reads
        # all of the smaller b and writes whole output rows).
        rows, columns = min(threads, m // MIN_BLOCK), min(threads * 2, n // MIN_COLUMNS)
        self.by_rows = (rows >= 2 and m > n) or columns < 2
        nblocks = rows if self.by_rows else columns
        length = m if self.by_rows else n
        self.bounds = np.linspace(0, length, max(nblocks, 1) + 1).astype(int).tolist()

    def _product(self, m, n, omp):
        a_strides, b_strides, bias, ops = self.args
        return _Product(m, self.k, n, a_strides, b_strides, self.n, bias, ops, omp)

    def single(self):
        if self._single is None:
            self._single = self._product(self.m, self.n, 1)
        return self._single

    def team(self):
        if self._team is None:
            self._team = self._product(self.m, self.n, self.threads)
        return self._team

    def blocks(self):
        if self._blocks is None:
            sizes = {hi - lo for lo, hi in zip(self.bounds, self.bounds[1:])}
            if self.by_rows:
                made = {s: self._product(s, self.n, 1) for s in sizes}
            else:
                made = {s: self._product(self.m, s, 1) for s in sizes}
            self._blocks = [made[hi - lo] for lo, hi in zip(self.bounds, self.bounds[1:])]
        return self._blocks

    @property
    def parallel(self):
        return self.threads > 1 and len(self.bounds) > 2

    def pinned_way(self):
        """None when this product's team, one-thread primitive and blocks give the same bits, so
        the chooser may pick either way; else the one way it always runs: TEAM where the team
        gives the one-thread primitive's bits, else BLOCKS (the
        same blocks on any load). Decided once, on a probe of random operands laid out as the
        product's (`_probe_operands`): a way that sums in another order differs there."""
        if self._pinned is None:
            a, b, bias = _probe_operands(self)
            outs = {}
            for way in (SINGLE, TEAM, BLOCKS):
                outs[way] = np.empty((self.m, self.n), np.float32)
                ptrs = (a.ctypes.data, b.ctypes.data, outs[way].ctypes.data)
                self.run(way, ptrs if bias is None else ptrs + (bias.ctypes.data,))
            team = np.array_equal(outs[TEAM], outs[SINGLE])
            agree = team and np.array_equal(outs[BLOCKS], outs[SINGLE])
            self._pinned = "" if agree else TEAM if team else BLOCKS
        return self._pinned or None

    def run(self, way, ptrs):
        """The product at `ptrs` (the addresses of a, b, the output and the bias if any) one way:
        TEAM by the OpenMP team, SINGLE by the one-thread primitive, BLOCKS by blocks on the
        intra-op pool (a product below BLOCKS_MIN_MACS: by the one-thread primitive)."""
        lib = dnnl.library()
        if way == TEAM:
            mark_team()
            with lib.openmp_threads(self.threads):
                self.team()(*ptrs)
        elif way == SINGLE or self.m * self.k * self.n < BLOCKS_MIN_MACS:
            with lib.openmp_threads(1):
                self.single()(*ptrs)
        else:
            _run_blocks(self, ptrs)


def _probe_operands(plan):
    """Seeded random operands a [m, k], b [k, n] (and bias [n]) with `plan`'s element strides."""
    rng = np.random.default_rng(0)
    (a_strides, b_strides, bias, _), m, k, n = plan.args, plan.m, plan.k, plan.n

    def laid_out(rows, cols, strides):
        if strides[1] == 1:  # rows of `strides[0]` elements
            return rng.standard_normal((rows, strides[0]), dtype=np.float32)[:, :cols]
        return rng.standard_normal((cols, strides[1]), dtype=np.float32)[:, :rows].T
    return (laid_out(m, k, a_strides), laid_out(k, n, b_strides),
            rng.standard_normal(n, dtype=np.float32) if bias else None)


_plans = collections.OrderedDict()
_plans_lock = threading.Lock()


def _plan(key, create):
    with _plans_lock:
        plan = _plans.get(key)
        if plan is not None:
            _plans.move_to_end(key)
            return plan
    plan = create()
    with _plans_lock:
        plan = _plans.setdefault(key, plan)
        while len(_plans) > MAX_PLANS:
            _plans.popitem(last=False)
    return plan


def takes_product(m, k, n):
    """True for an [m, k] @ [k, n] product oneDNN computes faster than numpy: at least MIN_MACS
    multiply-adds, and not a vector times a matrix (m or n of 1: numpy's BLAS runs a matrix-vector
    product reading the matrix once, where the primitive packs it first; dnnl_fused_matmul.py)."""
    return m > 1 and n > 1 and k > 0 and m * k * n >= MIN_MACS


def applies(a, b, bias=None):
    """True when oneDNN is loaded and `a @ b (+ bias)` is a 2-D float32 product it takes."""
    if a.ndim != 2 or b.ndim != 2 or a.dtype != np.float32 or b.dtype != np.float32:
        return False
    m, k = a.shape
    n = b.shape[1]
    if b.shape[0] != k or not takes_product(m, k, n):
        return False
    if bias is not None:
        if not isinstance(bias, np.ndarray) or bias.dtype != np.float32:
            return False
        if bias.shape not in ((n,), (1, n)):
            return False
    return dnnl.library() is not None


def matmul(a, b, threads, bias=None, ops=()):
    """`ops(a @ b + bias)` through oneDNN on up to `threads` threads (a new C-contiguous array),
    or None where it does not apply (`applies`, a post-op list of None, no primitive)."""
    if ops is None or not applies(a, b, bias):
        return None
    a, a_strides = _layout(a)
    b, b_strides = _layout(b)
    if bias is not None:
        bias = np.ascontiguousarray(bias).reshape(-1)
    m, k = a.shape
    n = b.shape[1]
    threads = 1 if intra_op.in_worker() or m * k * n < PARALLEL_MIN_MACS else max(1, int(threads))
    key = (m, k, n, a_strides, b_strides, bias is not None, ops, threads)
    try:
        plan = _plan(key, lambda: _Plan(m, k, n, a_strides, b_strides, bias is not None, ops,
                                        threads))
    except dnnl.DnnlError as e:
        if e.status != dnnl.UNIMPLEMENTED:
            raise
        return None
    out = np.empty((m, n), np.float32)
    ptrs = (a.ctypes.data, b.ctypes.data, out.ctypes.data)
    if bias is not None:
        ptrs += (bias.ctypes.data,)
    if not plan.parallel:
        plan.run(SINGLE, ptrs)
        return out
    pinned = None if _no_teams or plan.fixed else plan.pinned_way()
    mode = BLOCKS if _no_teams else plan.fixed or pinned or CHOOSER.pick()
    t0 = time.perf_counter()
    plan.run(mode, ptrs)
    if not (plan.fixed or pinned):
        CHOOSER.record(plan, mode, time.perf_counter() - t0)
    return out


def _run_blocks(plan, ptrs):
    a_ptr, b_ptr, c_ptr = ptrs[:3]
    bias_ptr = ptrs[3] if len(ptrs) == 4 else None
    a_strides, b_strides = plan.args[:2]
    prims, bounds, n = plan.blocks(), plan.bounds, plan.n
    pieces = intra_op.shared_iter(range(len(prims)))
    lib = dnnl.library()

    def work():
        with lib.openmp_threads(1):
            for i in pieces:
                lo = bounds[i]
                if plan.by_rows:  # rows lo.. of a and of the output
                    ptrs = [a_ptr + 4 * lo * a_strides[0], b_ptr, c_ptr + 4 * lo * n, bias_ptr]
                else:  # columns lo.. of b, of the bias and of the output
                    ptrs = [a_ptr, b_ptr + 4 * lo * b_strides[1], c_ptr + 4 * lo,
                            None if bias_ptr is None else bias_ptr + 4 * lo]
                prims[i](*ptrs[:3 if bias_ptr is None else 4])

    intra_op.POOL.run_shared(work, plan.threads)
