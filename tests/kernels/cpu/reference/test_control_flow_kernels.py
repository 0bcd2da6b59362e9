"""The `WhileGrad` kernel's batched weight gradients: a capture whose per-iteration gradient is
`MatMul(a, b, transpose_a=True)` is summed as ONE product of the iterations' stacked rows after
the loop, one whose gradient is `BiasAddGrad(x)` as ONE column sum of the stacked rows, and a
loop-invariant right operand of `x @ W^T` is fed column-major. Both must give the
gradients of the same computation unrolled in Python (float64, tight tolerances), including for
zero iterations and for rows that change from one iteration to the next."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu.reference.control_flow_kernels import (
    _deferred_column_sums,
    _deferred_products,
    _transposed_operands,
)

F64 = tf.float64


def _while_op(graph):
    (op,) = [op for op in graph.get_operations() if op.type == "While"]
    return op


def _layer_loop(x, w, u, h0, n, unrolled, steps):
    """h_t = tanh(x_t w + h_{t-1} u); loss = sum of all h_t times fixed weights."""
    c = tf.constant(np.linspace(-1.0, 1.0, 6).reshape(2, 3))
    if unrolled:
        h, total = h0, tf.constant(0.0, F64)
        for t in range(steps):
            h = tf.tanh(tf.matmul(x[t], w) + tf.matmul(h, u))
            total = total + tf.reduce_sum(h * c)
        return total

    def body(t, h, total):
        h = tf.tanh(tf.matmul(tf.gather(x, t), w) + tf.matmul(h, u))
        return t + 1, h, total + tf.reduce_sum(h * c)
    _, _, total = tf.while_loop(lambda t, h, s: t < n, body,
                                [tf.constant(0), h0, tf.constant(0.0, F64)])
    return total


@pytest.mark.parametrize("steps", [0, 1, 5])
def test_batched_weight_gradients_match_the_unrolled_loop(steps):
    rng = np.random.default_rng(0)
    values = [rng.standard_normal((max(steps, 1), 2, 4)) * 0.5,
              rng.standard_normal((4, 3)) * 0.5, rng.standard_normal((3, 3)) * 0.5,
              rng.standard_normal((2, 3)) * 0.5]
    graph = tf.Graph()
    with graph.as_default():
        x, w, u, h0 = (tf.placeholder(F64, v.shape) for v in values)
        n = tf.placeholder(tf.int32, [])
        loss = _layer_loop(x, w, u, h0, n, False, steps)
        grads = tf.gradients(loss, [x, w, u, h0])
        want = tf.gradients(_layer_loop(x, w, u, h0, n, True, steps), [x, w, u, h0])
        op = _while_op(graph)
        grad_graph = op.attrs["grad"]
        body = op.attrs["body"]
        diff_caps = [j for j, (_, ph) in enumerate(body.captures) if ph.dtype == F64]
        num_grads = len(grad_graph.inputs)
        deferred = _deferred_products(grad_graph, num_grads, len(grad_graph.outputs) - num_grads)
        # both weights' gradients are batched (w reads x_t, u reads h_{t-1})
        assert {body.captures[diff_caps[i]][0] for i in deferred} == {w, u}
        # w and u are read transposed by the gradients of x_t and h_{t-1} (dz w^T, dz u^T):
        # fed column-major
        transposed = _transposed_operands(grad_graph, op.attrs["grad_sources"])
        weights = {ph for value, ph in body.captures if value is w or value is u}
        assert {grad_graph.captures[j][0] for j in transposed} == weights
        with tf.Session() as sess:
            feed = {**dict(zip([x, w, u, h0], values)), n: steps}
            got = sess.run(grads, feed)
            expected = sess.run([e if e is not None else tf.zeros_like(v)
                                 for e, v in zip(want, [x, w, u, h0])], feed)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)
    if steps == 0:  # no iteration: zero gradients (the unrolled loss is a constant)
        assert not any(g.any() for g in got)


@pytest.mark.parametrize("steps", [0, 1, 5])
@pytest.mark.parametrize("dtype", [F64, tf.float32])
def test_bias_gradients_are_one_column_sum_after_the_loop(steps, dtype):
    """h_t = tanh(bias_add(x_t w + h_{t-1} u, b)), as a recurrent cell adds its bias: b's
    gradient is the column sum of every iteration's activation gradient rows."""
    rng = np.random.default_rng(3)
    np_dtype = dtype.as_numpy_dtype
    values = [(rng.standard_normal(shape) * 0.5).astype(np_dtype)
              for shape in [(max(steps, 1), 2, 4), (4, 3), (3, 3), (3,)]]
    graph = tf.Graph()
    with graph.as_default():
        x, w, u, b = (tf.placeholder(dtype, v.shape) for v in values)
        n = tf.placeholder(tf.int32, [])

        def cell(xt, h):
            return tf.tanh(tf.nn.bias_add(tf.matmul(xt, w) + tf.matmul(h, u), b))

        def body(t, h, total):
            h = cell(tf.gather(x, t), h)
            return t + 1, h, total + tf.reduce_sum(h * h)
        _, _, loss = tf.while_loop(lambda t, h, s: t < n, body,
                                   [tf.constant(0), tf.zeros([2, 3], dtype), tf.constant(0, dtype)])
        h, unrolled = tf.zeros([2, 3], dtype), tf.constant(0, dtype)
        for t in range(steps):
            h = cell(x[t], h)
            unrolled = unrolled + tf.reduce_sum(h * h)
        grads = tf.gradients(loss, [x, w, u, b])
        want = [g if g is not None else tf.zeros_like(v)
                for g, v in zip(tf.gradients(unrolled, [x, w, u, b]), [x, w, u, b])]
        op = _while_op(graph)
        grad_graph = op.attrs["grad"]
        num_grads = len(grad_graph.inputs)
        sums = _deferred_column_sums(grad_graph, num_grads, len(grad_graph.outputs) - num_grads)
        body_graph = op.attrs["body"]
        diff_caps = [j for j, (_, ph) in enumerate(body_graph.captures) if ph.dtype == dtype]
        assert {body_graph.captures[diff_caps[i]][0] for i in sums} == {b}
        with tf.Session() as sess:
            feed = {**dict(zip([x, w, u, b], values)), n: steps}
            got, expected = sess.run([grads, want], feed)
    tight = dict(rtol=1e-12, atol=1e-14) if dtype == F64 else dict(rtol=2e-5, atol=1e-6)
    for g, e in zip(got, expected):
        assert g.dtype == np_dtype
        np.testing.assert_allclose(g, e, **tight)
    if steps == 0:
        assert not got[3].any()


