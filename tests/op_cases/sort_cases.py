"""Cases for the sorting, searching and set ops (Unique, UniqueWithCounts, ListDiff, LowerBound,
UpperBound). References are plain Python loops over TF1's definitions; `tf.sort`/`tf.argsort`
(TopKV2 composites) are tested in tests/ops/test_sort_ops.py."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase

i32, i64 = np.int32, np.int64


def _unique_ref(x, dtype=i32):
    y, idx, count = [], [], []
    for v in x.tolist():
        if v not in y:
            y.append(v)
            count.append(0)
        idx.append(y.index(v))
        count[y.index(v)] += 1
    return (np.array(y, x.dtype), np.array(idx, dtype), np.array(count, dtype))


def _list_diff_ref(x, y, dtype=i32):
    kept = [(v, i) for i, v in enumerate(x.tolist()) if v not in y.tolist()]
    return (np.array([v for v, _ in kept], x.dtype), np.array([i for _, i in kept], dtype))


def _bound_ref(a, v, right):
    rows, vals = a.reshape(-1, a.shape[-1]), v.reshape(-1, v.shape[-1])
    out = [[sum(1 for e in row if (e <= x if right else e < x)) for x in vrow]
           for row, vrow in zip(rows, vals)]
    return np.array(out, i32).reshape(v.shape)


_X = np.array([3, 1, 3, 7, 1, 1, 9, 7], i32)
_F = np.array([0.5, -1.0, 0.5, 2.0, -1.0], np.float32)
_SORTED = np.array([[0.0, 1.0, 1.0, 3.0], [-2.0, -1.0, 4.0, 4.0]])
_VALUES = np.array([[1.0, -1.0, 3.5], [4.0, 0.0, 9.0]])

CASES = [
    OpCase("Unique", tf.unique, [_X], lambda x: _unique_ref(x)[:2]),
    OpCase("Unique", lambda x: tf.unique(x, out_idx=tf.int64), [_F],
           lambda x: _unique_ref(x, i64)[:2], grad=False, name="Unique[float32, int64 idx]"),
    OpCase("UniqueWithCounts", tf.unique_with_counts, [_X], _unique_ref),
    OpCase("ListDiff", tf.setdiff1d, [_X, np.array([7, 2, 3], i32)], _list_diff_ref),
    OpCase("ListDiff", lambda x, y: tf.setdiff1d(x, y, index_dtype=tf.int64),
           [_F, np.array([2.0], np.float32)], lambda x, y: _list_diff_ref(x, y, i64), grad=False,
           name="ListDiff[float32, int64 idx]"),
    OpCase("LowerBound", tf.searchsorted, [_SORTED, _VALUES],
           lambda a, v: _bound_ref(a, v, False), grad=False),
    OpCase("UpperBound", lambda a, v: tf.searchsorted(a, v, side="right"), [_SORTED, _VALUES],
           lambda a, v: _bound_ref(a, v, True), grad=False),
    OpCase("LowerBound", tf.searchsorted, [np.array([1, 3, 5, 7], i32), np.array([0, 5, 8], i32)],
           lambda a, v: _bound_ref(a, v, False), name="LowerBound[1-D, int32]"),
]
