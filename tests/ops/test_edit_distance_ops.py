"""graphflow/ops/edit_distance_ops.py: tf.edit_distance against TensorFlow's numbers (recorded
literals from TensorFlow 2.21's tf.compat.v1; compared live where GRAPHFLOW_TF_PYTHON is set),
including TensorFlow's own docstring example and groups present in one input only."""

import pathlib
import sys

import numpy as np
import pytest

import graphflow as tf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from tf_reference import run_in_tensorflow, tf_python  # noqa: E402

TF_NUMBERS = {"doc": [[np.inf, 1.0], [0.5, 1.0]], "doc_raw": [[1.0, 1.0], [1.0, 1.0]],
              "ids": [0.5, 0.6666666865348816, 1.0, np.inf, 1.0],
              "ids_raw": [1.0, 2.0, 1.0, 1.0, 1.0]}


def edit_distance_program(tf, np):
    """TensorFlow's docstring example (strings, rank 3) and int64 sequences (rank 2)."""
    hyp = tf.SparseTensor([[0, 0, 0], [1, 0, 0]], ["a", "b"], (2, 1, 1))
    truth = tf.SparseTensor([[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0]], ["a", "b", "c", "a"],
                            (2, 2, 2))
    hyp2 = tf.SparseTensor([[0, 0], [0, 1], [0, 2], [1, 0], [2, 0], [2, 3], [3, 1]],
                           np.array([1, 2, 3, 4, 5, 6, 7], np.int64), [5, 4])
    truth2 = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [2, 0], [4, 0]],
                             np.array([1, 3, 4, 4, 2, 6, 1], np.int64), [5, 3])
    outs = {"doc": tf.edit_distance(hyp, truth), "doc_raw": tf.edit_distance(hyp, truth, False),
            "ids": tf.edit_distance(hyp2, truth2),
            "ids_raw": tf.edit_distance(hyp2, truth2, normalize=False)}
    with tf.Session() as sess:
        return sess.run(outs)


def test_edit_distance_gives_tensorflows_recorded_numbers():
    with tf.Graph().as_default():
        got = edit_distance_program(tf, np)
    for name, want in TF_NUMBERS.items():
        assert got[name].dtype == np.float32
        np.testing.assert_allclose(got[name], want, rtol=1e-7, err_msg=name)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_edit_distance_against_tensorflow_live():
    want = run_in_tensorflow([("r", edit_distance_program, {})])["r"]
    with tf.Graph().as_default():
        got = edit_distance_program(tf, np)
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-7, err_msg=name)


def test_edit_distance_static_shape_and_sparse_tensor_values():
    hyp = tf.SparseTensorValue(np.array([[0, 0], [1, 2]], np.int64), np.array([1, 2], np.int32),
                               np.array([2, 3], np.int64))
    truth = tf.SparseTensor(np.array([[0, 0], [1, 0]], np.int64), tf.constant([1, 3]), [2, 2])
    dist = tf.edit_distance(hyp, truth)
    assert dist.shape.as_list() == [2] and dist.dtype == tf.float32
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(dist), [0.0, 1.0])


def test_edit_distance_errors():
    with pytest.raises(TypeError, match="Hypothesis must be a SparseTensor"):
        tf.edit_distance([[1]], tf.SparseTensor([[0, 0]], [1], [1, 1]))
    a = tf.SparseTensor([[0, 0]], [1], [1, 1])
    with pytest.raises(TypeError, match="same dtype"):
        tf.edit_distance(a, tf.SparseTensor([[0, 0]], [1.0], [1, 1]))
    with pytest.raises(ValueError, match="matching ranks"):
        tf.edit_distance(a, tf.SparseTensor([[0, 0, 0]], [1], [1, 1, 1]))
    bad = tf.SparseTensor(tf.constant([[0, 5]], tf.int64), [1], [1, 1])   # out of its shape
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="out of bounds"):
        sess.run(tf.edit_distance(bad, a))
