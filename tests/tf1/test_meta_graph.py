"""Tests for graphflow/tf1/meta_graph.py: the TF1 idiom saver.save -> import_meta_graph ->
saver.restore in a fresh graph (tensors by name, collections, training continues), export with
import under a scope, a graph without variables, and old .meta files pruned with checkpoints."""

import os

import numpy as np

import graphflow as tf


def _train_and_save(directory):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    pred = tf.layers.dense(x, 1, name="out")
    loss = tf.reduce_mean(tf.square(pred - y), name="loss")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)  # in GraphKeys.TRAIN_OP
    data = {x: np.array([[1.0, 2.0], [3.0, -1.0]], np.float32),
            y: np.array([[1.0], [0.0]], np.float32)}
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train, data)
        prefix = saver.save(sess, os.path.join(directory, "model"), global_step=3)
        want = sess.run(pred, data)
    return prefix, want, {k.op.name: v for k, v in data.items()}


def test_import_meta_graph_restores_a_checkpoint_in_a_fresh_graph(tmp_path):
    prefix, want, data = _train_and_save(str(tmp_path))
    assert os.path.isfile(prefix + ".meta")
    tf.reset_default_graph()
    saver = tf.train.import_meta_graph(prefix + ".meta")
    graph = tf.get_default_graph()
    pred = graph.get_tensor_by_name("out/BiasAdd:0")
    feeds = {graph.get_tensor_by_name(f"{k}:0"): v for k, v in data.items()}
    with tf.Session() as sess:
        saver.restore(sess, prefix)
        np.testing.assert_array_equal(sess.run(pred, feeds), want)
        (train,) = tf.get_collection(tf.GraphKeys.TRAIN_OP)
        before = sess.run("loss:0", feeds)
        sess.run(train, feeds)  # training goes on from the restored values
        assert sess.run("loss:0", feeds) < before


def test_export_and_import_under_a_scope(tmp_path):
    prefix, want, data = _train_and_save(str(tmp_path))
    path = str(tmp_path / "graph.meta")
    meta = tf.train.export_meta_graph(path)  # a training graph: TensorFlow's MetaGraphDef
    assert "GradientDescent" in {n.name for n in meta.graph_def.node}
    tf.reset_default_graph()
    tf.placeholder(tf.float32, name="x")  # a name already taken: the scope keeps them apart
    saver = tf.train.import_meta_graph(path, import_scope="restored")
    graph = tf.get_default_graph()
    feeds = {graph.get_tensor_by_name(f"restored/{k}:0"): v for k, v in data.items()}
    with tf.Session() as sess:
        saver.restore(sess, prefix)  # checkpoint keys are the unscoped names
        got = sess.run(graph.get_tensor_by_name("restored/out/BiasAdd:0"), feeds)
    np.testing.assert_array_equal(got, want)


def test_graph_without_variables_gives_no_saver(tmp_path):
    a = tf.placeholder(tf.float32, [], name="a")
    tf.identity(a * 2.0, name="double")
    path = str(tmp_path / "g.meta")
    meta = tf.train.export_meta_graph(path)
    assert meta.graph_def.node[0].name == "a"  # TensorFlow's MetaGraphDef
    tf.reset_default_graph()
    assert tf.train.import_meta_graph(path) is None
    with tf.Session() as sess:
        assert sess.run("double:0", {"a:0": 4.0}) == 8.0


def test_old_meta_files_go_with_their_checkpoints(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(v.initializer)
        for step in range(3):
            saver.save(sess, str(tmp_path / "m"), global_step=step)
        saver.save(sess, str(tmp_path / "plain"), write_meta_graph=False)
    # max_to_keep=2 counts the last save too: m-0 and m-1 went, each with its .meta
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "m-2.data-00000-of-00001", "m-2.index",
                                            "m-2.meta", "plain.data-00000-of-00001",
                                            "plain.index"]
