"""Common-subexpression elimination: what merges, and what never does."""

import numpy as np

import graphflow as tf

PASS = ["cse"]


def test_merges_duplicates_including_commutative_and_chains(optimized, both, same):
    x = tf.placeholder(tf.float64, [3], name="x")
    y = tf.placeholder(tf.float64, [3], name="y")
    a = tf.tanh(x * y + 1.0)
    b = tf.tanh(y * x + 1.0)   # same chain, commuted product
    out = a - b + tf.add(x, y) * tf.add(y, x)
    opt = optimized(out, [x, y], passes=PASS)
    types = opt.types()
    assert types["Tanh"] == 1 and types["Mul"] == 2 and types["Add"] == 3
    assert types["Const"] == 1  # the two 1.0 constants merged too
    assert opt.report["cse"].rewrites >= 5
    same(*both(out, {x: [1.0, 2.0, 3.0], y: [0.5, -1.0, 2.0]}, passes=PASS))


def test_constants_compare_by_dtype_shape_and_bytes(optimized):
    x = tf.placeholder(tf.float64, [1], name="x")
    parts = [tf.constant(0.0, tf.float64), tf.constant(-0.0, tf.float64),
             tf.constant([0.0], tf.float64), tf.constant(0.0, tf.float64),
             tf.cast(tf.constant(0.0, tf.float32), tf.float64), tf.constant(np.nan, tf.float64),
             tf.constant(np.nan, tf.float64)]
    out = tf.add_n([x + p for p in parts])
    opt = optimized(out, [x], passes=PASS)
    values = sorted(repr(op.attrs["value"].tolist()) + str(op.attrs["value"].dtype)
                    for op in opt.ops() if op.type == "Const")
    assert values == ["-0.0float64", "0.0float32", "0.0float64", "[0.0]float64", "nanfloat64"]


def test_order_sensitive_and_attr_differences_are_not_merged(optimized):
    x = tf.placeholder(tf.float64, [3], name="x")
    y = tf.placeholder(tf.float64, [3], name="y")
    z = tf.placeholder(tf.float64, [3], name="z")
    s1, s2 = tf.add_n([x, y, z]), tf.add_n([z, y, x])  # summation order changes rounding
    d1, d2 = x - y, y - x
    r1, r2 = tf.reduce_sum(x, 0), tf.reduce_sum(x, 0, keepdims=True)
    opt = optimized([s1, s2, d1, d2, r1, r2], [x, y, z], passes=PASS)
    assert opt.count("AddN") == 2 and opt.count("Sub") == 2 and opt.count("Sum") == 2


def test_never_merges_random_or_stateful_ops(optimized):
    a = tf.random_uniform([3], seed=7)
    b = tf.random_uniform([3], seed=7)
    v = tf.Variable([1.0, 2.0, 3.0])
    r1, r2 = v.read_value() * 2.0, v.read_value() * 2.0
    u1, u2 = tf.assign_add(v, [1.0, 1.0, 1.0]), tf.assign_add(v, [1.0, 1.0, 1.0])
    opt = optimized([a, b, r1, r2, u1, u2], passes=PASS)
    types = opt.types()
    assert types["RandomUniform"] == 2 and types["AssignAdd"] == 2


def test_control_inputs_are_part_of_the_key(optimized):
    x = tf.placeholder(tf.float64, [3], name="x")
    v = tf.Variable(0.0)
    with tf.control_dependencies([tf.assign_add(v, 1.0)]):
        gated = tf.exp(x)
    plain = tf.exp(x)
    opt = optimized(gated + plain, [x], passes=PASS)
    assert opt.count("Exp") == 2


def test_fetched_duplicates_survive_and_agree(optimized, both, same):
    x = tf.placeholder(tf.float64, [3], name="x")
    a = tf.sin(x, name="a")
    b = tf.sin(x, name="b")
    c = tf.sin(x, name="c")
    opt = optimized([a, b, c * 2.0], [x], passes=PASS)
    assert opt.count("Sin") == 2  # a and b are fetched: kept; c merged into a
    same(*both([a, b, c * 2.0], {x: [0.1, 0.2, 0.3]}, passes=PASS))


def test_duplicate_group_ops_merge_but_keep_their_effects(both):
    v = tf.Variable(0.0)
    inc = tf.assign_add(v, 1.0)
    g1, g2 = tf.group(inc), tf.group(inc)
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run([g1, g2])
        assert sess.run(v) == 1.0
