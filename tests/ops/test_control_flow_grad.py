"""Gradients through tf.while_loop, tf.cond, TensorArray and map_fn/scan/foldl/foldr: each checked
against central finite differences AND against the same computation unrolled in Python (the
ordinary ops, no control flow), in float64."""

import numpy as np
import pytest

import graphflow as tf

F64 = tf.float64


def _finite_differences(sess, loss, x, feed, value, eps=1e-6):
    """d loss / d x by central differences, x a placeholder fed `value`."""
    grad = np.zeros_like(value)
    for idx in np.ndindex(value.shape):
        plus, minus = value.copy(), value.copy()
        plus[idx] += eps
        minus[idx] -= eps
        grad[idx] = (sess.run(loss, {**feed, x: plus}) - sess.run(loss, {**feed, x: minus})) / (
            2 * eps)
    return grad


def _check(loss_fn, values, rtol=1e-6, atol=1e-8, extra_feed=None):
    """loss_fn(*placeholders, unrolled: bool) -> scalar; compares the loop's gradient with finite
    differences and with the unrolled computation's gradient."""
    phs = [tf.placeholder(F64, v.shape) for v in values]
    loss = loss_fn(*phs, unrolled=False)
    grads = tf.gradients(loss, phs)
    unrolled = loss_fn(*phs, unrolled=True)
    unrolled_grads = tf.gradients(unrolled, phs)
    feed = dict(zip(phs, values), **(extra_feed or {}))
    with tf.Session() as sess:
        got = sess.run(grads, feed)
        np.testing.assert_allclose(sess.run(loss, feed), sess.run(unrolled, feed), rtol=1e-12)
        want = sess.run(unrolled_grads, feed)
        for g, w, ph, v in zip(got, want, phs, values):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(g, _finite_differences(sess, loss, ph, feed, v),
                                       rtol=rtol, atol=atol)
    return got


def _rnn(x, w, u, h0, steps, unrolled, maximum_iterations=None):
    """h_t = tanh(h_{t-1} w + x_t u); loss = sum over t of sum(h_t * c_t)."""
    c = tf.constant(np.linspace(-1, 1, 2 * 3).reshape(2, 3))
    if unrolled:
        h, total = h0, tf.constant(0.0, F64)
        for t in range(steps):
            h = tf.tanh(tf.matmul(h, w) + tf.matmul(x[t], u))
            total = total + tf.reduce_sum(h * c)
        return total
    xs = tf.TensorArray(F64, size=tf.shape(x)[0]).unstack(x)

    def body(t, h, out):
        h = tf.tanh(tf.matmul(h, w) + tf.matmul(xs.read(t), u))
        return t + 1, h, out.write(t, h)
    n = tf.placeholder_with_default(np.int32(steps), [])
    _, _, out = tf.while_loop(lambda t, h, o: t < n, body,
                              [tf.constant(0), h0, tf.TensorArray(F64, size=n)],
                              maximum_iterations=maximum_iterations)
    return tf.reduce_sum(out.stack() * c)


@pytest.mark.parametrize("steps", [1, 4])
def test_rnn_loop_with_tensor_arrays(steps):
    rng = np.random.default_rng(0)
    values = [rng.standard_normal((steps, 2, 4)) * 0.5, rng.standard_normal((3, 3)) * 0.5,
              rng.standard_normal((4, 3)) * 0.5, rng.standard_normal((2, 3)) * 0.5]
    _check(lambda x, w, u, h0, unrolled: _rnn(x, w, u, h0, steps, unrolled), values)


def test_maximum_iterations_cuts_the_gradient_too():
    rng = np.random.default_rng(1)

    def loss(x, w, unrolled):
        if unrolled:
            for _ in range(3):
                x = tf.sin(x * w)
            return tf.reduce_sum(x)
        _, y = tf.while_loop(lambda i, y: True, lambda i, y: (i + 1, tf.sin(y * w)),
                             [tf.constant(0), x], maximum_iterations=3)
        return tf.reduce_sum(y)
    _check(loss, [rng.standard_normal(3), rng.standard_normal(3)])


