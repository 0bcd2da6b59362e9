"""Optimizer updates as one compiled loop per variable: the loops of the "numba" implementations
of the Apply* ops (`update_kernels.py` registers them and says which variables they take; the
numpy form of `reference/training_kernels.py` is the definition). Also the switch every module of
compiled loops asks (`loops()`, `LazyLoops`) and the block runner they share (`run`).

The numpy form of an Adam step is twelve ufunc calls over the variable, each a full pass: on a 2M
float32 variable that is ~6 ms of ufunc work whatever the chunking (measured: cache-sized chunks gave
no gain, the calls are compute-bound). A compiled loop computes each element's new slot and
variable values in registers in one pass. The loops do TF1's functor terms in the same order and in
the variable's dtype (no fast-math, no fused multiply-add contraction), so their values are the
numpy form's bits (tested). They release the GIL, and a large variable is cut into blocks that the
calling thread and the intra-op pool share (`intra_op.py`), one loop call per block.

A run's last op (`KernelNode.runs_last`: nothing after it can fail) may update its variable in
place when nothing else holds the stored arrays (`update_kernels.py` checks): the `*_in_place`
loops read and write the same arrays, the same arithmetic in the same order, so the same bits. On
a variable last touched a step ago they are twice as fast: out of place, the three outputs are
three more arrays to fetch from memory before they are written (Adam on the CIFAR-shaped step's
4096x512 variable, cycling through 8 sets of arrays, 2 threads: 2.49-2.54 ms out of place,
1.22-1.29 ms in place; `benchmarks/bench_cold_operands.py`). They hold the GIL while they run
(`omp_team.run_holding_gil`), so no other thread's run can read the variable half-updated.

numba compiles a loop the first time it meets a dtype (about a second, once per process); variables
below `update_kernels.MIN_ELEMENTS` keep the numpy form, where the ufunc calls are cheap anyway.
"""

import os
import threading

import numpy as np

from graphflow.kernels.cpu.threads import intra_op

BLOCK_ELEMENTS = 1 << 17  # per thread and call: long enough that waking a worker pays

_lock = threading.Lock()
_loops = None  # None: not tried yet; False: numba unavailable (or switched off); dict: the loops


