"""Tests for graphflow/ops/gradients.py (and the rules in graphflow/ops/*_grad.py).

1. Generic check over every OpCase with grad=True (tests/op_cases): float inputs cast to float64,
   f(x) = sum(u * op(x)) for a random cotangent u; the symbolic gradient's directional derivative
   <grad f, v> must match central finite differences (f(x + eps v) - f(x - eps v)) / 2 eps along
   random directions v, with static and with shape-less placeholders. A second-order version
   differentiates <grad f, w> again (gradients of gradients).
2. The seed example, Hessian-vector products, the engine's semantics (stop_gradient, stop_gradients,
   unconnected_gradients, integer tensors, grad_ys, several ys, broadcasting with unknown dims,
   errors, naming) and a 100k-op chain.
"""

import time

import numpy as np
import pytest

import graphflow as tf
from graphflow.ops import registry
from graphflow.ops.gradients import dense_gradients
from tests.op_cases import all_cases


def _diff_positions(case):
    if case.grad_inputs is not None:
        return list(case.grad_inputs)
    return [i for i, x in enumerate(case.inputs) if x.dtype.kind == "f"]


GRAD_CASES = [c for c in all_cases() if c.grad and _diff_positions(c)]
SECOND_ORDER_CASES = [c for c in GRAD_CASES if c.second_order]


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


class _Projected:
    """f(x) = sum_k sum(u_k * out_k(x)) for one OpCase, built from float64 placeholders."""

    def __init__(self, case, known_shapes, seed):
        self.case = case
        self.values = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in case.inputs]
        self.inputs = [tf.placeholder(tf.as_dtype(v.dtype), shape=v.shape if known_shapes else None,
                                      name=f"in{i}") for i, v in enumerate(self.values)]
        self.positions = _diff_positions(case)
        outs = [t for t in _as_list(case.build(*self.inputs)) if t.dtype.is_floating]
        assert outs, f"{case.name}: grad=True but the op has no floating-point output"
        with tf.Session() as sess:
            shapes = [np.shape(v) for v in sess.run(outs, self.feed(self.values))]
        rng = np.random.default_rng(seed)
        terms = []
        for out, shape in zip(outs, shapes):
            u = tf.constant(rng.standard_normal(shape))
            out64 = out if out.dtype == tf.float64 else tf.cast(out, tf.float64)
            terms.append(tf.reduce_sum(out64 * u))
        self.f = tf.add_n(terms)
        # float32/float16 outputs only resolve ~1e-7 relative steps: use a wider stencil
        self.eps = 1e-6 if all(t.dtype == tf.float64 for t in outs) else 1e-2
        self.xs = [self.inputs[i] for i in self.positions]

    def feed(self, values):
        return dict(zip(self.inputs, values))

    def perturbed(self, i, step):
        values = list(self.values)
        values[i] = values[i] + step
        return self.feed(values)


def _check_directional(sess, scalar, grads, proj, rng, rtol, atol, what):
    """<grads, v> against central differences of `scalar` along random v, one input at a time."""
    values = sess.run(grads, proj.feed(proj.values))
    for pos, x, g in zip(proj.positions, proj.xs, values):
        for _ in range(2):
            v = rng.standard_normal(proj.values[pos].shape)
            plus = sess.run(scalar, proj.perturbed(pos, proj.eps * v))
            minus = sess.run(scalar, proj.perturbed(pos, -proj.eps * v))
            numeric = (plus - minus) / (2 * proj.eps)
            symbolic = float(np.sum(g * v))
            np.testing.assert_allclose(symbolic, numeric, rtol=rtol, atol=atol,
                                       err_msg=f"{what} wrt input {pos} ({x.name})")


# every case with static input shapes; with unknown shapes only the cases that allow them
_SHAPE_MODES = [pytest.param(case, known, id=f"{'static' if known else 'dynamic'}-{case.name}")
                for known in (True, False) for case in GRAD_CASES if known or case.unknown_shapes]


