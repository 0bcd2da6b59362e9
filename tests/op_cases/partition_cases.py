"""Cases for DynamicPartition and DynamicStitch; references are Python loops over TF1's
definitions."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, rand

i32 = np.int32


def _partition_ref(data, partitions, n):
    rows = data.reshape((-1,) + data.shape[partitions.ndim:])
    keys = partitions.reshape(-1).tolist()
    return [np.array([rows[j] for j in range(len(keys)) if keys[j] == i],
                     data.dtype).reshape((-1,) + data.shape[partitions.ndim:]) for i in range(n)]


def _stitch_ref(*args):
    n = len(args) // 2
    indices, data = args[:n], args[n:]
    constant = data[0].shape[indices[0].ndim:]
    size = max(int(ix.max()) for ix in indices) + 1
    out = np.zeros((size,) + constant, data[0].dtype)
    for ix, d in zip(indices, data):
        rows = d.reshape((-1,) + constant)
        for j, k in enumerate(ix.reshape(-1).tolist()):
            out[k] = rows[j]
    return out


_PARTS = np.array([[1, 0, 2], [0, 2, 2]], i32)

CASES = [
    OpCase("DynamicPartition", lambda d, p: tf.dynamic_partition(d, p, 3), [rand(2, 3, 2), _PARTS],
           lambda d, p: _partition_ref(d, p, 3)),
    OpCase("DynamicPartition", lambda d, p: tf.dynamic_partition(d, p, 4),
           [np.arange(5, dtype=i32), np.array([3, 0, 3, 3, 0], i32)],
           lambda d, p: _partition_ref(d, p, 4), name="DynamicPartition[int32, an empty part]"),
    OpCase("DynamicStitch", lambda i0, i1, d0, d1: tf.dynamic_stitch([i0, i1], [d0, d1]),
           [np.array([0, 4], i32), np.array([[1, 3], [2, 5]], i32), rand(2, 3), rand(2, 2, 3)],
           _stitch_ref, grad_inputs=[2, 3]),
    OpCase("DynamicStitch", lambda i0, i1, d0, d1: tf.dynamic_stitch([i0, i1], [d0, d1]),
           [np.array([0, 2], i32), np.array([2, 1], i32), np.array([7, 8], i32),
            np.array([9, 10], i32)], _stitch_ref, name="DynamicStitch[int32, repeated index]"),
]
