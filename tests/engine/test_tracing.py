"""Traced runs: RunOptions(FULL_TRACE) + RunMetadata get per-op start/end times in TF's StepStats
layout; untraced runs never build the traced plan; errors and variable rollback in traced runs."""

import time

import numpy as np
import pytest

import graphflow as tf

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def _model():
    x = tf.placeholder(tf.float32, [None, 8], name="x")
    w = tf.Variable(np.ones([8, 4], np.float32), name="w")
    hidden = tf.nn.relu(tf.matmul(x, w, name="matmul"), name="relu")
    slow = tf.py_func(lambda v: (time.sleep(0.02), v)[1], [hidden], tf.float32, name="slow")
    loss = tf.reduce_sum(slow, name="loss")
    return x, w, loss


def test_full_trace_fills_step_stats_with_every_op_in_order():
    x, _, loss = _model()
    meta = tf.RunMetadata()
    before = time.time() * 1e6
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        value = sess.run(loss, {x: np.ones([2, 8])}, options=FULL, run_metadata=meta)
    after = time.time() * 1e6
    assert value == 64.0
    (device,) = meta.step_stats.dev_stats
    assert device.device.endswith("device:CPU:0")
    names = [n.node_name for n in device.node_stats]
    assert names == ["w", "matmul", "relu", "slow", "loss"]
    for node in device.node_stats:
        assert before <= node.all_start_micros <= after
        assert 0 <= node.op_start_rel_micros <= node.op_end_rel_micros == node.all_end_rel_micros
    stats = {n.node_name: n for n in device.node_stats}
    assert stats["slow"].all_end_rel_micros >= 20000
    assert stats["matmul"].timeline_label == "matmul = MatMul(x:0, w:0)"
    # each op names the implementation its plan chose (kernels/registry.py)
    choices = {name: impl for name, _, _, impl in meta.plan.kernel_choices()}
    assert {n.node_name: n.kernel for n in device.node_stats} == {
        n: choices[n] for n in ("w", "matmul", "relu", "slow", "loss")}
    assert stats["slow"].kernel == "reference"
    starts = [n.all_start_micros for n in device.node_stats]
    assert starts == sorted(starts)
    assert stats["loss"].all_start_micros >= stats["slow"].all_start_micros + 20000


def test_untraced_runs_never_build_the_traced_plan():
    x, _, loss = _model()
    meta = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(loss, {x: np.ones([1, 8])}, run_metadata=meta)
        sess.run(loss, {x: np.ones([1, 8])}, options=tf.RunOptions(), run_metadata=meta)
        plan = meta.plan
        assert plan._traced is None and "_clock" not in plan.source
        assert meta.step_stats.dev_stats == []
        sess.run(loss, {x: np.ones([1, 8])}, options=FULL, run_metadata=meta)
        assert meta.plan is plan and plan._traced is not None  # same plan, traced variant added
        assert "_clock" not in plan.source


def test_traced_run_errors_name_the_op_and_roll_back_variables():
    x = tf.placeholder(tf.float32, [2], name="x")
    v = tf.Variable([1.0, 1.0], name="v")
    step = tf.assign_add(v, tf.check_numerics(tf.log(x), "log"))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(step, {x: [1.0, -1.0]}, options=FULL, run_metadata=tf.RunMetadata())
        assert sess.run(v).tolist() == [1.0, 1.0]
        meta = tf.RunMetadata()
        sess.run(step, {x: [1.0, 1.0]}, options=FULL, run_metadata=meta)
        assert "CheckNumerics" in {n.node_name for n in meta.step_stats.node_stats()}
    assert "'CheckNumerics' (CheckNumerics)" in str(info.value)
    assert "test_tracing.py" in str(info.value)


def test_trace_level_is_checked():
    with pytest.raises(ValueError, match="trace_level"):
        tf.RunOptions(trace_level=7)
    assert tf.RunOptions.FULL_TRACE == 3 and tf.RunOptions().trace_level == tf.RunOptions.NO_TRACE
