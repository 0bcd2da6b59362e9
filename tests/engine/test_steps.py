"""The plan's step list (graphflow/engine/steps.py) and the function emitted from it
(graphflow/engine/emit.py): the compile stages hand each other data, only the emitter writes code,
errors map back to ops through the step records, and an optimized plan is pruned only once."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.engine.emit import slot_name
from graphflow.engine.steps import Step


def _plan(sess):
    return list(sess._compiled_plans())[-1]


def test_the_step_list_records_slots_frees_and_reuse():
    x = tf.placeholder(tf.float64, [3], name="x")
    a = tf.exp(x, name="a")
    b = tf.sin(a, name="b")
    c = tf.add(tf.cos(b, name="cb"), a, name="c")  # a's last reader
    with tf.Session(optimize=False) as sess:
        got = sess.run([c, b], {x: np.zeros(3)})
        plan = _plan(sess)
    steps = plan.step_list.steps
    assert all(isinstance(s, Step) for s in steps)
    by_name = {s.op.name: s for s in steps}
    assert [s.op.name for s in steps] == ["a", "b", "cb", "c"]
    assert by_name["a"].args == (("f", 0),)
    assert by_name["b"].args == by_name["a"].outputs
    assert by_name["c"].args == by_name["cb"].outputs + by_name["a"].outputs
    # a dies at c; b is fetched, so never dropped; cb's result dies at c, which writes into it
    assert by_name["c"].frees == list(by_name["cb"].outputs + by_name["a"].outputs)
    assert by_name["cb"].frees == []
    assert by_name["c"].out == by_name["cb"].outputs[0]
    assert [f.slot for f in plan.step_list.fetches] == [by_name["c"].outputs[0],
                                                       by_name["b"].outputs[0]]
    np.testing.assert_allclose(got[0], np.cos(np.sin(1.0)) + 1.0)
    # the emitted function is the step list, spelled as Python
    for i, step in enumerate(steps):
        assert f"k{i}(" in plan.source and plan.kernels[i] is step.kernel
    assert f"out={slot_name(by_name['c'].out)}" in plan.source
    assert "del " + ", ".join(slot_name(s) for s in by_name["c"].frees) in plan.source


def test_unused_outputs_get_no_slot():
    x = tf.placeholder(tf.float32, [4], name="x")
    values, indices = tf.nn.top_k(x, 2)
    with tf.Session(optimize=False) as sess:
        sess.run(values, {x: np.arange(4, dtype=np.float32)})
        (step,) = [s for s in _plan(sess).step_list.steps if s.op is values.op]
    assert step.outputs[0] is not None and step.outputs[1] is None


def test_kernel_errors_name_the_op_and_input_shapes_from_the_step_slots():
    x = tf.placeholder(tf.float32, [None, None], name="x")
    y = tf.placeholder(tf.float32, [None, None], name="y")
    h = tf.exp(x, name="h")
    p = tf.matmul(h, y, name="product")
    with tf.Session(optimize=False) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(p, {x: np.ones([2, 3]), y: np.ones([4, 5])})
        plan = _plan(sess)
    message = str(info.value)
    assert info.value.op.name == "product"
    assert "h:0: shape=(2, 3)" in message and "y:0: shape=(4, 5)" in message
    assert plan.line_to_op and all(op.name in ("h", "product") for op in plan.line_to_op.values())


def test_traced_errors_use_the_same_steps():
    x = tf.placeholder(tf.float32, [None, None], name="x")
    p = tf.matmul(x, tf.exp(x), name="product")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(p, {x: np.ones([2, 3])}, options=tf.RunOptions(trace_level=3),
                     run_metadata=tf.RunMetadata())
    assert info.value.op.name == "product" and "x:0: shape=(2, 3)" in str(info.value)


def test_an_optimized_plan_runs_the_optimizers_ops_without_pruning_again():
    x = tf.placeholder(tf.float32, [3], name="x")
    unused = tf.placeholder(tf.float32, [3], name="unused")
    y = tf.exp(x) * 2.0
    with tf.Session() as sess:
        sess.run(y, {x: np.zeros(3), unused: np.zeros(3)})
        plan = _plan(sess)
    optimized_graph = plan.ops[0].graph
    assert plan.ops == optimized_graph.get_operations()
    assert "unused" in {op.name for op in plan.ops}  # a fed stand-in: no second prune drops it
