"""Cases for SparseToDense (values at indices, the default elsewhere; gradients for both) and
SparseTensorDenseMatMul (each adjoint pair; gradients for the values and the dense operand)."""

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


def _matmul(adjoint_a, adjoint_b):
    def build(indices, values, shape, b):
        return tf.sparse_tensor_dense_matmul(tf.SparseTensor(indices, values, shape), b,
                                             adjoint_a=adjoint_a, adjoint_b=adjoint_b)

    def reference(indices, values, shape, b):
        a = np.zeros(tuple(shape), values.dtype)
        np.add.at(a, tuple(indices.T), values)
        return (a.T if adjoint_a else a) @ (b.T if adjoint_b else b)
    return build, reference


# entries out of row-major order and one repeated index: the product adds each as it comes
_MATMUL_INDICES = np.array([[0, 1], [2, 0], [1, 3], [0, 0], [2, 0]], np.int64)
for _adj_a, _adj_b in ((False, False), (True, False), (False, True), (True, True)):
    _b_shape = [(4, 2), (3, 2), (2, 4), (2, 3)][2 * _adj_b + _adj_a]
    _build, _reference = _matmul(_adj_a, _adj_b)
    CASES.append(OpCase(
        "SparseTensorDenseMatMul", _build,
        [_MATMUL_INDICES, np.array([1.5, -2.0, 0.5, 3.0, 1.0]), np.array([3, 4], np.int64),
         np.arange(float(np.prod(_b_shape))).reshape(_b_shape) / 4 - 0.5],
        _reference, grad_inputs=[1, 3],
        name=f"SparseTensorDenseMatMul[adjoint_a={_adj_a},adjoint_b={_adj_b}]"))
CASES.append(OpCase(
    "SparseTensorDenseMatMul", _matmul(False, False)[0],
    [np.array([[1, 2], [0, 0]], np.int64), np.array([2.0, -1.0], np.float32),
     np.array([2, 3], np.int64), np.arange(12, dtype=np.float32).reshape(3, 4)],
    _matmul(False, False)[1], grad=False, name="SparseTensorDenseMatMul[float32]"))
