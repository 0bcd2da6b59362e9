"""The "numba" implementations of the optimizer updates (ApplyGradientDescent, ApplyMomentum,
ApplyAdam, ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdagrad, ApplyAdadelta): one compiled loop per
variable (`jit_updates.py`: TF1's functor terms in the same order, the reference's bits, on the
session's intra-op threads), chosen when the plan is built for the nodes `applies` accepts.

They take float32/float64 variables whose size is known when the plan is built (the variable's
declared shape, or its gradient's) and is at least `MIN_ELEMENTS`; smaller variables, whose ufunc
calls are cheap anyway, and sessions without numba (GRAPHFLOW_NO_JIT=1) keep the numpy reference
(`reference/training_kernels.py`).

Their new arrays reuse the memory of the values they replaced a step earlier (`_Recycler`) once
nothing but the kernel refers to those any more: a fresh multi-megabyte array costs a page fault
per 4 KB page on its first write, about as much as the compiled update itself.

An update that is its run's last op (`node.runs_last`, `engine/scheduling.py`) can no longer be
followed by a failure, so it then writes the variable and its slots in place (`jit_updates`'
in-place loops, twice as fast on arrays that come from memory) when nothing but the variable store
refers to them (`_update_in_place`): no fetched result, no view, no other run's value (reference
counts, exact under the GIL). Other threads' reads of those variables wait for the update
(`VariableStore.updating_in_place`), so no run ever sees a half-updated array.
"""

import sys

import numpy as np

from graphflow.kernels import check_update_shapes, registry
from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.numba import jit_updates
from graphflow.kernels.cpu.threads import blas, omp_team

DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Variables of fewer elements keep the numpy reference: its ufunc calls are cheap there, and no
# loop is compiled for them (about a second per dtype, once per process).
MIN_ELEMENTS = 1 << 14
PREFERENCE = 20
# the gradient's position among each update's inputs (`ops/training_ops.py`)
GRAD_INPUT = {"ApplyGradientDescent": 1, "ApplyMomentum": 1, "ApplyAdam": 6, "ApplyRMSProp": 4,
              "ApplyCenteredRMSProp": 4, "ApplyAdagrad": 1, "ApplyAdadelta": 3}


def static_size(*shapes):
    """The element count of the one shape the static `shapes` describe together (each dim taken
    from whichever knows it); None when a dim is unknown to all or the shapes disagree."""
    shape = registry.static_shape(*shapes)
    return None if shape is None else int(np.prod(shape, dtype=np.int64))


def applies(node):
    """A float32/float64 variable of at least MIN_ELEMENTS elements, by its declared shape (the
    op's output) or its gradient's static shape."""
    if not node.out_dtypes or np.dtype(node.out_dtypes[0]) not in DTYPES:
        return False
    grad = GRAD_INPUT.get(node.type)
    in_shapes = node.in_shapes or ()
    grad_shape = in_shapes[grad] if grad is not None and grad < len(in_shapes) else None
    size = static_size(node.out_shapes[0] if node.out_shapes else None, grad_shape)
    return size is not None and size >= max(MIN_ELEMENTS, 1)


def _fresh(var):
    """A new writable array for a result (0-d included: numpy would return a scalar)."""
    return np.empty(var.shape, var.dtype)


# references to a stored array while `_update_in_place` checks it: the variable store's dict, the
# kernel's local name, the `arrays` tuple, the loop's name and getrefcount's argument
_STORE_ONLY = 5


def _update_in_place(node, loop, store, arrays, names, args, threads, operands=None):
    """As the run's last op (`node.runs_last`), run the in-place loop named `loop` on `arrays` (the
    variable and its slots as read from the store, flat, then `args`; `operands(flat arrays)`: the
    loop's array operands where they are not just those) and store them again under `names`;
    None (nothing done) when something besides the store refers to one of them: a fetched result,
    a view, another run's value. Other threads' reads of `names` wait meanwhile
    (`VariableStore.updating_in_place`), so the check cannot be overtaken by a new reader."""
    if not (node.runs_last and _Recycler._enabled):  # reference counts are exact under the GIL
        return None
    with store.updating_in_place(names):
        for a in arrays:
            if (sys.getrefcount(a) != _STORE_ONLY or a.base is not None
                    or not a.flags.c_contiguous or not a.flags.owndata):
                return None
        for a in arrays:
            a.flags.writeable = True
        try:
            flat = tuple(a.reshape(-1) for a in arrays)
            omp_team.run_holding_gil(jit_updates.loops()[loop], arrays[0].size,
                                     (operands(flat) if operands else flat) + args, threads)
        finally:
            for a in arrays:
                a.flags.writeable = False
    for n, a in zip(names[1:], arrays[1:]):
        store.write(n, a)
    return store.write(names[0], arrays[0])