@pytest.mark.parametrize("case,known_shapes", _SHAPE_MODES)
def test_gradient_matches_finite_differences(case, known_shapes):
    proj = _Projected(case, known_shapes, seed=1)
    grads = dense_gradients(proj.f, proj.xs)  # Gather's gradient is an IndexedSlices, as in TF
    for x, g in zip(proj.xs, grads):
        assert g is not None, f"{case.name}: no gradient reaches input {x.name}"
        assert g.dtype == x.dtype
        assert g.shape.is_compatible_with(x.shape), f"{g.shape} vs {x.shape}"
    with tf.Session() as sess:
        for pos, g in zip(proj.positions, sess.run(grads, proj.feed(proj.values))):
            assert g.shape == proj.values[pos].shape, f"{case.name}: gradient of input {pos}"
        _check_directional(sess, proj.f, grads, proj, np.random.default_rng(2), case.grad_rtol,
                           case.grad_atol, case.name)


@pytest.mark.parametrize("case", SECOND_ORDER_CASES, ids=[c.name for c in SECOND_ORDER_CASES])
def test_second_order_gradient_matches_finite_differences(case):
    """s(x) = <grad f(x), w>; grad s (a Hessian-vector product) against differences of s."""
    proj = _Projected(case, known_shapes=True, seed=3)
    grads = tf.gradients(proj.f, proj.xs)
    rng = np.random.default_rng(4)
    s = tf.add_n([tf.reduce_sum(g * tf.constant(rng.standard_normal(x.shape.as_list())))
                  for x, g in zip(proj.xs, grads)])
    hvp = dense_gradients(s, proj.xs, unconnected_gradients="zero")
    proj.eps = max(proj.eps, 1e-5)
    with tf.Session() as sess:
        _check_directional(sess, s, hvp, proj, rng, max(case.grad_rtol, 1e-4),
                           max(case.grad_atol, 1e-5), f"{case.name} (second order)")


def test_every_op_with_a_gradient_case_has_a_rule():
    missing = sorted({c.op_type for c in GRAD_CASES if registry.lookup(c.op_type).grad is None})
    assert not missing, f"op types with grad=True cases but no gradient rule: {missing}"


# ------------------------------------------------------------------ the seed example and friends
def test_seed_example_gradients():
    x = tf.placeholder(tf.float32)
    y = tf.placeholder(tf.float32)
    z = tf.placeholder(tf.float32)
    c = tf.reduce_sum(x * y + z)
    grad_x, grad_y, grad_z = tf.gradients(c, [x, y, z])
    rng = np.random.default_rng(0)
    values = {t: rng.standard_normal((3, 4)).astype(np.float32) for t in (x, y, z)}
    with tf.Session() as sess:
        gx, gy, gz = sess.run([grad_x, grad_y, grad_z], feed_dict=values)
    np.testing.assert_array_equal(gx, values[y])
    np.testing.assert_array_equal(gy, values[x])
    np.testing.assert_array_equal(gz, np.ones((3, 4), np.float32))
    assert gx.dtype == np.float32


def test_gradient_names_follow_tf1():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.multiply(x, x, name="Mul")
    (g,) = tf.gradients(y, x)
    names = [op.name for op in tf.get_default_graph().get_operations()]
    assert "gradients/Mul_grad/Mul" in names
    assert g.op.name.startswith("gradients/")
    (g2,) = tf.gradients(y, x)
    assert g2.op.name.startswith("gradients_1/")


def test_hessian_vector_product_against_finite_differences():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 4))
    x = tf.placeholder(tf.float64, [4])
    f = tf.reduce_sum(tf.tanh(tf.matmul(tf.reshape(x, [1, 4]), tf.constant(a)))) + \
        tf.reduce_sum(tf.exp(x) * tf.sin(x))
    v = tf.placeholder(tf.float64, [4])
    (g,) = tf.gradients(f, x)
    (hv,) = tf.gradients(tf.reduce_sum(g * v), x)
    x0, v0 = rng.standard_normal(4), rng.standard_normal(4)
    eps = 1e-5
    with tf.Session() as sess:
        got = sess.run(hv, {x: x0, v: v0})
        numeric = (sess.run(g, {x: x0 + eps * v0}) - sess.run(g, {x: x0 - eps * v0})) / (2 * eps)
        (h,) = sess.run(tf.hessians(f, x), {x: x0})
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h @ v0, got, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h, h.T, rtol=1e-10, atol=1e-12)


