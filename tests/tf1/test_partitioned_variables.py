"""Tests for graphflow/tf1/partitioned_variables.py: TF1's partitioners (numbers recorded from
TensorFlow 2.21's tf.compat.v1), `get_variable(partitioner=...)` and `variable_scope(partitioner=)`
giving a PartitionedVariable of parts `name/part_i`, embedding lookups over it, and checkpoints
that hold it as TensorFlow does (one key, the full shape, one slice per part) in both directions
(tests/fixtures/tensorflow/checkpoints/partitioned, written by TensorFlow)."""

import os
import sys

import numpy as np
import pytest

import graphflow as tf
from graphflow.fileformat.tf_bundle import BundleReader

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from tf_reference import run_in_tensorflow, tf_python  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "tensorflow",
                        "checkpoints")


def _expected(name):
    with np.load(os.path.join(FIXTURES, "expected.npz")) as data:
        return data[f"partitioned/{name}"]


S = tf.TensorShape
# (partitioner, shape, dtype, what tf.compat.v1's partitioner returns)
PARTITIONERS = [
    (lambda: tf.fixed_size_partitioner(3), [10, 4], tf.float32, [3, 1]),
    (lambda: tf.fixed_size_partitioner(5, axis=1), [2, 3], tf.float32, [1, 3]),
    (lambda: tf.variable_axis_size_partitioner(100), [50, 4], tf.float32, [9, 1]),
    (lambda: tf.variable_axis_size_partitioner(100, max_shards=3), [50, 4], tf.float32, [3, 1]),
    (lambda: tf.variable_axis_size_partitioner(64, axis=1), [3, 10], tf.string, [1, 10]),
    (lambda: tf.variable_axis_size_partitioner(1000), [100, 3], tf.float64, [3, 1]),
    (lambda: tf.min_max_variable_partitioner(max_partitions=4, min_slice_size=64), [20, 5],
     tf.float32, [4, 1]),
    (lambda: tf.min_max_variable_partitioner(max_partitions=8), [20, 5], tf.float32, [1, 1]),
    (lambda: tf.min_max_variable_partitioner(max_partitions=100, min_slice_size=4), [6, 2],
     tf.int64, [6, 1]),
]


@pytest.mark.parametrize("make,shape,dtype,want", PARTITIONERS)
def test_partitioners_give_tensorflows_partitions(make, shape, dtype, want):
    assert make()(shape=S(shape), dtype=dtype) == want


def test_partitioner_argument_errors():
    with pytest.raises(ValueError, match="axis must be non-negative"):
        tf.variable_axis_size_partitioner(10, axis=-1)
    with pytest.raises(ValueError, match="must be positive"):
        tf.variable_axis_size_partitioner(0)
    with pytest.raises(ValueError, match="shape is not fully defined"):
        tf.variable_axis_size_partitioner(10)(shape=S([None, 2]), dtype=tf.float32)
    with pytest.raises(ValueError, match="Can not partition variable along axis 2"):
        tf.min_max_variable_partitioner(axis=2)(shape=S([4, 2]), dtype=tf.float32)
    with pytest.raises(ValueError, match="Can only slice a variable along one dimension"):
        tf.get_variable("two_axes", [4, 4], partitioner=lambda shape, dtype: [2, 2])


def test_scope_partitioner_makes_parts_like_tensorflow():
    with tf.variable_scope("outer", partitioner=tf.fixed_size_partitioner(4)):
        v = tf.get_variable("v", [10, 3])
        w = tf.get_variable("w", [7, 2], initializer=np.arange(14.0, dtype=np.float32)
                            .reshape(7, 2))
    # tf.compat.v1's names, part shapes and save-slice specs
    assert [(p.name, p.shape.as_list(), p._save_slice_info.spec) for p in v] == [
        ("outer/v/part_0:0", [3, 3], "10 3 0,3:0,3"), ("outer/v/part_1:0", [3, 3], "10 3 3,3:0,3"),
        ("outer/v/part_2:0", [2, 3], "10 3 6,2:0,3"), ("outer/v/part_3:0", [2, 3], "10 3 8,2:0,3")]
    assert [(p.name, p._save_slice_info.spec) for p in w] == [
        ("outer/w/part_0:0", "7 2 0,2:0,2"), ("outer/w/part_1:0", "7 2 2,2:0,2"),
        ("outer/w/part_2:0", "7 2 4,2:0,2"), ("outer/w/part_3:0", "7 2 6,1:0,2")]
    assert [x.name for x in tf.global_variables()] == [p.name for p in list(v) + list(w)]
    assert v.name == "outer/v" and len(v) == 4 and v.shape.as_list() == [10, 3]
    whole = tf.convert_to_tensor(w)
    assert whole.name == "outer/w:0" and whole.shape.as_list() == [7, 2]
    with tf.variable_scope("outer", reuse=True):
        assert tf.get_variable("v", [10, 3], partitioner=tf.fixed_size_partitioner(4)) is v
    with tf.variable_scope("outer"), pytest.raises(ValueError, match="already exists"):
        tf.get_variable("v", [10, 3], partitioner=tf.fixed_size_partitioner(4))
    with tf.variable_scope("outer", reuse=True), pytest.raises(ValueError, match="does not exist"):
        tf.get_variable("x", [10, 3], partitioner=tf.fixed_size_partitioner(4))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(whole), np.arange(14.0).reshape(7, 2))
        sess.run(w.assign(np.ones((7, 2), np.float32)))
        np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(w)), np.ones((7, 2)))


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_embedding_lookup_over_a_partitioned_variable(strategy):
    table = np.arange(30.0, dtype=np.float32).reshape(10, 3)
    pv = tf.get_variable("emb", [10, 3], initializer=table,
                         partitioner=tf.fixed_size_partitioner(3))
    ids = [0, 9, 4, 5, 4]
    looked = tf.nn.embedding_lookup(pv, ids, partition_strategy=strategy)
    loss = tf.reduce_sum(looked * looked)
    grads = tf.gradients(loss, list(pv))
    assert all(isinstance(g, tf.IndexedSlices) for g in grads)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(looked)
    parts = np.split(table, [4, 7])  # the parts' rows, 4 + 3 + 3
    if strategy == "div":
        np.testing.assert_array_equal(got, table[ids])
    else:  # id i is row i // 3 of part i % 3
        np.testing.assert_array_equal(got, [parts[i % 3][i // 3] for i in ids])


def test_restores_tensorflows_partitioned_checkpoint_and_looks_up_like_tensorflow():
    emb = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(2))
    big = tf.get_variable("scope/big", [7, 3], partitioner=tf.fixed_size_partitioner(3))
    whole = tf.get_variable("whole", [5])
    saver = tf.train.Saver()
    assert sorted({s.key for s in saver._saveables}) == ["emb", "scope/big", "whole"]
    with tf.Session() as sess:
        saver.restore(sess, os.path.join(FIXTURES, "partitioned", "model"))
        np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(emb)), _expected("emb"))
        np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(big)), _expected("scope/big"))
        np.testing.assert_array_equal(sess.run(whole), _expected("whole"))
        np.testing.assert_array_equal(sess.run(tf.nn.embedding_lookup(emb, [0, 9, 4, 5])),
                                      _expected(":emb_lookup"))


