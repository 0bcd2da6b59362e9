"""engine/scheduling.py: ops whose type asks to run early or late move as far as their edges allow,
everything else keeps graph order, and plans without such ops are unchanged."""

import numpy as np

import graphflow as tf
from graphflow.engine.scheduling import apply_schedule_hints
from graphflow.framework.graph import needed_ops
from graphflow.ops import collective_ops


def _names(ops):
    return [op.name for op in ops]


def test_start_runs_right_after_its_inputs_and_wait_right_before_its_reader():
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [3], name="x")
    a = tf.multiply(x, 2.0, name="a")
    b = tf.multiply(a, 3.0, name="b")  # computed while the reduction of `a` is in flight
    c = tf.multiply(b, 4.0, name="c")
    (reduced,) = collective_ops.fused_allreduce([a], average=True, name="red")
    out = tf.add(reduced, c, name="out")
    graph_order = _names(needed_ops([out.op], {x}))
    assert graph_order.index("red_start") > graph_order.index("c")  # as built: after everything
    order = _names(apply_schedule_hints(needed_ops([out.op], {x})))
    assert sorted(order) == sorted(graph_order)
    assert order.index("red_start") == order.index("a") + 1
    assert order.index("red") == order.index("out") - 1
    assert order.index("red_start") < order.index("b") < order.index("c") < order.index("red")


def test_control_inputs_hold_a_start_back_and_chains_stay_topological():
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [2], name="x")
    a = tf.multiply(x, 2.0, name="a")
    b = tf.multiply(x, 5.0, name="b")
    (first,) = collective_ops.fused_allreduce([a], average=False, name="first",
                                              control_inputs=[b])
    (second,) = collective_ops.fused_allreduce([first * 1.0], average=False, name="second")
    out = tf.add(second, b, name="out")
    ops = apply_schedule_hints(needed_ops([out.op], {x}))
    position = {op: i for i, op in enumerate(ops)}
    for op in ops:  # every input and control input comes first
        for t in op.inputs:
            assert position.get(t.op, -1) < position[op], op.name
        for c in op.control_inputs:
            assert position[c] < position[op], op.name
    names = _names(ops)
    assert names.index("first_start") == names.index("b") + 1  # after its control input


def test_plans_without_hints_keep_graph_order():
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [2])
    y = tf.reduce_sum(tf.tanh(x) * 2.0)
    ops = needed_ops([y.op], {x})
    assert apply_schedule_hints(ops) is ops
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y, {x: [0.0, 1.0]}), 2 * np.tanh(1.0), rtol=1e-6)
