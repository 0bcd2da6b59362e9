"""Tests for graphflow/tf1/graph_util.py: freezing a trained model (variables and reads become
constants, same names, same outputs, savable and loadable), black/whitelists, extract_sub_graph,
and the errors (an update op among the outputs, unknown or tensor names)."""

import numpy as np
import pytest

import graphflow as tf


def _trained():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    hidden = tf.layers.dense(x, 4, activation=tf.nn.relu, name="hidden")
    logits = tf.layers.dense(hidden, 2, name="logits")
    probs = tf.nn.softmax(logits, name="probs")
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train = tf.train.AdamOptimizer(0.05).minimize(loss, name="train")
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    rng = np.random.default_rng(0)
    data = rng.standard_normal((8, 3)).astype(np.float32)
    for _ in range(3):
        sess.run(train, {x: data, labels: (data[:, 0] > 0).astype(np.int64)})
    return sess, x, probs, data


def test_freeze_replaces_variables_by_constants_and_computes_the_same(tmp_path):
    sess, x, probs, data = _trained()
    want = sess.run(probs, {x: data})
    frozen = tf.graph_util.convert_variables_to_constants(sess, sess.graph, ["probs"])
    types = [op.type for op in frozen.get_operations()]
    assert "VariableV2" not in types and "ApplyAdam" not in types
    assert frozen.get_operation_by_name("hidden/kernel").type == "Const"
    names = {op.name for op in frozen.get_operations()}
    assert "labels" not in names and not any("Adam" in n for n in names)
    assert frozen.get_collection(tf.GraphKeys.GLOBAL_VARIABLES) == []
    fx, fp = frozen.get_tensor_by_name("x:0"), frozen.get_tensor_by_name("probs:0")
    with tf.Session(graph=frozen) as fsess:  # nothing to initialize
        np.testing.assert_array_equal(fsess.run(fp, {fx: data}), want)
    path = str(tmp_path / "frozen.gfz")
    tf.save(path, inputs={"x": fx}, outputs={"probs": fp}, graph=frozen)
    with tf.load(path) as model:
        assert model.variables == []
        np.testing.assert_array_equal(model.run({"x": data})["probs"], want)
    assert tf.get_default_graph().get_operation_by_name("hidden/kernel").type == "VariableV2"


def test_blacklist_keeps_a_variable():
    sess, x, probs, data = _trained()
    frozen = tf.graph_util.convert_variables_to_constants(
        sess, sess.graph, ["probs"], variable_names_blacklist=["logits/bias"])
    assert frozen.get_operation_by_name("logits/bias").type == "VariableV2"
    assert frozen.get_operation_by_name("logits/kernel").type == "Const"
    (kept,) = frozen.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)
    assert kept.name == "logits/bias:0" and kept.initializer is not None
    only = tf.graph_util.convert_variables_to_constants(
        sess, sess.graph, ["probs"], variable_names_whitelist=["hidden/kernel"])
    assert [op.name for op in only.get_operations() if op.type == "VariableV2"] == [
        "hidden/bias", "logits/kernel", "logits/bias"]


def test_extract_sub_graph_keeps_what_the_nodes_need():
    sess, x, probs, _ = _trained()
    sub = tf.graph_util.extract_sub_graph(tf.get_default_graph(), ["probs"])
    names = [op.name for op in sub.get_operations()]
    assert "x" in names and "probs" in names and "labels" not in names and "train" not in names
    assert [v.name for v in sub.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)] == [
        "hidden/kernel:0", "hidden/bias:0", "logits/kernel:0", "logits/bias:0"]
    with tf.Session(graph=sub) as s:  # the initializers came along
        s.run(tf.global_variables_initializer())
        assert s.run(sub.get_tensor_by_name("probs:0"), {sub.get_tensor_by_name("x:0"):
                                                         np.zeros((1, 3), np.float32)}).shape == (1, 2)


def test_errors():
    sess, _, _, _ = _trained()
    with pytest.raises(ValueError, match="updates variable"):
        tf.graph_util.convert_variables_to_constants(sess, sess.graph, ["probs", "train"])
    with pytest.raises(ValueError, match="tensor name"):
        tf.graph_util.convert_variables_to_constants(sess, sess.graph, ["probs:0"])
    with pytest.raises(ValueError, match="not an op"):
        tf.graph_util.extract_sub_graph(sess.graph, ["nope"])
    with pytest.raises(TypeError, match="expected a graphflow Graph"):
        tf.graph_util.extract_sub_graph(object(), ["probs"])
