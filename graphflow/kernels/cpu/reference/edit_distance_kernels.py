"""numpy kernel for EditDistance (graphflow/ops/edit_distance_ops.py): TF's rules for groups
present in one input only (a missing truth: the hypothesis' length, divided by zero when
normalizing; a missing hypothesis: 1.0 normalized, else the truth's length). The Levenshtein
table is filled one row at a time: a row's insertions are a running minimum (`_levenshtein`)."""

import numpy as np

from graphflow.framework.errors import CheckFailedError
from graphflow.kernels.cpu import cpu_kernel


def _error(message):
    return CheckFailedError(message)


def _levenshtein(truth, hyp):
    """Edit distance of two 1-D arrays; each row of the table in numpy."""
    n = len(hyp)
    cols = np.arange(n + 1)
    row = cols.astype(np.int64)
    for i, value in enumerate(truth, 1):
        cost = (hyp != value).astype(np.int64)
        cand = np.empty(n + 1, dtype=np.int64)
        cand[0] = i
        cand[1:] = np.minimum(row[1:] + 1, row[:-1] + cost)
        row = np.minimum.accumulate(cand - cols) + cols   # insertions along the row
    return int(row[n])


def _groups(indices, values, shape, what):
    """{prefix tuple: values} of a SparseTensor, in its index order."""
    indices, shape = np.asarray(indices), np.asarray(shape)
    if indices.ndim != 2:
        raise _error(f"{what}_indices should be a matrix, but got shape: {list(indices.shape)}")
    if values.ndim != 1:
        raise _error(f"{what}_values should be a vector, but got shape: {list(values.shape)}")
    if indices.shape[0] != values.shape[0]:
        raise _error(f"Expected {what}_indices.dim_size(0) == {what}_values.dim_size(0), got "
                     f"{indices.shape[0]} and {values.shape[0]}")
    if shape.ndim != 1:
        raise _error(f"{what}_shape should be a vector, but got shape: {list(shape.shape)}")
    if shape.shape[0] != indices.shape[1]:
        raise _error(f"Expected {what}_shape.NumElements == #cols({what}_indices), their shapes "
                     f"are: {list(shape.shape)} and {list(indices.shape)}")
    if len(indices) and ((indices < 0).any() or (indices >= shape[None, :]).any()):
        bad = int(np.argmax(((indices < 0) | (indices >= shape[None, :])).any(axis=1)))
        raise _error(f"{what} index {indices[bad].tolist()} is out of bounds of its shape "
                     f"{shape.tolist()}")
    out = {}
    if len(indices):
        keys, first, inverse = np.unique(indices[:, :-1], axis=0, return_index=True,
                                         return_inverse=True)
        inverse = inverse.reshape(-1)
        for g, key in enumerate(keys):
            out[tuple(int(k) for k in key)] = values[inverse == g]
    return out


@cpu_kernel("EditDistance")
def _edit_distance(node):
    normalize = node.attrs.get("normalize", True)

    def edit_distance(h_ix, h_val, h_shape, t_ix, t_val, t_shape):
        h_shape, t_shape = np.asarray(h_shape), np.asarray(t_shape)
        if t_shape.ndim == 1 and t_shape.shape[0] < 2:
            raise _error(f"Input SparseTensors must have rank at least 2, but truth_shape rank "
                         f"is: {t_shape.shape[0]}")
        if h_shape.shape != t_shape.shape:
            raise _error(f"Expected truth and hypothesis to have matching ranks, but their shapes "
                         f"are: {list(t_shape.shape)} and {list(h_shape.shape)}")
        hyp = _groups(h_ix, np.asarray(h_val), h_shape, "hypothesis")
        truth = _groups(t_ix, np.asarray(t_val), t_shape, "truth")
        out = np.zeros(tuple(np.maximum(h_shape, t_shape)[:-1]), dtype=np.float32)
        with np.errstate(divide="ignore", invalid="ignore"):
            for key in hyp.keys() | truth.keys():
                h, t = hyp.get(key), truth.get(key)
                if h is not None and t is not None:
                    d = np.float32(_levenshtein(t, h))
                    out[key] = d / np.float32(len(t)) if normalize else d
                elif t is None:
                    d = np.float32(len(h))
                    out[key] = d / np.float32(0.0) if normalize else d
                else:
                    out[key] = 1.0 if normalize else len(t)
        return out
    return edit_distance
