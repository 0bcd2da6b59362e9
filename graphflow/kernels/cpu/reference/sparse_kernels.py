"""numpy kernel for SparseToDense (graphflow/ops/sparse_ops.py)."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


@cpu_kernel("SparseToDense")
def _sparse_to_dense(node):
    validate = node.attrs["validate_indices"]
    out_dtype = np.dtype(node.out_dtypes[0])

    def to_dense(indices, output_shape, values, default):
        shape = tuple(int(d) for d in np.reshape(output_shape, -1))
        idx = np.asarray(indices, dtype=np.int64)
        idx = idx.reshape(-1, 1) if idx.ndim < 2 else idx
        if idx.shape[1] != len(shape):
            raise ValueError(f"sparse_indices have {idx.shape[1]} columns but output_shape has rank "
                             f"{len(shape)}")
        if (idx < 0).any() or (idx >= np.array(shape, dtype=np.int64)).any():
            bad = int(np.argmax(((idx < 0) | (idx >= np.array(shape))).any(axis=1)))
            raise ValueError(f"indices[{bad}] = {idx[bad].tolist()} is out of bounds: need "
                             f"0 <= index < {list(shape)}")
        if validate and len(idx) > 1:
            flat = np.ravel_multi_index(idx.T, shape) if shape else np.zeros(len(idx), np.int64)
            steps = np.diff(flat)
            if (steps <= 0).any():
                bad = int(np.argmax(steps <= 0)) + 1
                what = "repeated" if steps[bad - 1] == 0 else "out of order"
                raise ValueError(f"indices[{bad}] = {idx[bad].tolist()} is {what}")
        out = np.full(shape, default, dtype=out_dtype)
        vals = np.asarray(values)
        out[tuple(idx.T)] = vals if vals.ndim else vals[()]
        return out
    return to_dense
