"""The prune pass (dead-code elimination) and the copy a plan optimizes."""

import numpy as np

import graphflow as tf
from graphflow.optimizer_passes import prune
from graphflow.optimizer_passes.subgraph import copy_for_plan


def test_removes_what_no_root_needs():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        y = tf.tanh(x, name="y")
        tf.exp(y, name="unused")
        tf.sin(tf.cos(x), name="unused_chain")
    stats = prune.run(g, {y, x})
    assert stats.rewrites == 3 and stats.ops_before == 5 and stats.ops_after == 2
    assert [op.name for op in g.get_operations()] == ["x", "y"]
    assert y.consumers() == []
    assert [op._id for op in g.get_operations()] == [0, 1]


def test_keeps_stateful_ops_and_control_dependencies():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(1.0, name="v")
        bump = tf.assign_add(v, 1.0, name="bump")  # nothing reads it: kept for its effect
        c = tf.constant(2.0, name="c")
        with tf.control_dependencies([c.op]):
            out = tf.identity(tf.constant(3.0), name="out")
        tf.constant(5.0, name="dead")
    prune.run(g, {out})
    names = {op.name for op in g.get_operations()}
    assert {"bump", "c", "out"} <= names and "dead" not in names
    assert bump.op in g.get_operations()


def test_keeps_fetched_operations():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0)
        train = tf.group(a, name="train")
    prune.run(g, {train})
    assert {op.name for op in g.get_operations()} == {"Const", "train"}


def test_copy_keeps_user_graph_and_names_and_sources():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.square(x, name="sq") + 1.0
    tf.exp(y, name="not_fetched")
    user = tf.get_default_graph()
    before = [(op.name, op.type, tuple(op.inputs)) for op in user.get_operations()]
    version = user.version
    pg = copy_for_plan([y], [x])
    assert [(op.name, op.type, tuple(op.inputs)) for op in user.get_operations()] == before
    assert user.version == version
    copy_names = [op.name for op in pg.graph.get_operations()]
    assert "not_fetched" not in copy_names and "sq" in copy_names
    sq = pg.graph.get_operation_by_name("sq")
    assert sq.source is user.get_operation_by_name("sq").source
    assert pg.origin[sq] is user.get_operation_by_name("sq")
    assert pg.fetches[0].name == y.name and pg.feeds[0].name == "x:0"


def test_fed_intermediate_becomes_a_stand_in_placeholder():
    x = tf.placeholder(tf.float32, [2], name="x")
    h = tf.exp(x, name="h")
    y = h * 2.0
    pg = copy_for_plan([y], [h])
    types = {op.name: op.type for op in pg.graph.get_operations()}
    assert types["h"] == "Placeholder" and "x" not in types
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y, {h: [1.0, 2.0]}), [2.0, 4.0])
        np.testing.assert_allclose(sess.run([y, h], {h: [3.0, 4.0]}), [[6.0, 8.0], [3.0, 4.0]])


def test_fed_output_of_an_op_needed_through_a_control_edge():
    x = tf.placeholder(tf.float32, [2], name="x")
    h = tf.exp(x, name="h")
    with tf.control_dependencies([h.op]):
        y = tf.identity(h * 3.0, name="y")
    with tf.Session() as sess:
        out = sess.run(y, {x: [0.0, 0.0], h: [1.0, 2.0]})
    np.testing.assert_allclose(out, [3.0, 6.0])
