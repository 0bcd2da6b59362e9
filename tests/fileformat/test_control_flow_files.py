"""Graphs with control flow saved to one .gfz file: loaded and run in a fresh Python process (no
building code there), run with the `graphflow run` command, and differentiated after loading."""

import json
import subprocess
import sys

import numpy as np

import graphflow as tf

X = np.linspace(-1, 1, 5 * 2 * 3).reshape(5, 2, 3).astype(np.float32)


def _rnn_model(path):
    """A TensorArray-fed recurrent loop (variables created inside the body), a data-dependent
    while_loop and a cond; saved with its variable values. Returns the expected outputs."""
    x = tf.placeholder(tf.float32, [None, 2, 3], name="x")
    steps = tf.shape(x)[0]
    inputs = tf.TensorArray(tf.float32, size=steps).unstack(x)

    def body(t, h, out):
        with tf.variable_scope("cell", reuse=tf.AUTO_REUSE):
            w = tf.get_variable("w", [3, 4], initializer=tf.random_normal_initializer(seed=1))
            u = tf.get_variable("u", [4, 4], initializer=tf.random_normal_initializer(seed=2))
        h = tf.tanh(tf.matmul(inputs.read(t), w) + tf.matmul(h, u))
        return t + 1, h, out.write(t, h)
    _, h, out = tf.while_loop(lambda t, h, o: t < steps, body,
                              [tf.constant(0), tf.zeros([2, 4]), tf.TensorArray(tf.float32,
                                                                                size=steps)])
    outputs = tf.identity(out.stack(), name="outputs")
    doublings = tf.while_loop(lambda n, v: v < 50.0, lambda n, v: (n + 1, v * 2.0),
                              [tf.constant(0), tf.reduce_sum(tf.abs(h)) + 1.0])[0]
    sign = tf.cond(tf.reduce_sum(h) > 0, lambda: tf.constant(1.0), lambda: tf.constant(-1.0))
    (grad_x,) = tf.gradients(tf.reduce_sum(outputs * outputs), x)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        fetches = {"outputs": outputs, "doublings": doublings, "sign": sign, "grad_x": grad_x}
        expected = sess.run(fetches, {x: X})
        tf.save(str(path), {"x": x}, fetches, session=sess)
    return expected


_LOAD_AND_RUN = """
import json, sys
import numpy as np
import graphflow as tf
model = tf.load(sys.argv[1])
out = model.run({"x": np.load(sys.argv[2])})
print(json.dumps({k: np.asarray(v).tolist() for k, v in out.items()}))
"""


def test_load_and_run_in_a_fresh_process(tmp_path):
    path = tmp_path / "rnn.gfz"
    expected = _rnn_model(path)
    np.save(tmp_path / "x.npy", X)
    result = subprocess.run([sys.executable, "-c", _LOAD_AND_RUN, str(path),
                             str(tmp_path / "x.npy")], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    for name, want in expected.items():
        np.testing.assert_array_equal(np.asarray(got[name], dtype=np.asarray(want).dtype), want,
                                      err_msg=name)


def test_graphflow_run_on_a_saved_loop(tmp_path):
    path = tmp_path / "rnn.gfz"
    expected = _rnn_model(path)
    np.save(tmp_path / "x.npy", X)
    out = tmp_path / "out.npz"
    result = subprocess.run([sys.executable, "-m", "graphflow.tools.cli", "run", str(path),
                             "--input", f"x={tmp_path / 'x.npy'}", "--output", str(out)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    with np.load(out, allow_pickle=False) as saved:
        for name, want in expected.items():
            assert saved[name].tobytes() == np.asarray(want).tobytes(), name


def test_a_loaded_loop_can_be_differentiated_again(tmp_path):
    x = tf.placeholder(tf.float64, [3], name="x")
    y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.sin(y) * x),
                      [tf.constant(0), x])[1]
    z = tf.cond(tf.reduce_sum(x) > 0, lambda: y * 2.0, lambda: y)
    with tf.Session() as sess:
        tf.save(str(tmp_path / "m.gfz"), {"x": x}, {"z": z}, session=sess)
    tf.reset_default_graph()
    model = tf.load(str(tmp_path / "m.gfz"))
    with model.graph.as_default():
        x2, z2 = model.inputs["x"], model.outputs["z"]
        (g,) = tf.gradients(tf.reduce_sum(z2), x2)
        xv = np.array([0.3, 0.5, -0.1])
        with tf.Session(graph=model.graph) as sess:
            gv = sess.run(g, {x2: xv})
            eps = 1e-6
            fd = [(sess.run(tf.reduce_sum(z2), {x2: xv + eps * e})
                   - sess.run(tf.reduce_sum(z2), {x2: xv - eps * e})) / (2 * eps)
                  for e in np.eye(3)]
    np.testing.assert_allclose(gv, fd, rtol=1e-6)
