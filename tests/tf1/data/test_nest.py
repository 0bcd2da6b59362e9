"""Element structures (graphflow/tf1/data/nest.py): TF1's flattening order and repacking."""

import collections

import pytest

import graphflow as tf
from graphflow.ops.sparse_tensor import SparseTensor
from graphflow.tf1.data import nest


def test_dicts_flatten_in_sorted_key_order_and_lists_are_leaves():
    structure = {"b": (1, [2, 3]), "a": 0}
    assert nest.flatten(structure) == [0, 1, [2, 3]]
    assert nest.pack_as(structure, ["x", "y", "z"]) == {"b": ("y", "z"), "a": "x"}


def test_namedtuples_keep_their_type():
    Point = collections.namedtuple("Point", "x y")
    packed = nest.pack_as(Point(0, (0, 0)), [1, 2, 3])
    assert packed == Point(1, (2, 3)) and type(packed) is Point


def test_structure_mismatches():
    with pytest.raises(ValueError, match="2 components"):
        nest.pack_as((0, 0), [1])
    with pytest.raises(TypeError, match="same nested structure"):
        nest.assert_same_structure((0, 0), {"a": 0, "b": 0})
    assert nest.map_structure(lambda a, b: a + b, (1, {"k": 2}), (10, {"k": 20})) == (11, {"k": 22})


def test_sparse_tensors_travel_as_their_three_parts():
    data_nest = nest
    st = SparseTensor(tf.constant([[0, 0]], tf.int64), tf.constant([1.0]), tf.constant([2, 2], tf.int64))
    structure = {"b": st, "a": (1, st)}
    parts = data_nest.from_sparse(structure)
    assert isinstance(parts["b"], data_nest.SparseParts) and data_nest.has_sparse(parts)
    assert len(data_nest.flatten(parts)) == 7
    assert data_nest.sparse_starts(parts) == [1, 4]  # "a": (1, st) first, then "b"
    back = data_nest.to_sparse(parts)
    assert isinstance(back["a"][1], SparseTensor) and back["b"].values is st.values
    assert not data_nest.has_sparse(back)
