"""tf.nn.embedding_lookup_sparse and tf.nn.safe_embedding_lookup_sparse: TensorFlow's recorded
numbers (tests/ops/sparse_programs.py's embedding program: every combiner, weights, partitions,
default_id, ids of rank 3, gradients), live ones with GRAPHFLOW_TF_PYTHON, training of the
embedding variable, gradients by finite differences, and the errors."""

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

WHERE = [[0, 0], [0, 1], [1, 0], [3, 0], [3, 2]]


def test_embedding_program_gives_tensorflows_recorded_numbers():
    assert_same(run_graphflow("embedding"), recorded("embedding"))


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_embedding_program_against_tensorflow_live():
    assert_same(run_graphflow("embedding"), run_tensorflow("embedding"))


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_gradients_by_finite_differences(combiner):
    def build(params, weight_values):
        ids = tf.SparseTensor(WHERE, tf.constant([1, 4, 2, 1, 1], tf.int64), [4, 3])
        weights = tf.SparseTensor(WHERE, weight_values, [4, 3])
        weighted = tf.nn.embedding_lookup_sparse(params, ids, weights, combiner=combiner)
        safe = tf.nn.safe_embedding_lookup_sparse(params, ids, None, combiner=combiner,
                                                  default_id=0)
        return tf.reduce_sum(tf.sin(weighted)) + tf.reduce_sum(safe ** 2)
    rng = np.random.RandomState(7)
    check_gradient(build, [rng.randn(6, 3), rng.rand(5) + 0.5])


def test_embedding_variable_trains():
    """A bag-of-ids regression: the embedding rows of the ids in each row are trained."""
    ids = tf.sparse_placeholder(tf.int64, [None, 4])
    target = tf.placeholder(tf.float32, [None, 2])
    table = tf.get_variable("table", [5, 2], initializer=tf.zeros_initializer())
    pred = tf.nn.safe_embedding_lookup_sparse(table, ids, None, combiner="sum")
    loss = tf.reduce_mean(tf.square(pred - target))
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    feed = {ids: tf.SparseTensorValue([[0, 0], [0, 1], [1, 0], [2, 3]], [1, 3, 1, 4], [3, 4]),
            target: [[1.0, 0.0], [0.5, 0.5], [-1.0, 2.0]]}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, feed)
        for _ in range(100):
            sess.run(step, feed)
        last, rows = sess.run([loss, table], feed)
    assert first > 0.5 and last < 1e-4
    np.testing.assert_array_equal(rows[[0, 2]], 0.0)  # ids that never occur keep their value
    np.testing.assert_allclose(rows[4], [-1.0, 2.0], atol=1e-3)


def test_errors_name_the_problem():
    ids = tf.SparseTensor(WHERE, tf.constant([1, 4, 2, 1, 1], tf.int64), [4, 3])
    params = np.ones((6, 2), np.float32)
    with pytest.raises(ValueError, match="combiner must be one of"):
        tf.nn.embedding_lookup_sparse(params, ids, None, combiner="max")
    with pytest.raises(TypeError, match="sp_ids must be a SparseTensor"):
        tf.nn.embedding_lookup_sparse(params, [1, 2], None)
    with pytest.raises(ValueError, match="sp_ids.values has shape"):
        tf.nn.embedding_lookup_sparse(params, ids, tf.SparseTensor([[0, 0]], [1.0], [4, 3]))
    with pytest.raises(ValueError, match="Missing embedding_weights"):
        tf.nn.safe_embedding_lookup_sparse([], ids)
