"""tf.while_loop, tf.cond, tf.case and tf.TensorArray: values, nested loop variables, only the taken
branch running, data-dependent trip counts, variables inside bodies, and clear errors naming the
user's line. Gradients are in test_control_flow_grad.py."""

import collections
import re

import numpy as np
import pytest

import graphflow as tf
from graphflow.ops.control_flow_ops import ControlFlowError

Pair = collections.namedtuple("Pair", ["a", "b"])


def _run(fetches, feed=None, init=False):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_counter_loop_runs_as_many_iterations_as_the_predicate_says():
    limit = tf.placeholder(tf.int32, [])
    i, total = tf.while_loop(lambda i, t: i < limit, lambda i, t: (i + 1, t + i),
                             (tf.constant(0), tf.constant(0)))
    with tf.Session() as sess:
        for n in (0, 1, 7, 100):
            assert sess.run([i, total], {limit: n}) == [n, n * (n - 1) // 2]


def test_data_dependent_trip_count():
    x = tf.placeholder(tf.float32, [])
    steps, value = tf.while_loop(lambda n, v: v < 100.0, lambda n, v: (n + 1, v * 2.0),
                                 [tf.constant(0), x])
    with tf.Session() as sess:
        assert sess.run([steps, value], {x: 1.0}) == [7, 128.0]
        assert sess.run([steps, value], {x: 30.0}) == [2, 120.0]


def test_single_loop_var_returns_a_tensor_and_return_same_structure_a_list():
    x = tf.while_loop(lambda x: x < 10, lambda x: x + 3, [tf.constant(1)])
    y = tf.while_loop(lambda x: x < 10, lambda x: [x + 3], [tf.constant(1)],
                      return_same_structure=True)
    z = tf.while_loop(lambda x: x < 10, lambda x: x + 3, tf.constant(1))
    assert isinstance(x, tf.Tensor) and isinstance(y, list) and isinstance(z, tf.Tensor)
    assert _run([x, y[0], z]) == [10, 10, 10]


def test_nested_loop_vars_dict_namedtuple_list():
    start = {"count": tf.constant(0), "pair": Pair(tf.constant(1.0), [tf.constant(2.0)])}

    def body(state):
        p = state["pair"]
        return {"count": state["count"] + 1, "pair": Pair(p.a * 2.0, [p.b[0] + p.a])}

    out = tf.while_loop(lambda s: s["count"] < 3, body, [start])
    assert isinstance(out, dict) and isinstance(out["pair"], Pair)
    got = _run(out)
    assert got["count"] == 3 and got["pair"].a == 8.0 and got["pair"].b[0] == 2.0 + 1 + 2 + 4


def test_maximum_iterations_ends_the_loop_as_in_tf1():
    n = tf.placeholder(tf.int32, [])
    i = tf.while_loop(lambda i: i < 100, lambda i: i + 1, [tf.constant(0)],
                      maximum_iterations=n)
    with tf.Session() as sess:
        assert sess.run(i, {n: 5}) == 5
        assert sess.run(i, {n: 500}) == 100


def test_shape_invariants_let_a_loop_var_grow():
    x = tf.constant([1.0])
    i, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.concat([y, y], 0)),
                         [tf.constant(0), x],
                         shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])])
    assert y.shape.as_list() == [None]
    assert _run(y).shape == (8,)


def test_a_shape_change_without_invariant_names_the_users_line():
    with pytest.raises(ControlFlowError, match=r"shape_invariants.*test_control_flow_ops.py"):
        tf.while_loop(lambda y: tf.reduce_sum(y) < 10.0, lambda y: tf.concat([y, y], 0),
                      [tf.constant([1.0])])


