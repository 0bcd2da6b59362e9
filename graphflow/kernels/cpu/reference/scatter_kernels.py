"""numpy kernels for ScatterUpdate / ScatterAdd / ScatterSub: they write a new array for the
variable (stored arrays are never changed in place), committed with the rest of the run."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


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
            value = np.array(current, copy=True)
            apply(value, indices.reshape(-1), updates.reshape((-1,) + current.shape[1:]))
            return store.write(name, value)
        return scatter
    return build


def _update(value, rows, updates):
    value[rows] = updates  # numpy: with repeated rows the last assignment wins


cpu_kernel("ScatterUpdate")(_scatter_kernel(_update))
cpu_kernel("ScatterAdd")(_scatter_kernel(lambda value, rows, updates: np.add.at(value, rows, updates)))
cpu_kernel("ScatterSub")(_scatter_kernel(
    lambda value, rows, updates: np.subtract.at(value, rows, updates)))