class _Recycler:
    """Arrays a kernel replaced in the variable store, handed back as output buffers once the kernel
    holds the only reference (checked by reference count when one is taken: the store, a fetched
    result, a view or another thread's run keep an array out of reuse)."""

    __slots__ = ("spares", "limit")
    _enabled = getattr(sys, "_is_gil_enabled", lambda: True)()  # counts are exact under the GIL

    def __init__(self, outputs):
        self.spares = []
        self.limit = 2 * outputs

    def take(self, like):
        spares = self.spares
        while spares:
            try:
                arr = spares.pop()
            except IndexError:  # another thread took the last one
                break
            # references: `arr` and getrefcount's argument, nothing else
            if (sys.getrefcount(arr) == 2 and arr.shape == like.shape and arr.dtype == like.dtype
                    and arr.base is None and arr.flags.c_contiguous):
                arr.flags.writeable = True
                return arr
        return _fresh(like)

    def give(self, *replaced):
        if self._enabled and len(self.spares) < self.limit:
            self.spares.extend(a for a in replaced if isinstance(a, np.ndarray) and a.base is None)


_NUMBA = dict(name="numba", preference=PREFERENCE, requires=("numba",), applies=applies)
_flat, _sc = jit_updates.flat, jit_updates.scalar


@cpu_kernel("ApplyGradientDescent", **_NUMBA)
def apply_gradient_descent_loop(node):
    store = node.state.variables
    name = node.attrs["shared_name"]
    threads = blas.session_threads(node)
    recycler = _Recycler(1)

    def run(alpha, delta):
        var = store.read(name)
        check_update_shapes(node, var, delta)
        done = _update_in_place(node, "sgd_in_place", store, (var,), (name,),
                                (_flat(delta), _sc(alpha, var.dtype)), threads)
        if done is not None:
            return done
        out = recycler.take(var)
        jit_updates.run(jit_updates.loops()["sgd"], var.size,
                        (_flat(var), _flat(delta), _sc(alpha, var.dtype), out.reshape(-1)), threads)
        recycler.give(var)
        return store.write(name, out)
    return run


@cpu_kernel("ApplyMomentum", **_NUMBA)
def apply_momentum_loop(node):
    store = node.state.variables
    name, accum_name = node.attrs["shared_name"], node.attrs["accum_name"]
    nesterov = bool(node.attrs.get("use_nesterov", False))
    threads = blas.session_threads(node)
    recycler = _Recycler(2)

    def run(lr, grad, momentum):
        var, accum = store.read(name), store.read(accum_name)
        check_update_shapes(node, var, grad, (accum,))
        dt = var.dtype
        done = _update_in_place(node, "momentum_in_place", store, (var, accum), (name, accum_name),
                                (_flat(grad), _sc(lr, dt), _sc(momentum, dt), nesterov), threads)
        if done is not None:
            return done
        var_new, accum_new = recycler.take(var), recycler.take(var)
        jit_updates.run(jit_updates.loops()["momentum"], var.size,
                        (_flat(var), _flat(accum), _flat(grad), _sc(lr, dt), _sc(momentum, dt), nesterov,
                         var_new.reshape(-1), accum_new.reshape(-1)), threads)
        recycler.give(var, accum)
        store.write(accum_name, accum_new)
        return store.write(name, var_new)
    return run


@cpu_kernel("ApplyAdam", **_NUMBA)
def apply_adam_loop(node):
    store = node.state.variables
    name, m_name, v_name = (node.attrs[k] for k in ("shared_name", "m_name", "v_name"))
    nesterov = bool(node.attrs.get("use_nesterov", False))
    one = node.out_dtypes[0].type(1)
    threads = blas.session_threads(node)
    recycler = _Recycler(3)

    def run(beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad):
        var, m, v = store.read(name), store.read(m_name), store.read(v_name)
        check_update_shapes(node, var, grad, (m, v))
        alpha = lr * np.sqrt(one - beta2_power) / (one - beta1_power)
        dt = var.dtype
        hyper = (_sc(alpha, dt), _sc(one - beta1, dt), _sc(one - beta2, dt), _sc(beta1, dt),
                 _sc(epsilon, dt), nesterov)
        done = _update_in_place(node, "adam_in_place", store, (var, m, v), (name, m_name, v_name),
                                (_flat(grad),) + hyper, threads)
        if done is not None:
            return done
        var_new, m_new, v_new = recycler.take(var), recycler.take(var), recycler.take(var)
        jit_updates.run(jit_updates.loops()["adam"], var.size,
                        (_flat(var), _flat(m), _flat(v), _flat(grad)) + hyper
                        + (var_new.reshape(-1), m_new.reshape(-1), v_new.reshape(-1)), threads)
        recycler.give(var, m, v)
        store.write(m_name, m_new)
        store.write(v_name, v_new)
        return store.write(name, var_new)
    return run