def test_data_dependent_trip_count():
    """v doubles-ish until it passes 10: the number of iterations depends on x."""
    def loss(x, unrolled, count=None):
        if unrolled:
            v = x
            for _ in range(count):
                v = v * (x + 1.0)
            return v
        return tf.while_loop(lambda v: v < 10.0, lambda v: v * (x + 1.0), [x])
    for x0 in (1.2, 0.3):
        count, v = 0, x0
        while v < 10.0:
            count, v = count + 1, v * (x0 + 1.0)
        assert count == {1.2: 3, 0.3: 14}[x0]
        x = tf.placeholder(F64, [])
        y = loss(x, False)
        (g,) = tf.gradients(y, x)
        (gu,) = tf.gradients(loss(x, True, count), x)
        with tf.Session() as sess:
            got, want = sess.run([g, gu], {x: x0})
            fd = _finite_differences(sess, y, x, {}, np.array(x0))
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(got, fd, rtol=1e-6)


def test_variables_read_in_a_body_get_gradients_and_train():
    x = tf.constant(np.array([0.5, -1.0, 2.0]))
    w = tf.Variable(np.float64(0.7))
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * w + x),
                         [tf.constant(0), tf.zeros([3], F64)])
    loss = tf.reduce_sum(y * y)
    (g,) = tf.gradients(loss, [w])
    step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        gv = sess.run(g)
        wv = 0.7
        # y3 = x (w^2 + w + 1): dL/dw = 2 sum(y3 * x) (2w + 1)
        y3 = np.array([0.5, -1.0, 2.0]) * (wv ** 2 + wv + 1)
        np.testing.assert_allclose(gv, 2 * np.sum(y3 * np.array([0.5, -1, 2])) * (2 * wv + 1))
        sess.run(step)
        np.testing.assert_allclose(sess.run(w), wv - 0.01 * gv)


def test_nested_loops_and_cond_in_a_loop():
    def loss(x, unrolled):
        if unrolled:
            total = tf.constant(0.0, F64)
            for i in range(3):
                inner = x
                for _ in range(i + 1):
                    inner = tf.sin(inner)
                total = total + (tf.reduce_sum(inner * x) if i % 2 == 0
                                 else tf.reduce_sum(inner) * 2.0)
            return total

        def outer(i, total):
            _, inner = tf.while_loop(lambda j, v: j <= i, lambda j, v: (j + 1, tf.sin(v)),
                                     [tf.constant(0), x])
            part = tf.cond(tf.equal(i % 2, 0), lambda: tf.reduce_sum(inner * x),
                           lambda: tf.reduce_sum(inner) * 2.0)
            return i + 1, total + part
        return tf.while_loop(lambda i, t: i < 3, outer, [tf.constant(0),
                                                          tf.constant(0.0, F64)])[1]
    _check(loss, [np.array([0.3, -0.8])])


def test_stop_gradient_and_back_prop_false():
    x = tf.placeholder(F64, [])
    _, y = tf.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, y * tf.stop_gradient(x)),
                         [tf.constant(0), x])
    (g,) = tf.gradients(y, x)  # y = x * x * x with two factors cut: dy/dx = x^2
    z = tf.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, y * x), [tf.constant(0), x],
                      back_prop=False)[1]
    assert tf.gradients(z, x) == [None]
    with tf.Session() as sess:
        assert sess.run(g, {x: 3.0}) == 9.0


# ------------------------------------------------------------------------------ cond
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_gradient(sign):
    def loss(x, y, unrolled):
        def true_fn():
            return tf.reduce_sum(tf.sin(x) * y), x * 2.0

        def false_fn():
            return tf.reduce_sum(x * x * x), y - x
        if unrolled:
            a, b = true_fn() if sign > 0 else false_fn()
        else:
            a, b = tf.cond(tf.reduce_sum(x) * sign > -100.0 * sign, true_fn, false_fn)
        return a + tf.reduce_sum(b * b)
    _check(loss, [np.array([0.4, -0.3]), np.array([1.5, 0.2])])


