"""sparse_reorder, sparse_retain, sparse.from_dense, sparse_merge, sparse.cross and
sparse_placeholder (feeding a SparseTensorValue or a tuple, also through make_callable; fetching
a SparseTensor gives a SparseTensorValue): TensorFlow's recorded numbers
(tests/ops/sparse_programs.py's index program), live ones with GRAPHFLOW_TF_PYTHON, and the
errors."""

import numpy as np
import pytest

import graphflow as tf
from tests.ops.sparse_reference import assert_same, check_gradient, recorded, run_graphflow, run_tensorflow
from tests.tf_reference import tf_python


def test_index_program_gives_tensorflows_recorded_numbers():
    assert_same(run_graphflow("index"), recorded("index"))


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_index_program_against_tensorflow_live():
    assert_same(run_graphflow("index"), run_tensorflow("index"))


def test_sparse_placeholder_parts_and_static_shape():
    sp = tf.sparse_placeholder(tf.float32, shape=[None, 7], name="ids")
    assert isinstance(sp, tf.SparseTensor)
    assert sp.shape.as_list() == [None, 7]
    assert sp.indices.name == "ids/indices:0" and sp.values.name == "ids/values:0"
    assert sp.indices.shape.as_list() == [None, 2] and sp.values.shape.as_list() == [None]
    assert sp.dense_shape.op.type == "PlaceholderWithDefault"
    free = tf.sparse.placeholder(tf.int64)
    assert free.shape.ndims is None and free.indices.shape.as_list() == [None, None]
    with tf.Session() as sess:
        # the default dense_shape holds -1 for unknown dimensions, as TF1's
        got = sess.run(sp, {sp.indices: [[0, 1]], sp.values: [2.0]})
        assert got.dense_shape.tolist() == [-1, 7]
        fed = sess.run(sp, {sp: tf.SparseTensorValue([[1, 6]], [3.0], [2, 7])})
    assert isinstance(fed, tf.SparseTensorValue)
    assert fed.indices.tolist() == [[1, 6]] and fed.values.tolist() == [3.0]
    assert fed.values.dtype == np.float32 and fed.dense_shape.tolist() == [2, 7]


def test_sparse_placeholder_fed_inside_a_tuple_key_and_in_training():
    sp = tf.sparse_placeholder(tf.float32, [None, 3])
    x = tf.placeholder(tf.float32, [])
    w = tf.Variable([[1.0], [2.0], [3.0]])
    loss = tf.reduce_sum(tf.sparse_tensor_dense_matmul(sp, w) ** 2) * x
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    value = tf.SparseTensorValue(np.array([[0, 0], [1, 2]]), np.array([1.0, -1.0], np.float32),
                                 np.array([2, 3]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {(sp, x): (value, 1.0)})
        sess.run(step, {sp: value, x: 1.0})
        # d/dw of (w0)^2 + (w2)^2 is 2 * w at rows 0 and 2
        np.testing.assert_allclose(sess.run(w).ravel(), [0.8, 2.0, 2.4], rtol=1e-6)
    assert first == pytest.approx(10.0)


def test_feeding_a_sparse_placeholder_a_wrong_value_says_so():
    sp = tf.sparse_placeholder(tf.float32, [None, 3])
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="not a structure of 3 values"):
            sess.run(sp.values, {sp: np.zeros(3)})


def test_reorder_gradient_by_finite_differences():
    def build(values):
        sp = tf.SparseTensor([[2, 1], [0, 3], [1, 0], [0, 1]], values, [3, 4])
        reordered = tf.sparse_reorder(sp)
        return tf.reduce_sum(reordered.values ** 2 * tf.constant([1.0, 2.0, 3.0, 4.0],
                                                                 tf.float64))
    check_gradient(build, [np.array([1.5, -2.0, 3.0, 4.0])])


def test_retain_checks_its_mask():
    sp = tf.SparseTensor([[0, 0], [1, 1]], [1.0, 2.0], [2, 2])
    with pytest.raises(ValueError, match="to_retain has length 3, but sp_input has 2 values"):
        tf.sparse_retain(sp, [True, False, True])
    with pytest.raises(TypeError, match="sp_input must be a SparseTensor"):
        tf.sparse_retain(np.zeros((2, 2)), [True, False])


def test_reorder_of_a_large_tensor_is_row_major():
    rng = np.random.RandomState(3)
    dense = rng.rand(40, 30) * (rng.rand(40, 30) < 0.1)
    where = np.argwhere(dense)
    perm = rng.permutation(len(where))
    sp = tf.SparseTensor(where[perm], dense[tuple(where[perm].T)], [40, 30])
    with tf.Session() as sess:
        got = sess.run(tf.sparse_reorder(sp))
    np.testing.assert_array_equal(got.indices, where)
    np.testing.assert_array_equal(got.values, dense[tuple(where.T)])


def test_make_callable_feeds_a_sparse_placeholder():
    sp = tf.sparse_placeholder(tf.float32, [None, 3])
    scale = tf.placeholder(tf.float32, [])
    total = tf.sparse_reduce_sum(sp, axis=1) * scale
    with tf.Session() as sess:
        run = sess.make_callable(total, [sp, scale])
        got = run(tf.SparseTensorValue([[0, 1], [2, 2], [2, 0]], [1.0, 2.0, 3.0], [3, 3]), 2.0)
        again = run(([[1, 1]], [4.0], [2, 3]), 1.0)
        with pytest.raises(ValueError, match="feed value 0 is for a SparseTensor"):
            run([1.0, 2.0], 1.0)
    assert got.tolist() == [2.0, 0.0, 10.0] and again.tolist() == [0.0, 4.0]


def test_merge_checks_its_arguments():
    ids = tf.SparseTensor([[0, 0]], tf.constant([1], tf.int64), [1, 1])
    values = tf.SparseTensor([[0, 0]], [2.0], [1, 1])
    with pytest.raises(ValueError, match="2 SparseTensors of ids but 1 vocabulary sizes"):
        tf.sparse_merge([ids, ids], values, [4])
    with pytest.raises(TypeError, match="sp_ids must hold integers"):
        tf.sparse_merge(values, values, 4)


def test_set_shape_refines_the_static_dense_shape():
    sp = tf.SparseTensor(tf.placeholder(tf.int64, [None, 2]), tf.placeholder(tf.float32, [None]),
                         tf.placeholder(tf.int64, [2]))
    assert sp.shape.as_list() == [None, None]
    sp.set_shape([None, 4])
    sp.set_shape([3, None])
    assert sp.shape.as_list() == [3, 4]
    with pytest.raises(ValueError):
        sp.set_shape([3, 5])


def test_cross_checks_its_inputs():
    with pytest.raises(TypeError, match="non-empty list"):
        tf.sparse.cross([])
    with pytest.raises(TypeError, match="strings or integers, got float32"):
        tf.sparse.cross([tf.constant([[1.0]])])
    with pytest.raises(ValueError, match=r"must be \[batch, k\]"):
        tf.sparse.cross([tf.constant(["a", "b"])])