def test_body_structure_and_dtype_errors_name_the_users_line():
    with pytest.raises(ControlFlowError, match=r"same structure.*test_control_flow_ops.py"):
        tf.while_loop(lambda a, b: a < 3, lambda a, b: (a + 1,), [tf.constant(0), tf.constant(1)])
    with pytest.raises(ControlFlowError, match=r"int32 but the body returns float32"):
        tf.while_loop(lambda a: a < 3, lambda a: tf.cast(a, tf.float32), [tf.constant(0)])


def test_predicate_must_be_a_scalar_bool():
    with pytest.raises(ControlFlowError, match=r"scalar bool.*test_control_flow_ops.py"):
        tf.while_loop(lambda a: a, lambda a: a + 1, [tf.constant(0)])
    with pytest.raises(ControlFlowError, match="scalar bool"):
        tf.while_loop(lambda a: a < [1, 2], lambda a: a + 1, [tf.constant(0)])
    with pytest.raises(ControlFlowError, match="pred must be a scalar bool"):
        tf.cond(tf.constant([True, False]), lambda: 1, lambda: 2)
    with pytest.raises(ControlFlowError, match="pred must be a scalar bool"):
        tf.cond(tf.constant(1), lambda: 1, lambda: 2)


def test_a_bad_run_time_predicate_is_an_error_naming_the_loop():
    p = tf.placeholder(tf.bool)  # unknown shape: checked when the loop runs
    i = tf.while_loop(lambda i: p, lambda i: i + 1, [tf.constant(0)], maximum_iterations=3)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="must be a scalar bool"):
        sess.run(i, {p: [True, True]})


def test_body_captures_outer_tensors_and_reads_variables():
    x = tf.placeholder(tf.float32, [2])
    w = tf.Variable([1.0, 2.0])
    i, acc = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + x * w),
                           [tf.constant(0), tf.zeros([2])])
    np.testing.assert_allclose(_run(acc, {x: [1.0, 1.0]}, init=True), [3.0, 6.0])


def test_get_variable_inside_a_body_is_created_once_in_the_users_graph():
    x = tf.placeholder(tf.float32, [3, 2])

    def body(i, h):
        with tf.variable_scope("cell", reuse=tf.AUTO_REUSE):
            w = tf.get_variable("w", [2, 2], initializer=tf.ones_initializer())
        return i + 1, tf.tanh(tf.matmul(tf.reshape(x[i], [1, 2]), w) + h)

    _, h = tf.while_loop(lambda i, h: i < 3, body, [tf.constant(0), tf.zeros([1, 2])])
    names = [v.name for v in tf.global_variables()]
    assert names == ["cell/w:0"]
    assert tf.get_default_graph().get_operation_by_name("cell/w").type == "VariableV2"
    xv = np.arange(6, dtype=np.float32).reshape(3, 2) / 10
    want = np.zeros([1, 2])
    for t in range(3):
        want = np.tanh(xv[t:t + 1] @ np.ones([2, 2]) + want)
    np.testing.assert_allclose(_run(h, {x: xv}, init=True), want, rtol=1e-6)


def test_state_updates_inside_a_body_run_every_iteration():
    v = tf.Variable(0.0)

    def body(i):
        with tf.control_dependencies([tf.assign_add(v, 1.0)]):
            return i + 1
    i = tf.while_loop(lambda i: i < 4, body, [tf.constant(0)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(i)
        assert sess.run(v) == 4.0


def test_nested_loops_and_a_cond_inside_a_loop():
    def outer_body(i, total):
        inner = tf.while_loop(lambda j, s: j < i, lambda j, s: (j + 1, s + j),
                              [tf.constant(0), tf.constant(0)])[1]
        total = total + tf.cond(tf.equal(i % 2, 0), lambda: inner, lambda: -inner)
        return i + 1, total
    _, total = tf.while_loop(lambda i, t: i < 5, outer_body, [tf.constant(0), tf.constant(0)])
    want = sum((1 if i % 2 == 0 else -1) * sum(range(i)) for i in range(5))
    assert _run(total) == want


# ------------------------------------------------------------------------------ cond / case
def test_cond_runs_only_the_taken_branch():
    a, b = tf.Variable(0.0), tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])
    out = tf.cond(p, lambda: tf.assign_add(a, 1.0), lambda: tf.assign_add(b, 10.0))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(out, {p: True}) == 1.0
        assert sess.run(out, {p: True}) == 2.0
        assert sess.run(out, {p: False}) == 10.0
        assert sess.run([a, b]) == [2.0, 10.0]