def test_gradient_of_a_gradient_through_cond():
    x = tf.placeholder(F64, [])
    y = tf.cond(x > 0.0, lambda: x * x * x, lambda: tf.sin(x))
    (g,) = tf.gradients(y, x)
    (h,) = tf.gradients(g, x)
    (third,) = tf.gradients(h, x)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run([g, h, third], {x: 2.0}), [12.0, 12.0, 6.0])
        np.testing.assert_allclose(sess.run([g, h, third], {x: -0.5}),
                                   [np.cos(-0.5), -np.sin(-0.5), -np.cos(-0.5)])
        fd = _finite_differences(sess, g, x, {}, np.array(0.7))
        np.testing.assert_allclose(sess.run(h, {x: 0.7}), fd, rtol=1e-6)


def test_cond_on_a_random_branch_keeps_its_mask_for_the_gradient():
    x = tf.placeholder(F64, [50])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.nn.dropout(x, keep_prob=0.5, seed=3), lambda: x)
    (g,) = tf.gradients(tf.reduce_sum(y), x)
    with tf.Session() as sess:
        yv, gv = sess.run([y, g], {x: np.ones(50), p: True})
        np.testing.assert_array_equal(gv, yv)  # d(x * mask / keep)/dx = mask / keep = y at x=1
        assert sess.run(g, {x: np.ones(50), p: False}).tolist() == [1.0] * 50


# ------------------------------------------------------------------------------ map_fn, scan, folds
def test_map_fn_scan_and_folds_gradients():
    def loss(x, unrolled):
        rows = [x[i] for i in range(3)]
        if unrolled:
            mapped = tf.stack([tf.sin(r) * r for r in rows])
            acc, scanned = rows[0], [rows[0]]
            for r in rows[1:]:
                acc = acc * r + 1.0
                scanned.append(acc)
            left = tf.zeros([2], F64)
            for r in rows:
                left = left * 0.5 + r * r
            right = rows[2]
            for r in rows[1::-1]:
                right = tf.tanh(right + r)
            return (tf.reduce_sum(mapped) + tf.reduce_sum(tf.stack(scanned) ** 2)
                    + tf.reduce_sum(left) + tf.reduce_sum(right))
        mapped = tf.map_fn(lambda r: tf.sin(r) * r, x)
        scanned = tf.scan(lambda a, r: a * r + 1.0, x)
        left = tf.foldl(lambda a, r: a * 0.5 + r * r, x, initializer=tf.zeros([2], F64))
        right = tf.foldr(lambda a, r: tf.tanh(a + r), x)
        return (tf.reduce_sum(mapped) + tf.reduce_sum(scanned ** 2) + tf.reduce_sum(left)
                + tf.reduce_sum(right))
    _check(loss, [np.random.default_rng(5).standard_normal((3, 2))])


def test_map_fn_over_a_nest_with_dtype():
    x = tf.constant(np.arange(6.0).reshape(3, 2))
    n = tf.constant([1, 2, 3])
    out = tf.map_fn(lambda e: (e[0] * tf.cast(e[1], F64), e[1] * 2), (x, n),
                    dtype=(F64, tf.int32))
    with tf.Session() as sess:
        a, b = sess.run(out)
    np.testing.assert_allclose(a, np.arange(6.0).reshape(3, 2) * [[1], [2], [3]])
    np.testing.assert_array_equal(b, [2, 4, 6])


def test_dropout_in_a_loop_body_keeps_each_iterations_mask_for_the_gradient():
    x = tf.placeholder(F64, [200])
    _, y = tf.while_loop(lambda i, y: i < 3,
                         lambda i, y: (i + 1, tf.nn.dropout(y, keep_prob=0.5) * x),
                         [tf.constant(0), tf.ones([200], F64)])
    (g,) = tf.gradients(tf.reduce_sum(y), x)
    with tf.Session() as sess:
        yv, gv = sess.run([y, g], {x: np.ones(200)})
    # with x = 1: y = m1 m2 m3 / keep^3 and dy/dx = 3 y (each factor of x carries the same masks)
    assert 0 < np.count_nonzero(yv) < 200
    np.testing.assert_allclose(gv, 3 * yv)


