"""Eager dispatch cost, counted in Python-level calls (load-independent, unlike wall time): an
eager `a + b` of two eager tensors must not pay for scopes or operand conversion."""

import sys

import numpy as np

import graphflow as tf
from graphflow.engine import eager

MAX_CALLS_PER_ADD = 15  # measured 14 (30 before the two-tensor paths)


def _calls(fn):
    count = [0]

    def profile(frame, event, arg):
        if event == "call":
            count[0] += 1
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count[0]


def test_eager_add_python_calls_are_bounded():
    eager.enable()
    try:
        a = tf.constant(np.arange(10, dtype=np.float32))
        b = tf.constant(np.ones(10, dtype=np.float32))
        for _ in range(3):
            a + b  # warm the kernel cache
        calls = _calls(lambda: a + b)
        assert calls <= MAX_CALLS_PER_ADD, calls
        np.testing.assert_allclose((a + b).numpy(), np.arange(10) + 1)
        # a Python operand still goes through the scope and takes the tensor's dtype
        c = a + 1
        assert c.dtype == tf.float32
        np.testing.assert_allclose(c.numpy(), np.arange(10) + 1)
    finally:
        eager.disable()


def test_graph_add_of_two_tensors_keeps_its_name():
    with tf.Graph().as_default():
        x = tf.constant(1.0)
        y = tf.constant(2.0)
        assert tf.add(x, y).op.name == "Add"
        assert tf.add(x, y, name="s").op.name == "s"
        with tf.Session() as sess:
            assert sess.run(tf.add(x, y)) == 3.0
