"""Tests for graphflow/ops/linalg_decomp_ops.py beyond the op cases: svd, qr and
self_adjoint_eig values and gradients against TensorFlow's numbers (recorded, and live with
GRAPHFLOW_TF_PYTHON), the factorizations' identities, the empty u/v of compute_uv=False, and
the gradients TF leaves undefined."""

import json
import pathlib
import sys

import numpy as np
import pytest

import graphflow as tf
from tests.ops.linalg_tf_program import REFERENCE, linalg_program

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from tf_reference import run_in_tensorflow, tf_python  # noqa: E402

PREFIXES = ("svd", "qr", "eig")


@pytest.fixture(scope="module")
def graphflow_numbers():
    with tf.Graph().as_default():
        return linalg_program(tf, np)


def _compare(got, want, prefixes):
    keys = [k for k in want if k.startswith(prefixes)]
    assert keys
    for key in keys:
        np.testing.assert_allclose(got[key], np.asarray(want[key]), rtol=1e-7, atol=1e-9,
                                   err_msg=key)


def test_decompositions_and_gradients_match_tensorflow_recorded(graphflow_numbers):
    _compare(graphflow_numbers, json.loads(REFERENCE.read_text()), PREFIXES)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_decompositions_and_gradients_match_tensorflow_live(graphflow_numbers):
    _compare(graphflow_numbers, run_in_tensorflow([("r", linalg_program, {})])["r"], PREFIXES)


def test_factorizations_reconstruct_their_input():
    a = np.random.default_rng(0).standard_normal((2, 5, 3))
    x = tf.placeholder(tf.float64, [None, None, None])
    s, u, v = tf.svd(x, full_matrices=True)
    q, r = tf.linalg.qr(x)
    e, w = tf.linalg.eigh(tf.matmul(x, x, transpose_a=True))
    with tf.Session() as sess:
        s, u, v, q, r, e, w = sess.run([s, u, v, q, r, e, w], {x: a})
    assert u.shape == (2, 5, 5) and v.shape == (2, 3, 3) and s.shape == (2, 3)
    np.testing.assert_allclose(u[..., :3] * s[:, None, :] @ np.swapaxes(v, 1, 2), a, atol=1e-12)
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose(np.tril(r), np.triu(np.tril(r)), atol=0)  # r upper triangular
    gram = np.swapaxes(a, 1, 2) @ a
    np.testing.assert_allclose(w * e[:, None, :] @ np.swapaxes(w, 1, 2), gram, atol=1e-12)
    assert np.all(np.diff(e, axis=-1) >= 0) and np.all(np.diff(s, axis=-1) <= 0)


def test_static_shapes():
    x = tf.zeros([7, 4, 6])
    s, u, v = tf.svd(x)
    assert [s.shape.as_list(), u.shape.as_list(), v.shape.as_list()] == \
        [[7, 4], [7, 4, 4], [7, 6, 4]]
    op = tf.svd(x, compute_uv=False).op
    assert op.outputs[1].shape.as_list() == [0] and op.outputs[2].shape.as_list() == [0]
    q, r = tf.qr(x, full_matrices=True)
    assert q.shape.as_list() == [7, 4, 4] and r.shape.as_list() == [7, 4, 6]
    e, w = tf.self_adjoint_eig(tf.zeros([2, 3, 3]))
    assert e.shape.as_list() == [2, 3] and w.shape.as_list() == [2, 3, 3]


def test_compute_uv_false_gives_empty_u_and_v():
    op = tf.svd(tf.ones([2, 3]), compute_uv=False).op
    with tf.Session() as sess:
        _, u, v = sess.run(op.outputs)
    assert u.shape == (0,) and v.shape == (0,)


def test_gradients_tensorflow_leaves_undefined_are_errors():
    deep = tf.placeholder(tf.float64, [4, 2])
    with pytest.raises(NotImplementedError, match="full_matrices"):
        tf.gradients(tf.qr(deep, full_matrices=True)[0], [deep])
    x = tf.placeholder(tf.float64, [5, 2])
    with pytest.raises(NotImplementedError, match=r"\|m - n\| > 1"):
        tf.gradients(tf.svd(x, full_matrices=True)[1], [x])
    y = tf.placeholder(tf.float64)
    with pytest.raises(NotImplementedError, match="known when the graph is built"):
        tf.gradients(tf.svd(y)[1], [y])


def test_bad_inputs_name_the_op():
    with pytest.raises(ValueError, match="Svd op .*rank >= 2"):
        tf.svd(tf.zeros([3]))
    with pytest.raises(TypeError, match="float32, float64"):
        tf.qr(tf.zeros([2, 2], tf.int32))
    with pytest.raises(ValueError, match="square"):
        tf.self_adjoint_eig(tf.zeros([2, 3]))
