"""Cases for SparseToDense (values at indices, the default elsewhere; gradients for both)."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase


def _dense(indices, shape, values, default):
    out = np.full(tuple(shape), default, dtype=values.dtype)
    out[tuple(np.asarray(indices).reshape(len(values), -1).T)] = values
    return out


CASES = [
    OpCase("SparseToDense", tf.sparse_to_dense,
           [np.array([[0, 1], [1, 0], [2, 3]], np.int64), np.array([3, 4], np.int64),
            np.array([1.5, -2.0, 3.0]), np.array(0.25)], _dense, grad_inputs=[2, 3]),
    OpCase("SparseToDense", tf.sparse_to_dense,
           [np.array([0, 3], np.int32), np.array([5], np.int32), np.array([7, 8], np.int32),
            np.array(-1, np.int32)], _dense, grad=False, name="SparseToDense[vector,int32]"),
]