def _compile():
    from graphflow.kernels.cpu.numba.jit_cache import njit

    opts = dict(nogil=True, cache=True, fastmath=False, error_model="numpy")
    held = dict(opts, nogil=False)  # the in-place loops keep the GIL (see the module docstring)
    element = dict(cache=True, fastmath=False, error_model="numpy", inline="always")

    # One function per update computes an element's new values from its old ones, TF1's functor
    # terms in order; two loops call it on every element of a block: out of place (into new
    # arrays) and in place (`*_in_place`). Separate loops, not one with out=var, because LLVM
    # vectorizes a loop only when it can tell its outputs from its inputs. Each loop first slices
    # its block out of the operands and then runs from 0: indices LLVM can prove non-negative, so
    # the loops are vectorized (a loop over range(lo, hi) kept numba's negative-index checks and ran
    # 6x slower than numpy); LLVM unswitches the loop-invariant flags (nesterov, centered).
    @njit(**element)
    def sgd_step(var, delta, alpha):
        return var - delta * alpha

    @njit(**element)
    def momentum_step(var, accum, grad, lr, mom, nesterov):
        a = accum * mom
        a += grad
        if nesterov:
            step = grad * lr
            step += a * mom * lr
            return var - step, a
        return var - a * lr, a

    @njit(**element)
    def adam_step(var, m, v, g, alpha, omb1, omb2, beta1, eps, nesterov):
        mn = g - m
        mn *= omb1
        mn += m
        vn = g * g
        vn -= v
        vn *= omb2
        vn += v
        denom = np.sqrt(vn)
        denom += eps
        if nesterov:
            step = g * omb1
            step += beta1 * mn
        else:
            step = mn
        step *= alpha
        step /= denom
        return var - step, mn, vn

    @njit(**element)
    def rms_prop_step(var, ms, mom, mg, g, lr, omrho, momentum, eps, centered):
        msn = g * g
        msn -= ms
        msn *= omrho
        msn += ms
        if centered:
            mgn = g - mg
            mgn *= omrho
            mgn += mg
            denom = msn - mgn * mgn
            denom += eps
        else:
            mgn = mg
            denom = msn + eps
        denom = np.sqrt(denom)
        mn = g * lr
        mn /= denom
        mn += mom * momentum
        return var - mn, msn, mn, mgn

    @njit(**element)
    def adagrad_step(var, accum, g, lr, one):
        a = g * g
        a += accum
        step = g * lr
        step *= one / np.sqrt(a)
        return var - step, a

    @njit(**element)
    def adadelta_step(var, accum, update, g, lr, rho, omrho, eps, one):
        a = accum * rho
        a += g * g * omrho
        u = np.sqrt(update + eps)
        u *= one / np.sqrt(a + eps)
        u *= g
        un = update * rho
        un += u * u * omrho
        return var - u * lr, a, un

    @njit(**opts)
    def sgd(var, delta, alpha, out, lo, hi):
        var, delta, out = var[lo:hi], delta[lo:hi], out[lo:hi]
        for i in range(var.shape[0]):
            out[i] = sgd_step(var[i], delta[i], alpha)

    @njit(**held)
    def sgd_in_place(var, delta, alpha, lo, hi):
        var, delta = var[lo:hi], delta[lo:hi]
        for i in range(var.shape[0]):
            var[i] = sgd_step(var[i], delta[i], alpha)

    @njit(**opts)
    def momentum(var, accum, grad, lr, mom, nesterov, var_out, accum_out, lo, hi):
        var, accum, grad = var[lo:hi], accum[lo:hi], grad[lo:hi]
        var_out, accum_out = var_out[lo:hi], accum_out[lo:hi]
        for i in range(var.shape[0]):
            vn, accum_out[i] = momentum_step(var[i], accum[i], grad[i], lr, mom, nesterov)
            var_out[i] = vn  # the slots stored first, then the variable (as TF1's functors)

    @njit(**held)
    def momentum_in_place(var, accum, grad, lr, mom, nesterov, lo, hi):
        var, accum, grad = var[lo:hi], accum[lo:hi], grad[lo:hi]
        for i in range(var.shape[0]):
            vn, accum[i] = momentum_step(var[i], accum[i], grad[i], lr, mom, nesterov)
            var[i] = vn

    @njit(**opts)
    def adam(var, m, v, grad, alpha, omb1, omb2, beta1, eps, nesterov, var_out, m_out, v_out,
             lo, hi):
        var, m, v, grad = var[lo:hi], m[lo:hi], v[lo:hi], grad[lo:hi]
        var_out, m_out, v_out = var_out[lo:hi], m_out[lo:hi], v_out[lo:hi]
        for i in range(var.shape[0]):
            vn, m_out[i], v_out[i] = adam_step(var[i], m[i], v[i], grad[i], alpha, omb1, omb2,
                                               beta1, eps, nesterov)
            var_out[i] = vn

    @njit(**held)
    def adam_in_place(var, m, v, grad, alpha, omb1, omb2, beta1, eps, nesterov, lo, hi):
        var, m, v, grad = var[lo:hi], m[lo:hi], v[lo:hi], grad[lo:hi]
        for i in range(var.shape[0]):
            vn, m[i], v[i] = adam_step(var[i], m[i], v[i], grad[i], alpha, omb1, omb2, beta1, eps,
                                       nesterov)
            var[i] = vn

    # RMSProp's mg operand is ms again when not centered: only written when centered
    @njit(**opts)
    def rms_prop(var, ms, mom, mg, grad, lr, omrho, momentum, eps, centered, var_out, ms_out,
                 mom_out, mg_out, lo, hi):
        var, ms, mom, mg, grad = var[lo:hi], ms[lo:hi], mom[lo:hi], mg[lo:hi], grad[lo:hi]
        var_out, ms_out, mom_out, mg_out = var_out[lo:hi], ms_out[lo:hi], mom_out[lo:hi], mg_out[lo:hi]
        for i in range(var.shape[0]):
            vn, msn, mn, mgn = rms_prop_step(var[i], ms[i], mom[i], mg[i], grad[i], lr, omrho,
                                             momentum, eps, centered)
            ms_out[i] = msn
            if centered:
                mg_out[i] = mgn
            mom_out[i] = mn
            var_out[i] = vn

    @njit(**held)
    def rms_prop_in_place(var, ms, mom, mg, grad, lr, omrho, momentum, eps, centered, lo, hi):
        var, ms, mom, mg, grad = var[lo:hi], ms[lo:hi], mom[lo:hi], mg[lo:hi], grad[lo:hi]
        for i in range(var.shape[0]):
            vn, msn, mn, mgn = rms_prop_step(var[i], ms[i], mom[i], mg[i], grad[i], lr, omrho,
                                             momentum, eps, centered)
            ms[i] = msn
            if centered:
                mg[i] = mgn
            mom[i] = mn
            var[i] = vn

    @njit(**opts)
    def adagrad(var, accum, grad, lr, one, var_out, accum_out, lo, hi):
        var, accum, grad = var[lo:hi], accum[lo:hi], grad[lo:hi]
        var_out, accum_out = var_out[lo:hi], accum_out[lo:hi]
        for i in range(var.shape[0]):
            vn, accum_out[i] = adagrad_step(var[i], accum[i], grad[i], lr, one)
            var_out[i] = vn

    @njit(**held)
    def adagrad_in_place(var, accum, grad, lr, one, lo, hi):
        var, accum, grad = var[lo:hi], accum[lo:hi], grad[lo:hi]
        for i in range(var.shape[0]):
            vn, accum[i] = adagrad_step(var[i], accum[i], grad[i], lr, one)
            var[i] = vn

    @njit(**opts)
    def adadelta(var, accum, update, grad, lr, rho, omrho, eps, one, var_out, accum_out,
                 update_out, lo, hi):
        var, accum, update, grad = var[lo:hi], accum[lo:hi], update[lo:hi], grad[lo:hi]
        var_out, accum_out, update_out = var_out[lo:hi], accum_out[lo:hi], update_out[lo:hi]
        for i in range(var.shape[0]):
            vn, accum_out[i], update_out[i] = adadelta_step(var[i], accum[i], update[i], grad[i],
                                                            lr, rho, omrho, eps, one)
            var_out[i] = vn

    @njit(**held)
    def adadelta_in_place(var, accum, update, grad, lr, rho, omrho, eps, one, lo, hi):
        var, accum, update, grad = var[lo:hi], accum[lo:hi], update[lo:hi], grad[lo:hi]
        for i in range(var.shape[0]):
            vn, accum[i], update[i] = adadelta_step(var[i], accum[i], update[i], grad[i], lr, rho,
                                                    omrho, eps, one)
            var[i] = vn

    return {"sgd": sgd, "momentum": momentum, "adam": adam, "rms_prop": rms_prop,
            "adagrad": adagrad, "adadelta": adadelta, "sgd_in_place": sgd_in_place,
            "momentum_in_place": momentum_in_place, "adam_in_place": adam_in_place,
            "rms_prop_in_place": rms_prop_in_place, "adagrad_in_place": adagrad_in_place,
            "adadelta_in_place": adadelta_in_place}


