"""The pipeline (graphflow.optimizer_passes): pass registry and order, Session(optimize=, passes=),
graphflow.optimize and its report, the user's graph left untouched, errors naming the user's line,
and what the passes remove from a real training step."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.optimizer_passes import PIPELINE, resolve_passes


def test_pipeline_is_an_explicit_ordered_list():
    assert [p.NAME for p in PIPELINE] == ["prune", "control_edges", "constant_folding",
                                           "arithmetic", "cse", "fusion"]
    assert resolve_passes(["fusion", "cse"]) == (PIPELINE[4], PIPELINE[5])
    assert resolve_passes("cse") == (PIPELINE[4],)
    assert resolve_passes([]) == ()


def test_unknown_or_repeated_pass_names_are_rejected_when_the_session_is_created():
    with pytest.raises(ValueError, match="Unknown optimization pass.*'fold'.*constant_folding"):
        tf.Session(passes=["fold"])
    with pytest.raises(ValueError, match="twice"):
        tf.Session(passes=["cse", "cse"])


def test_session_optimizes_by_default_and_can_be_told_not_to():
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.exp(x * 1.0) + tf.exp(x * 1.0)
    with tf.Session() as sess:
        out = sess.run(y, {x: [0.0, 1.0, 2.0]})
        (plan,) = sess._compiled_plans()
    assert plan.optimization is not None and plan.optimization.ops_after < plan.optimization.ops_before
    np.testing.assert_allclose(out, 2 * np.exp([0.0, 1.0, 2.0]), rtol=1e-6)
    with tf.Session(optimize=False) as sess:
        sess.run(y, {x: [0.0, 1.0, 2.0]})
        (plan,) = sess._compiled_plans()
    assert plan.optimization is None and plan.num_steps == 7  # 2 x (Const, Mul, Exp), Add
    with tf.Session(passes=["cse"]) as sess:
        sess.run(y, {x: [0.0, 1.0, 2.0]})
        (plan,) = sess._compiled_plans()
    assert [p.name for p in plan.optimization.passes] == ["cse"] and plan.num_steps == 4


def test_optimize_returns_a_new_graph_and_a_printable_report():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.reduce_sum(tf.tanh(x * 2.0) + tf.constant(3.0) * 2.0)
    user = tf.get_default_graph()
    snapshot = [(op.name, op.type, tuple(op.inputs), tuple(op.control_inputs), dict(op.attrs))
                for op in user.get_operations()]
    version = user.version
    graph, report = tf.optimize(y, feeds=[x])
    assert graph is not user and user.version == version
    assert [(op.name, op.type, tuple(op.inputs), tuple(op.control_inputs), dict(op.attrs))
            for op in user.get_operations()] == snapshot
    assert [p.name for p in report.passes] == [p.NAME for p in PIPELINE]
    for p in report.passes:
        assert p.ops_after <= p.ops_before and p.seconds >= 0
    assert report.ops_before == 9 and report.ops_after == 3  # x, one fused op, the sum
    text = str(report)
    for word in ("pass", "ops before", "ops after", "time (ms)", "constant_folding", "total"):
        assert word in text
    assert report.fetches[0].graph is graph and report.fetches[0].name == y.name
    assert report["fusion"].details["elementwise_groups"] == 1
    # the CPU implementation a plan of the optimized graph chooses for each op
    kernels = {op_type: impl for _, op_type, impl in report.kernels}
    assert set(kernels) == {"FusedElementwiseSum"} or set(kernels) >= {"FusedElementwise", "Sum"}
    assert "CPU kernels chosen" in text and all(f"{t}: {i} x" in text for t, i in kernels.items())
    with pytest.raises(KeyError):
        report["nope"]
    # feeds may be a feed_dict; names work too
    graph2, report2 = tf.optimize([y.name], feeds={x: np.ones((2, 4))}, passes=["prune"])
    assert [p.name for p in report2.passes] == ["prune"]


def test_errors_in_optimized_plans_name_the_users_op_and_line():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.placeholder(tf.float32, [None, 2], name="w")
    y = tf.matmul(x, w, name="product")  # the failing line
    z = tf.tanh(y + 1.0)
    for optimize in (False, True):
        with tf.Session(optimize=optimize) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(z, {x: np.ones((2, 3)), w: np.ones((4, 2))})
            message = str(info.value)
            assert "'product' (MatMul)" in message and f":{y.op.source.lineno}" in message
            assert "the failing line" in message
            if optimize:  # matmul + bias + tanh run as one op, whose error names the member
                assert info.value.op.type == "FusedMatMul"
            else:
                assert info.value.op is y.op
            with pytest.raises(ValueError, match="cannot feed a value of shape .* tensor 'x:0'"):
                sess.run(z, {x: np.ones((2, 4)), w: np.ones((3, 2))})
            with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value") as info:
                sess.run(z, {x: np.ones((2, 3))})
            assert info.value.op is w.op


def test_optimizing_a_large_graph_is_iterative():
    x = tf.placeholder(tf.float32, [3], name="x")
    y = x
    for i in range(20_000):
        y = tf.sin(y) if i % 2 else y * 1.0
    graph, report = tf.optimize(y, [x])
    assert report["arithmetic"].rewrites == 10_000
    assert graph.num_ops() == 1 + -(-10_000 // 64)  # the placeholder, groups of <= 64 sines
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y, {x: [0.5, 1.0, 1.5]}).shape, (3,))


def _mlp_adam_step(batch=None):
    rng = np.random.default_rng(0)
    x = tf.placeholder(tf.float32, [batch, 784], name="x")
    labels = tf.placeholder(tf.float32, [batch, 10], name="labels")
    h = x
    sizes = [784, 512, 512, 10]
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        w = tf.Variable(rng.normal(0, np.sqrt(2 / a), (a, b)).astype(np.float32), name=f"w{i}")
        h = tf.matmul(h, w) + tf.Variable(np.zeros(b, np.float32), name=f"b{i}")
        if i < 2:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=h))
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    return x, labels, loss, train


def test_training_step_loses_a_share_of_its_ops_and_trains_the_same():
    x, labels, loss, train = _mlp_adam_step()
    plain, _ = tf.optimize([loss, train], [x, labels], passes=[])
    _, report = tf.optimize([loss, train], [x, labels])
    assert report.ops_before == plain.num_ops()
    assert report.ops_after <= 0.8 * report.ops_before, str(report)
    assert report["fusion"].details["fused_matmuls"] == 3
    assert report["constant_folding"].rewrites > 0 and report["cse"].rewrites > 0
    rng = np.random.default_rng(1)
    xs = rng.uniform(0, 1, (32, 784)).astype(np.float32)
    ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 32)]
    losses = []
    for optimize in (False, True):
        with tf.Session(optimize=optimize) as sess:
            sess.run(tf.global_variables_initializer())
            run = [sess.run([loss, train], {x: xs, labels: ys})[0] for _ in range(3)]
            losses.append(run)
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)
    assert losses[1][2] < losses[1][0]


def test_seeded_random_ops_draw_the_same_values_optimized_or_not():
    tf.set_random_seed(5)
    r = tf.random_normal([3]) * 2.0 + tf.random_uniform([3], seed=2) * 1.0
    draws = []
    for optimize in (False, True):
        with tf.Session(optimize=optimize) as sess:
            draws.append([sess.run(r) for _ in range(3)])
    np.testing.assert_array_equal(draws[0], draws[1])
    assert not np.array_equal(draws[1][0], draws[1][1])
