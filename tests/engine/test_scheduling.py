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


def _plan_ops(fetches, feeds):
    from graphflow.engine.executor import schedule_ops
    return schedule_ops(fetches, set(feeds))


def test_the_largest_update_runs_last_after_adams_beta_power_updates():
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [4, 8], name="x")
    w1 = tf.Variable(np.ones((8, 64), np.float32), name="w1")   # the largest variable
    w2 = tf.Variable(np.ones((64, 2), np.float32), name="w2")
    loss = tf.reduce_sum(tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2))
    train = tf.train.AdamOptimizer(0.1).minimize(loss)
    order = _plan_ops([train], [x])
    graph_order = needed_ops([train], {x})
    assert sorted(_names(order)) == sorted(_names(graph_order))
    assert order[-1].type == "ApplyAdam" and order[-1].attrs["shared_name"] == "w1"
    assert graph_order[-1].type == "NoOp"  # as built: the group of updates closes the step
    # moved past the beta-power assignments that only wait for it by a control edge
    assigns = [i for i, op in enumerate(graph_order) if op.type == "Assign"]
    assert assigns and all(graph_order.index(order[-1]) < i for i in assigns)


def test_an_update_stays_put_before_an_op_that_reads_it_or_touches_its_variable():
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [8], name="x")
    w = tf.Variable(np.ones(8, np.float32), name="w")
    small = tf.Variable(np.ones(2, np.float32), name="small")
    loss = tf.reduce_sum(x * w) + tf.reduce_sum(small)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    update = next(op for op in train.control_inputs if op.attrs["shared_name"] == "w")
    with tf.control_dependencies([train]):
        read_after = tf.identity(update.outputs[0], name="read_after")  # reads its output
    order = _plan_ops([read_after], [x])
    assert order.index(update) < order.index(read_after.op)
    with tf.control_dependencies([train]):
        again = tf.assign(w, tf.zeros(8), name="again")  # writes its variable
    order = _plan_ops([again], [x])
    assert order.index(update) < order.index(again.op)
    # the other variable's update may still move past it
    assert order[-1].attrs.get("shared_name") == "small"
    # an op whose effects the schedule cannot see (Python code) holds every update before it
    with tf.control_dependencies([train]):
        called = tf.py_func(lambda: np.float32(1), [], tf.float32, name="called")
    order = _plan_ops([called], [x])
    assert order[-1] is called.op
