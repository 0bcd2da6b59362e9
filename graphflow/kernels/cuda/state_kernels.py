"""Variables and pass-through ops on the GPU: VariableV2/ReadVariableOp, Assign, AssignAdd,
AssignSub, IsVariableInitialized, Identity, StopGradient, PlaceholderWithDefault.

GPU-placed variable ops keep values on the device: they read through the session's device-aware
variable store (`read_device` uploads a host value once and keeps the device copy) and write device
arrays into it. Device arrays are never modified in place by any kernel, so Assign stores the value
it is given and pass-through ops return their input itself.
"""

import numpy as np

from graphflow.kernels.cuda import cuda_kernel, runtime


@cuda_kernel("VariableV2", "ReadVariableOp")
def _variable_read(node):
    rt, store, name = runtime(), node.state.variables, node.attrs["shared_name"]
    return lambda: store.read_device(name, rt)


@cuda_kernel("Assign")
def _assign(node):
    store, name = node.state.variables, node.attrs["shared_name"]
    return lambda value: store.write(name, value)


_UPDATES = {"AssignAdd": "Add", "AssignSub": "Sub"}  # the elementwise op each update applies


@cuda_kernel(*_UPDATES)
def _assign_update(node):
    from graphflow.kernels.cuda.elementwise import kernel_for, single_op_program
    rt, store, name = runtime(), node.state.variables, node.attrs["shared_name"]
    dt = node.out_dtypes[0]
    k = kernel_for(single_op_program(_UPDATES[node.type], [dt, dt], dt, {}))

    def update(delta):
        old = store.read_device(name, rt)
        new = k(old, delta)[0]
        if new.shape != old.shape:
            raise ValueError(f"update of shape {delta.shape} does not match variable '{name}' of "
                             f"shape {old.shape}")
        return store.write(name, new)
    return update


@cuda_kernel("IsVariableInitialized", host_outputs=(0,))
def _is_initialized(node):
    store, name = node.state.variables, node.attrs["shared_name"]
    return lambda: np.asarray(store.is_initialized(name))


@cuda_kernel("Identity", "StopGradient", "PlaceholderWithDefault")
def _identity(node):
    return lambda x: x


@cuda_kernel("IdentityN")
def _identity_n(node):
    return lambda *xs: xs[0] if len(xs) == 1 else xs  # one output: the value itself
