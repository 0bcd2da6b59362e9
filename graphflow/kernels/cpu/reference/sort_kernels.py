"""numpy kernels for the sorting, searching and set ops: Unique, UniqueWithCounts, ListDiff,
LowerBound, UpperBound."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


def _unique(x):
    """(values in order of first occurrence, index of each entry's value, counts). NaNs are
    distinct from each other, as in TF (NaN != NaN)."""
    if x.ndim != 1:
        raise ValueError(f"unique expects a 1-D vector, got shape {x.shape}")
    kwargs = {"equal_nan": False} if x.dtype.kind in "fc" else {}
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                               return_counts=True, **kwargs)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return values[order], rank[inverse.reshape(-1)], counts[order]


@cpu_kernel("Unique")
def _unique_kernel(node):
    out_idx = node.out_dtypes[1]

    def unique(x):
        y, idx, _ = _unique(x)
        return y, idx.astype(out_idx)
    return unique


@cpu_kernel("UniqueWithCounts")
def _unique_with_counts(node):
    out_idx = node.out_dtypes[1]

    def unique_with_counts(x):
        y, idx, counts = _unique(x)
        return y, idx.astype(out_idx), counts.astype(out_idx)
    return unique_with_counts


@cpu_kernel("ListDiff")
def _list_diff(node):
    out_idx = node.out_dtypes[1]

    def list_diff(x, y):
        if x.ndim != 1 or y.ndim != 1:
            raise ValueError(f"x {x.shape} and y {y.shape} must be 1-D vectors")
        keep = ~np.isin(x, y)
        return x[keep], np.flatnonzero(keep).astype(out_idx)
    return list_diff


def _bound(node, side):
    out_type = node.out_dtypes[0]

    def bound(sorted_inputs, values):
        if sorted_inputs.ndim != values.ndim or sorted_inputs.shape[:-1] != values.shape[:-1]:
            raise ValueError(f"sorted_sequence {sorted_inputs.shape} and values {values.shape} "
                             "must have the same leading dimensions")
        rows = sorted_inputs.reshape(-1, sorted_inputs.shape[-1])
        vals = values.reshape(-1, values.shape[-1])
        out = np.empty(vals.shape, out_type)
        for i in range(len(vals)):
            out[i] = np.searchsorted(rows[i], vals[i], side=side)
        return out.reshape(values.shape)
    return bound


@cpu_kernel("LowerBound")
def _lower_bound(node):
    return _bound(node, "left")


@cpu_kernel("UpperBound")
def _upper_bound(node):
    return _bound(node, "right")
