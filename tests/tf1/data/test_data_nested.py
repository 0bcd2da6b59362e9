"""flat_map and interleave (graphflow/tf1/data/nested.py), orders checked against tf.compat.v1."""

import numpy as np
import pytest

import graphflow as tf


def test_flat_map_unbatches(values):
    rows = np.arange(6).reshape(3, 2)
    ds = tf.data.Dataset.from_tensor_slices(rows).flat_map(tf.data.Dataset.from_tensor_slices)
    assert values(ds) == [0, 1, 2, 3, 4, 5]


def test_interleave_cycle_and_block_order_as_tf(values):
    ds = tf.data.Dataset.range(1, 4).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(x + 1), cycle_length=2, block_length=2)
    assert values(ds) == [1, 1, 2, 2, 2, 3, 3, 3, 3]


def test_inner_dataset_cannot_capture_outer_tensors():
    outer = tf.constant([1, 2])
    with pytest.raises(ValueError, match="outer graph"):
        tf.data.Dataset.range(2).flat_map(lambda x: tf.data.Dataset.from_tensor_slices(outer))
