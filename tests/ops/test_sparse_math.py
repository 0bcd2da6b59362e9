"""sparse_tensor_dense_matmul, the sparse reductions, sparse_add, sparse_maximum/minimum and
sparse_softmax: TensorFlow's recorded numbers (tests/ops/sparse_programs.py's math program),
live ones with GRAPHFLOW_TF_PYTHON, gradients by finite differences, numpy on larger random
tensors, and the errors."""

import numpy as np
import pytest

import graphflow as tf
from tests.ops.sparse_reference import assert_same, check_gradient, recorded, run_graphflow, run_tensorflow
from tests.tf_reference import tf_python

INDICES = [[0, 0], [0, 2], [1, 1], [2, 0], [2, 3]]


def test_math_program_gives_tensorflows_recorded_numbers():
    assert_same(run_graphflow("math"), recorded("math"))


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_math_program_against_tensorflow_live():
    assert_same(run_graphflow("math"), run_tensorflow("math"))


@pytest.mark.parametrize("adjoint_a, adjoint_b", [(False, False), (True, False), (False, True),
                                                  (True, True)])
def test_matmul_gradients_by_finite_differences(adjoint_a, adjoint_b):
    rng = np.random.RandomState(0)

    def build(values, dense):
        sp = tf.SparseTensor(INDICES, values, [3, 4])
        product = tf.sparse_tensor_dense_matmul(sp, dense, adjoint_a=adjoint_a,
                                                adjoint_b=adjoint_b)
        return tf.reduce_sum(tf.sin(product))
    b = rng.randn(*{(False, False): (4, 2), (True, False): (3, 2), (False, True): (2, 4),
                    (True, True): (2, 3)}[adjoint_a, adjoint_b])
    check_gradient(build, [rng.randn(5), b])


def test_matmul_of_a_large_random_matrix_matches_numpy():
    rng = np.random.RandomState(1)
    dense = rng.randn(60, 50).astype(np.float32) * (rng.rand(60, 50) < 0.05)
    where = np.argwhere(dense)
    b = rng.randn(60, 7).astype(np.float32)
    sp = tf.sparse_placeholder(tf.float32, [None, 50])
    product = tf.sparse_tensor_dense_matmul(sp, b, adjoint_a=True)
    assert product.shape.as_list() == [50, 7]
    with tf.Session() as sess:
        got = sess.run(product, {sp: (where, dense[tuple(where.T)], [60, 50])})
    np.testing.assert_allclose(got, dense.T @ b, rtol=1e-5, atol=1e-5)


def test_reduce_and_add_gradients_by_finite_differences():
    other = [[0, 0], [0, 1], [1, 1], [2, 3]]

    def build(a_values, d_values):
        a = tf.SparseTensor(INDICES, a_values, [3, 4])
        d = tf.SparseTensor(other, d_values, [3, 4])
        total = tf.sparse_add(a, d, threshold=0.1)
        rows = tf.sparse_reduce_sum(total, axis=1)
        soft = tf.sparse_softmax(total)
        return (tf.reduce_sum(rows ** 2) + tf.reduce_sum(soft.values * tf.range(
            1.0, tf.cast(tf.size(soft.values), tf.float64) + 1.0)))
    check_gradient(build, [np.array([1.0, -2.0, 3.0, 0.5, 4.0]),
                           np.array([2.0, 1.0, -3.0, 0.25])])


def test_reductions_of_a_random_tensor_match_numpy():
    rng = np.random.RandomState(2)
    dense = rng.randn(4, 5, 6) * (rng.rand(4, 5, 6) < 0.3)
    where = np.argwhere(dense)
    sp = tf.SparseTensor(where, dense[tuple(where.T)], dense.shape)
    present = dense != 0
    with tf.Session() as sess:
        for axis in (0, 1, 2, (0, 2), (-1, 1)):
            got, kept = sess.run([tf.sparse_reduce_sum(sp, axis),
                                  tf.sparse_reduce_sum(sp, axis, keepdims=True)])
            np.testing.assert_allclose(got, dense.sum(axis), rtol=1e-12)
            np.testing.assert_allclose(kept, dense.sum(axis, keepdims=True), rtol=1e-12)
            top = sess.run(tf.sparse_reduce_max(sp, axis))
            want = np.where(present.any(axis), np.where(present, dense, -np.inf).max(axis), 0)
            np.testing.assert_array_equal(top, want)


def test_sparse_add_of_random_tensors_matches_numpy():
    rng = np.random.RandomState(4)
    x = np.round(rng.randn(6, 7), 1) * (rng.rand(6, 7) < 0.4)
    y = -x * (rng.rand(6, 7) < 0.5) + np.round(rng.randn(6, 7), 1) * (rng.rand(6, 7) < 0.3)

    def sparse(d):
        w = np.argwhere(d)
        return tf.SparseTensor(w, d[tuple(w.T)], d.shape)
    with tf.Session() as sess:
        total = sess.run(tf.sparse_add(sparse(x), sparse(y), threshold=0.05))
        dense_sum = sess.run(tf.sparse_add(sparse(x), y))
    want = x + y
    keep = ((x != 0) != (y != 0)) | (np.abs(want) >= 0.05)
    keep &= (x != 0) | (y != 0)
    np.testing.assert_array_equal(total.indices, np.argwhere(keep))
    np.testing.assert_allclose(total.values, want[keep], rtol=1e-12)
    np.testing.assert_allclose(dense_sum, want, rtol=1e-12)


def test_errors_name_the_problem():
    sp = tf.SparseTensor(INDICES, [1.0, 2.0, 3.0, 4.0, 5.0], [3, 4])
    with pytest.raises(ValueError, match="inner dimensions differ"):
        tf.sparse_tensor_dense_matmul(sp, np.ones((3, 2), np.float32))
    with pytest.raises(TypeError, match="expected float32"):
        tf.sparse_tensor_dense_matmul(sp, tf.constant(np.ones((4, 2))))
    with pytest.raises(ValueError, match="needs matrices"):
        tf.sparse_tensor_dense_matmul(tf.SparseTensor([[0, 0, 0]], [1.0], [1, 1, 1]),
                                      np.ones((1, 1), np.float32))
    with pytest.raises(TypeError, match="at least one of a and b must be a SparseTensor"):
        tf.sparse_add(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        tf.sparse_reduce_sum(sp, axis=2)
    with pytest.raises(ValueError, match="not both"):
        tf.sparse_add(sp, sp, threshold=1.0, thresh=1.0)
    with pytest.raises(ValueError, match=r"Shapes \(3, 4\) and \(3, 3\) are incompatible"):
        tf.sparse_add(sp, tf.SparseTensor([[0, 0]], [1.0], [3, 3]))
    with pytest.raises(ValueError, match="rank >= 2"):
        tf.sparse_softmax(tf.SparseTensor([[0]], [1.0], [3]))
