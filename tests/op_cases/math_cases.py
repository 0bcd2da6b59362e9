"""Cases for the math ops (elementwise, comparisons, logic, select, cast, clip, matmul, reductions)."""

import math

import numpy as np
from scipy import special

import graphflow as tf
from tests.op_cases import OpCase, away_from_zero, positive, rand

f32 = np.float32


def _unary(op_type, fn, ref, data, grad=True, **kw):
    return OpCase(op_type, fn, [data], ref, grad=grad, **kw)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


CASES = [
    _unary("Neg", tf.negative, np.negative, rand(3, 4)),
    _unary("Neg", lambda x: -x, np.negative, rand(2, 3, dtype=np.int32, low=-9, high=9)),
    _unary("Abs", tf.abs, np.abs, away_from_zero(5)),
    _unary("Sign", tf.sign, np.sign, away_from_zero(4, 2)),
    _unary("Square", tf.square, np.square, rand(3, 3)),
    _unary("Exp", tf.exp, np.exp, rand(2, 5)),
    _unary("Expm1", tf.expm1, np.expm1, rand(6)),
    _unary("Log", tf.log, np.log, positive(3, 2)),
    _unary("Log1p", tf.log1p, np.log1p, positive(4)),
    _unary("Sqrt", tf.sqrt, np.sqrt, positive(2, 3)),
    _unary("Rsqrt", tf.rsqrt, lambda x: 1 / np.sqrt(x), positive(3)),
    _unary("Reciprocal", tf.reciprocal, np.reciprocal, positive(2, 2)),
    _unary("Sin", tf.sin, np.sin, rand(3, 2)),
    _unary("Cos", tf.cos, np.cos, rand(3, 2)),
    _unary("Tan", tf.tan, np.tan, rand(4, low=-1, high=1)),
    _unary("Tanh", tf.tanh, np.tanh, rand(2, 3, 2)),
    _unary("Sigmoid", tf.sigmoid, _sigmoid, rand(5, 3, low=-6, high=6)),
    _unary("Sigmoid", tf.sigmoid, _sigmoid, rand(4, dtype=f32, low=-90, high=90), grad=False),
    _unary("Erf", tf.erf, special.erf, rand(7)),
    _unary("Lgamma", tf.lgamma, np.vectorize(math.lgamma), positive(2, 3, low=0.2, high=6.0)),
    _unary("Lgamma", tf.math.lgamma, np.vectorize(math.lgamma),
           np.array([-2.5, -0.3, 0.7, 3.0, 12.5]), name="Lgamma[negative]"),
    _unary("Lgamma", tf.lgamma, np.vectorize(math.lgamma), positive(5, dtype=f32),
           rtol=1e-5, name="Lgamma[float32]"),
    _unary("Digamma", tf.digamma, special.psi, positive(3, 2, low=0.3, high=20.0)),
    _unary("Digamma", tf.math.digamma, special.psi, np.array([-2.5, -0.3, 0.7, 1.0, 15.0]),
           name="Digamma[negative]"),
    OpCase("Polygamma", tf.polygamma, [np.array([[1.0], [2.0], [3.0]]), positive(3, 4)],
           lambda n, x: special.polygamma(n.astype(int), x), grad_inputs=[1]),
    OpCase("Polygamma", tf.math.polygamma, [np.array([0.0, 1.0, 0.5, -1.0]), positive(4)],
           lambda n, x: np.array([special.psi(x[0]), special.polygamma(1, x[1]), np.nan, np.nan]),
           grad=False, name="Polygamma[order 0, not whole]"),
    _unary("Floor", tf.floor, np.floor, rand(6) + 0.01, grad=False),
    _unary("Ceil", tf.ceil, np.ceil, rand(6) + 0.01, grad=False),
    _unary("Round", tf.round, np.round, rand(6) + 0.01, grad=False),
    _unary("Relu", tf.nn.relu, lambda x: np.maximum(x, 0), away_from_zero(3, 4)),
    _unary("Relu6", tf.nn.relu6, lambda x: np.clip(x, 0, 6), away_from_zero(3, 4) * 4),
    _unary("Elu", tf.nn.elu, lambda x: np.where(x > 0, x, np.expm1(x)), away_from_zero(3, 3)),
    _unary("Selu", tf.nn.selu, lambda x: 1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(x)), away_from_zero(3, 3)),
    _unary("Softplus", tf.nn.softplus, lambda x: np.log1p(np.exp(x)), rand(4, 2)),
    _unary("Softsign", tf.nn.softsign, lambda x: x / (1 + np.abs(x)), away_from_zero(5)),
    _unary("LeakyRelu", lambda x: tf.nn.leaky_relu(x, alpha=0.1),
           lambda x: np.where(x > 0, x, 0.1 * x), away_from_zero(3, 3)),
    _unary("LogicalNot", tf.logical_not, np.logical_not, np.array([True, False, True]), grad=False),
    _unary("IsNan", tf.is_nan, np.isnan, np.array([1.0, np.nan, np.inf]), grad=False),
    _unary("IsFinite", tf.is_finite, np.isfinite, np.array([1.0, np.nan, np.inf]), grad=False),
]

