"""Tests for graphflow/ops/linalg_solve_ops.py beyond the op cases: the solvers, matrix_solve_ls
(both paths) and slogdet, values and gradients against TensorFlow's numbers (recorded, and live
with GRAPHFLOW_TF_PYTHON); TF's run-time behaviour on singular inputs; shapes and errors."""

import json
import pathlib
import sys

import numpy as np
import pytest

import graphflow as tf
from tests.ops.linalg_tf_program import REFERENCE, linalg_program

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from tf_reference import run_in_tensorflow, tf_python  # noqa: E402

PREFIXES = ("solve", "tri_", "slogdet", "logdet", "cholesky_solve", "lstsq")


@pytest.fixture(scope="module")
def graphflow_numbers():
    with tf.Graph().as_default():
        return linalg_program(tf, np)


def _compare(got, want):
    keys = [k for k in want if k.startswith(PREFIXES)]
    assert len(keys) > 20
    for key in keys:
        np.testing.assert_allclose(got[key], np.asarray(want[key]), rtol=1e-7, atol=1e-9,
                                   err_msg=key)


def test_solvers_and_gradients_match_tensorflow_recorded(graphflow_numbers):
    _compare(graphflow_numbers, json.loads(REFERENCE.read_text()))


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_solvers_and_gradients_match_tensorflow_live(graphflow_numbers):
    _compare(graphflow_numbers, run_in_tensorflow([("r", linalg_program, {})])["r"])


def test_singular_matrix_solve_fails_and_a_zero_pivot_gives_inf_as_in_tensorflow():
    a = tf.placeholder(tf.float64, [2, 2])
    b = tf.constant([[1.0], [2.0]], tf.float64)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="not invertible"):
            sess.run(tf.matrix_solve(a, b), {a: [[1.0, 2.0], [2.0, 4.0]]})
        x = sess.run(tf.matrix_triangular_solve(a, b), {a: [[1.0, 0.0], [1.0, 0.0]]})
    assert x[0, 0] == 1.0 and np.isinf(x[1, 0])


def test_triangular_solve_broadcasts_batch_dimensions_and_reads_one_triangle():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 1, 3, 3)) + 4 * np.eye(3)
    b = rng.standard_normal((5, 3, 2))
    out = tf.matrix_triangular_solve(a, b, lower=False)
    assert out.shape.as_list() == [2, 5, 3, 2]
    with tf.Session() as sess:
        got = sess.run(out)
    np.testing.assert_allclose(np.triu(a) @ got, np.broadcast_to(b, (2, 5, 3, 2)), atol=1e-12)


def test_matrix_solve_ls_fast_false_is_the_minimum_norm_solution_and_has_no_gradient():
    a = tf.placeholder(tf.float64, [3, 2])
    b = tf.constant(np.ones((3, 1)))
    x = tf.matrix_solve_ls(a, b, fast=False)
    with tf.Session() as sess:
        got = sess.run(x, {a: [[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]})
    np.testing.assert_allclose(got, [[6 / 70], [12 / 70]], rtol=1e-12)  # TF: 0.0857, 0.1714
    with pytest.raises(ValueError, match="fast=False"):
        tf.gradients(x, [a])


def test_slogdet_of_large_matrices_does_not_overflow():
    a = tf.constant(np.diag(np.full(400, 10.0)))
    sign, logabs = tf.linalg.slogdet(a)
    with tf.Session() as sess:
        s, la = sess.run([sign, logabs])
    assert s == 1.0 and la == pytest.approx(400 * np.log(10.0))


def test_linalg_aliases_are_the_tf1_functions():
    assert tf.linalg.solve is tf.matrix_solve
    assert tf.linalg.triangular_solve is tf.matrix_triangular_solve
    assert tf.linalg.lstsq is tf.matrix_solve_ls
    assert tf.linalg.eigh is tf.self_adjoint_eig and tf.linalg.eigvalsh is tf.self_adjoint_eigvals
    assert tf.linalg.svd is tf.svd and tf.linalg.qr is tf.qr
    assert tf.linalg.cholesky_solve is tf.cholesky_solve
    assert tf.linalg.tensor_diag is tf.diag and tf.linalg.tensor_diag_part is tf.diag_part
    assert tf.linalg.matrix_transpose is tf.matrix_transpose
    assert tf.linalg.l2_normalize is tf.nn.l2_normalize and tf.linalg.global_norm is tf.global_norm


def test_bad_inputs_name_the_op():
    with pytest.raises(ValueError, match="MatrixSolve op .*rows"):
        tf.matrix_solve(tf.zeros([3, 3]), tf.zeros([4, 1]))
    with pytest.raises(ValueError, match="same batch dimensions"):
        tf.matrix_solve(tf.zeros([2, 3, 3]), tf.zeros([5, 3, 1]))
    with pytest.raises(ValueError, match="square"):
        tf.matrix_triangular_solve(tf.zeros([3, 2]), tf.zeros([3, 1]))
    with pytest.raises(TypeError, match="expected float32"):
        tf.matrix_solve(tf.zeros([2, 2]), tf.zeros([2, 1], tf.float64))
    with pytest.raises(ValueError, match="known when the graph is built"):
        tf.matrix_solve_ls(tf.placeholder(tf.float32), tf.zeros([2, 1]))
    x, y = tf.placeholder(tf.float64, [2, 2]), tf.placeholder(tf.float64)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="does not fit"):
        sess.run(tf.matrix_solve(x, y), {x: np.eye(2), y: np.ones((3, 1))})


@pytest.mark.parametrize("shape", [(5, 3), (2, 4)], ids=["deep", "wide"])
def test_matrix_solve_ls_op_with_fast_true_matches_the_composite(shape):
    """A MatrixSolveLs op with fast=True (as TensorFlow's graphs hold it): its kernel and its
    gradient rule against the differentiable composite tf.matrix_solve_ls builds."""
    from graphflow.ops.registry import make_tensor
    rng = np.random.default_rng(3)
    a0, b0 = rng.standard_normal(shape), rng.standard_normal((shape[0], 2))
    a, b = tf.placeholder(tf.float64, shape), tf.placeholder(tf.float64, [shape[0], 2])
    l2 = tf.constant(0.25, tf.float64)
    op_out = make_tensor("MatrixSolveLs", (a, b, l2), {"fast": True})
    composite = tf.matrix_solve_ls(a, b, l2_regularizer=0.25)
    w = tf.constant(rng.standard_normal((shape[1], 2)))
    grads_op = tf.gradients(tf.reduce_sum(op_out * w), [a, b])
    grads_composite = tf.gradients(tf.reduce_sum(composite * w), [a, b])
    with tf.Session() as sess:
        got, want, g_op, g_comp = sess.run([op_out, composite, grads_op, grads_composite],
                                           {a: a0, b: b0})
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    for x, y in zip(g_op, g_comp):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)
