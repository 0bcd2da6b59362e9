"""sparse_reshape, sparse_transpose, sparse_concat, sparse_slice, sparse_split,
sparse_fill_empty_rows, sparse_to_indicator, sparse.expand_dims, sparse.eye and
sparse.reset_shape: TensorFlow's recorded numbers (tests/ops/sparse_programs.py's reshape
program), live ones with GRAPHFLOW_TF_PYTHON, static shapes, gradients by finite differences,
and the errors."""

import numpy as np
import pytest

import graphflow as tf
from tests.ops.sparse_reference import (
    assert_same,
    check_gradient,
    recorded,
    run_graphflow,
    run_tensorflow,
)
from tests.tf_reference import tf_python

INDICES = [[0, 0], [0, 2], [2, 1], [3, 3]]


def test_reshape_program_gives_tensorflows_recorded_numbers():
    assert_same(run_graphflow("reshape"), recorded("reshape"))


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_reshape_program_against_tensorflow_live():
    assert_same(run_graphflow("reshape"), run_tensorflow("reshape"))


def test_static_shapes():
    a = tf.SparseTensor(INDICES, [1.0, 2.0, 3.0, 4.0], [4, 4])
    b = tf.SparseTensor([[0, 1]], [5.0], [3, 3])
    assert tf.sparse_reshape(a, [-1, 8]).shape.as_list() == [2, 8]
    assert tf.sparse_transpose(tf.sparse_reshape(a, [2, 2, 4]), [2, 0, 1]).shape.as_list() == \
        [4, 2, 2]
    assert tf.sparse_concat(1, [a, b], expand_nonconcat_dim=True).shape.as_list() == [4, 7]
    assert [p.shape.as_list() for p in tf.sparse_split(sp_input=a, num_split=3, axis=1)] == \
        [[4, 2], [4, 1], [4, 1]]
    assert tf.sparse.expand_dims(a, 1).shape.as_list() == [4, 1, 4]
    assert tf.sparse.eye(3, 5).shape.as_list() == [3, 5]
    ph = tf.sparse_placeholder(tf.float32, [None, 6])
    assert tf.sparse_reshape(ph, [-1, 2, 3]).shape.as_list() == [None, 2, 3]


def test_gradients_by_finite_differences():
    """Through concat (which TensorFlow leaves without a gradient), reshape, transpose, slice,
    split and fill_empty_rows, each value's gradient returns to it."""
    def build(values):
        a = tf.SparseTensor(INDICES, values, [4, 4])
        joined = tf.sparse_concat(0, [a, tf.sparse_transpose(a)])
        filled, _ = tf.sparse_fill_empty_rows(tf.sparse_slice(joined, [1, 0], [6, 3]), 0.5)
        parts = tf.sparse_split(sp_input=tf.sparse_reshape(joined, [4, 8]), num_split=2,
                                axis=1)
        weights = tf.range(1.0, tf.cast(tf.size(filled.values), tf.float64) + 1.0)
        return (tf.reduce_sum(filled.values ** 2 * weights)
                + tf.reduce_sum(tf.sin(parts[1].values)))
    check_gradient(build, [np.array([1.0, -2.0, 0.5, 3.0])])


def test_random_concat_and_slice_match_numpy():
    rng = np.random.RandomState(5)
    x = rng.randn(5, 4) * (rng.rand(5, 4) < 0.4)
    y = rng.randn(5, 3) * (rng.rand(5, 3) < 0.4)

    def sparse(d):
        w = np.argwhere(d)
        return tf.SparseTensor(w, d[tuple(w.T)], d.shape)
    with tf.Session() as sess:
        joined = sess.run(tf.sparse.to_dense(tf.sparse_concat(-1, [sparse(x), sparse(y)])))
        part = sess.run(tf.sparse.to_dense(tf.sparse_slice(sparse(x), [1, 2], [3, 9])))
        moved = sess.run(tf.sparse.to_dense(tf.sparse_transpose(sparse(x))))
    np.testing.assert_array_equal(joined, np.concatenate([x, y], 1))
    np.testing.assert_array_equal(part, x[1:4, 2:])
    np.testing.assert_array_equal(moved, x.T)


def test_errors_name_the_problem():
    a = tf.SparseTensor(INDICES, [1.0, 2.0, 3.0, 4.0], [4, 4])
    with pytest.raises(ValueError, match=r"cannot reshape a SparseTensor of shape \(4, 4\)"):
        tf.sparse_reshape(a, [3, 5])
    with pytest.raises(ValueError, match="at most one dimension"):
        tf.sparse_reshape(a, [-1, -1])
    with pytest.raises(ValueError, match="not a permutation"):
        tf.sparse_transpose(a, [0, 0])
    with pytest.raises(ValueError, match="dimension 0 differs"):
        tf.sparse_concat(1, [a, tf.SparseTensor([[0, 0]], [1.0], [3, 3])])
    with pytest.raises(ValueError, match="keyword arguments are required"):
        tf.sparse_split(a, 2, 1)
    with pytest.raises(ValueError, match="default_value must be a scalar"):
        tf.sparse_fill_empty_rows(a, [1.0, 2.0])
    with pytest.raises(ValueError, match=r"new_shape \[3, 9\] is smaller than the dense shape"):
        tf.sparse.reset_shape(a, [3, 9])
    fed = tf.placeholder(tf.int64, [2])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="new_shape is smaller"):
            sess.run(tf.sparse.reset_shape(a, fed), {fed: [4, 3]})
