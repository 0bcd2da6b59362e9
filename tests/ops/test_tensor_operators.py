"""graphflow/ops/tensor_operators.py: the ops give Tensor (framework/tensor.py) its operators and
Operation its op_def when they load; each operator builds the op of its tf. function."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework import graph as graph_module
from graphflow.framework.tensor import OPERATORS, Tensor, install_operators
from graphflow.ops import registry, tensor_operators


def test_every_operator_is_installed_by_the_ops():
    assert set(tensor_operators.OPERATORS) == set(OPERATORS)
    for name in OPERATORS:
        assert getattr(Tensor, name) is tensor_operators.OPERATORS[name], name
        assert tensor_operators.OPERATORS[name].__name__ == name


def test_install_operators_takes_exactly_the_operator_names():
    with pytest.raises(ValueError, match="missing"):
        install_operators({"__add__": tensor_operators.OPERATORS["__add__"]})
    with pytest.raises(ValueError, match="unknown"):
        install_operators({**tensor_operators.OPERATORS, "__call__": lambda self: None})


def test_operators_build_the_ops_of_their_functions():
    with tf.Graph().as_default():
        x = tf.constant(np.array([[1.0, -2.0], [3.0, 4.0]], np.float32))
        b = tf.constant(np.array([[True, False]]))
        built = {"Add": x + 1, "Sub": 1 - x, "Mul": 2 * x, "RealDiv": x / 2, "FloorDiv": x // 2,
                 "FloorMod": x % 2, "Pow": x ** 2, "MatMul": x @ x, "Neg": -x, "Abs": abs(x),
                 "Less": x < 1, "LessEqual": x <= 1, "Greater": x > 1, "GreaterEqual": 1 <= x,
                 "LogicalAnd": b & True, "LogicalOr": True | b, "LogicalXor": b ^ b,
                 "LogicalNot": ~b, "StridedSlice": x[1:]}
        assert {k: v.op.type for k, v in built.items()} == {k: k for k in built}
        assert +x is x and (x == x) is True
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(1 - x), 1 - sess.run(x))
            np.testing.assert_array_equal(sess.run(x[1:]), [[3.0, 4.0]])


def test_operation_op_def_is_the_registry_record():
    with tf.Graph().as_default():
        op = tf.placeholder(tf.float32).op
        assert op.op_def is registry.lookup("Placeholder")
    assert graph_module._op_defs is registry.lookup
