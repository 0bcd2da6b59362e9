"""Placement with control flow, on the fake GPU of test_placement.py: the loop and branch
bookkeeping (While, If, WhileGrad and the TensorArray ops) stays on the host, the ops inside the
bodies run on the device, and the values agree with the CPU."""

import numpy as np

import graphflow as tf
from graphflow.engine import placement
from tests.engine.test_placement import FakeBackend, _run


def _graph():
    x = tf.placeholder(tf.float32, [4, 3])
    w = tf.Variable(np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3))

    def body(i, h):
        return i + 1, tf.tanh(tf.matmul(h, w) + x)
    _, h = tf.while_loop(lambda i, h: i < 3, body, [tf.constant(0), tf.zeros([4, 3])])
    y = tf.cond(tf.reduce_sum(h) > 0, lambda: h * 2.0, lambda: h - 1.0)
    loss = tf.reduce_sum(y * y)
    (g,) = tf.gradients(loss, [w])
    return x, w, [y, loss, g]


def test_bodies_run_on_the_device_and_bookkeeping_on_the_host():
    x, _, fetches = _graph()
    xv = np.arange(12, dtype=np.float32).reshape(4, 3) / 12
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        want = sess.run(fetches, {x: xv})
    backend = FakeBackend()
    with placement.use_backend(backend), tf.Session(device="/gpu:0") as sess:
        sess.run(tf.global_variables_initializer())
        got, plan_placement = _run(sess, fetches, {x: xv})
    for a, b in zip(want, got):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    hosts = {op.type for op, device in plan_placement.device_of.items() if device == "/cpu:0"}
    assert {"While", "If", "WhileGrad"} <= hosts
    # the body's matmul + add + tanh (fused by the optimizer, which also runs on bodies) ran as a
    # (fake) device kernel, once per iteration
    assert backend.table.calls.count("FusedMatMul") >= 3
