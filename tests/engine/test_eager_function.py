"""defun / tf.function (graphflow/engine/eager_function.py): traced once per input signature
into a graph run as a plan, differentiable by the tape, saved and run without the code."""

import os
import subprocess
import sys

import numpy as np
import pytest

import graphflow as tf


def _model():
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 10, name="w")
    c = tf.constant([1.0, -1.0])

    def f(x, scale=1.0):
        return tf.nn.relu(tf.matmul(x, w) * scale + c)
    return w, c, f


def test_traces_once_per_signature_and_matches_eager(eager):
    w, c, f = _model()
    g = tf.contrib.eager.defun(f)
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(g(x).numpy(), f(x).numpy())
    g(x), g(x + 1.0)
    assert g.trace_count == 1  # same dtype and shape
    g(x, 2.0)
    assert g.trace_count == 2  # another Python value
    g(tf.ones([4, 3]))
    assert g.trace_count == 3  # another shape
    g(np.ones((4, 3), np.float32))
    assert g.trace_count == 3  # a numpy array is a tensor of its dtype and shape
    w.assign(w * 2)  # the trace reads the variable, not its value at trace time
    np.testing.assert_array_equal(g(x).numpy(), f(x).numpy())


def test_input_signature_traces_once_for_any_batch(eager):
    _, _, f = _model()
    g = tf.function(f, input_signature=[(tf.float32, [None, 3])])
    for n in (1, 5, 2):
        assert g(tf.ones([n, 3])).shape.as_list() == [n, 2]
    assert g.trace_count == 1


def test_tape_differentiates_through_a_call(eager):
    w, _, f = _model()
    g = tf.function(f)
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    grads = []
    for fn in (f, g):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(fn(x) ** 2)
        grads.append([t.numpy() for t in tape.gradient(y, [x, w])])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_a_traced_training_step_updates_variables(eager):
    w = tf.Variable([1.0, -2.0])
    opt = tf.train.GradientDescentOptimizer(0.25)

    @tf.contrib.eager.defun
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w)
        opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
        return loss

    for _ in range(3):
        step()
    np.testing.assert_allclose(w.numpy(), [0.125, -0.25])
    assert step.trace_count == 1


def test_saved_trace_runs_without_the_code(eager, tmp_path):
    _, _, f = _model()
    g = tf.function(f)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    expected = g(x).numpy()
    path = g.get_concrete_function(x).save(str(tmp_path / "f.gfz"))
    loaded = tf.load(path)
    np.testing.assert_array_equal(loaded.run({"x": x})["output_0"], expected)
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    out = subprocess.run([sys.executable, "-m", "graphflow.tools.cli", "run", path, "--input",
                          "x=[[0,1,2],[3,4,5]]", "--raw"], capture_output=True, text=True,
                         env=env, check=True).stdout
    assert "output_0" in out


def test_in_graph_mode_the_function_builds_into_the_graph():
    g = tf.function(lambda x: x * 2.0)
    x = tf.placeholder(tf.float32, [])
    with tf.Session() as sess:
        assert sess.run(g(x), {x: 2.0}) == 4.0


def test_tracing_needs_eager_mode():
    g = tf.function(lambda x: x)
    with pytest.raises(RuntimeError, match="needs eager execution"):
        g.get_concrete_function(np.ones(2, np.float32))
