"""Fused optimizer updates on the GPU (optim.cu): ApplyGradientDescent, ApplyMomentum, ApplyAdam,
ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdagrad, ApplyAdadelta.

Like the CPU kernels, each one reads the variable and its slots from the session's variable store
(as device arrays: they stay on the GPU between runs), writes every new value into a fresh buffer
from the memory pool with one launch, and hands them to the store, which commits them only when the
whole run succeeds. The scalar hyper-parameters are device scalars read by the kernel itself.
"""

import numpy as np

from graphflow.kernels import check_update_shapes
from graphflow.kernels.cuda import cuda_kernel, runtime
from graphflow.kernels.cuda.launch import SUFFIX, launch_1d

_FLOATS = (np.float32, np.float64)


def _addr(*arrays):
    return [int(a.gpudata) for a in arrays]




def _setup(node, *slot_attrs):
    rt = runtime()
    store = node.state.variables
    names = [node.attrs["shared_name"]] + [node.attrs[a] for a in slot_attrs]
    t = SUFFIX[np.dtype(node.out_dtypes[0])]
    return rt, store, names, t


def _read(store, names, rt):
    return [store.read_device(n, rt) for n in names]


@cuda_kernel("ApplyGradientDescent", dtypes=_FLOATS)
def _apply_gradient_descent(node):
    rt, store, (name,), t = _setup(node)
    fn = None

    def run(alpha, delta):
        nonlocal fn
        (var,) = _read(store, [name], rt)
        check_update_shapes(node, var, delta)
        out = rt.empty(var.shape, var.dtype)
        if var.size:
            fn = fn or rt.kernel("optim.cu", f"gf_apply_sgd_{t}", "qPPPP")
            launch_1d(rt, fn, var.size, np.int64(var.size), *_addr(var, alpha, delta, out))
        return store.write(name, out)
    return run


@cuda_kernel("ApplyMomentum", dtypes=_FLOATS)
def _apply_momentum(node):
    rt, store, names, t = _setup(node, "accum_name")
    nesterov = int(bool(node.attrs.get("use_nesterov", False)))

    def run(lr, grad, momentum):
        var, accum = _read(store, names, rt)
        check_update_shapes(node, var, grad, (accum,))
        var_new, accum_new = rt.empty(var.shape, var.dtype), rt.empty(var.shape, var.dtype)
        if var.size:
            fn = rt.kernel("optim.cu", f"gf_apply_momentum_{t}", "qPPPPPPPq")
            addresses = _addr(var, accum, lr, grad, momentum, var_new, accum_new)
            launch_1d(rt, fn, var.size, np.int64(var.size), *addresses, np.int64(nesterov))
        store.write(names[1], accum_new)
        return store.write(names[0], var_new)
    return run


@cuda_kernel("ApplyAdam", dtypes=_FLOATS)
def _apply_adam(node):
    rt, store, names, t = _setup(node, "m_name", "v_name")
    nesterov = int(bool(node.attrs.get("use_nesterov", False)))

    def run(beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad):
        var, m, v = _read(store, names, rt)
        check_update_shapes(node, var, grad, (m, v))
        outs = [rt.empty(var.shape, var.dtype) for _ in range(3)]
        if var.size:
            fn = rt.kernel("optim.cu", f"gf_apply_adam_{t}", "qPPPPPPPPPPPPPq")
            addresses = _addr(var, m, v, beta1_power, beta2_power, lr,
                              beta1, beta2, epsilon, grad, outs[0], outs[1], outs[2])
            launch_1d(rt, fn, var.size, np.int64(var.size), *addresses, np.int64(nesterov))
        store.write(names[1], outs[1])
        store.write(names[2], outs[2])
        return store.write(names[0], outs[0])
    return run


@cuda_kernel("ApplyRMSProp", dtypes=_FLOATS)
def _apply_rms_prop(node):
    rt, store, names, t = _setup(node, "ms_name", "mom_name")

    def run(lr, rho, momentum, epsilon, grad):
        var, ms, mom = _read(store, names, rt)
        check_update_shapes(node, var, grad, (ms, mom))
        outs = [rt.empty(var.shape, var.dtype) for _ in range(3)]
        if var.size:
            fn = rt.kernel("optim.cu", f"gf_apply_rms_prop_{t}", "qPPPPPPPPPPP")
            addresses = _addr(var, ms, mom, lr, rho, momentum, epsilon, grad, outs[0], outs[1], outs[2])
            launch_1d(rt, fn, var.size, np.int64(var.size), *addresses)
        store.write(names[1], outs[1])
        store.write(names[2], outs[2])
        return store.write(names[0], outs[0])
    return run


@cuda_kernel("ApplyCenteredRMSProp", dtypes=_FLOATS)
def _apply_centered_rms_prop(node):
    rt, store, names, t = _setup(node, "mg_name", "ms_name", "mom_name")

    def run(lr, rho, momentum, epsilon, grad):
        var, mg, ms, mom = _read(store, names, rt)
        check_update_shapes(node, var, grad, (mg, ms, mom))
        outs = [rt.empty(var.shape, var.dtype) for _ in range(4)]
        if var.size:
            fn = rt.kernel("optim.cu", f"gf_apply_centered_rms_prop_{t}", "qPPPPPPPPPPPPP")
            addresses = _addr(var, mg, ms, mom, lr, rho,
                              momentum, epsilon, grad, outs[0], outs[1], outs[2], outs[3])
            launch_1d(rt, fn, var.size, np.int64(var.size), *addresses)
        for name, value in zip(names[1:], outs[1:]):
            store.write(name, value)
        return store.write(names[0], outs[0])
    return run


@cuda_kernel("ApplyAdagrad", dtypes=_FLOATS)
def _apply_adagrad(node):
    rt, store, names, t = _setup(node, "accum_name")

    def run(lr, grad):
        var, accum = _read(store, names, rt)
        check_update_shapes(node, var, grad, (accum,))
        var_new, accum_new = rt.empty(var.shape, var.dtype), rt.empty(var.shape, var.dtype)
        if var.size:
            fn = rt.kernel("optim.cu", f"gf_apply_adagrad_{t}", "qPPPPPP")
            launch_1d(rt, fn, var.size, np.int64(var.size),
                      *_addr(var, accum, lr, grad, var_new, accum_new))
        store.write(names[1], accum_new)
        return store.write(names[0], var_new)
    return run


@cuda_kernel("ApplyAdadelta", dtypes=_FLOATS)
def _apply_adadelta(node):
    rt, store, names, t = _setup(node, "accum_name", "accum_update_name")

    def run(lr, rho, epsilon, grad):
        var, accum, accum_update = _read(store, names, rt)
        check_update_shapes(node, var, grad, (accum, accum_update))
        outs = [rt.empty(var.shape, var.dtype) for _ in range(3)]
        if var.size:
            fn = rt.kernel("optim.cu", f"gf_apply_adadelta_{t}", "qPPPPPPPPPP")
            addresses = _addr(var, accum, accum_update, lr, rho, epsilon, grad, *outs)
            launch_1d(rt, fn, var.size, np.int64(var.size), *addresses)
        store.write(names[1], outs[1])
        store.write(names[2], outs[2])
        return store.write(names[0], outs[0])
    return run