def loops():
    """The compiled loops, or None without numba (or with GRAPHFLOW_NO_JIT=1)."""
    global _loops
    if _loops is None:
        with _lock:
            if _loops is None:
                if os.environ.get("GRAPHFLOW_NO_JIT", "").strip() not in ("", "0"):
                    _loops = False
                else:
                    try:
                        _loops = _compile()
                    except ImportError:
                        _loops = False
    return _loops or None


class LazyLoops:
    """`loops()` of a module of compiled loops (`jit_pool.py`, `jit_avg_pool.py`, ...): the dict
    `compile_loops()` returns, compiled on the first call (once per process, under a lock), or None
    where numba is not used (this module's `loops()` is None). `compiled` holds the dict, False
    (off) or None (not tried yet); tests switch a module's loops off by setting it to False."""

    def __init__(self, compile_loops):
        self._compile = compile_loops
        self._lock = threading.Lock()
        self.compiled = None

    def __call__(self):
        if self.compiled is None:
            with self._lock:
                if self.compiled is None:
                    self.compiled = self._compile() if loops() is not None else False
        return self.compiled or None


def flat(a):
    """A 1-D C-contiguous view (a copy only for a non-contiguous operand)."""
    return np.ascontiguousarray(a).reshape(-1)


def run(loop, size, args, threads):
    """Call `loop(*args, lo, hi)` over [0, size) in blocks on up to `threads` threads."""
    if threads <= 1 or size < 2 * BLOCK_ELEMENTS or intra_op.in_worker():
        loop(*args, 0, size)
        return
    run_shared_ranges(loop, args, size, BLOCK_ELEMENTS, threads)


def run_shared_ranges(loop, args, total, step, threads):
    """Call `loop(*args, lo, hi)` over [0, total) in ranges of `step`, taken by the calling thread
    and up to `threads - 1` intra-op pool workers from one shared sequence."""
    pieces = intra_op.shared_iter(range(0, total, step))
    # a worker keeps its last job (and so `work`) until it gets the next one: the arrays go in a
    # box emptied on return, so that no worker keeps the old values alive (see `update_kernels._Recycler`)
    box = [args]

    def work():
        operands = box[0]
        for lo in pieces:
            loop(*operands, lo, min(total, lo + step))
    try:
        intra_op.POOL.run_shared(work, threads)
    finally:
        box.clear()


def scalar(value, dtype):
    """A 0-d input as a numpy scalar of the variable's dtype (the loops' arithmetic stays in it)."""
    return dtype.type(value)
