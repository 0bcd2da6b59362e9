"""numpy kernels for the fused training ops (ApplyGradientDescent, ApplyMomentum, ApplyAdam,
ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdagrad, ApplyAdadelta).

Each kernel reads the variable and its slots from the session's variable store, computes all new
values into fresh arrays (stored arrays are read-only and shared) and only then writes them back,
so the run's pending writes are all-or-nothing. Arithmetic follows TF1's CPU functors term by term,
in the variable's dtype (the scalar inputs are 0-d arrays of that dtype).

With numba installed, float32/float64 variables of `jit_updates.MIN_ELEMENTS` or more are updated by
one compiled loop per variable instead (`jit_updates.py`: the same terms in the same order, the
same bits, on the session's intra-op threads); the numpy form
below is the reference. Their new arrays reuse the memory of the values they replaced a step
earlier (`_Recycler`) once nothing but the kernel refers to those any more: a fresh multi-megabyte
array costs a page fault per 4 KB page on its first write, about as much as the compiled update
itself.

The exception: an update that is its run's last op (`node.runs_last`, `engine/scheduling.py`) can
no longer be followed by a failure, so every update here then writes the variable and its slots
in place (`jit_updates`' in-place loops, twice as fast on arrays that come from memory) when
nothing but the variable store refers to them (`_update_in_place`): no fetched result, no view,
no other run's value (reference counts, exact under the GIL). Other threads' reads of those
variables wait for the update (`VariableStore.updating_in_place`), so no run ever sees a
half-updated array.
"""

import sys

import numpy as np

from graphflow.kernels import check_update_shapes
from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.numba import jit_updates
from graphflow.kernels.cpu.threads import blas, omp_team


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




@cpu_kernel("ApplyGradientDescent")
def _apply_gradient_descent(node):
    store = node.state.variables
    name = node.attrs["shared_name"]

    threads = blas.session_threads(node)
    recycler = _Recycler(1)

    def run(alpha, delta):
        var = store.read(name)
        check_update_shapes(node, var, delta)
        if jit_updates.applies(var, delta):
            done = _update_in_place(node, "sgd_in_place", store, (var,), (name,),
                                    (jit_updates.flat(delta),
                                     jit_updates.scalar(alpha, var.dtype)), threads)
            if done is not None:
                return done
            out = recycler.take(var)
            jit_updates.run(jit_updates.loops()["sgd"], var.size,
                            (jit_updates.flat(var), jit_updates.flat(delta),
                             jit_updates.scalar(alpha, var.dtype), out.reshape(-1)), threads)
            recycler.give(var)
            return store.write(name, out)
        out = np.multiply(delta, alpha, out=_fresh(var))
        np.subtract(var, out, out=out)
        return store.write(name, out)
    return run


@cpu_kernel("ApplyMomentum")
def _apply_momentum(node):
    store = node.state.variables
    name, accum_name = node.attrs["shared_name"], node.attrs["accum_name"]
    nesterov = bool(node.attrs.get("use_nesterov", False))

    threads = blas.session_threads(node)
    recycler = _Recycler(2)

    def run(lr, grad, momentum):
        var, accum = store.read(name), store.read(accum_name)
        check_update_shapes(node, var, grad, (accum,))
        if jit_updates.applies(var, grad, accum):
            f, dt = jit_updates.flat, var.dtype
            done = _update_in_place(node, "momentum_in_place", store, (var, accum),
                                    (name, accum_name),
                                    (f(grad), jit_updates.scalar(lr, dt),
                                     jit_updates.scalar(momentum, dt), nesterov), threads)
            if done is not None:
                return done
            var_new, accum_new = recycler.take(var), recycler.take(var)
            jit_updates.run(jit_updates.loops()["momentum"], var.size,
                            (f(var), f(accum), f(grad), jit_updates.scalar(lr, dt),
                             jit_updates.scalar(momentum, dt), nesterov, var_new.reshape(-1),
                             accum_new.reshape(-1)), threads)
            recycler.give(var, accum)
            store.write(accum_name, accum_new)
            return store.write(name, var_new)
        accum_new = np.multiply(accum, momentum, out=_fresh(var))
        accum_new += grad
        if nesterov:
            step = np.multiply(grad, lr, out=_fresh(var))
            step += accum_new * momentum * lr
        else:
            step = np.multiply(accum_new, lr, out=_fresh(var))
        var_new = np.subtract(var, step, out=step)
        store.write(accum_name, accum_new)
        return store.write(name, var_new)
    return run


