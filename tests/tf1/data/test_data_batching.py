"""batch / padded_batch (graphflow/tf1/data/batching.py): remainders, static shapes, padding
(sequences checked against tf.compat.v1)."""

import numpy as np
import pytest

import graphflow as tf


def test_batch_remainder_and_drop_remainder(elements):
    ds = tf.data.Dataset.range(7)
    assert [b.tolist() for b in elements(ds.batch(3))] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in elements(ds.batch(3, drop_remainder=True))] == [[0, 1, 2],
                                                                              [3, 4, 5]]
    assert ds.batch(3).output_shapes.as_list() == [None]
    assert ds.batch(3, drop_remainder=True).output_shapes.as_list() == [3]


def test_batch_of_tuples_stacks_each_component(elements):
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    ds = tf.data.Dataset.from_tensor_slices((x, np.arange(5))).batch(2)
    assert ds.output_shapes[0].as_list() == [None, 2]
    got = elements(ds)
    np.testing.assert_array_equal(got[0][0], x[:2])
    assert got[2][1].tolist() == [4]


def test_batch_of_different_shapes_is_an_error():
    ds = tf.data.Dataset.range(1, 4).map(lambda n: tf.fill(tf.reshape(n, [1]), n)).batch(3)
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="different shapes"):
            sess.run(nxt)


def test_padded_batch_as_tf(elements):
    ds = tf.data.Dataset.range(1, 5).map(lambda n: tf.fill(tf.reshape(n, [1]), n))
    got = elements(ds.padded_batch(2, padded_shapes=[None]))
    assert [g.tolist() for g in got] == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    fixed = elements(ds.padded_batch(3, padded_shapes=[5], padding_values=np.int64(-1)))
    assert fixed[1].tolist() == [[4, 4, 4, 4, -1]]
    assert ds.padded_batch(3, [5], drop_remainder=True).output_shapes.as_list() == [3, 5]


def test_padded_batch_too_small_a_shape():
    ds = tf.data.Dataset.range(3, 4).map(lambda n: tf.fill(tf.reshape(n, [1]), n))
    nxt = ds.padded_batch(1, padded_shapes=[2]).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="smaller size"):
            sess.run(nxt)


def test_batch_size_from_a_placeholder():
    size = tf.placeholder(tf.int64, [])
    iterator = tf.data.Dataset.range(5).batch(size).make_initializable_iterator()
    nxt = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.initializer, {size: 2})
        assert sess.run(nxt).tolist() == [0, 1]
        sess.run(iterator.initializer, {size: 4})
        assert sess.run(nxt).tolist() == [0, 1, 2, 3]
