"""Building big graphs stays near-linear: doubling a graph must not much more than double the work
of building, differentiating and minimizing it.

The measure is the number of Python-level calls made while the step runs (counted by a profile
hook, so it is the same on a busy or a quiet machine), and, in the slow set, the best-of-three wall
time. A quadratic step (a list-membership dedupe of control inputs, a rescan of all ops per new op)
shows up as a ratio near 4 where a linear one gives 2.
"""

import sys

import pytest

import graphflow as tf


def _deep_tanh_mlp(layers):
    """`layers` tiny dense layers, each with its own variable: 10k of these is the big-graph row
    of benchmarks/bench_peers.py."""
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 4])
    h = x
    for i in range(layers):
        w = tf.Variable(tf.ones([4, 4]) * 0.1, name=f"w{i}")
        h = tf.tanh(tf.matmul(h, w))
    return tf.reduce_sum(h)


def _calls_made(fn):
    """How many Python and C function calls `fn()` makes."""
    count = 0

    def hook(frame, event, arg):
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


STEPS = {
    "gradients": lambda loss: tf.gradients(loss, tf.trainable_variables()),
    "adam_minimize": lambda loss: tf.train.AdamOptimizer(0.01).minimize(loss),
    "momentum_minimize": lambda loss: tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss),
}


@pytest.mark.parametrize("step", sorted(STEPS))
def test_doubling_the_graph_at_most_doubles_the_calls(step):
    counts = []
    for layers in (150, 300):
        loss = _deep_tanh_mlp(layers)
        counts.append(_calls_made(lambda loss=loss: STEPS[step](loss)))
    ratio = counts[1] / counts[0]
    assert ratio < 2.3, f"{step}: {counts[0]} calls at 150 layers, {counts[1]} at 300 ({ratio:.2f}x)"


def test_control_dependencies_over_many_ops_are_linear():
    """An op created inside `control_dependencies` of k ops (an optimizer's final group) costs
    O(k), and each control input is kept once."""
    def build(k):
        tf.reset_default_graph()
        ops = [tf.no_op(name=f"n{i}") for i in range(k)]
        with tf.control_dependencies(ops):
            with tf.control_dependencies(ops[: k // 2]):
                return _calls_made(lambda: [tf.no_op() for _ in range(20)])

    small, big = build(2000), build(4000)
    assert big / small < 2.3, (small, big)
    tf.reset_default_graph()
    a, b = tf.no_op(name="a"), tf.no_op(name="b")
    with tf.control_dependencies([a, b]):
        with tf.control_dependencies([b, a]):
            c = tf.no_op(name="c")
    assert [op.name for op in c.control_inputs] == ["a", "b"]


@pytest.mark.slow
def test_adam_minimize_calls_double_with_a_big_graph():
    """The 1000 -> 2000 layer version of the check above, where the old quadratic dedupe of
    control inputs made 2.9x the calls."""
    counts = []
    for layers in (1000, 2000):
        loss = _deep_tanh_mlp(layers)
        counts.append(_calls_made(lambda loss=loss: STEPS["adam_minimize"](loss)))
    assert counts[1] / counts[0] < 2.3, counts
