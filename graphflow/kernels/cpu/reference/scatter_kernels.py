"""numpy kernels for ScatterUpdate / ScatterAdd / ScatterSub, committed with the rest of the run.

A scatter changes a few rows of what may be a vocabulary-sized variable (an embedding's sparse
update), so copying the whole array each step would cost far more than the update. When nothing
but the variable store refers to the stored array (no fetched result, no view, no other run's
value: reference counts, exact under the GIL), the kernel changes the named rows in place: other
threads' reads of the variable wait until the run commits or aborts
(`VariableStore.updating_in_place`), and the old rows are kept so that a failure later in the run
puts them back (`VariableStore.on_abort`). Otherwise it writes a new array. Either way the rows
not named keep their exact bits.
"""

import sys

import numpy as np

from graphflow.kernels.cpu import cpu_kernel

# references to the stored array while `_in_place` checks it: the store's dict, the kernel's and
# `_in_place`'s local names and getrefcount's argument
_STORE_ONLY = 4
_GIL = getattr(sys, "_is_gil_enabled", lambda: True)()  # reference counts are exact under it


class _Shared(Exception):
    """Something besides the variable store refers to the array."""


def _in_place(store, name, current, rows):
    """True when `current` (read from the store) may be changed in place at `rows`; then the run
    holds the variable (other threads' reads wait) and puts the rows back if it fails."""
    if not (_GIL and current.base is None and current.flags.c_contiguous
            and current.flags.owndata and store.values.get(name) is current):
        return False
    try:
        with store.updating_in_place([name]):  # held until the run commits or aborts
            if sys.getrefcount(current) != _STORE_ONLY:
                raise _Shared
    except _Shared:
        return False
    touched = np.unique(rows)
    saved = current[touched]

    def undo():
        current.flags.writeable = True
        current[touched] = saved
        current.flags.writeable = False
    store.on_abort(undo)
    return True


def _scatter_kernel(apply):
    def build(node):
        store = node.state.variables
        name = node.attrs["shared_name"]

        def scatter(indices, updates):
            current = store.read(name)
            rows = current.shape[0]
            if indices.size and (indices.min() < 0 or indices.max() >= rows):
                bad = indices[(indices < 0) | (indices >= rows)].reshape(-1)[0]
                raise IndexError(f"index {bad} is out of range for variable '{name}' with "
                                 f"{rows} rows")
            expected = indices.shape + current.shape[1:]
            if updates.shape != expected:
                raise ValueError(f"updates of shape {updates.shape} must have shape {expected}")
            flat = indices.reshape(-1)
            if _in_place(store, name, current, flat):
                value = current
                value.flags.writeable = True
            else:
                value = np.array(current, copy=True)
            try:
                apply(value, flat, updates.reshape((-1,) + current.shape[1:]))
            finally:
                value.flags.writeable = False
            return store.write(name, value)
        return scatter
    return build


def _update(value, rows, updates):
    value[rows] = updates  # numpy: with repeated rows the last assignment wins


cpu_kernel("ScatterUpdate")(_scatter_kernel(_update))
cpu_kernel("ScatterAdd")(_scatter_kernel(lambda value, rows, updates: np.add.at(value, rows, updates)))
cpu_kernel("ScatterSub")(_scatter_kernel(
    lambda value, rows, updates: np.subtract.at(value, rows, updates)))