def test_rows_that_change_across_iterations_are_stacked_in_one_product():
    """Iteration t multiplies the first t+1 rows of x by w: the per-iteration row counts
    differ, the batched product must still equal the sum of the small ones."""
    rng = np.random.default_rng(1)
    xv, wv = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    x, w = tf.placeholder(F64, [4, 3]), tf.placeholder(F64, [3, 2])

    def body(t, total):
        rows = x[:t + 1]
        return t + 1, total + tf.reduce_sum(tf.sin(tf.matmul(rows, w)))
    _, loss = tf.while_loop(lambda t, s: t < 4, body, [tf.constant(0), tf.constant(0.0, F64)])
    unrolled = tf.add_n([tf.reduce_sum(tf.sin(tf.matmul(x[:t + 1], w))) for t in range(4)])
    grads = tf.gradients(loss, [x, w])
    want = tf.gradients(unrolled, [x, w])
    with tf.Session() as sess:
        got, expected = sess.run([grads, want], {x: xv, w: wv})
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)


def test_a_weight_read_twice_per_iteration_is_summed_in_the_loop():
    """w is used by two products: its per-iteration gradient is an AddN, not one MatMul, so it
    is not batched; the result is still the unrolled gradient."""
    rng = np.random.default_rng(2)
    xv, wv = rng.standard_normal((3, 2, 2)), rng.standard_normal((2, 2))
    graph = tf.Graph()
    with graph.as_default():
        x, w = tf.placeholder(F64, xv.shape), tf.placeholder(F64, wv.shape)

        def body(t, h):
            xt = tf.gather(x, t)
            return t + 1, tf.tanh(tf.matmul(xt, w) + tf.matmul(h, w))
        _, h = tf.while_loop(lambda t, h: t < 3, body,
                             [tf.constant(0), tf.zeros([2, 2], F64)])
        h_unrolled = tf.zeros([2, 2], F64)
        for t in range(3):
            h_unrolled = tf.tanh(tf.matmul(x[t], w) + tf.matmul(h_unrolled, w))
        grads = tf.gradients(tf.reduce_sum(h), [x, w])
        want = tf.gradients(tf.reduce_sum(h_unrolled), [x, w])
        grad_graph = _while_op(graph).attrs["grad"]
        num_grads = len(grad_graph.inputs)
        assert _deferred_products(grad_graph, num_grads,
                                  len(grad_graph.outputs) - num_grads) == {}
        with tf.Session() as sess:
            got, expected = sess.run([grads, want], {x: xv, w: wv})
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)