def test_cond_nested_outputs_and_strict():
    p = tf.placeholder(tf.bool, [])
    out = tf.cond(p, lambda: {"x": tf.constant(1), "y": (tf.constant(2.0),)},
                  lambda: {"x": tf.constant(3), "y": (tf.constant(4.0),)})
    single = tf.cond(p, lambda: [tf.constant(1)], lambda: [tf.constant(2)])
    strict = tf.cond(p, lambda: [tf.constant(1)], lambda: [tf.constant(2)], strict=True)
    assert isinstance(single, tf.Tensor) and isinstance(strict, list)
    with tf.Session() as sess:
        got = sess.run(out, {p: False})
        assert got["x"] == 3 and got["y"] == (4.0,)
        assert sess.run([single, strict[0]], {p: True}) == [1, 1]


def test_cond_branch_mismatches_are_errors_naming_the_users_line():
    p = tf.placeholder(tf.bool, [])
    with pytest.raises(ControlFlowError, match=r"same structure.*test_control_flow_ops.py"):
        tf.cond(p, lambda: (tf.constant(1), tf.constant(2)), lambda: tf.constant(1))
    with pytest.raises(ControlFlowError, match="int32 in true_fn but float32"):
        tf.cond(p, lambda: tf.constant(1), lambda: tf.constant(1.0))


def test_cond_shapes_merge_to_the_common_shape():
    p = tf.placeholder(tf.bool, [])
    out = tf.cond(p, lambda: tf.zeros([2, 3]), lambda: tf.zeros([4, 3]))
    assert out.shape.as_list() == [None, 3]


def test_case_picks_the_first_true_predicate_and_runs_only_it():
    x = tf.placeholder(tf.int32, [])
    hits = tf.Variable(0)
    out = tf.case([(tf.less(x, 0), lambda: tf.constant(-1)),
                   (tf.equal(x, 0), lambda: tf.constant(0)),
                   (tf.less(x, 100), lambda: tf.assign_add(hits, 1) * 0 + 1)],
                  default=lambda: tf.constant(99))
    as_dict = tf.case({tf.less(x, 0): lambda: tf.constant(-5)}, default=lambda: tf.constant(5))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert [sess.run(out, {x: v}) for v in (-3, 0, 5, 1000)] == [-1, 0, 1, 99]
        assert sess.run(hits) == 1
        assert sess.run(as_dict, {x: -1}) == -5


def test_case_exclusive_fails_the_run_naming_the_predicates_when_two_hold():
    """TF1: exclusive=True asserts at run time that at most one predicate is true; the error
    names the predicates and shows their values, and no branch runs."""
    x = tf.placeholder(tf.int32, [])
    hits = tf.Variable(0)
    out = tf.case([(tf.greater(x, 0, name="positive"), lambda: tf.assign_add(hits, 1)),
                   (tf.greater(x, 1, name="above_one"), lambda: tf.assign_add(hits, 10))],
                  default=lambda: tf.constant(-1), exclusive=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert [sess.run(out, {x: v}) for v in (1, -4)] == [1, -1]
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(out, {x: 5})
        assert sess.run(hits) == 1
    message = str(info.value)
    assert "exclusive=True: more than 1 conditions (positive:0, above_one:0) evaluated as " \
           "True:] [1 1]" in message
    assert "test_control_flow_ops.py" in message  # the user's line that built the case


def test_case_without_default_checks_the_last_predicate_as_tf1():
    """TF1: with no default, the last pair's function is the default and its predicate must
    hold when it is taken (InvalidArgumentError 'None of conditions evaluated as True')."""
    x = tf.placeholder(tf.int32, [])
    out = tf.case([(tf.less(x, 0), lambda: tf.constant(-1)), (tf.less(x, 10), lambda: tf.constant(1))])
    single = tf.case([(tf.less(x, 10), lambda: tf.constant(1))])
    with tf.Session() as sess:
        assert [sess.run(out, {x: v}) for v in (-3, 3)] == [-1, 1]
        assert sess.run(single, {x: 3}) == 1
        for fetch, values in ((out, "[0 0]"), (single, "[0]")):
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"None of conditions evaluated as True:\] " + re.escape(values)):
                sess.run(fetch, {x: 50})


