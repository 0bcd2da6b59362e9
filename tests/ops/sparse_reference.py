"""Comparing a sparse program's graphflow results with TensorFlow's: the recorded numbers of
data/tf_sparse_reference.json, and live ones when GRAPHFLOW_TF_PYTHON names a Python with
TensorFlow (tests/tf_reference.py)."""

import json
import pathlib

import numpy as np

import graphflow as tf
from tests.ops.sparse_programs import PROGRAMS
from tests.tf_reference import run_in_tensorflow

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "tf_sparse_reference.json")
                      .read_text())


def recorded(key):
    """{name: array} TensorFlow gave for program `key`, with its dtypes and shapes."""
    return {name: _array(entry) for name, entry in RECORDED[key].items()}


def _array(entry):
    if entry["dtype"] == "bytes":
        values = np.array([v.encode() for v in entry["values"]], dtype="S")
    else:
        values = np.array(entry["values"], dtype=entry["dtype"])
    return values.reshape(entry["shape"])


def run_graphflow(key):
    with tf.Graph().as_default():
        return PROGRAMS[key](tf, np)


def run_tensorflow(key):
    return run_in_tensorflow([(key, PROGRAMS[key], {})])[key]


def assert_same(got, want, names=None, rtol=1e-6):
    """Every name of `want` (or of `names`) has the same dtype, shape and values in `got`."""
    assert set(got) == set(want), sorted(set(got) ^ set(want))
    for name in names or sorted(want):
        g, w = np.asarray(got[name]), np.asarray(want[name])
        assert g.shape == w.shape, f"{name}: shape {g.shape} != TensorFlow's {w.shape}"
        if w.dtype.kind in "fc":
            assert g.dtype == w.dtype, f"{name}: dtype {g.dtype} != TensorFlow's {w.dtype}"
            np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-12, err_msg=name)
        else:
            assert g.dtype == w.dtype, f"{name}: dtype {g.dtype} != TensorFlow's {w.dtype}"
            np.testing.assert_array_equal(g, w, err_msg=name)


def check_gradient(build, arrays, delta=1e-6, rtol=1e-6):
    """`build(*placeholders) -> scalar loss` over float64 placeholders fed `arrays`: the gradient
    of each from tf.gradients equals central finite differences."""
    with tf.Graph().as_default():
        xs = [tf.placeholder(tf.float64, np.shape(a)) for a in arrays]
        loss = build(*xs)
        grads = [tf.convert_to_tensor(g) for g in tf.gradients(loss, xs)]
        with tf.Session() as sess:
            feed = dict(zip(xs, arrays))
            got = sess.run(grads, feed)
            for i, a in enumerate(arrays):
                numeric = np.zeros(np.shape(a))
                for j in np.ndindex(numeric.shape):
                    up, down = np.array(a, np.float64), np.array(a, np.float64)
                    up[j] += delta
                    down[j] -= delta
                    numeric[j] = (sess.run(loss, {**feed, xs[i]: up})
                                  - sess.run(loss, {**feed, xs[i]: down})) / (2 * delta)
                np.testing.assert_allclose(got[i], numeric, rtol=rtol, atol=1e-6,
                                           err_msg=f"gradient of input {i}")
