"""SparseToDense through TF1's three spellings, on a string_split result, and its index checks
(messages as TF1's: out of bounds, out of order, repeated)."""

import pytest

import graphflow as tf


def test_string_split_to_dense_words():
    words = tf.string_split(["the cat sat", "a dog"])
    dense = tf.sparse_tensor_to_dense(words, default_value="<pad>")
    also = tf.sparse.to_dense(words)
    with tf.Session() as sess:
        got, plain = sess.run([dense, also])
    assert got.tolist() == [[b"the", b"cat", b"sat"], [b"a", b"dog", b"<pad>"]]
    assert plain.tolist() == [[b"the", b"cat", b"sat"], [b"a", b"dog", b""]]


def test_sparse_tensor_of_numbers_to_dense():
    sp = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[2, 3])
    dense = tf.sparse_tensor_to_dense(sp)
    assert dense.shape.as_list() == [2, 3] and dense.dtype == tf.float32
    with tf.Session() as sess:
        assert sess.run(dense).tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]]


@pytest.mark.parametrize("indices, message", [
    ([[0, 1], [0, 0]], r"indices\[1\] = \[0, 0\] is out of order"),
    ([[0, 1], [0, 1]], r"indices\[1\] = \[0, 1\] is repeated"),
    ([[0, 1], [2, 0]], r"indices\[1\] = \[2, 0\] is out of bounds"),
])
def test_index_checks(indices, message):
    dense = tf.sparse_to_dense(tf.constant(indices, tf.int64), [2, 2], [1.0, 2.0])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(dense)


def test_unvalidated_indices_may_come_in_any_order():
    dense = tf.sparse_to_dense([[1], [0]], [3], [5, 6], validate_indices=False)
    with tf.Session() as sess:
        assert sess.run(dense).tolist() == [6, 5, 0]
