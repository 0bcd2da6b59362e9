"""Memory planning (a stage of every plan compile): in-place steps where they are safe, never over
fed arrays, constants, variable values, fetched values, views that are still alive or buffers a
stateful op received; the planned peak; and that it runs without the optimizer too."""

import numpy as np

import graphflow as tf
from graphflow.engine import memory_plan as memory_planning

PASS = []  # no optimization pass: the memory plan is part of every compile


def _plan(sess):
    return list(sess._compiled_plans())[-1]  # the plan compiled last


def test_elementwise_chain_runs_in_place():
    x = tf.placeholder(tf.float64, [1000], name="x")
    y = tf.tanh(tf.sin(tf.exp(x)) * 2.0)
    xv = np.linspace(-1, 1, 1000)
    keep = xv.copy()
    with tf.Session(optimize=False) as sess:
        want = sess.run(y, {x: xv})
    with tf.Session(passes=PASS) as sess:
        got = sess.run(y, {x: xv})
        plan = _plan(sess)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(xv, keep)        # the fed array is never written
    assert plan.inplace_steps == 3                 # sin, mul, tanh reuse their input's buffer
    assert "out=" in plan.source and "k0(f0, out" not in plan.source
    report = plan.memory_plan
    assert report.peak_bytes == 8000 and report.peak_bytes_without_reuse == 16000


def test_constants_variables_and_fetched_values_are_never_overwritten():
    x = tf.placeholder(tf.float64, [4], name="x")
    c = tf.constant([1.0, 2.0, 3.0, 4.0], tf.float64)
    v = tf.Variable(np.arange(4.0))
    fetched = tf.exp(x)
    a = tf.sin(c)  # a fresh result of a constant: may be reused
    out = tf.tanh(v * 1.0) + tf.cos(fetched) + tf.negative(c) + a
    with tf.Session(passes=PASS) as sess:
        sess.run(v.initializer)
        for _ in range(2):
            values = sess.run([out, fetched], {x: np.zeros(4)})
        np.testing.assert_array_equal(values[1], np.ones(4))
        np.testing.assert_array_equal(sess.run(v), np.arange(4.0))
        np.testing.assert_array_equal(sess.run(c), [1.0, 2.0, 3.0, 4.0])
        expect = np.tanh(np.arange(4.0)) + np.cos(1.0) - np.arange(1.0, 5.0) + np.sin(np.arange(1.0, 5.0))
        np.testing.assert_allclose(values[0], expect)


def test_buffers_that_flow_into_stateful_ops_are_not_reused():
    x = tf.placeholder(tf.float64, [3], name="x")
    v = tf.Variable(np.zeros(3))
    h = tf.exp(x)
    store = tf.assign(v, h)
    y = tf.sin(h)  # h dies here, but the variable store may hold it
    with tf.Session(passes=PASS) as sess:
        sess.run(v.initializer)
        sess.run([y, store], {x: np.zeros(3)})
        plan_graph_ops = _plan(sess).memory_plan.inplace
        np.testing.assert_array_equal(sess.run(v), np.ones(3))
    assert all(op.name != y.op.name for op in plan_graph_ops)


def test_live_views_and_broadcasting_block_reuse():
    x = tf.placeholder(tf.float64, [2, 3], name="x")
    row = tf.placeholder(tf.float64, [3], name="row")
    h = tf.exp(x)
    view = tf.reshape(h, [6])           # a view of h's buffer, alive after h's last reader
    s = tf.sin(h)                       # h's last reader: must not overwrite it
    small = tf.exp(row)
    grown = small + tf.sin(x)           # [3] + [2, 3]: the output is bigger than `small`
    out = [tf.reduce_sum(view * 2.0) + tf.reduce_sum(s), grown]
    xv = np.arange(6.0).reshape(2, 3)
    with tf.Session(passes=PASS) as sess:
        got = sess.run(out, {x: xv, row: [1.0, 2.0, 3.0]})
        plan = _plan(sess).memory_plan
    names = {op.name for op in plan.inplace}
    assert s.op.name not in names
    assert grown.op.name in names  # reuses sin(x), which has the output's shape
    hv = np.exp(xv)
    want = [np.sum(hv.reshape(6) * 2.0) + np.sum(np.sin(hv)),
            np.exp([1.0, 2.0, 3.0]) + np.sin(xv)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-14)


def test_unknown_dims_reuse_only_when_the_shape_cannot_grow():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 3], name="y")
    b = tf.placeholder(tf.float32, [3], name="b")
    ok = tf.exp(x) + b            # [?, 3] + [3]: the output is exactly exp(x)'s shape
    risky = tf.exp(y) * tf.sin(x)  # [?, 3] * [?, 3]: either side could have one row
    with tf.Session(passes=PASS) as sess:
        # (lists: the plan for any shape; numpy arrays get a plan made for their shapes)
        sess.run([ok, risky], {x: [[1.0] * 3] * 2, y: [[1.0] * 3] * 2, b: np.ones(3)})
        plan = _plan(sess).memory_plan
    names = {op.name for op in plan.inplace}
    assert ok.op.name in names and risky.op.name not in names
    assert plan.peak_bytes is None and "unknown" in plan.summary()
    with tf.Session(passes=PASS) as sess:
        sess.run([ok, risky], {x: np.ones([2, 3]), y: np.ones([2, 3]), b: np.ones(3)})
        plan = _plan(sess).memory_plan
    assert {ok.op.name, risky.op.name} <= {op.name for op in plan.inplace}
    assert plan.peak_bytes is not None