def test_saves_partitioned_variables_as_tensorflow_does(tmp_path):
    values = np.arange(21.0, dtype=np.float32).reshape(7, 3)
    tf.get_variable("scope/big", [7, 3], initializer=values,
                    partitioner=tf.fixed_size_partitioner(3))
    tf.get_variable("plain", [2], initializer=tf.ones_initializer())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = tf.train.Saver().save(sess, str(tmp_path / "model"))
    with BundleReader(prefix) as reader:
        assert reader.names() == ["plain", "scope/big"]
        assert reader.shape("scope/big") == (7, 3)
        entry = reader.entry("scope/big")
        # TensorFlow's own checkpoint of the same variables lists these slices
        assert [bounds for bounds, _ in entry.slices] == [((0, 3), (0, 3)), ((3, 5), (0, 3)),
                                                         ((5, 7), (0, 3))]
        np.testing.assert_array_equal(reader.get_tensor("scope/big"), values)
    assert tf.train.load_variable(prefix, "scope/big").tolist() == values.tolist()
    # into a graph partitioned differently, and into an unpartitioned variable
    tf.reset_default_graph()
    two = tf.get_variable("scope/big", [7, 3], partitioner=tf.fixed_size_partitioner(2))
    one = tf.get_variable("plain", [2])
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, prefix)
        np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(two)), values)
        np.testing.assert_array_equal(sess.run(one), [1, 1])
    tf.reset_default_graph()
    dense = tf.get_variable("scope/big", [7, 3])
    with tf.Session() as sess:
        tf.train.Saver([dense]).restore(sess, prefix)
        np.testing.assert_array_equal(sess.run(dense), values)


def test_restoring_a_partitioned_variable_of_another_shape_fails(tmp_path):
    tf.get_variable("scope/big", [7, 3], partitioner=tf.fixed_size_partitioner(3))
    tf.get_variable("emb", [9, 4], partitioner=tf.fixed_size_partitioner(2))
    tf.get_variable("whole", [5])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match=r"partitioned variable has shape \[9, 4\]"):
        tf.train.Saver().restore(sess, os.path.join(FIXTURES, "partitioned", "model"))


def test_saver_refuses_a_key_saved_whole_and_as_slices():
    pv = tf.get_variable("t", [4, 2], partitioner=tf.fixed_size_partitioner(2))
    whole = tf.Variable(np.zeros((4, 2), np.float32), name="t")
    assert whole.op.name == "t"
    with pytest.raises(ValueError, match="same name: t"):
        tf.train.Saver([pv, whole])


def tensorflow_restores_partitioned(tf, np, prefix):
    """TensorFlow reads a checkpoint and restores it into its own partitioned variable."""
    reader = tf.train.NewCheckpointReader(prefix)
    with tf.Graph().as_default():
        big = tf.get_variable("scope/big", [7, 3], partitioner=tf.fixed_size_partitioner(2))
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, prefix)
            return {"read": reader.get_tensor("scope/big"),
                    "restored": sess.run(big.as_tensor()),
                    "shape": np.array(reader.get_variable_to_shape_map()["scope/big"])}


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                    "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_tensorflow_restores_graphflows_partitioned_checkpoint_live(tmp_path):
    values = np.arange(21.0, dtype=np.float32).reshape(7, 3)
    tf.get_variable("scope/big", [7, 3], initializer=values,
                    partitioner=tf.fixed_size_partitioner(3))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = tf.train.Saver().save(sess, str(tmp_path / "model"))
    got = run_in_tensorflow([("p", tensorflow_restores_partitioned, {"prefix": prefix})])["p"]
    np.testing.assert_array_equal(got["read"], values)
    np.testing.assert_array_equal(got["restored"], values)
    assert got["shape"].tolist() == [7, 3]
