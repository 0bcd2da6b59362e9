"""numpy kernels for core and state ops: Const, PlaceholderWithDefault, Identity(N), variables, CountUpTo."""

import numpy as np

from graphflow.framework.errors import OutOfRangeError
from graphflow.kernels.cpu import cpu_kernel


@cpu_kernel("Const")
def _const(node):
    value = node.attrs["value"]
    return lambda: value


@cpu_kernel("Identity", "PlaceholderWithDefault", "StopGradient")
def _identity(node):
    return lambda x: x


@cpu_kernel("IdentityN")
def _identity_n(node):
    return lambda *xs: xs[0] if len(xs) == 1 else xs  # one output: the value itself


@cpu_kernel("VariableV2", "ReadVariableOp")
def _variable_read(node):
    store = node.state.variables
    name = node.attrs["shared_name"]
    return lambda: store.read(name)


def _owned(value, dtype):
    """An array the variable store may keep (callers may still hold their input)."""
    return np.array(value, dtype=dtype, copy=True)


def _shape_mismatch(name, value, static):
    return ValueError(f"Assign requires shapes of both tensors to match: the variable "
                      f"'{name}' has shape {list(static)} but the value has shape "
                      f"{list(np.shape(value))} (use validate_shape=False to change its shape)")


def _adoptable(value, dtype):
    """`value` itself can become the variable's value (the plan said no one else sees it)."""
    return type(value) is np.ndarray and value.dtype == dtype


@cpu_kernel("Assign")
def _assign(node):
    """Stores a copy of the value, or with `adopt=True` (from the memory plan: the value is an array
    of the plan's own that nothing else reads) the array itself."""
    store = node.state.variables
    name = node.attrs["shared_name"]
    dtype = node.out_dtypes[0]
    static = node.attrs["shape"]
    if node.attrs.get("validate_shape", True) and static is not None:
        rank = len(static)

        def assign(value, adopt=False):
            shape = np.shape(value)
            if len(shape) != rank or any(d is not None and d != s for d, s in zip(static, shape)):
                raise _shape_mismatch(name, value, static)
            if adopt and _adoptable(value, dtype):
                return store.write(name, value)
            return store.write(name, _owned(value, dtype))
    else:
        def assign(value, adopt=False):
            if adopt and _adoptable(value, dtype):
                return store.write(name, value)
            return store.write(name, _owned(value, dtype))
    assign.adopts_input = True
    return assign


def _read_modify_write(node, combine):
    store = node.state.variables
    name = node.attrs["shared_name"]

    def update(delta):
        old = store.read(name)
        new = combine(old, delta)
        if new.shape != old.shape:  # broadcasting must never change the variable's shape
            raise _shape_mismatch(name, delta, old.shape)
        return store.write(name, new)
    return update


@cpu_kernel("AssignAdd")
def _assign_add(node):
    return _read_modify_write(node, np.add)


@cpu_kernel("AssignSub")
def _assign_sub(node):
    return _read_modify_write(node, np.subtract)


@cpu_kernel("IsVariableInitialized")
def _is_initialized(node):
    store = node.state.variables
    name = node.attrs["shared_name"]
    return lambda: np.asarray(store.is_initialized(name))


@cpu_kernel("CountUpTo")
def _count_up_to(node):
    store = node.state.variables
    name, limit = node.attrs["shared_name"], node.attrs["limit"]

    def count_up_to(*_):
        old = store.read(name)
        if int(old) >= limit:
            raise OutOfRangeError(None, None, f"Reached limit of {limit} (variable '{name}')")
        store.write(name, np.asarray(old + 1, dtype=old.dtype))
        return old
    return count_up_to