def test_case_takes_a_dict_in_the_order_of_its_predicates_names():
    x = tf.placeholder(tf.int32, [])
    # both hold for x = 7: TF1 sorts a dict's pairs by predicate name, so 'a_big' comes first
    out = tf.case({tf.greater(x, 1, name="b_small"): lambda: tf.constant(2),
                   tf.greater(x, 5, name="a_big"): lambda: tf.constant(1)},
                  default=lambda: tf.constant(0))
    with tf.Session() as sess:
        assert [sess.run(out, {x: v}) for v in (7, 3, 0)] == [1, 2, 0]


def test_case_predicates_must_be_scalar_bools():
    x = tf.placeholder(tf.int32, [])
    with pytest.raises(ValueError, match="scalar bool"):
        tf.case([(x, lambda: tf.constant(1))], default=lambda: tf.constant(0))
    with pytest.raises(TypeError, match="list, tuple or dict"):
        tf.case(tf.less(x, 1), default=lambda: tf.constant(0))


# ------------------------------------------------------------------------------ TensorArray
def test_tensor_array_in_a_loop_writes_and_stacks():
    x = tf.placeholder(tf.float32, [None, 2])
    n = tf.shape(x)[0]
    inputs = tf.TensorArray(tf.float32, size=n).unstack(x)

    def body(i, acc, out):
        acc = acc + inputs.read(i)
        return i + 1, acc, out.write(i, acc)
    _, _, out = tf.while_loop(lambda i, a, o: i < n, body,
                              [tf.constant(0), tf.zeros([2]), tf.TensorArray(tf.float32, size=n)])
    xv = np.arange(10, dtype=np.float32).reshape(5, 2)
    stacked = out.stack()
    assert stacked.shape.as_list() == [None, 2]
    np.testing.assert_allclose(_run(stacked, {x: xv}), np.cumsum(xv, 0))
    np.testing.assert_allclose(_run(out.size(), {x: xv}), 5)


def test_tensor_array_dynamic_size_gather_scatter_concat():
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)
    _, ta = tf.while_loop(lambda i, t: i < 4,
                          lambda i, t: (i + 1, t.write(i, tf.fill([2], tf.cast(i, tf.float32)))),
                          [tf.constant(0), ta])
    scattered = tf.TensorArray(tf.int32, size=3).scatter([2, 0, 1], [[7], [8], [9]])
    assert _run([ta.size(), ta.gather([3, 1])])[0] == 4
    np.testing.assert_array_equal(_run(ta.gather([3, 1])), [[3, 3], [1, 1]])
    np.testing.assert_array_equal(_run(ta.concat()), [0, 0, 1, 1, 2, 2, 3, 3])
    np.testing.assert_array_equal(_run(scattered.stack()), [[8], [9], [7]])


def test_tensor_array_errors():
    fixed = tf.TensorArray(tf.float32, size=2).write(2, 1.0)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="out of range"):
        sess.run(fixed.stack())
    once = tf.TensorArray(tf.float32, size=1).write(0, 1.0)
    twice = once.read(0) + once.read(0)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="twice"):
        sess.run(twice)
    with pytest.raises(TypeError):
        tf.TensorArray(tf.float32, size=1).write(0, tf.constant(1))
    with pytest.raises(ValueError, match="incompatible"):
        tf.TensorArray(tf.float32, size=2, element_shape=[2]).write(0, tf.zeros([3]))