def test_dense_layer_inside_a_loop_creates_its_variables_once_and_trains():
    tf.set_random_seed(3)  # the same initial weights whichever tests ran before
    x = tf.placeholder(tf.float32, [4, 3])

    def body(i, h):
        return i + 1, tf.layers.dense(h, 3, activation=tf.tanh, name="shared",
                                      reuse=tf.AUTO_REUSE)
    _, h = tf.while_loop(lambda i, h: i < 3, body, [tf.constant(0), x])
    loss = tf.reduce_sum(h * h)
    names = sorted(v.name for v in tf.trainable_variables())
    assert names == ["shared/bias:0", "shared/kernel:0"]
    step = tf.train.GradientDescentOptimizer(0.02).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
        before = sess.run(loss, {x: xv})
        for _ in range(5):
            sess.run(step, {x: xv})
        assert sess.run(loss, {x: xv}) < before


def test_a_first_order_cond_gradient_reads_kept_values_and_recomputes_nothing():
    x = tf.placeholder(F64, [3])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.exp(tf.sin(x)), lambda: x)
    tf.gradients(tf.reduce_sum(y), x)
    grad_if = next(op for op in tf.get_default_graph().get_operations()
                   if op.type == "If" and op.name.startswith("gradients"))
    branch_types = {op.type for op in grad_if.attrs["then_branch"].get_operations()}
    assert "Cos" in branch_types and not {"Sin", "Exp"} & branch_types


def test_a_second_derivative_through_a_while_loop_is_a_clear_error():
    """d2/dx2 of x**3 computed in a loop: not supported; the error names the loop's gradient op,
    the loop and the user's lines that built them, and says what to do instead. The same
    computation unrolled in Python has its second derivative (6x)."""
    x = tf.placeholder(F64, [])
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x),
                         [tf.constant(0), tf.constant(1.0, F64)])
    (g,) = tf.gradients(y, x)
    with pytest.raises(LookupError) as info:
        tf.gradients(g, x)
    message = str(info.value)
    assert "No second derivative through tf.while_loop" in message
    assert "(WhileGrad)" in message and "'while/While' (While)" in message
    assert message.count("test_control_flow_grad.py") == 3  # the loop, both tf.gradients calls
    assert "unrolled" in message
    with pytest.raises(LookupError, match="No second derivative through tf.while_loop"):
        tf.hessians(y, x)
    unrolled = x * x * x
    (hessian,) = tf.gradients(tf.gradients(unrolled, x)[0], x)
    with tf.Session() as sess:
        assert sess.run(g, {x: 2.0}) == 12.0  # the first derivative still works
        assert sess.run(hessian, {x: 2.0}) == 12.0


def test_case_gradients_with_its_run_time_checks():
    """exclusive=True and the asserted default (no default given) put an Assert before the
    result; gradients still flow through the taken branch."""
    x = tf.placeholder(F64, [])
    y = tf.case([(x > 0, lambda: x * x), (x < -1, lambda: -x)], default=lambda: 3 * x,
                exclusive=True)
    z = tf.case([(x > 0, lambda: x * x), (x <= 0, lambda: -x)])
    (g,) = tf.gradients([y, z], x)
    with tf.Session() as sess:
        # x = 2: 2x + 2x; x = -2: -1 - 1; x = -0.5: 3 - 1
        assert [sess.run(g, {x: v}) for v in (2.0, -2.0, -0.5)] == [8.0, -2.0, 2.0]
        fd = _finite_differences(sess, y + z, x, {}, np.array(-0.5))
    np.testing.assert_allclose(fd, 2.0, rtol=1e-6)


def test_nested_conds_build_in_linear_time_and_keep_their_second_derivative():
    """Building a cond prepares its gradient, not the gradient's gradient (preparing every order
    made each level of nesting cost about 1.5x the one inside it)."""
    import time
    x = tf.placeholder(F64, [])
    depth = 18

    def nested(level):  # x ** (level + 1), each level's cond inside the previous one's branch
        if level == 0:
            return x
        return tf.cond(x > -100.0, lambda: nested(level - 1) * x, lambda: x ** (level + 1))
    start = time.monotonic()
    y = nested(depth)
    assert time.monotonic() - start < 10
    (g,) = tf.gradients(y, x)
    (h,) = tf.gradients(g, x)
    with tf.Session() as sess:
        n = depth + 1
        np.testing.assert_allclose(sess.run([y, g, h], {x: 1.1}),
                                   [1.1 ** n, n * 1.1 ** (n - 1), n * (n - 1) * 1.1 ** (n - 2)])
