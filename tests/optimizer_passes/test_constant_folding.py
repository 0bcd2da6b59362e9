"""Constant folding: what it evaluates at compile time, and what it must leave alone."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.optimizer_passes import constant_folding


def test_folds_an_all_constant_subgraph_into_one_const(optimized, both, same):
    x = tf.placeholder(tf.float64, [2, 2], name="x")
    c = tf.matmul(tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float64),
                  tf.constant(np.eye(2)) * 3.0) + 1.0
    folded = tf.transpose(c, name="folded")
    y = tf.add(x, folded, name="y")
    opt = optimized(y, [x], passes=["constant_folding"])
    assert opt.types() == {"Placeholder": 1, "Const": 1, "Add": 1}
    const = opt.op("folded")
    assert const.type == "Const"  # the folded value keeps the name of the op it replaces
    assert const.source is folded.op.source
    np.testing.assert_array_equal(const.attrs["value"], [[4.0, 10.0], [7.0, 13.0]])
    assert not const.attrs["value"].flags.writeable
    assert opt.report["constant_folding"].rewrites == 1
    feed = {x: np.ones((2, 2))}
    same(*both(y, feed, passes=["constant_folding"]))


def test_fetched_folded_tensor_is_a_fresh_array_each_run():
    y = tf.constant([1.0, 2.0]) * 3.0
    with tf.Session() as sess:
        first = sess.run(y)
        first[0] = 100.0
        np.testing.assert_array_equal(sess.run(y), [3.0, 6.0])


def test_multi_output_op_folds_every_used_output(optimized):
    a, b = tf.split(tf.constant(np.arange(6.0)), 2)
    x = tf.placeholder(tf.float64, [3])
    y = x * a + b
    opt = optimized(y, [x], passes=["constant_folding"])
    assert opt.count("Split") == 0 and opt.count("Const") == 2
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: np.ones(3)}), [3.0, 5.0, 7.0])


def test_never_folds_random_stateful_or_fed(optimized):
    tf.set_random_seed(3)
    r = tf.random_normal([3], seed=1) * 2.0
    v = tf.Variable([1.0, 2.0, 3.0], name="v")
    read = v * 2.0
    p = tf.placeholder_with_default(tf.constant([1.0, 1.0, 1.0]), [3], name="p")
    fed = tf.constant([5.0, 5.0, 5.0], name="fed") + 1.0
    doubled = tf.multiply(p, 2.0, name="doubled")
    opt = optimized([r, read, doubled, fed], feeds=None, passes=["constant_folding"])
    types = opt.types()
    assert types.get("RandomStandardNormal") == 1 and types.get("VariableV2") == 1
    # an unfed placeholder_with_default is its default in a plan: p * 2 folds; fed, it does not
    assert types.get("PlaceholderWithDefault") is None and opt.op("doubled").type == "Const"
    assert optimized(doubled, feeds=["p:0"], passes=["constant_folding"]).count("Mul") == 1
    # fed: the fed constant is a placeholder in the plan, so nothing downstream folds
    opt2 = optimized(fed, feeds=["fed:0"], passes=["constant_folding"])
    assert opt2.count("Add") == 1
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run(r), sess.run(r)
        assert not np.array_equal(a, b)  # a random op is still drawn on every run
        np.testing.assert_array_equal(sess.run(fed, {"fed:0": [0.0, 1.0, 2.0]}), [1.0, 2.0, 3.0])


def test_never_folds_ops_with_control_inputs(optimized):
    v = tf.Variable(0.0)
    bump = tf.assign_add(v, 1.0)
    with tf.control_dependencies([bump]):
        y = tf.identity(tf.constant(3.0)) * 2.0
    opt = optimized(y, passes=["constant_folding"])
    assert opt.count("Identity") == 1 and opt.count("AssignAdd") == 1
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(y)
        sess.run(y)
        assert sess.run(v) == 2.0  # the dependency still runs on every run


def test_size_cap_keeps_big_fills_symbolic(optimized):
    big = tf.fill([600, 600], 1.5)       # 1.4 MB of float32 from a few bytes: not folded
    small = tf.fill([10, 10], 2.5)        # 400 bytes: folded
    x = tf.placeholder(tf.float32, [])
    opt = optimized([big * x, small * x], [x], passes=["constant_folding"])
    assert opt.count("Fill") == 1
    fill = [op for op in opt.ops() if op.type == "Fill"][0]
    assert fill.outputs[0].shape.as_list() == [600, 600]
    assert constant_folding.FOLD_MIN_BYTES < 600 * 600 * 4


def test_kernel_errors_are_left_for_the_run_to_report():
    params = tf.constant([1.0, 2.0, 3.0])
    bad = tf.gather(params, tf.constant([7]))  # fails only when evaluated
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(bad)
    assert "test_constant_folding.py" in str(info.value)  # names the user's line


def test_only_the_frontier_is_materialized(optimized):
    c = tf.constant(2.0)
    chain = tf.exp(tf.sin(c) * c + 1.0)
    x = tf.placeholder(tf.float32, [])
    opt = optimized(x * chain, [x], passes=["constant_folding"])
    assert opt.types() == {"Placeholder": 1, "Const": 1, "Mul": 1}
    assert opt.report["constant_folding"].details["folded_ops"] == 4


def test_a_cond_on_an_unfed_flag_under_control_inputs_keeps_one_branch_after_them(optimized):
    v = tf.Variable(0.0, name="v")
    bump = tf.assign_add(v, 1.0, name="bump")
    flag = tf.placeholder_with_default(True, [], name="flag")
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.control_dependencies([bump]):
        y = tf.cond(flag, lambda: tf.exp(x), lambda: tf.sin(x))
    opt = optimized(y, [x], passes=["constant_folding"])
    assert opt.count("If") == 0 and opt.count("Sin") == 0
    # the copied Exp passed the cond's control input on to the (fetched) value it computes
    (exp,) = [op for op in opt.ops() if op.type == "Exp"]
    assert not exp.control_inputs and opt.fetches[0].op.inputs[0] is exp.outputs[0]
    assert [c.name for c in opt.fetches[0].op.control_inputs] == ["bump"]
    xv = np.array([0.0, 1.0, 2.0], np.float32)
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_allclose(sess.run(y, {x: xv}), np.exp(xv), rtol=1e-6)
        np.testing.assert_allclose(sess.run(y, {x: xv, flag: False}), np.sin(xv), rtol=1e-6)
        assert sess.run(v) == 2.0  # the update ran in both plans


def test_ops_reading_only_static_shapes_fold_whatever_the_values(optimized):
    x = tf.placeholder(tf.float32, [3, 4], name="x")
    size = tf.cast(tf.size(x), tf.float32, name="size")
    rows = tf.shape(x, name="shape")[0]
    y = tf.multiply(x, size, name="y")
    opt = optimized([y, rows], [x], passes=["constant_folding"])
    assert opt.count("Shape") == 0 and opt.count("Size") == 0
    assert opt.op("y").inputs[1].op.type == "Const"
    big = tf.zeros_like(tf.placeholder(tf.float32, [512, 512]))  # 1 MB: left to run
    assert optimized(big, passes=["constant_folding"]).count("ZerosLike") == 1
    with tf.Session() as sess:
        got, n = sess.run([y, rows], {x: np.ones((3, 4), np.float32)})
    assert n == 3 and (got == 12).all()
