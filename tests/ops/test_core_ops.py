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
    # only the explicit tf.constant and the reshape's shape vector remain at the top level
    assert {op.name for op in consts} <= {"Const", "shape"}
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
