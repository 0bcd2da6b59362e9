"""numpy kernels for the fused training ops (ApplyGradientDescent, ApplyMomentum, ApplyAdam,
ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdagrad, ApplyAdadelta).

Each kernel reads the variable and its slots from the session's variable store, computes all new
values into fresh arrays (stored arrays are read-only and shared) and only then writes them back,
so the run's pending writes are all-or-nothing. Arithmetic follows TF1's CPU functors term by term,
in the variable's dtype (the scalar inputs are 0-d arrays of that dtype).

This is the definition: the compiled loops registered as the "numba" implementations of the
same ops (`kernels/cpu/numba/update_kernels.py`, chosen when the plan is built for float32/float64
variables of a static size of `update_kernels.MIN_ELEMENTS` or more, and which also write a run's
last update in place) are tested against it bit for bit
(`tests/kernels/cpu/reference/test_training_kernels.py`).
"""

import numpy as np

from graphflow.kernels import check_update_shapes
from graphflow.kernels.cpu import cpu_kernel


def _fresh(var):
    """A new writable array for a result (0-d included: numpy would return a scalar)."""
    return np.empty(var.shape, var.dtype)


@cpu_kernel("ApplyGradientDescent")
def _apply_gradient_descent(node):
    store = node.state.variables
    name = node.attrs["shared_name"]

    def run(alpha, delta):
        var = store.read(name)
        check_update_shapes(node, var, delta)
        out = np.multiply(delta, alpha, out=_fresh(var))
        np.subtract(var, out, out=out)
        return store.write(name, out)
    return run


@cpu_kernel("ApplyMomentum")
def _apply_momentum(node):
    store = node.state.variables
    name, accum_name = node.attrs["shared_name"], node.attrs["accum_name"]
    nesterov = bool(node.attrs.get("use_nesterov", False))

    def run(lr, grad, momentum):
        var, accum = store.read(name), store.read(accum_name)
        check_update_shapes(node, var, grad, (accum,))
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

    def run(beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad):
        var, m, v = store.read(name), store.read(m_name), store.read(v_name)
        check_update_shapes(node, var, grad, (m, v))
        alpha = lr * np.sqrt(one - beta2_power) / (one - beta1_power)
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

    def run(lr, rho, momentum, epsilon, grad):
        var, ms, mom = store.read(name), store.read(ms_name), store.read(mom_name)
        mg = store.read(mg_name) if centered else None
        check_update_shapes(node, var, grad, (ms, mom) + ((mg,) if centered else ()))
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

    def run(lr, grad):
        var, accum = store.read(name), store.read(accum_name)
        check_update_shapes(node, var, grad, (accum,))
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

    def run(lr, rho, epsilon, grad):
        var, accum, accum_update = (store.read(n) for n in (name, accum_name, update_name))
        check_update_shapes(node, var, grad, (accum, accum_update))
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