def _rms_prop_loop(node, centered):
    store = node.state.variables
    name, ms_name, mom_name = (node.attrs[k] for k in ("shared_name", "ms_name", "mom_name"))
    mg_name = node.attrs["mg_name"] if centered else None
    one = node.out_dtypes[0].type(1)
    threads = blas.session_threads(node)
    recycler = _Recycler(4 if centered else 3)

    def run(lr, rho, momentum, epsilon, grad):
        var, ms, mom = store.read(name), store.read(ms_name), store.read(mom_name)
        mg = store.read(mg_name) if centered else None
        check_update_shapes(node, var, grad, (ms, mom) + ((mg,) if centered else ()))
        dt = var.dtype
        hyper = (_sc(lr, dt), _sc(one - rho, dt), _sc(momentum, dt), _sc(epsilon, dt), centered)
        if centered:
            done = _update_in_place(node, "rms_prop_in_place", store, (var, ms, mom, mg),
                                    (name, ms_name, mom_name, mg_name), (_flat(grad),) + hyper,
                                    threads)
        else:  # the loop's mg operand: ms again, never read or written when not centered
            done = _update_in_place(node, "rms_prop_in_place", store, (var, ms, mom),
                                    (name, ms_name, mom_name), (_flat(grad),) + hyper, threads,
                                    operands=lambda flat: flat + flat[1:2])
        if done is not None:
            return done
        var_new, ms_new, mom_new = recycler.take(var), recycler.take(var), recycler.take(var)
        mg_new = recycler.take(var) if centered else ms_new  # (unused when not centered)
        jit_updates.run(jit_updates.loops()["rms_prop"], var.size,
                        (_flat(var), _flat(ms), _flat(mom), _flat(mg if centered else ms),
                         _flat(grad)) + hyper
                        + (var_new.reshape(-1), ms_new.reshape(-1), mom_new.reshape(-1),
                           mg_new.reshape(-1)), threads)
        recycler.give(var, ms, mom, *((mg,) if centered else ()))
        store.write(ms_name, ms_new)
        if centered:
            store.write(mg_name, mg_new)
        store.write(mom_name, mom_new)
        return store.write(name, var_new)
    return run


@cpu_kernel("ApplyRMSProp", **_NUMBA)
def apply_rms_prop_loop(node):
    return _rms_prop_loop(node, centered=False)


@cpu_kernel("ApplyCenteredRMSProp", **_NUMBA)
def apply_centered_rms_prop_loop(node):
    return _rms_prop_loop(node, centered=True)


@cpu_kernel("ApplyAdagrad", **_NUMBA)
def apply_adagrad_loop(node):
    store = node.state.variables
    name, accum_name = node.attrs["shared_name"], node.attrs["accum_name"]
    one = node.out_dtypes[0].type(1)
    threads = blas.session_threads(node)
    recycler = _Recycler(2)

    def run(lr, grad):
        var, accum = store.read(name), store.read(accum_name)
        check_update_shapes(node, var, grad, (accum,))
        dt = var.dtype
        done = _update_in_place(node, "adagrad_in_place", store, (var, accum), (name, accum_name),
                                (_flat(grad), _sc(lr, dt), one), threads)
        if done is not None:
            return done
        var_new, accum_new = recycler.take(var), recycler.take(var)
        jit_updates.run(jit_updates.loops()["adagrad"], var.size,
                        (_flat(var), _flat(accum), _flat(grad), _sc(lr, dt), one, var_new.reshape(-1),
                         accum_new.reshape(-1)), threads)
        recycler.give(var, accum)
        store.write(accum_name, accum_new)
        return store.write(name, var_new)
    return run


@cpu_kernel("ApplyAdadelta", **_NUMBA)
def apply_adadelta_loop(node):
    store = node.state.variables
    name, accum_name, update_name = (node.attrs[k] for k in
                                     ("shared_name", "accum_name", "accum_update_name"))
    one = node.out_dtypes[0].type(1)
    threads = blas.session_threads(node)
    recycler = _Recycler(3)

    def run(lr, rho, epsilon, grad):
        var, accum, accum_update = (store.read(n) for n in (name, accum_name, update_name))
        check_update_shapes(node, var, grad, (accum, accum_update))
        dt = var.dtype
        hyper = (_sc(lr, dt), _sc(rho, dt), _sc(one - rho, dt), _sc(epsilon, dt), one)
        done = _update_in_place(node, "adadelta_in_place", store, (var, accum, accum_update),
                                (name, accum_name, update_name), (_flat(grad),) + hyper, threads)
        if done is not None:
            return done
        outs = [recycler.take(var) for _ in range(3)]
        jit_updates.run(jit_updates.loops()["adadelta"], var.size,
                        (_flat(var), _flat(accum), _flat(accum_update), _flat(grad)) + hyper
                        + tuple(o.reshape(-1) for o in outs), threads)
        recycler.give(var, accum, accum_update)
        store.write(accum_name, outs[1])
        store.write(update_name, outs[2])
        return store.write(name, outs[0])
    return run
