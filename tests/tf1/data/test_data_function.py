"""User functions traced into graph functions (graphflow/tf1/data/function.py)."""

import collections

import numpy as np
import pytest

import graphflow as tf


def test_map_function_is_traced_once_and_runs_per_element(values):
    calls = []

    def double(x):
        calls.append(x)
        return x * 2

    ds = tf.data.Dataset.range(5).map(double)
    assert len(calls) == 1 and isinstance(calls[0], tf.Tensor)   # traced on a placeholder
    assert values(ds) == [0, 2, 4, 6, 8] and len(calls) == 1


def test_random_ops_draw_per_element_and_follow_the_graph_seed():
    def draws():
        tf.reset_default_graph()
        tf.set_random_seed(5)
        ds = tf.data.Dataset.range(4).map(lambda i: tf.random_uniform([]))
        nxt = ds.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            return [sess.run(nxt).item() for _ in range(4)]

    first = draws()
    assert len(set(first)) == 4 and draws() == first


def test_structures_in_and_out(elements):
    Pair = collections.namedtuple("Pair", "a b")
    ds = tf.data.Dataset.from_tensor_slices(Pair(np.arange(3), np.ones(3)))
    mapped = ds.map(lambda p: {"sum": tf.cast(p.a, tf.float64) + p.b, "const": 7})
    assert mapped.output_types == {"const": tf.int32, "sum": tf.float64}
    got = elements(mapped)
    assert [g["sum"].item() for g in got] == [1.0, 2.0, 3.0] and got[0]["const"] == 7
    listed = elements(tf.data.Dataset.range(2).map(lambda x: [x, x + 1]))  # a list is a tuple
    assert [tuple(v.item() for v in g) for g in listed] == [(0, 1), (1, 2)]


def test_outer_graph_tensors_are_refused_with_a_clear_message():
    outer = tf.constant(3, tf.int64)
    with pytest.raises(ValueError, match="outer graph"):
        tf.data.Dataset.range(3).map(lambda x: x + outer)


def test_a_failing_map_function_names_its_op():
    ds = tf.data.Dataset.from_tensor_slices(np.ones((2, 4), np.float32))
    ds = ds.map(lambda x: tf.reshape(x, tf.placeholder_with_default([3], [1])))
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Reshape"):
            sess.run(nxt)


def test_map_to_a_scalar_string_then_batch(elements):
    """A map function's scalar tf.string stays an array in the pipeline (a session alone would
    hand it out as bytes), so batch can stack it."""
    ds = tf.data.Dataset.from_tensor_slices(np.array([b"a", b"b", b"c"], dtype=object))
    batches = elements(ds.map(lambda s: tf.strings.join([s, s])).batch(2))
    assert [list(b) for b in batches] == [[b"aa", b"bb"], [b"cc"]]