# ------------------------------------------------------------------------------ graph hygiene
def test_the_users_graph_gains_one_op_per_loop_or_cond():
    before = tf.get_default_graph().num_ops()
    x = tf.constant(1.0)
    before = tf.get_default_graph().num_ops()
    tf.while_loop(lambda v: v < 10.0, lambda v: v * 2.0 + x, [x])
    types = [op.type for op in tf.get_default_graph().get_operations()[before:]]
    assert types.count("While") == 1
    assert not {"Mul", "Add", "Less"} & set(types)  # the body's ops live in its FuncGraph


def test_a_failing_op_inside_a_body_is_reported_with_the_users_line():
    x = tf.placeholder(tf.float32, None)

    def body(i, y):
        return i + 1, tf.reshape(y, [2, 3]) * 1.0  # fails at run time for 5 elements
    out = tf.while_loop(lambda i, y: i < 2, body, [tf.constant(0), x],
                        shape_invariants=[tf.TensorShape([]), tf.TensorShape(None)])[1]
    for optimize in (True, False):
        with tf.Session(optimize=optimize) as sess, pytest.raises(
                tf.errors.InvalidArgumentError,
                match=r"Reshape.*test_control_flow_ops.py:\d+: return i \+ 1, tf.reshape"):
            sess.run(out, {x: np.zeros(5, np.float32)})


def test_cond_on_operations_runs_the_taken_update():
    v = tf.Variable(1.0)
    p = tf.placeholder(tf.bool, [])
    op = tf.cond(p, lambda: tf.assign(v, v * 2.0).op, lambda: tf.no_op())
    assert isinstance(op, tf.Operation)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(op, {p: True})
        sess.run(op, {p: False})
        sess.run(op, {p: True})
        assert sess.run(v) == 4.0
    outer = tf.no_op()
    with pytest.raises(ControlFlowError, match="built outside the function"):
        tf.cond(p, lambda: outer, lambda: tf.no_op())


def test_maximum_iterations_must_be_a_scalar_integer():
    with pytest.raises(ControlFlowError, match="maximum_iterations must be a scalar integer"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)], maximum_iterations=2.5)
    with pytest.raises(ControlFlowError, match="maximum_iterations must be a scalar integer"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)],
                      maximum_iterations=[2, 3])


def test_maximum_iterations_zero_or_negative_runs_no_iteration_as_tf1():
    """TF1 (checked against tf.compat.v1 2.21): maximum_iterations 0 or -3 runs the body no
    time, without an error, and a gradient through it is the identity's."""
    n = tf.placeholder(tf.int32, [])
    x = tf.placeholder(tf.float64, [])
    _, y = tf.while_loop(lambda k, y: True, lambda k, y: (k + 1, y * x), [tf.constant(0), x],
                         maximum_iterations=n)
    (g,) = tf.gradients(y, x)
    with tf.Session() as sess:
        # the values tf.compat.v1 prints for the same loop at x = 2
        assert sess.run([y, g], {n: 5, x: 2.0}) == [64.0, 192.0]
        for limit in (0, -3):
            assert sess.run([y, g], {n: limit, x: 2.0}) == [2.0, 1.0]


def test_cond_runs_once_more_than_the_body_under_maximum_iterations():
    """TF1 ANDs the limit with cond's result, so cond (and its side effects) runs limit + 1
    times; tf.compat.v1 gives (5, 6) for this program."""
    calls = tf.Variable(0)

    def cond(i):
        with tf.control_dependencies([tf.assign_add(calls, 1)]):
            return i < 100
    i = tf.while_loop(cond, lambda i: i + 1, [tf.constant(0)], maximum_iterations=5)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(i) == 5
        assert sess.run(calls) == 6
