"""Session.run: fetch/feed structures, plan caching, make_callable, threads, errors, big graphs."""

import collections

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework import errors
from tests.tooling import run_on_threads


def test_fetch_structures_round_trip():
    a = tf.constant(1.0, name="a")
    b = tf.constant([2, 3], name="b")
    noop = tf.no_op()
    Pair = collections.namedtuple("Pair", "first second")
    with tf.Session() as sess:
        out = sess.run({"x": [a, (b, noop)], "p": Pair(a, "b:0"), "n": {"deep": [[a]]}})
    assert out["x"][0] == 1.0
    assert isinstance(out["x"][1], tuple) and out["x"][1][1] is None
    np.testing.assert_array_equal(out["x"][1][0], [2, 3])
    assert isinstance(out["p"], Pair) and out["p"].first == 1.0
    np.testing.assert_array_equal(out["p"].second, [2, 3])
    assert out["n"]["deep"][0][0] == 1.0


def test_fetch_by_name_and_feed_any_tensor():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.multiply(x, 2.0, name="y")
    z = tf.add(y, 1.0, name="z")
    with tf.Session() as sess:
        assert list(sess.run("z:0", {"x:0": [1.0, 2.0]})) == [3.0, 5.0]
        # feeding an intermediate cuts the graph there: x need not be fed
        assert list(sess.run(z, {y: np.array([10.0, 20.0])})) == [11.0, 21.0]
        assert sess.run("y", {x: [1.0, 1.0]}) is None  # an op name fetches the op


def test_eval_and_run_with_default_session():
    x = tf.placeholder(tf.float32, [])
    y = x * 3.0
    with tf.Session():
        assert y.eval({x: 2.0}) == 6.0
        tf.no_op().run()
    with pytest.raises(ValueError, match="default session"):
        y.eval({x: 1.0})


def test_plan_is_cached_and_reused():
    x = tf.placeholder(tf.float32, [None])
    y = tf.reduce_sum(x * x)
    with tf.Session() as sess:
        for i in range(5):
            assert sess.run(y, {x: np.arange(i + 1)}) == sum(k * k for k in range(i + 1))
        assert len(sess._plans) == 1
        sess.run([y], {x: [1.0]})
        assert len(sess._plans) == 1  # same fetches and feeds, other structure: same plan
        sess.run([y, x], {x: [1.0]})
        assert len(sess._plans) == 2
        tf.constant(0.0)  # growing the graph bumps its version: new plans compile
        sess.run(y, {x: [1.0]})
        assert len(sess._plans) == 3


def test_intermediates_freed_after_last_use():
    x = tf.placeholder(tf.float32, [3])
    a = tf.exp(x)
    b = tf.sin(a)
    c = tf.cos(b) + a  # a is used last here
    d = tf.tanh(c)
    with tf.Session(optimize=False) as sess:  # unoptimized: fusion would make this one step
        sess.run(d, {x: np.zeros(3)})
        plan = next(iter(sess._compiled_plans()))
    lines = plan.source.splitlines()
    var_of_a = lines[2].split("=")[0].strip()  # line 0 def, line 1 feeds, line 2 exp
    dels = [i for i, line in enumerate(lines) if line.strip().startswith("del") and var_of_a in line]
    assert dels, plan.source
    assert "Add" in plan.line_to_op[dels[0]].type  # freed right after its last consumer


