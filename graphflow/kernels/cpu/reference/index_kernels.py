"""numpy kernels for the index ops: TopKV2, InTopKV2, GatherNd, ScatterNd."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


@cpu_kernel("TopKV2")
def _top_k(node):
    def top_k(x, k):
        k = int(k)
        n = x.shape[-1]
        if not 0 <= k <= n:
            raise ValueError(f"k={k} must be in [0, {n}] (the last dimension of input {x.shape})")
        # largest first, equal values by index (lexsort is stable); NaN ranks above all, as in TF
        key = -x if x.dtype.kind == "f" else ~x  # ~x = -1 - x: no overflow at the int minimum
        if x.dtype.kind == "f":
            order = np.lexsort((key, ~np.isnan(x)), axis=-1)[..., :k]
        else:
            order = np.argsort(key, axis=-1, kind="stable")[..., :k]
        return np.take_along_axis(x, order, axis=-1), order.astype(np.int32)
    return top_k


@cpu_kernel("InTopKV2")
def _in_top_k(node):
    def in_top_k(predictions, targets, k):
        rows, classes = predictions.shape
        if targets.shape != (rows,):
            raise ValueError(f"targets of shape {targets.shape} must have one entry per row of "
                             f"predictions {predictions.shape}")
        valid = (targets >= 0) & (targets < classes)
        target_values = predictions[np.arange(rows), np.where(valid, targets, 0)]
        larger = np.sum(predictions > target_values[:, None], axis=1)
        finite = np.isfinite(target_values)
        return valid & finite & (larger < int(k))
    return in_top_k


def _index_tuple(indices, shape, what):
    depth = indices.shape[-1]
    if depth > len(shape):
        raise ValueError(f"the index depth {depth} exceeds the rank of {shape}")
    limits = np.asarray(shape[:depth])
    flat = indices.reshape(-1, depth)
    bad = (flat < 0) | (flat >= limits)
    if bad.any():
        row = flat[bad.any(axis=1)][0]
        raise IndexError(f"{what} {list(row)} is out of bounds for shape {tuple(shape)}")
    return tuple(flat[:, i] for i in range(depth))


@cpu_kernel("GatherNd")
def _gather_nd(node):
    def gather_nd(params, indices):
        where = _index_tuple(indices, params.shape, "index")
        out = params[where]
        return out.reshape(indices.shape[:-1] + params.shape[indices.shape[-1]:])
    return gather_nd


@cpu_kernel("ScatterNd")
def _scatter_nd(node):
    def scatter_nd(indices, updates, shape):
        shape = tuple(int(d) for d in shape)
        depth = indices.shape[-1]
        expected = indices.shape[:-1] + shape[depth:]
        if updates.shape != expected:
            raise ValueError(f"updates of shape {updates.shape} must have shape {expected}")
        out = np.zeros(shape, dtype=updates.dtype)
        where = _index_tuple(indices, shape, "index")
        np.add.at(out, where, updates.reshape((-1,) + shape[depth:]))
        return out
    return scatter_nd