def test_fused_ops_write_into_a_dead_input():
    x = tf.placeholder(tf.float32, [300, 500], name="x")
    h = tf.matmul(x, tf.constant(np.eye(500, dtype=np.float32)))
    y = tf.tanh(h * 1.5 + 0.25) * 0.5 + tf.nn.relu(h) - tf.exp(-h * h)
    xv = np.random.default_rng(0).uniform(-2, 2, (300, 500)).astype(np.float32)
    with tf.Session(optimize=False) as sess:
        want = sess.run(y, {x: xv})
    with tf.Session() as sess:
        got = sess.run(y, {x: xv})
        plan = _plan(sess)
    fused = [op for op in plan.memory_plan.inplace if op.type == "FusedElementwise"]
    assert plan.inplace_steps == 1 and len(fused) == 1  # writes over the matmul's result
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_kernel_accepts_out():
    assert memory_planning.kernel_accepts_out(np.add)
    assert not memory_planning.kernel_accepts_out(np.divmod)
    assert not memory_planning.kernel_accepts_out(lambda x: x)


def test_memory_plan_runs_without_the_optimizer():
    x = tf.placeholder(tf.float64, [1000], name="x")
    y = tf.tanh(tf.sin(tf.exp(x)) * 2.0)
    xv = np.linspace(-1, 1, 1000)
    keep = xv.copy()
    with tf.Session(optimize=False) as sess:
        got = sess.run(y, {x: xv})
        plan = _plan(sess)
    assert plan.optimization is None
    assert plan.inplace_steps == 3 and len(plan.memory_plan.inplace) == 3
    assert {step.op.type for step in plan.step_list.steps if step.out is not None} == {
        "Sin", "Mul", "Tanh"}
    np.testing.assert_array_equal(xv, keep)
    np.testing.assert_allclose(got, np.tanh(np.sin(np.exp(keep)) * 2.0), rtol=1e-14)


def test_a_fed_intermediate_is_never_written_over():
    x = tf.placeholder(tf.float64, [4], name="x")
    h = tf.exp(x)
    y = tf.sin(h)  # h is fed: sin must not write into the user's array
    hv = np.arange(4.0)
    keep = hv.copy()
    with tf.Session(optimize=False) as sess:
        got = sess.run(y, {h: hv})
        plan = _plan(sess)
    assert plan.inplace_steps == 0
    np.testing.assert_array_equal(hv, keep)
    np.testing.assert_allclose(got, np.sin(keep))


def _adopting_steps(plan):
    return [step.op.name for step in plan.step_list.steps if step.adopt]


def test_assign_keeps_a_fresh_result_nothing_else_reads():
    x = tf.placeholder(tf.float64, [3], name="x")
    v = tf.Variable(np.zeros(3))
    store = tf.assign(v, x * 2.0, name="store")
    with tf.Session(passes=PASS) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(store.op, {x: np.arange(3.0)})
        plan = _plan(sess)
        first = sess.run(v)
        sess.run(store.op, {x: np.ones(3)})
        np.testing.assert_array_equal(first, [0.0, 2.0, 4.0])  # a fetched value is a copy
        np.testing.assert_array_equal(sess.run(v), [2.0, 2.0, 2.0])
    assert _adopting_steps(plan) == ["store"] and "adopt=True" in plan.source


def test_assign_copies_values_others_can_see():
    x = tf.placeholder(tf.float64, [3], name="x")
    v, w = tf.Variable(np.zeros(3)), tf.Variable(np.zeros(3))
    doubled = x * 2.0
    cases = {
        "fed": (tf.assign(v, x), []),                            # the user's array
        "variable": (tf.assign(w, v.value()), []),               # another variable's value
        "fetched": (tf.assign(v, doubled), [doubled]),           # the user gets it too
        "two readers": (tf.assign(v, doubled), [tf.reduce_sum(doubled)]),
        "a view": (tf.assign(v, tf.reshape(x * 3.0, [3])), []),  # shares a buffer with x*3
    }
    with tf.Session(passes=PASS) as sess:
        sess.run(tf.global_variables_initializer())
        for name, (update, extra) in cases.items():
            sess.run([update.op] + extra, {x: np.arange(3.0)})
            assert _adopting_steps(_plan(sess)) == [], name


def test_a_failed_run_leaves_an_adopting_assign_unapplied():
    x = tf.placeholder(tf.float64, [3], name="x")
    v = tf.Variable(np.full(3, 5.0))
    store = tf.assign(v, x * 2.0, name="store")
    with tf.control_dependencies([store]):
        checked = tf.check_numerics(tf.reduce_sum(x), "bad input")
    with tf.Session(passes=PASS) as sess:
        sess.run(tf.global_variables_initializer())
        try:
            sess.run(checked, {x: np.array([1.0, np.nan, 2.0])})
            raise AssertionError("check_numerics should have failed")
        except tf.errors.InvalidArgumentError:
            pass
        assert _adopting_steps(_plan(sess)) == ["store"]
        np.testing.assert_array_equal(sess.run(v), [5.0, 5.0, 5.0])
        sess.run(checked, {x: np.ones(3)})
        np.testing.assert_array_equal(sess.run(v), [2.0, 2.0, 2.0])