def test_second_derivative_of_tanh():
    x = tf.placeholder(tf.float64, [5])
    y = tf.tanh(x)
    (d1,) = tf.gradients(y, x)
    (d2,) = tf.gradients(d1, x)
    x0 = np.linspace(-2, 2, 5)
    with tf.Session() as sess:
        first, second = sess.run([d1, d2], {x: x0})
    t = np.tanh(x0)
    np.testing.assert_allclose(first, 1 - t ** 2, rtol=1e-12)
    np.testing.assert_allclose(second, -2 * t * (1 - t ** 2), rtol=1e-12, atol=1e-15)


def test_hessians_of_quadratic_form():
    a = np.array([[2.0, 1.0], [0.5, 3.0]])
    x = tf.Variable(np.array([1.0, -1.0]))
    f = tf.reduce_sum(x * tf.reshape(tf.matmul(tf.constant(a), tf.reshape(x, [2, 1])), [2]))
    (h,) = tf.hessians(f, x)
    assert h.shape.as_list() == [2, 2]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(h), a + a.T)


# ------------------------------------------------------------------ engine semantics
def test_paths_are_summed_and_variables_are_xs():
    w = tf.Variable(np.array([1.0, 2.0, 3.0]))
    x = tf.placeholder(tf.float64, [3])
    y = w * x + tf.sin(w) + w  # three paths into w
    (gw,) = tf.gradients(tf.reduce_sum(y), [w])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        x0 = np.array([0.5, -1.0, 2.0])
        np.testing.assert_allclose(sess.run(gw, {x: x0}), x0 + np.cos([1.0, 2.0, 3.0]) + 1)


def test_variable_reads_count_as_the_variable():
    w = tf.Variable(np.array([1.0, -2.0]), name="w")
    loss = tf.reduce_sum(w * w) + tf.reduce_sum(w.read_value() * 3.0)
    gw, gw_again = tf.gradients(loss, [w, w])
    assert gw is gw_again
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(gw), [2.0 + 3.0, -4.0 + 3.0])


def test_multi_output_op_gets_zeros_for_outputs_without_gradient():
    x = tf.placeholder(tf.float64, [3, 2])
    first, _, third = tf.unstack(x)
    (g,) = tf.gradients(tf.reduce_sum(first * 2.0 + third), x)
    unpack_grad_ops = [op for op in tf.get_default_graph().get_operations()
                       if op.name.startswith("gradients/unstack_grad/")]
    assert [op.type for op in unpack_grad_ops].count("ZerosLike") == 1
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(g, {x: np.ones((3, 2))}),
                                      [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]])


def test_stop_gradient_op():
    x = tf.placeholder(tf.float64, [3])
    y = tf.stop_gradient(x * x) * x
    (g,) = tf.gradients(tf.reduce_sum(y), x)
    assert tf.gradients(tf.stop_gradient(x), x) == [None]
    with tf.Session() as sess:
        x0 = np.array([1.0, 2.0, 3.0])
        np.testing.assert_allclose(sess.run(g, {x: x0}), x0 * x0)


def test_stop_gradients_argument():
    x = tf.placeholder(tf.float64, [])
    a = x * 2.0
    b = a + x
    ga, gx = tf.gradients(b, [a, x], stop_gradients=[a])
    gx_full = tf.gradients(b, x)[0]
    with tf.Session() as sess:
        assert sess.run([ga, gx, gx_full], {x: 1.5}) == [1.0, 1.0, 3.0]


