"""The passes on graphs with control flow: a constant predicate prunes the untaken branch, loop
and branch bodies are never merged or fused with outer ops, and the memory plan never reuses a
buffer that a loop or branch reads."""

import numpy as np

import graphflow as tf


def _types(graph):
    return [op.type for op in graph.get_operations()]


def test_constant_predicate_prunes_the_dead_branch():
    x = tf.placeholder(tf.float32, [3])
    hits = tf.Variable(0.0)
    y = tf.cond(tf.constant(2) > 1, lambda: tf.sin(x) * 2.0,
                lambda: tf.assign_add(hits, 1.0) + x)
    graph, report = tf.optimize(y, feeds=[x])
    assert "If" not in _types(graph) and "AssignAdd" not in _types(graph)
    assert "Sin" in _types(graph) or "FusedElementwise" in _types(graph)
    folding = next(p for p in report.passes if p.name == "constant_folding")
    assert folding.details["pruned_conds"] == 1
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv = np.array([0.1, 0.2, 0.3], np.float32)
        np.testing.assert_allclose(sess.run(y, {x: xv}), np.sin(xv) * 2, rtol=1e-6)
        assert sess.run(hits) == 0.0


def test_a_pruned_cond_still_differentiates_like_the_unoptimized_graph():
    x = tf.placeholder(tf.float64, [3])
    y = tf.cond(tf.constant(False), lambda: x * x, lambda: tf.exp(x))
    (g,) = tf.gradients(tf.reduce_sum(y * y), x)
    xv = np.array([0.1, -0.2, 0.3])
    with tf.Session(optimize=False) as plain, tf.Session() as optimized:
        want = plain.run([y, g], {x: xv})
        got = optimized.run([y, g], {x: xv})
    for a, b in zip(want, got):
        np.testing.assert_allclose(b, a, rtol=1e-12)
    graph, _ = tf.optimize([y, g], feeds=[x])
    assert "If" not in _types(graph)


def test_a_runtime_predicate_keeps_the_if():
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(2.0))
    graph, _ = tf.optimize(y, feeds=[p])
    assert _types(graph).count("If") == 1


def test_identical_loops_are_not_merged_and_bodies_stay_whole():
    v = tf.Variable(0.0)

    def body(i):
        with tf.control_dependencies([tf.assign_add(v, 1.0)]):
            return i + 1
    a = tf.while_loop(lambda i: i < 3, body, [tf.constant(0)])
    b = tf.while_loop(lambda i: i < 3, body, [tf.constant(0)])
    x = tf.placeholder(tf.float32, [4])
    c = tf.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, tf.tanh(y * 2.0 + 1.0)),
                      [tf.constant(0), tf.sin(x) + 1.0])[1]
    graph, _ = tf.optimize([a, b, c], feeds=[x])
    assert _types(graph).count("While") == 3
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv = np.arange(4, dtype=np.float32) / 4
        _, _, cv = sess.run([a, b, c], {x: xv})
        assert sess.run(v) == 6.0  # both loops ran their bodies three times
    want = np.sin(xv) + 1
    for _ in range(2):
        want = np.tanh(want * 2 + 1)
    np.testing.assert_allclose(cv, want, rtol=1e-6)


def test_memory_plan_never_writes_into_a_value_a_loop_reads():
    x = tf.placeholder(tf.float64, [100])
    h = tf.exp(x) * 2.0  # an owned buffer the loop reads every iteration
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y + h),
                         [tf.constant(0), tf.zeros([100], tf.float64)])
    z = tf.sin(h) + y  # the last reader of h after the loop: may reuse h, never y's sources
    with tf.Session() as sess:
        xv = np.linspace(-1, 1, 100)
        for _ in range(2):
            np.testing.assert_allclose(sess.run(z, {x: xv}),
                                       np.sin(np.exp(xv) * 2) + 3 * np.exp(xv) * 2, rtol=1e-12)