def test_make_callable_matches_run():
    x = tf.placeholder(tf.float32, [None, 2])
    w = tf.constant(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    y = tf.matmul(x, w)
    s = tf.reduce_sum(y)
    with tf.Session() as sess:
        f = sess.make_callable([y, s], [x])
        xv = np.array([[1.0, 1.0], [2.0, 0.5]], np.float32)
        yv, sv = f(xv)
        np.testing.assert_allclose(yv, xv @ w.op.attrs["value"])
        assert sv == pytest.approx(float(np.sum(yv)))
        g = sess.make_callable(s, [x])
        assert g(xv) == pytest.approx(sv)
        for kind in (list, tuple):  # a flat list or tuple comes back as Session.run gives it
            got = sess.make_callable(kind([y, s]), [x])(xv)
            want = sess.run(kind([y, s]), {x: xv})
            assert type(got) is type(want) is kind
            np.testing.assert_array_equal(got[0], want[0])


def test_two_layer_mlp_forward_matches_numpy(rng):
    x_val = rng.standard_normal((16, 20)).astype(np.float32)
    w1 = rng.standard_normal((20, 32)).astype(np.float32) * 0.1
    b1 = rng.standard_normal(32).astype(np.float32)
    w2 = rng.standard_normal((32, 5)).astype(np.float32) * 0.1
    b2 = rng.standard_normal(5).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 20])
    W1, B1, W2, B2 = (tf.Variable(v) for v in (w1, b1, w2, b2))
    h = tf.nn.relu(tf.matmul(x, W1) + B1)
    logits = tf.matmul(h, W2) + B2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run(logits, {x: x_val})
    expected = np.maximum(x_val @ w1 + b1, 0) @ w2 + b2
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    assert logits.shape.as_list() == [None, 5]


def test_concurrent_runs_from_threads():
    x = tf.placeholder(tf.float32, [None])
    v = tf.Variable(0.0)
    inc = v.assign_add(1.0)
    y = tf.reduce_sum(x) * 2.0
    results = []
    with tf.Session() as sess:
        sess.run(v.initializer)

        def work(k):
            for i in range(50):
                data = np.full(k + 1, float(i))
                results.append(sess.run(y, {x: data}) == 2.0 * i * (k + 1))
                sess.run(inc)
        assert run_on_threads(work, 4) == []
        assert all(results) and len(results) == 200
        assert sess.run(v) == 200.0


def test_close_releases_everything():
    v = tf.Variable(1.0)
    sess = tf.Session()
    sess.run(v.initializer)
    sess.close()
    with pytest.raises(RuntimeError, match="closed"):
        sess.run(v)


# ------------------------------------------------------------------------------- errors
def test_missing_feed_names_placeholder_and_line():
    x = tf.placeholder(tf.float32, [None, 3], name="images")  # created here
    y = x * 2.0
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError) as info:
            sess.run(y)
    msg = str(info.value)
    assert "images" in msg and "test_session.py" in msg and "created here" in msg


def test_wrong_feed_shape_and_unsafe_dtype():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    i = tf.placeholder(tf.int32, [2], name="i")
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"shape \(2, 4\).*'x:0'.*test_session.py"):
            sess.run(x * 1.0, {x: np.zeros((2, 4))})
        with pytest.raises(TypeError, match="float64.*int32.*'i:0'"):
            sess.run(i + 1, {i: np.array([1.5, 2.0])})
        # float64 data into a float32 placeholder is fine (TF1), ints into int32 too
        assert sess.run(x * 1.0, {x: np.ones((1, 3))}).dtype == np.float32
        assert list(sess.run(i + 1, {i: np.array([1, 2], np.int64)})) == [2, 3]


def test_feed_shape_is_checked_after_an_accepted_shape():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = x * 2.0
    with tf.Session() as sess:
        for _ in range(2):  # the second run takes the remembered-shape path
            np.testing.assert_array_equal(sess.run(y, {x: np.ones((4, 3))}), np.full((4, 3), 2.0))
        for bad in ((4, 4), (4, 3, 1), (3,)):
            with pytest.raises(ValueError, match=r"cannot feed a value of shape"):
                sess.run(y, {x: np.ones(bad)})
        assert sess.run(y, {x: np.ones((1, 3))}).shape == (1, 3)


def test_fetch_from_other_graph_and_unknown_name():
    g = tf.Graph()
    with g.as_default():
        other = tf.constant(1.0)
    tf.constant(2.0, name="mine")
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="not an element of this graph"):
            sess.run(other)
        with pytest.raises(KeyError, match="nothere"):
            sess.run("nothere:0")