def test_unconnected_gradients():
    x = tf.placeholder(tf.float64, [2, 3])
    unused = tf.placeholder(tf.float64, [None, 4])
    y = tf.reduce_sum(x * 3.0)
    assert tf.gradients(y, [x, unused])[1] is None
    g = tf.gradients(y, [x, unused], unconnected_gradients="zero")[1]
    g_enum = tf.gradients(y, unused, unconnected_gradients=tf.UnconnectedGradients.ZERO)[0]
    with tf.Session() as sess:
        u0 = np.ones((5, 4))
        np.testing.assert_array_equal(sess.run(g, {unused: u0}), np.zeros((5, 4)))
        np.testing.assert_array_equal(sess.run(g_enum, {unused: u0}), np.zeros((5, 4)))
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tf.gradients(y, x, unconnected_gradients="zeros")


def test_integer_tensors_carry_no_gradient():
    x = tf.placeholder(tf.float64, [4])
    n = tf.placeholder(tf.int32, [4])
    as_int = tf.cast(x, tf.int32)
    y = tf.reduce_sum(tf.cast(as_int * n, tf.float64)) + tf.reduce_sum(x * 2.0)
    gx, gn = tf.gradients(y, [x, n])
    assert gn is None
    assert tf.gradients(tf.argmax(x), x) == [None]
    assert tf.gradients(tf.reduce_sum(as_int), x) == [None]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(gx, {x: np.arange(4.0), n: np.ones(4, np.int32)}),
                                      np.full(4, 2.0))


def test_grad_ys_and_several_ys():
    x = tf.placeholder(tf.float64, [3])
    y1, y2 = x * x, tf.sin(x)
    (g_default,) = tf.gradients([y1, y2], x)
    (g_weighted,) = tf.gradients([y1, y2], x, grad_ys=[tf.constant([1.0, 2.0, 3.0], tf.float64), None])
    (g_numpy,) = tf.gradients(y1, x, grad_ys=np.array([0.5, 0.5, 0.5]))
    x0 = np.array([0.1, 0.2, 0.3])
    with tf.Session() as sess:
        d, w, n = sess.run([g_default, g_weighted, g_numpy], {x: x0})
    np.testing.assert_allclose(d, 2 * x0 + np.cos(x0))
    np.testing.assert_allclose(w, [1, 2, 3] * (2 * x0) + np.cos(x0))
    np.testing.assert_allclose(n, x0)
    with pytest.raises(TypeError, match="grad_ys"):
        tf.gradients(y1, x, grad_ys=[tf.constant([1.0, 2.0, 3.0], dtype=tf.float32)])
    with pytest.raises(ValueError, match="grad_ys"):
        tf.gradients(y1, x, grad_ys=[tf.constant([1.0, 2.0], tf.float64)])
    with pytest.raises(ValueError, match="grad_ys"):
        tf.gradients([y1, y2], x, grad_ys=[None])


def test_gradient_of_x_with_respect_to_itself_and_of_other_xs():
    x = tf.placeholder(tf.float64, [2])
    h = x * 3.0
    y = h * h
    gx, gh = tf.gradients(y, [x, h])
    (gxx,) = tf.gradients(x, x)
    with tf.Session() as sess:
        r = sess.run([gx, gh, gxx], {x: np.array([1.0, 2.0])})
    np.testing.assert_allclose(r[0], 18 * np.array([1.0, 2.0]))
    np.testing.assert_allclose(r[1], 6 * np.array([1.0, 2.0]))
    np.testing.assert_allclose(r[2], [1.0, 1.0])


