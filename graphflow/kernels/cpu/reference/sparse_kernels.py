"""numpy kernels for SparseToDense (graphflow/ops/sparse_ops.py) and SparseTensorDenseMatMul
(graphflow/ops/sparse_math.py)."""

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


@cpu_kernel("SparseTensorDenseMatMul")
def _sparse_tensor_dense_matmul(node):
    adjoint_a, adjoint_b = node.attrs["adjoint_a"], node.attrs["adjoint_b"]
    out_dtype = np.dtype(node.out_dtypes[0])

    def matmul(indices, values, a_shape, b):
        a_shape = [int(d) for d in np.reshape(a_shape, -1)]
        if len(a_shape) != 2 or np.ndim(indices) != 2 or np.shape(indices)[1] != 2:
            raise ValueError(f"a_shape must have 2 entries and a_indices 2 columns, got a_shape "
                             f"{a_shape} and a_indices of shape {np.shape(indices)}")
        rows, inner = (indices[:, 1], indices[:, 0]) if adjoint_a else (indices[:, 0],
                                                                         indices[:, 1])
        out_rows, inner_size = a_shape[::-1] if adjoint_a else a_shape
        dense = np.conj(b.T) if adjoint_b else b
        if dense.shape[0] != inner_size:
            raise ValueError(f"cannot multiply A of shape {[out_rows, inner_size]} by B of shape "
                             f"{list(dense.shape)}: inner dimensions differ")
        for what, ids, limit in (("row", rows, out_rows), ("column", inner, inner_size)):
            bad = (ids < 0) | (ids >= limit)
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(f"a_indices[{i}] = {indices[i].tolist()}: its {what} "
                                 f"{int(ids[i])} is out of bounds [0, {limit})")
        scale = np.conj(values) if adjoint_a else values
        out = np.zeros((out_rows, dense.shape[1]), out_dtype)
        _add_rows_in_order(out, rows, inner, dense, scale)
        return out
    return matmul


_MAX_ROUNDS = 1024


def _add_rows_in_order(out, rows, inner, dense, scale):
    """out[rows[i]] += scale[i] * dense[inner[i]] for each entry i in order: each output row adds
    its entries in the entries' order, as TF1's loop does (the same bits). Done in rounds: round
    p adds every row's p-th entry at once (no row twice in a round), so there are as many rounds
    as the longest row has entries; past `_MAX_ROUNDS`, numpy's unbuffered add.at."""
    if len(rows) == 0:
        return
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    starts = np.concatenate([[0], np.flatnonzero(sorted_rows[1:] != sorted_rows[:-1]) + 1])
    counts = np.diff(np.append(starts, len(rows)))
    if counts.max() > _MAX_ROUNDS:
        np.add.at(out, rows, dense[inner] * scale[:, None])
        return
    position = np.arange(len(rows)) - np.repeat(starts, counts)  # index of each entry in its row
    by_round = order[np.argsort(position, kind="stable")]
    bounds = np.concatenate([[0], np.cumsum(np.bincount(position))])
    for begin, end in zip(bounds[:-1], bounds[1:]):
        entries = by_round[begin:end]
        out[rows[entries]] += dense[inner[entries]] * scale[entries, None]
