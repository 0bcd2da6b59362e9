"""graphflow's rnn cells and rnn functions against TensorFlow 1's numbers: the same weights (copied by
TF1 variable name, so the names must agree), inputs and sequence lengths through TF1's cells and
dynamic_rnn (run by tf1_rnn_reference.py in a Python that has TensorFlow) and through graphflow's;
outputs, final states and input gradients must match. Skipped where TensorFlow is not installed
(point GRAPHFLOW_TF_PYTHON at a Python that has it)."""

import os
import pathlib
import subprocess

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework import nest

rnn_cell = tf.nn.rnn_cell
TF_PYTHON = os.environ.get("GRAPHFLOW_TF_PYTHON", "")
SCRIPT = pathlib.Path(__file__).with_name("tf1_rnn_reference.py")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    if not os.path.exists(TF_PYTHON):
        pytest.skip("TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON to a Python that has it)")
    work = tmp_path_factory.mktemp("tf1_rnn")
    rng = np.random.default_rng(5)
    x, lengths = rng.standard_normal((3, 4, 2)), np.array([4, 2, 0])
    np.savez(work / "in.npz", x=x, lengths=lengths)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run([TF_PYTHON, str(SCRIPT), str(work / "in.npz"), str(work / "out.npz")],
                          capture_output=True, text=True, env=env, timeout=300)
    if proc.returncode != 0 and "No module named 'tensorflow" in proc.stderr:
        pytest.skip(f"TensorFlow is not importable by {TF_PYTHON}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return x, lengths, dict(np.load(work / "out.npz"))


def _build(kind):
    if kind == "lstm":
        return rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(5, forget_bias=0.7),
                                      rnn_cell.LSTMCell(4, use_peepholes=True, num_proj=3,
                                                        cell_clip=2.0)])
    return rnn_cell.GRUCell(4)


def _static(cell, x, lengths):
    outputs, state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), sequence_length=lengths,
                                      dtype=tf.float64)
    return tf.stack(outputs, axis=1), state


def _dynamic(cell, x, lengths):
    return tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float64)


RUNNERS = {"static_rnn": _static, "dynamic_rnn": _dynamic}


def _compare(reference, kind, runner):
    x_value, lengths, ref = reference
    x = tf.placeholder(tf.float64, x_value.shape)
    outputs, state = RUNNERS[runner](_build(kind), x, lengths)
    flat_state = nest.flatten(state)
    loss = tf.reduce_sum(outputs * outputs) + tf.add_n([tf.reduce_sum(s) for s in flat_state])
    grad_x = tf.gradients(loss, x)[0]
    tf_names = sorted(k.split(":var:")[1] for k in ref if k.startswith(kind + ":var:"))
    assert sorted(v.name[:-2] for v in tf.global_variables()) == tf_names
    with tf.Session() as sess:
        for var in tf.global_variables():
            var.load(ref[f"{kind}:var:{var.name[:-2]}"], sess)
        out_v, state_v, grad_v = sess.run([outputs, flat_state, grad_x], {x: x_value})
    np.testing.assert_allclose(out_v, ref[f"{kind}:outputs"], rtol=1e-9, atol=1e-12)
    for i, s in enumerate(state_v):
        np.testing.assert_allclose(s, ref[f"{kind}:state:{i}"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grad_v, ref[f"{kind}:grad_x"], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_matches_tf1(reference, kind, runner):
    _compare(reference, kind, runner)