def test_kernel_failure_is_wrapped_with_op_and_shapes():
    a = tf.placeholder(tf.float32, name="a")
    b = tf.placeholder(tf.float32, name="b")
    c = tf.matmul(a, b, name="product")  # the failing op
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError) as info:
            sess.run(c, {a: np.ones((2, 3)), b: np.ones((4, 5))})
    msg = str(info.value)
    assert "MatMul" in msg and "product" in msg and "(2, 3)" in msg and "(4, 5)" in msg
    assert "the failing op" in msg
    assert info.value.op is c.op


def test_failed_run_changes_no_variable():
    v = tf.Variable(np.array([1.0, 2.0], np.float32), name="v")
    x = tf.placeholder(tf.float32, name="x")
    update = v.assign_add([10.0, 10.0])
    with tf.control_dependencies([update]):
        bad = tf.matmul(x, x)  # fails at run time for a vector x
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(bad, {x: np.ones(3)})
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
        sess.run(update)
        np.testing.assert_array_equal(sess.run(v), [11.0, 12.0])


def test_fetched_variable_value_is_a_copy():
    v = tf.Variable(np.zeros(3, np.float32))
    with tf.Session() as sess:
        sess.run(v.initializer)
        got = sess.run(v)
        got += 5  # mutating the result must not touch the variable
        np.testing.assert_array_equal(sess.run(v), np.zeros(3))


def test_100k_node_chain_builds_and_runs():
    x = tf.placeholder(tf.float32, [4], name="x")
    y = x
    for _ in range(100_000):
        y = y + 1.0
    assert tf.get_default_graph().num_ops() > 200_000
    with tf.Session() as sess:
        out = sess.run(y, {x: np.zeros(4)})
    np.testing.assert_allclose(out, np.full(4, 100_000.0))


def test_ragged_and_out_of_range_python_feeds_name_the_placeholder():
    ids = tf.placeholder(tf.int32, [None], name="ids")
    m = tf.placeholder(tf.float32, [None, None], name="m")
    small = tf.placeholder(tf.uint8, [], name="small")
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="not a rectangular array.*'m:0' of 'm' "
                                             "\\(Placeholder\\) created at .*test_session.py"):
            sess.run(m, {m: [[1, 2], [3]]})
        with pytest.raises(ValueError, match="Python integer 1099511627776: it does not fit "
                                             "int32.*'ids:0'"):
            sess.run(ids, {ids: [2**40, 1]})
        with pytest.raises(ValueError, match="Python integer 300.*uint8.*'small:0'"):
            sess.run(small, {small: 300})
        with pytest.raises(TypeError, match="beyond int64.*'ids:0'"):
            sess.run(ids, {ids: [2**70]})
        assert sess.run(ids, {ids: [2**31 - 1, -2**31]}).tolist() == [2**31 - 1, -2**31]
        # numpy arrays of a wider dtype keep TF1's cast (documented in docs/security.md)
        assert sess.run(ids, {ids: np.array([2**32 + 5], np.int64)}).tolist() == [5]


def test_fetch_structures_of_any_depth_flatten_and_rebuild_without_recursion():
    x = tf.constant(1.0)
    fetch = x
    for _ in range(3000):
        fetch = [fetch, (x,)] if _ % 2 else {"k": fetch}
    with tf.Session() as sess:
        result = sess.run(fetch)
    depth = 0
    while not isinstance(result, np.ndarray):
        result = result[0] if isinstance(result, list) else result["k"]
        depth += 1
    assert depth == 3000 and result == 1.0


def test_a_tuple_of_tensors_is_fed_with_a_value_of_the_same_structure():
    import collections

    State = collections.namedtuple("State", "c h")
    c, h = tf.placeholder(tf.float32, [2]), tf.placeholder(tf.float32, [2])
    other = tf.placeholder(tf.float32, [])
    state = (State(c, h), other)
    total = tf.reduce_sum(c) + tf.reduce_sum(h) * 10.0 + other * 100.0
    with tf.Session() as sess:
        value = (State(np.ones(2, np.float32), [2.0, 3.0]), 4.0)
        assert sess.run(total, {state: value}) == 2.0 + 50.0 + 400.0
        with pytest.raises(ValueError, match=r"feed_dict key \[0\] of 2 tensors is fed float"):
            sess.run(total, {state: (1.0, 4.0)})


