"""numpy kernels for core and state ops: Const, PlaceholderWithDefault, Identity, variables."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


@cpu_kernel("Const")
def _const(node):
    value = node.attrs["value"]
    return lambda: value


@cpu_kernel("Identity", "PlaceholderWithDefault", "StopGradient")
def _identity(node):
    return lambda x: x


@cpu_kernel("VariableV2", "ReadVariableOp")
def _variable_read(node):
    store = node.state.variables
    name = node.attrs["shared_name"]
    return lambda: store.read(name)


def _owned(value, dtype):
    """An array the variable store may keep (callers may still hold their input)."""
    return np.array(value, dtype=dtype, copy=True)


@cpu_kernel("Assign")
def _assign(node):
    store = node.state.variables
    name = node.attrs["shared_name"]
    dtype = node.out_dtypes[0]
    return lambda value: store.write(name, _owned(value, dtype))


@cpu_kernel("AssignAdd")
def _assign_add(node):
    store = node.state.variables
    name = node.attrs["shared_name"]
    return lambda delta: store.write(name, np.add(store.read(name), delta))


@cpu_kernel("AssignSub")
def _assign_sub(node):
    store = node.state.variables
    name = node.attrs["shared_name"]
    return lambda delta: store.write(name, np.subtract(store.read(name), delta))


@cpu_kernel("IsVariableInitialized")
def _is_initialized(node):
    store = node.state.variables
    name = node.attrs["shared_name"]
    return lambda: np.asarray(store.is_initialized(name))
