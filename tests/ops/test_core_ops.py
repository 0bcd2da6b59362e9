"""Core op constructors: implicit constants (Python numbers given to ops) are named under their
consumer's scope like TF1 ('Mul/y'), so they never take a top-level name the user asks for."""

import numpy as np

import graphflow as tf


def _names():
    return [op.name for op in tf.get_default_graph().get_operations()]


def test_operand_constant_never_takes_the_name_the_user_gives_later():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.reduce_sum(x * 2.0, name="y")
    assert y.op.name == "y"
    assert "Mul/y" in _names()
    with tf.Session() as sess:
        assert sess.run("y:0", {x: [1.0, 2.0]}) == 6.0


def test_every_binary_op_and_overload_scopes_its_constants():
    x = tf.placeholder(tf.float32, [2], name="x")
    results = [x + 1.0, 1.0 - x, x / 2.0, x ** 2.0, tf.maximum(x, 0.0, name="relu_like"),
               tf.matmul([[1.0, 2.0]], tf.reshape(x, [2, 1]), name="mm"),
               tf.where(tf.constant([True, False]), x, 0.0, name="pick"), tf.div(x, 2.0)]
    consts = [op for op in tf.get_default_graph().get_operations() if op.type == "Const"
              and op.name.rpartition("/")[0] == ""]
    # only the explicit tf.constant remains at the top level (the reshape's shape: Reshape/shape)
    assert {op.name for op in consts} == {"Const"}
    assert "Reshape/shape" in _names()
    tf.zeros([3], name="z"), tf.tile(x, [2]), tf.slice(x, [0], [1]), tf.fill([2], 1.0)
    assert {"z/shape", "z/value", "Tile/multiples", "Slice/begin", "Slice/size"} <= set(_names())
    for r in results:
        for t in r.op.inputs:
            if t.op.type == "Const" and t.op.name not in ("Const",):
                assert t.op.name.startswith(r.op.name + "/"), (r.op.name, t.op.name)
    assert "relu_like/y" in _names() and "mm/x" in _names() and "pick/y" in _names()


def test_training_op_scalars_are_scoped_under_the_update():
    v = tf.Variable(np.ones(2, np.float32), name="v")
    update = tf.train.GradientDescentOptimizer(0.5).minimize(tf.reduce_sum(v * v))
    names = _names()
    assert not any(n in ("alpha", "lr", "learning_rate") for n in names)
    assert update is not None


def test_python_numbers_that_do_not_fit_the_dtype_are_errors_naming_the_line():
    import pytest
    x = tf.placeholder(tf.int32, [2], name="x")
    cases = [lambda: tf.constant(2**40, tf.int32), lambda: tf.constant(300, tf.uint8),
             lambda: tf.constant(-1, tf.uint8), lambda: x + 2**40,
             lambda: tf.constant(3e9, tf.int32), lambda: tf.constant([1, 2**70])]
    for build in cases:
        with pytest.raises(ValueError, match="(out of its range|does not fit int64).*"
                                             "test_core_ops.py"):
            build()


def test_python_int_dtype_inference_follows_tf1():
    assert tf.constant(5).dtype == tf.int32
    assert tf.constant([-2**31, 2**31 - 1]).dtype == tf.int32
    assert tf.constant(2**31).dtype == tf.int64
    r = tf.range(0, 2**32 + 3)
    assert r.dtype == tf.int64 and r.shape.as_list() == [2**32 + 3]
    assert tf.range(5).dtype == tf.int32
    small = tf.range(2**32, 2**32 + 3)
    with tf.Session() as sess:
        assert sess.run(small).tolist() == [2**32, 2**32 + 1, 2**32 + 2]


def test_absurd_static_dims_fail_at_build_time_and_huge_counts_at_run_time():
    import pytest
    with pytest.raises(ValueError, match="does not fit int64"):
        tf.zeros([2**63])
    with pytest.raises(ValueError, match="does not fit int64"):
        tf.placeholder(tf.float32, [2**64])
    z = tf.zeros([2**40, 2**40], name="huge")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.ResourceExhaustedError, match="'huge' \\(Fill\\) created at "
                                                                   ".*test_core_ops.py"):
            sess.run(z)