@cpu_kernel("ApplyAdam")
def _apply_adam(node):
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
        if jit_updates.applies(var, grad, m, v):
            f, dt = jit_updates.flat, var.dtype
            sc = jit_updates.scalar
            done = _update_in_place(node, "adam_in_place", store, (var, m, v),
                                    (name, m_name, v_name),
                                    (f(grad), sc(alpha, dt), sc(one - beta1, dt),
                                     sc(one - beta2, dt), sc(beta1, dt), sc(epsilon, dt),
                                     nesterov), threads)
            if done is not None:
                return done
            var_new, m_new, v_new = recycler.take(var), recycler.take(var), recycler.take(var)
            jit_updates.run(jit_updates.loops()["adam"], var.size,
                            (f(var), f(m), f(v), f(grad), sc(alpha, dt), sc(one - beta1, dt),
                             sc(one - beta2, dt), sc(beta1, dt), sc(epsilon, dt), nesterov,
                             var_new.reshape(-1), m_new.reshape(-1), v_new.reshape(-1)), threads)
            recycler.give(var, m, v)
            store.write(m_name, m_new)
            store.write(v_name, v_new)
            return store.write(name, var_new)
        m_new = np.subtract(grad, m, out=_fresh(var))
        m_new *= one - beta1
        m_new += m
        v_new = np.square(grad, out=_fresh(var))
        v_new -= v
        v_new *= one - beta2
        v_new += v
        denom = np.sqrt(v_new, out=_fresh(var))
        denom += epsilon
        if nesterov:
            step = np.multiply(grad, one - beta1, out=_fresh(var))
            step += beta1 * m_new
            step *= alpha
        else:
            step = np.multiply(m_new, alpha, out=_fresh(var))
        step /= denom
        var_new = np.subtract(var, step, out=step)
        store.write(m_name, m_new)
        store.write(v_name, v_new)
        return store.write(name, var_new)
    return run


def _rms_prop_kernel(node, centered):
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
        if jit_updates.applies(var, grad, ms, mom, *((mg,) if centered else ())):
            f, dt, sc = jit_updates.flat, var.dtype, jit_updates.scalar
            hyper = (sc(lr, dt), sc(one - rho, dt), sc(momentum, dt), sc(epsilon, dt), centered)
            if centered:
                done = _update_in_place(node, "rms_prop_in_place", store, (var, ms, mom, mg),
                                        (name, ms_name, mom_name, mg_name),
                                        (f(grad),) + hyper, threads)
            else:  # the loop's mg operand: ms again, never read or written when not centered
                done = _update_in_place(node, "rms_prop_in_place", store, (var, ms, mom),
                                        (name, ms_name, mom_name), (f(grad),) + hyper, threads,
                                        operands=lambda flat: flat + flat[1:2])
            if done is not None:
                return done
            var_new, ms_new, mom_new = recycler.take(var), recycler.take(var), recycler.take(var)
            mg_new = recycler.take(var) if centered else ms_new  # (unused when not centered)
            jit_updates.run(jit_updates.loops()["rms_prop"], var.size,
                            (f(var), f(ms), f(mom), f(mg) if centered else f(ms), f(grad),
                             sc(lr, dt), sc(one - rho, dt), sc(momentum, dt), sc(epsilon, dt),
                             centered, var_new.reshape(-1), ms_new.reshape(-1),
                             mom_new.reshape(-1), mg_new.reshape(-1)), threads)
            recycler.give(var, ms, mom, *((mg,) if centered else ()))
            store.write(ms_name, ms_new)
            if centered:
                store.write(mg_name, mg_new)
            store.write(mom_name, mom_new)
            return store.write(name, var_new)
        ms_new = np.square(grad, out=_fresh(var))
        ms_new -= ms
        ms_new *= one - rho
        ms_new += ms
        if centered:
            mg_new = np.subtract(grad, mg, out=_fresh(var))
            mg_new *= one - rho
            mg_new += mg
            denom = np.square(mg_new, out=_fresh(var))
            np.subtract(ms_new, denom, out=denom)
            denom += epsilon
        else:
            denom = np.add(ms_new, epsilon, out=_fresh(var))
        np.sqrt(denom, out=denom)
        mom_new = np.multiply(grad, lr, out=_fresh(var))
        mom_new /= denom
        mom_new += mom * momentum
        var_new = np.subtract(var, mom_new, out=_fresh(var))
        store.write(ms_name, ms_new)
        if centered:
            store.write(mg_name, mg_new)
        store.write(mom_name, mom_new)
        return store.write(name, var_new)
    return run


