"""`tf.sparse`: TF1's short names are the same functions as the top-level `tf.sparse_*` ones, and
the namespace lists the names TF1's has (but for those graphflow does not implement)."""

import pytest

import graphflow as tf
from graphflow.tf1.namespace import NotImplementedInGraphflow

ALIASES = {"add": "sparse_add", "concat": "sparse_concat", "fill_empty_rows":
           "sparse_fill_empty_rows", "matmul": "sparse_tensor_dense_matmul",
           "sparse_dense_matmul": "sparse_tensor_dense_matmul", "maximum": "sparse_maximum",
           "merge": "sparse_merge", "minimum": "sparse_minimum", "placeholder": "sparse_placeholder",
           "reduce_max": "sparse_reduce_max", "reduce_max_sparse": "sparse_reduce_max_sparse",
           "reduce_sum": "sparse_reduce_sum", "reduce_sum_sparse": "sparse_reduce_sum_sparse",
           "reorder": "sparse_reorder", "reshape": "sparse_reshape", "retain": "sparse_retain",
           "segment_mean": "sparse_segment_mean", "segment_sqrt_n": "sparse_segment_sqrt_n",
           "segment_sum": "sparse_segment_sum", "slice": "sparse_slice",
           "softmax": "sparse_softmax", "split": "sparse_split", "to_dense":
           "sparse_tensor_to_dense", "to_indicator": "sparse_to_indicator",
           "transpose": "sparse_transpose", "SparseTensor": "SparseTensor"}


@pytest.mark.parametrize("short, full", sorted(ALIASES.items()))
def test_short_name_is_the_top_level_function(short, full):
    assert getattr(tf.sparse, short) is getattr(tf, full)


def test_namespace_lists_its_names():
    others = {"cross", "expand_dims", "eye", "from_dense", "reset_shape"}
    assert set(ALIASES) | others == set(tf.sparse.__all__)


def test_a_missing_name_says_graphflow_lacks_it():
    with pytest.raises(NotImplementedInGraphflow, match="tf.sparse.cross_hashed"):
        _ = tf.sparse.cross_hashed