def test_broadcasting_with_unknown_dims():
    x = tf.placeholder(tf.float32, [None, 10])
    b = tf.placeholder(tf.float32, [10])
    s = tf.placeholder(tf.float32, [None, 1])
    y = tf.reduce_mean(tf.square(x + b) * s)
    gx, gb, gs = tf.gradients(y, [x, b, s])
    assert gx.shape.as_list() == [None, 10]
    assert gb.shape.as_list() == [10]
    assert gs.shape.as_list() == [None, 1]
    rng = np.random.default_rng(6)
    x0, b0, s0 = rng.standard_normal((7, 10)), rng.standard_normal(10), rng.standard_normal((7, 1))
    with tf.Session() as sess:
        rx, rb, rs = sess.run([gx, gb, gs], {x: x0, b: b0, s: s0})
    n = 70
    np.testing.assert_allclose(rx, 2 * (x0 + b0) * s0 / n, rtol=1e-5)
    np.testing.assert_allclose(rb, np.sum(2 * (x0 + b0) * s0 / n, axis=0), rtol=1e-5)
    np.testing.assert_allclose(rs, np.sum((x0 + b0) ** 2 / n, axis=1, keepdims=True), rtol=1e-5)


def test_unknown_rank_reduction_and_matmul_broadcast():
    x = tf.placeholder(tf.float64)  # unknown rank
    y = tf.reduce_sum(tf.reduce_max(x, axis=[0, -1]) * 2.0)
    (g,) = tf.gradients(y, x)
    a = tf.placeholder(tf.float64, [None, 1, 3, 4])
    w = tf.placeholder(tf.float64, [4, 2])
    ga, gw = tf.gradients(tf.reduce_sum(tf.matmul(a, w)), [a, w])
    x0 = np.arange(24.0).reshape(2, 3, 4)
    with tf.Session() as sess:
        expected = np.zeros_like(x0)
        expected[1, :, 3] = 2.0
        np.testing.assert_array_equal(sess.run(g, {x: x0}), expected)
        a0 = np.ones((2, 1, 3, 4))
        w0 = np.arange(8.0).reshape(4, 2)
        rga, rgw = sess.run([ga, gw], {a: a0, w: w0})
    np.testing.assert_allclose(rga, np.broadcast_to(w0.sum(axis=1), (2, 1, 3, 4)))
    np.testing.assert_allclose(rgw, np.full((4, 2), 6.0))


def test_prod_gradient_with_zeros():
    x = tf.placeholder(tf.float64, [3, 3])
    (g,) = tf.gradients(tf.reduce_sum(tf.reduce_prod(x, axis=1)), x)
    x0 = np.array([[2.0, 3.0, 4.0], [0.0, 3.0, 5.0], [0.0, 0.0, 7.0]])
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: x0}),
                                   [[12.0, 8.0, 6.0], [15.0, 0.0, 0.0], [0.0, 0.0, 0.0]])


def test_missing_gradient_rule_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(registry.lookup("Tanh"), "grad", None)
    x = tf.placeholder(tf.float32, [2])
    y = tf.tanh(x, name="squash")  # the line the error must point at
    with pytest.raises(LookupError) as info:
        tf.gradients(y * 2.0, x)
    message = str(info.value)
    assert "No gradient defined for operation 'squash' (Tanh)" in message
    assert "test_gradients.py" in message and "tf.tanh(x, name=\"squash\")" in message
    # an op that no gradient has to flow through needs no rule
    assert tf.gradients(y * 2.0 + x, tf.placeholder(tf.float32)) == [None]


def test_bad_arguments():
    x = tf.placeholder(tf.float64, [2])
    with pytest.raises(TypeError, match="xs"):
        tf.gradients(x, [np.ones(2)])
    other = tf.Graph()
    with other.as_default():
        z = tf.placeholder(tf.float64, [2])
    with pytest.raises(ValueError, match="different graph"):
        tf.gradients(x, z)


def test_long_chain_differentiates_and_runs():
    n = 100_000
    x = tf.placeholder(tf.float64, [3])
    h = x
    for _ in range(n):
        h = -h
    start = time.process_time()  # CPU time of this process: other load does not count
    (g,) = tf.gradients(tf.reduce_sum(h), x)
    elapsed = time.process_time() - start
    assert elapsed < 30, f"differentiating a {n}-op chain took {elapsed:.1f}s"
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(g, {x: np.arange(3.0)}), np.ones(3))