def _plan_op_types(sess, fetches, feed):
    metadata = tf.RunMetadata()
    sess.run(fetches, feed, run_metadata=metadata)
    return {op.type for op in metadata.plan.ops}


def test_a_fed_bool_flag_gets_a_plan_per_value_with_one_branch():
    x = tf.placeholder(tf.float32, [3], name="x")
    is_training = tf.placeholder(tf.bool, [], name="is_training")
    y = tf.cond(is_training, lambda: tf.exp(x), lambda: tf.sin(x))
    z = tf.where(is_training, x * 2.0, x * 3.0)
    xv = np.array([0.0, 0.5, 1.0], np.float32)
    with tf.Session() as sess:
        for flag in (True, False, np.bool_(True), np.array(False)):
            got_y, got_z = sess.run([y, z], {x: xv, is_training: flag})
            np.testing.assert_allclose(got_y, np.exp(xv) if flag else np.sin(xv), rtol=1e-6)
            np.testing.assert_allclose(got_z, xv * (2.0 if flag else 3.0))
            types = _plan_op_types(sess, [y, z], {x: xv, is_training: flag})
            assert "If" not in types and "Select" not in types
            assert ("Exp" in types) == bool(flag) and ("Sin" in types) != bool(flag)
        run = sess.make_callable([y, z], [x, is_training])
        np.testing.assert_allclose(run(xv, False)[0], np.sin(xv), rtol=1e-6)
        # a value that is not a plain bool runs the general plan (which checks it as ever)
        with pytest.raises((ValueError, TypeError, tf.errors.InvalidArgumentError)):
            sess.run(y, {x: xv, is_training: [True, False]})


def test_a_session_without_optimization_makes_no_flag_plans():
    x = tf.placeholder(tf.float32, [2])
    flag = tf.placeholder(tf.bool, [])
    y = tf.cond(flag, lambda: x + 1.0, lambda: x - 1.0)
    with tf.Session(optimize=False) as sess:
        assert "If" in _plan_op_types(sess, y, {x: [1.0, 2.0], flag: True})
        assert sess.run(y, {x: [1.0, 2.0], flag: False}).tolist() == [0.0, 1.0]


def test_feeds_declared_with_unknown_dimensions_get_plans_made_for_their_shapes():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    b = tf.Variable(np.arange(4, dtype=np.float32))
    y = tf.reduce_sum(tf.square(x * tf.cast(tf.shape(x)[0], tf.float32) + b))
    grad_b, = tf.gradients(y, [b])
    flag = tf.placeholder_with_default(True, [])
    z = tf.cond(flag, lambda: tf.nn.relu(x) * 2.0, lambda: x)
    fetches = [y, grad_b, z]
    rng = np.random.default_rng(0)
    with tf.Session() as sess, tf.Session(optimize=False) as plain:
        sess.run(b.initializer)
        plain.run(b.initializer)
        for rows in (8, 3, 8, 5, 6, 7, 9):
            xv = rng.standard_normal((rows, 4)).astype(np.float32)
            got = sess.run(fetches, {x: xv})
            want = plain.run(fetches, {x: xv})
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-6)
            metadata = tf.RunMetadata()
            sess.run(fetches, {x: xv}, run_metadata=metadata)
            shapes_known = all(t.shape.is_fully_defined() for op in metadata.plan.ops
                               for t in op.outputs)
            types = {op.type for op in metadata.plan.ops}
            if rows in (8, 3, 5, 6):  # the first MAX_SHAPE_PLANS shapes: static plans
                assert shapes_known and "Shape" not in types and "If" not in types, rows
            else:  # then one plan for any shape
                assert not shapes_known and "Shape" in types, rows
        # a feed that is not a numpy array runs the plan for any shape
        got = sess.run(y, {x: [[1.0, 2.0, 3.0, 4.0]]})
        assert got == plain.run(y, {x: [[1.0, 2.0, 3.0, 4.0]]})