@cpu_kernel("ApplyRMSProp")
def _apply_rms_prop(node):
    return _rms_prop_kernel(node, centered=False)


@cpu_kernel("ApplyCenteredRMSProp")
def _apply_centered_rms_prop(node):
    return _rms_prop_kernel(node, centered=True)


@cpu_kernel("ApplyAdagrad")
def _apply_adagrad(node):
    store = node.state.variables
    name, accum_name = node.attrs["shared_name"], node.attrs["accum_name"]
    one = node.out_dtypes[0].type(1)

    threads = blas.session_threads(node)
    recycler = _Recycler(2)

    def run(lr, grad):
        var, accum = store.read(name), store.read(accum_name)
        check_update_shapes(node, var, grad, (accum,))
        if jit_updates.applies(var, grad, accum):
            f, dt = jit_updates.flat, var.dtype
            done = _update_in_place(node, "adagrad_in_place", store, (var, accum),
                                    (name, accum_name),
                                    (f(grad), jit_updates.scalar(lr, dt), one), threads)
            if done is not None:
                return done
            var_new, accum_new = recycler.take(var), recycler.take(var)
            jit_updates.run(jit_updates.loops()["adagrad"], var.size,
                            (f(var), f(accum), f(grad), jit_updates.scalar(lr, dt), one,
                             var_new.reshape(-1), accum_new.reshape(-1)), threads)
            recycler.give(var, accum)
            store.write(accum_name, accum_new)
            return store.write(name, var_new)
        accum_new = np.square(grad, out=_fresh(var))
        accum_new += accum
        step = np.multiply(grad, lr, out=_fresh(var))
        step *= np.divide(one, np.sqrt(accum_new))  # TF1: grad * lr * rsqrt(accum)
        var_new = np.subtract(var, step, out=step)
        store.write(accum_name, accum_new)
        return store.write(name, var_new)
    return run


@cpu_kernel("ApplyAdadelta")
def _apply_adadelta(node):
    store = node.state.variables
    name, accum_name, update_name = (node.attrs[k] for k in
                                     ("shared_name", "accum_name", "accum_update_name"))
    one = node.out_dtypes[0].type(1)

    threads = blas.session_threads(node)
    recycler = _Recycler(3)

    def run(lr, rho, epsilon, grad):
        var, accum, accum_update = (store.read(n) for n in (name, accum_name, update_name))
        check_update_shapes(node, var, grad, (accum, accum_update))
        if jit_updates.applies(var, grad, accum, accum_update):
            f, dt, sc = jit_updates.flat, var.dtype, jit_updates.scalar
            done = _update_in_place(node, "adadelta_in_place", store, (var, accum, accum_update),
                                    (name, accum_name, update_name),
                                    (f(grad), sc(lr, dt), sc(rho, dt), sc(one - rho, dt),
                                     sc(epsilon, dt), one), threads)
            if done is not None:
                return done
            outs = [recycler.take(var) for _ in range(3)]
            jit_updates.run(jit_updates.loops()["adadelta"], var.size,
                            (f(var), f(accum), f(accum_update), f(grad), sc(lr, dt), sc(rho, dt),
                             sc(one - rho, dt), sc(epsilon, dt), one,
                             *(o.reshape(-1) for o in outs)), threads)
            recycler.give(var, accum, accum_update)
            store.write(accum_name, outs[1])
            store.write(update_name, outs[2])
            return store.write(name, outs[0])
        accum_new = np.multiply(accum, rho, out=_fresh(var))
        accum_new += np.square(grad) * (one - rho)
        update = np.add(accum_update, epsilon, out=_fresh(var))
        np.sqrt(update, out=update)
        update *= np.divide(one, np.sqrt(accum_new + epsilon))
        update *= grad
        var_new = np.subtract(var, update * lr, out=_fresh(var))
        update_new = np.multiply(accum_update, rho, out=_fresh(var))
        update_new += np.square(update) * (one - rho)
        store.write(accum_name, accum_new)
        store.write(update_name, update_new)
        return store.write(name, var_new)
    return run