_BINARY = [
    ("Add", tf.add, np.add), ("Sub", tf.subtract, np.subtract), ("Mul", tf.multiply, np.multiply),
    ("Maximum", tf.maximum, np.maximum), ("Minimum", tf.minimum, np.minimum),
    ("SquaredDifference", tf.squared_difference, lambda a, b: (a - b) ** 2),
]
for _type, _fn, _ref in _BINARY:
    CASES += [
        OpCase(_type, _fn, [rand(3, 4), rand(3, 4, seed=1)], _ref),
        OpCase(_type, _fn, [rand(2, 1, 4), rand(3, 1, seed=2)], _ref),  # broadcasting both ways
        OpCase(_type, _fn, [rand(5, dtype=f32), rand(1, seed=3, dtype=f32)], _ref, grad=False),
    ]
CASES += [
    OpCase("Add", lambda a, b: a + b, [rand(2, 3, dtype=np.int32, low=-5, high=5),
                                       rand(3, dtype=np.int32, low=-5, high=5)], np.add),
    OpCase("RealDiv", tf.truediv, [rand(3, 4), positive(4)], np.true_divide),
    OpCase("RealDiv", lambda a, b: a / b, [np.array([7, -7, 9], np.int32),
                                           np.array([2, 2, 4], np.int32)], np.true_divide),
    OpCase("FloorDiv", tf.floordiv, [np.array([7, -7, 9], np.int32), np.array([2, 2, -4], np.int32)],
           np.floor_divide),
    OpCase("FloorDiv", lambda a, b: a // b, [rand(6), positive(6)], np.floor_divide, grad=False),
    OpCase("FloorMod", tf.mod, [np.array([7, -7, 9], np.int64), np.array([2, 3, -4], np.int64)],
           np.mod),
    OpCase("FloorMod", lambda a, b: a % b, [rand(2, 3) + 5, positive(3)], np.mod, grad_inputs=[0]),
    OpCase("Pow", tf.pow, [positive(3, 2), rand(3, 2, seed=4)], np.power),
    OpCase("Pow", lambda a: a ** 2, [rand(4, 2)], np.square),
]

_COMPARE = [("Equal", tf.equal, np.equal), ("NotEqual", tf.not_equal, np.not_equal),
            ("Less", tf.less, np.less), ("LessEqual", tf.less_equal, np.less_equal),
            ("Greater", tf.greater, np.greater), ("GreaterEqual", tf.greater_equal, np.greater_equal)]
_ints_a = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
_ints_b = np.array([3, 2, 1], np.int32)
for _type, _fn, _ref in _COMPARE:
    CASES.append(OpCase(_type, _fn, [_ints_a, _ints_b], _ref, grad=False))
    CASES.append(OpCase(_type, _fn, [rand(4), rand(4, seed=5)], _ref, grad=False))

# strings, as TF1 compares them (labels, feature keys): bytes, broadcast against a scalar too
_words = np.empty((2, 2), dtype=object)
_words[:] = [[b"cat", b"dog"], [b"", b"cat"]]
_word = np.empty((), dtype=object)
_word[()] = b"cat"
for _type, _fn, _ref in _COMPARE[:2]:
    CASES.append(OpCase(_type, _fn, [_words, _word], _ref, grad=False,
                        name=f"{_type}[strings x scalar string]"))
    CASES.append(OpCase(_type, _fn, [_words, _words[::-1]], _ref, grad=False,
                        name=f"{_type}[strings x strings]"))

_bools_a = np.array([True, True, False, False])
_bools_b = np.array([True, False, True, False])
CASES += [
    OpCase("LogicalAnd", tf.logical_and, [_bools_a, _bools_b], np.logical_and, grad=False),
    OpCase("LogicalOr", tf.logical_or, [_bools_a, _bools_b], np.logical_or, grad=False),
    OpCase("LogicalXor", tf.logical_xor, [_bools_a, _bools_b], np.logical_xor, grad=False),
    OpCase("AddN", lambda a, b, c: tf.add_n([a, b, c]), [rand(2, 3), rand(2, 3, seed=6),
                                                          rand(2, 3, seed=7)],
           lambda a, b, c: a + b + c),
    OpCase("Select", tf.where, [rand(3, 4) > 0, rand(3, 4, seed=8), rand(3, 4, seed=9)], np.where,
           grad_inputs=[1, 2]),
    OpCase("Select", tf.where, [rand(3, 1) > 0, rand(1, 4, seed=8), rand(3, 4, seed=9)], np.where,
           grad_inputs=[1, 2]),
    OpCase("Where", tf.where, [rand(3, 4) > 0], lambda c: np.argwhere(c), grad=False),
    OpCase("Cast", lambda x: tf.cast(x, tf.int32), [rand(3, 4) * 3], lambda x: x.astype(np.int32),
           grad=False),
    OpCase("Cast", lambda x: tf.cast(x, tf.float32), [rand(3, 4)], lambda x: x.astype(np.float32)),
    OpCase("ClipByValue", lambda x: tf.clip_by_value(x, -0.5, 0.7),
           [rand(4, 5)], lambda x: np.clip(x, -0.5, 0.7)),
    OpCase("MatMul", tf.matmul, [rand(3, 4), rand(4, 5, seed=1)], np.matmul),
    OpCase("MatMul", lambda a, b: tf.matmul(a, b, transpose_a=True), [rand(4, 3), rand(4, 2, seed=1)],
           lambda a, b: a.T @ b),
    OpCase("MatMul", lambda a, b: tf.matmul(a, b, transpose_b=True), [rand(3, 4), rand(2, 4, seed=1)],
           lambda a, b: a @ b.T),
    OpCase("MatMul", lambda a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
           [rand(4, 3), rand(2, 4, seed=1)], lambda a, b: a.T @ b.T),
    OpCase("MatMul", lambda a, b: a @ b, [rand(2, 3, 4), rand(2, 4, 5, seed=1)], np.matmul),
    OpCase("MatMul", tf.matmul, [rand(2, 1, 3, 4), rand(3, 4, 2, seed=1)], np.matmul),  # batch bcast
    OpCase("MatMul", tf.matmul, [rand(3, 4, dtype=np.int32, low=-3, high=3),
                                 rand(4, 2, dtype=np.int32, low=-3, high=3)], np.matmul, grad=False),
]

_REDUCE = [("Sum", tf.reduce_sum, np.sum), ("Mean", tf.reduce_mean, np.mean),
           ("Max", tf.reduce_max, np.max), ("Min", tf.reduce_min, np.min),
           ("Prod", tf.reduce_prod, np.prod)]
for _type, _fn, _ref in _REDUCE:
    for _axis, _keep in [(None, False), (1, False), ([0, 2], True), (-1, True)]:
        CASES.append(OpCase(
            _type, lambda x, f=_fn, a=_axis, k=_keep: f(x, axis=a, keepdims=k),
            [rand(2, 3, 4, seed=11) + (0.5 if _type == "Prod" else 0)],
            lambda x, r=_ref, a=_axis, k=_keep: r(x, axis=tuple(a) if isinstance(a, list) else a,
                                                  keepdims=k),
            name=f"{_type}[axis={_axis},keepdims={_keep}]"))
# axes fed at run time (TF1's reduction_indices as a tensor): the op reads its second input
for _type, _fn, _ref in _REDUCE:
    for _axes, _keep in [(np.array([0, 2], np.int32), False), (np.array(-1, np.int32), True),
                         (np.array([2, 0, -1], np.int64), True)]:
        CASES.append(OpCase(
            _type, lambda x, a, f=_fn, k=_keep: f(x, axis=a, keepdims=k),
            [rand(2, 3, 4, seed=12) + (0.5 if _type == "Prod" else 0), _axes],
            lambda x, a, r=_ref, k=_keep: r(x, axis=tuple(sorted({int(i) % 3 for i in
                                                                  np.ravel(a)})), keepdims=k),
            grad_inputs=[0], shape_from_values=True,
            name=f"{_type}[axes fed {_axes.tolist()},keepdims={_keep}]"))
CASES += [
    OpCase("All", lambda x, a: tf.reduce_all(x, axis=a),
           [np.array([[True, False], [True, True]]), np.array([1], np.int32)],
           lambda x, a: np.all(x, axis=1), grad=False, shape_from_values=True,
           name="All[axes fed]"),
    OpCase("Sum", lambda x: tf.reduce_sum(x, 0), [rand(3, 2, dtype=np.int32, low=-5, high=5)],
           lambda x: np.sum(x, 0).astype(np.int32)),
    OpCase("Mean", lambda x: tf.reduce_mean(x, 1), [np.array([[1, 2], [3, 6]], np.int32)],
           lambda x: np.array([1, 4], np.int32)),
    OpCase("All", lambda x: tf.reduce_all(x, axis=1), [np.array([[True, False], [True, True]])],
           lambda x: np.all(x, axis=1), grad=False),
    OpCase("Any", lambda x: tf.reduce_any(x), [np.array([[True, False], [False, False]])],
           np.any, grad=False),
    OpCase("ArgMax", lambda x: tf.argmax(x, 1), [rand(4, 5)], lambda x: np.argmax(x, 1), grad=False),
    OpCase("ArgMin", lambda x: tf.argmin(x, axis=0), [rand(4, 5)], lambda x: np.argmin(x, 0),
           grad=False),
]
