"""tf.nn.embedding_lookup over one tensor or partitions ('mod', 'div'), max_norm, gradients."""

import numpy as np
import pytest

import graphflow as tf


def _partitions(table, n, strategy):
    if strategy == "mod":
        return [table[p::n] for p in range(n)]
    sizes = [len(table) // n + (1 if p < len(table) % n else 0) for p in range(n)]
    return np.split(table, np.cumsum(sizes)[:-1])


@pytest.mark.parametrize("strategy", ["mod", "div"])
@pytest.mark.parametrize("num_partitions", [2, 3])
def test_partitioned_lookup_equals_the_whole_table(strategy, num_partitions):
    table = np.arange(22.0).reshape(11, 2)
    ids = np.array([[0, 10, 4], [7, 7, 1]])
    parts = [tf.Variable(p) for p in _partitions(table, num_partitions, strategy)]
    out = tf.nn.embedding_lookup(parts, ids, partition_strategy=strategy)
    assert out.shape.as_list() == [2, 3, 2]
    grads = tf.gradients(tf.reduce_sum(out * out), parts)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, got_grads = sess.run([out, [tf.convert_to_tensor(g) for g in grads]])
    np.testing.assert_array_equal(got, table[ids])
    expected = np.zeros_like(table)
    np.add.at(expected, ids.ravel(), 2 * table[ids.ravel()])
    np.testing.assert_allclose(np.concatenate(got_grads) if strategy == "div" else
                               np.concatenate(got_grads)[np.argsort(np.concatenate(
                                   _partitions(np.arange(11), num_partitions, strategy)))],
                               expected)


def test_max_norm_clips_rows():
    table = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    out = tf.nn.embedding_lookup(table, [0, 1, 2], max_norm=1.0)
    split = tf.nn.embedding_lookup([table[:2], table[2:]], [0, 1, 2], max_norm=1.0,
                                   partition_strategy="div")
    with tf.Session() as sess:
        got, got_split = sess.run([out, split])
    np.testing.assert_allclose(got, [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])
    np.testing.assert_allclose(got_split, got)
    with pytest.raises(ValueError, match="partition strategy"):
        tf.nn.embedding_lookup([table], [0], partition_strategy="hash")
