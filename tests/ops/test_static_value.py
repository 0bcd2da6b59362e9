"""Build-time evaluation of small integer tensors (graphflow/ops/static_value.py)."""

import numpy as np

import graphflow as tf
from graphflow.ops.static_value import (
    SymbolicDim,
    constant_value,
    same_shape,
    scalar_value,
    shape_vector,
    symbolic_shape,
)


def test_constant_value_follows_shape_arithmetic():
    x = tf.placeholder(tf.float32, [2, 3, 4])
    s = tf.shape(x)
    assert constant_value(s).tolist() == [2, 3, 4]
    assert scalar_value(s[1] * s[2] - 1) == 11
    assert constant_value(tf.stack([s[0], tf.size(x), tf.rank(x)])).tolist() == [2, 24, 3]
    assert constant_value(tf.concat([s[:1], [5]], 0)).tolist() == [2, 5]
    assert constant_value(tf.placeholder(tf.int32, [2])) is None


def test_shape_vector_is_partial_where_dims_are_unknown():
    x = tf.placeholder(tf.float32, [None, 3])
    s = tf.shape(x)
    assert constant_value(s) is None
    assert shape_vector(s) == [None, 3]
    assert shape_vector(tf.stack([s[0] * 2, s[1] + 1])) == [None, 4]
    assert shape_vector(tf.placeholder(tf.int32, [2])) == [None, None]
    assert shape_vector(tf.placeholder(tf.int32, None)) is None
    entry = shape_vector(tf.stack([s[0], 5]), symbolic=True)[0]
    assert isinstance(entry, SymbolicDim) and entry.tensor is x and entry.index == 0


def test_shape_vector_of_constants_keeps_minus_one():
    assert shape_vector(tf.constant(np.array([-1, 4], np.int32))) == [-1, 4]


def test_constant_value_asks_the_records_static_value_rules():
    from graphflow.ops import registry
    with_rules = {t for t in registry.registered_types() if registry.lookup(t).static_value}
    assert {"Const", "Identity", "Shape", "Size", "Rank", "Pack", "ConcatV2", "StridedSlice", "Cast",
            "Range", "Add", "Sub", "Mul", "FloorDiv", "Maximum", "Minimum", "Neg"} <= with_rules
    x = tf.placeholder(tf.float32, [2, 3])
    assert constant_value(tf.cast(tf.shape(x), tf.float32)).tolist() == [2.0, 3.0]
    assert constant_value(tf.range(1, tf.rank(x))).tolist() == [1]
    assert constant_value(tf.range(0.0, 3.0)) is None  # float ranges are not shape values
    assert constant_value(-tf.shape(x)).tolist() == [-2, -3]
    assert constant_value(tf.cast(tf.shape(x), tf.float32) * 2.0) is None  # float arithmetic: no rule
    op_def = registry.lookup("Sign")
    assert op_def.static_value is None
    saved = op_def.static_value
    op_def.static_value = lambda op, inputs: np.array(7, np.int32)  # a rule is all it takes
    try:
        assert constant_value(tf.sign(tf.placeholder(tf.int32, []))) == 7
    finally:
        op_def.static_value = saved


def test_symbolic_shape_names_unknown_dims_by_their_source():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    other = tf.placeholder(tf.float32, [None, 3], name="other")
    dropped = tf.nn.dropout(x, rate=0.5)  # x / keep * floor(keep + random_uniform(tf.shape(x)))
    assert same_shape(dropped, x) and same_shape(tf.exp(x) + 1.0, x)
    assert same_shape(tf.fill(tf.shape(x), 2.0), x)
    assert same_shape(tf.nn.relu(x) * tf.ones([1, 3]), x)
    assert not same_shape(x, other)             # each [None, 3]: the None may differ at run time
    assert not same_shape(x + other, x)         # broadcasting may widen x's first dim
    assert not same_shape(tf.reshape(x, [-1, 3]), x)  # not followed: its own dims
    assert same_shape(x + tf.ones([5, 3]), tf.ones([5, 3]))  # a known size decides
    first = symbolic_shape(dropped)[0]
    assert isinstance(first, SymbolicDim) and first.tensor is x and first.index == 0
    assert symbolic_shape(tf.placeholder(tf.float32, None)) is None
