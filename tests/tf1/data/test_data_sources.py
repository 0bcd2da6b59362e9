"""Dataset sources (graphflow/tf1/data/sources.py): element sequences, dtypes and static shapes
as TF1 gives them (checked against tf.compat.v1)."""

import numpy as np
import pytest

import graphflow as tf


def test_from_tensor_slices_nested_dict_and_tuple(elements):
    ds = tf.data.Dataset.from_tensor_slices(
        {"a": np.arange(3.0), "b": (np.arange(3), np.ones((3, 2), np.float32))})
    assert ds.output_types == {"a": tf.float64, "b": (tf.int64, tf.float32)}
    assert ds.output_shapes["a"].as_list() == [] and ds.output_shapes["b"][1].as_list() == [2]
    got = elements(ds)
    assert len(got) == 3
    assert got[2]["a"] == 2.0 and got[2]["b"][0] == 2 and got[2]["b"][1].tolist() == [1.0, 1.0]


def test_python_lists_are_tensors_with_tf_dtypes():
    # TF1: a list is one component (a tensor), Python floats are float32, ints int32
    assert tf.data.Dataset.from_tensor_slices([1.0, 2.0]).output_types == tf.float32
    assert tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]]).output_types == tf.int32
    assert tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]]).output_shapes.as_list() == [2]


def test_from_tensor_slices_mismatched_rows():
    with pytest.raises(ValueError, match="same size in dimension 0"):
        tf.data.Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))


def test_from_tensors_is_one_element(elements):
    got = elements(tf.data.Dataset.from_tensors((np.arange(4), 7)))
    assert len(got) == 1 and got[0][0].tolist() == [0, 1, 2, 3] and got[0][1] == 7


def test_range_forms(values):
    assert values(tf.data.Dataset.range(4)) == [0, 1, 2, 3]
    assert values(tf.data.Dataset.range(2, 8, 3)) == [2, 5]
    assert values(tf.data.Dataset.range(5, 0, -2)) == [5, 3, 1]
    assert tf.data.Dataset.range(3).output_types == tf.int64


def test_from_generator_types_shapes_and_each_pass_calls_again(elements):
    calls = []

    def gen():
        calls.append(1)
        for i in range(3):
            yield i, [float(i)] * (i + 1)

    ds = tf.data.Dataset.from_generator(gen, (tf.int32, tf.float32), ([], [None]))
    assert ds.output_shapes[1].as_list() == [None]
    got = elements(ds.repeat(2))
    assert [g[0].item() for g in got] == [0, 1, 2, 0, 1, 2] and len(calls) == 2
    assert got[2][1].dtype == np.float32 and got[2][1].tolist() == [2.0, 2.0, 2.0]


def test_from_generator_wrong_shape_names_the_op():
    ds = tf.data.Dataset.from_generator(lambda: iter([[1, 2, 3]]), tf.int64, [2])
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="IteratorGetNext.*shape"):
            sess.run(nxt)


def test_from_tensor_slices_of_a_placeholder_needs_an_initializable_iterator():
    x = tf.placeholder(tf.float32, [None, 2])
    with pytest.raises(ValueError, match="make_initializable_iterator"):
        tf.data.Dataset.from_tensor_slices(x).make_one_shot_iterator()
