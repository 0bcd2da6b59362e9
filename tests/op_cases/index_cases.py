"""Cases for the index ops (TopKV2, InTopKV2, GatherNd, ScatterNd). References are direct numpy
loops; top_k's tie order and in_top_k's boundary ties are checked against TensorFlow in
tests/ops/test_index_ops.py."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, rand

i32 = np.int32


def _distinct(*shape, seed=0):
    """Values at least 0.1 apart: no ties, so top_k's choice is stable under finite differences."""
    n = int(np.prod(shape))
    return np.random.default_rng(seed).permutation(n).reshape(shape) * 0.1 - n * 0.05


def _top_k_ref(x, k):
    order = np.array([sorted(range(x.shape[-1]), key=lambda j: (-row[j], j))[:k]
                      for row in x.reshape(-1, x.shape[-1])]).reshape(x.shape[:-1] + (k,))
    return np.take_along_axis(x, order, axis=-1), order.astype(i32)


def _in_top_k_ref(p, t, k):
    return np.array([np.isfinite(p[i, t[i]]) and np.sum(p[i] > p[i, t[i]]) < k
                     for i in range(len(t))])


def _gather_nd_ref(params, indices):
    flat = indices.reshape(-1, indices.shape[-1])
    rows = [params[tuple(ix)] for ix in flat]
    return np.array(rows).reshape(indices.shape[:-1] + params.shape[indices.shape[-1]:])


def _scatter_nd_ref(indices, updates, shape):
    out = np.zeros(shape, updates.dtype)
    flat = indices.reshape(-1, indices.shape[-1])
    ups = updates.reshape((len(flat),) + tuple(shape[indices.shape[-1]:]))
    for ix, u in zip(flat, ups):
        out[tuple(ix)] += u
    return out


_TIES = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [0.0, 0.0, 0.0, 0.0, 0.0]], np.float32)
_GATHER_INDICES = np.array([[[1, 0], [2, 2]], [[0, 1], [1, 0]]], i32)
_SCATTER_INDICES = np.array([[1], [3], [1]], i32)

CASES = [
    OpCase("TopKV2", lambda x: tf.nn.top_k(x, 3), [_distinct(2, 3, 5)],
           lambda x: _top_k_ref(x, 3)),
    OpCase("TopKV2", lambda x: tf.math.top_k(x, k=2), [_TIES], lambda x: _top_k_ref(x, 2),
           grad=False, name="TopKV2[ties]"),
    OpCase("TopKV2", lambda x, k: tf.nn.top_k(x, k), [_distinct(2, 3, 5), np.array(2, i32)],
           lambda x, k: _top_k_ref(x, 2), grad_inputs=[0], shape_from_values=True,
           name="TopKV2[k fed at run time]"),
    OpCase("TopKV2", lambda x: tf.nn.top_k(x, 4), [np.array([5, 1, 9, 1, 7], np.int32)],
           lambda x: _top_k_ref(x, 4), name="TopKV2[int32]"),
    OpCase("InTopKV2", lambda p, t: tf.nn.in_top_k(p, t, 2),
           [np.array([[0.1, 0.5, 0.5, 0.2], [0.3, 0.2, 0.9, np.inf], [0.4, np.nan, 0.1, 0.0]],
                     np.float32), np.array([2, 3, 1], i32)], lambda p, t: _in_top_k_ref(p, t, 2), grad=False),
    OpCase("InTopKV2", lambda p, t: tf.nn.in_top_k(p, t, 1),
           [np.array([[1.0, 2.0, 2.0], [3.0, 1.0, 3.0]], np.float32), np.array([1, 0], i32)],
           lambda p, t: _in_top_k_ref(p, t, 1), grad=False, name="InTopKV2[ties at the boundary]"),
    OpCase("GatherNd", tf.gather_nd, [rand(3, 4, 2), _GATHER_INDICES], _gather_nd_ref),
    OpCase("GatherNd", tf.gather_nd, [rand(3, 4), np.array([[2], [0], [2]], i32)],
           _gather_nd_ref, name="GatherNd[rows, repeated]"),
    OpCase("ScatterNd", lambda i, u: tf.scatter_nd(i, u, [5, 2]),
           [_SCATTER_INDICES, rand(3, 2)], lambda i, u: _scatter_nd_ref(i, u, (5, 2))),
    OpCase("ScatterNd", lambda i, u: tf.scatter_nd(i, u, tf.constant([2, 3], tf.int64)),
           [np.array([[0, 1], [1, 2], [0, 1]], np.int64), rand(3)],
           lambda i, u: _scatter_nd_ref(i, u, (2, 3)), name="ScatterNd[elements, int64]"),
]
