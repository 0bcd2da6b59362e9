"""Arithmetic simplification rules: each rewrite, and the cases each rule must leave alone
(broadcasting that grows the result, dtype changes, control edges, fetched tensors)."""

import inspect

import numpy as np
import pytest

import graphflow as tf
from graphflow.optimizer_passes import arithmetic

RULE = ["arithmetic"]


def _feed(*shapes, seed=0):
    r = np.random.default_rng(seed)
    return [r.uniform(-2, 2, size=s) for s in shapes]


@pytest.mark.parametrize("build", [
    lambda x: x * 1.0, lambda x: 1.0 * x, lambda x: x * tf.constant(np.ones(3)),
    lambda x: x + 0.0, lambda x: 0.0 + x, lambda x: x - tf.constant(np.zeros((1, 3))),
    lambda x: x / 1.0, lambda x: x ** 1.0, lambda x: tf.negative(tf.negative(x)),
    lambda x: tf.identity(tf.identity(x)),
    lambda x: tf.stop_gradient(x), lambda x: tf.cast(x, tf.float64),
    lambda x: tf.reshape(x, [2, 3]), lambda x: tf.transpose(tf.transpose(x)),
    lambda x: tf.transpose(x, [0, 1]),
], ids=["x*1", "1*x", "x*ones", "x+0", "0+x", "x-zeros", "x/1", "x**1", "--x", "identities",
        "stop_gradient", "cast-same", "reshape-same", "transpose2", "transpose-id"])
def test_rewrites_to_the_operand(build, optimized, both, same):
    x = tf.placeholder(tf.float64, [2, 3], name="x")
    y = tf.tanh(build(x), name="out")
    opt = optimized(y, [x], passes=RULE)
    assert opt.op("out").inputs[0].op.type == "Placeholder", opt.types()
    assert set(opt.types()) == {"Placeholder", "Tanh"}
    same(*both(y, {x: _feed((2, 3))[0]}, passes=RULE))


@pytest.mark.parametrize("build, shape", [
    (lambda x: x * tf.constant(np.ones((2, 3))), [3]),       # ones make the result bigger
    (lambda x: x * tf.constant(np.ones((2, 3))), [None, 3]),  # ... or may (batch may be 1)
    (lambda x: x + tf.constant(np.zeros((2, 1))), [3]),
    (lambda x: x * 2.0, [2, 3]),
    (lambda x: x * tf.constant([1.0, 2.0, 1.0], tf.float64), [2, 3]),
    (lambda x: 0.0 - x, [2, 3]),
    (lambda x: tf.reshape(x, [3, 2]), [2, 3]),
    (lambda x: tf.reshape(x, [-1, 3]), [None, 3]),            # static shape not fully known
    (lambda x: tf.transpose(x), [2, 3]),
], ids=["grow", "maybe-grow", "grow-add", "x*2", "not-all-ones", "0-x", "reshape", "reshape-?",
        "transpose"])
def test_leaves_alone(build, shape, optimized, both, same):
    x = tf.placeholder(tf.float64, shape, name="x")
    y = build(x)
    before = optimized(y, [x], passes=[])
    opt = optimized(y, [x], passes=RULE)
    assert opt.types() == before.types()
    assert opt.report["arithmetic"].rewrites == 0
    concrete = [2 if d is None else d for d in shape]
    same(*both(y, {x: _feed(concrete)[0]}, passes=RULE))


def test_dtypes_are_respected(optimized, both, same):
    i = tf.placeholder(tf.int32, [3], name="i")
    q = i / 1          # int32 / int32 -> float64: not i
    c = tf.cast(i, tf.float32)
    opt = optimized([q, c], [i], passes=RULE)
    assert opt.count("RealDiv") == 1 and opt.count("Cast") == 1
    same(*both([q, c], {i: [1, 2, 3]}, passes=RULE))


def test_triple_negation_and_composed_transposes(optimized, both, same):
    x = tf.placeholder(tf.float64, [2, 3, 4], name="x")
    n = tf.negative(tf.negative(tf.negative(x)))
    t = tf.transpose(tf.transpose(x, [1, 0, 2]), [0, 2, 1])
    opt = optimized([n, t], [x], passes=RULE)
    assert opt.count("Neg") == 1 and opt.count("Transpose") == 1
    (transpose,) = [op for op in opt.ops() if op.type == "Transpose"]
    assert transpose.attrs["perm"] == [1, 2, 0]
    same(*both([n, t], {x: _feed((2, 3, 4))[0]}, passes=RULE))


def test_log_of_softmax_becomes_log_softmax(optimized, both, same):
    x = tf.placeholder(tf.float64, [3, 5], name="x")
    y = tf.log(tf.nn.softmax(x), name="logp")
    opt = optimized(y, [x], passes=RULE)
    assert opt.count("LogSoftmax") == 1 and opt.count("Log") == 0
    assert opt.op("logp").type == "LogSoftmax"  # takes the replaced op's name (and line)
    same(*both(y, {x: _feed((3, 5))[0] * 3}, passes=RULE), rtol=1e-12, atol=1e-14)
    # where softmax underflows to 0, log(0) = -inf while log_softmax stays finite
    with tf.Session() as sess:
        assert np.isfinite(sess.run(y, {x: [[0, 800, 0, 0, 0]] * 3})).all()


def test_control_edges_block_rules(optimized):
    x = tf.placeholder(tf.float64, [3], name="x")
    v = tf.Variable(0.0)
    with tf.control_dependencies([tf.assign_add(v, 1.0)]):
        a = tf.identity(x, name="gated")   # has a control input
    b = x * 1.0
    with tf.control_dependencies([b.op]):  # b has a control output
        c = tf.identity(a + b, name="c")
    opt = optimized(c, [x], passes=RULE)
    assert opt.op("gated").type == "Identity"
    assert opt.count("Mul") == 1
    assert opt.report["arithmetic"].rewrites == 0


def test_fetched_tensor_keeps_its_producer(optimized, both, same):
    x = tf.placeholder(tf.float64, [3], name="x")
    m = tf.multiply(x, 1.0, name="m")
    y = tf.exp(m, name="e")
    opt = optimized([m, y], [x], passes=RULE)
    assert opt.op("m").type == "Mul"                    # fetched: still computed
    assert opt.op("e").inputs[0].op.type == "Placeholder"  # its reader moved to x
    same(*both([m, y], {x: [1.0, 2.0, 3.0]}, passes=RULE))


def test_rules_are_small_functions_returning_none_when_they_do_not_match():
    x = tf.placeholder(tf.float32, [3])
    y = x * 2.0
    assert arithmetic.mul_by_one(y.op) is None
    assert arithmetic.mul_by_one((x * 1.0).op) is x
    for rules in arithmetic.RULES.values():
        for rule in rules:  # each rule's algebra is in the comment above it
            assert "->" in (inspect.getcomments(rule) or ""), rule.__name__


def test_select_against_zeros_like_its_other_branch_takes_a_scalar_zero():
    x = tf.placeholder(tf.float32, [None, 5])
    g = tf.placeholder(tf.float32, [None, 5])
    relu_grad, = tf.gradients(tf.nn.relu(x), x, grad_ys=g)
    flipped = tf.where(x > 0, tf.zeros_like(g), g)
    kept = tf.where(x > 0, g, tf.zeros_like(x))  # zeros of another tensor: left alone
    optimized, report = tf.optimize([relu_grad, flipped, kept], feeds=[x, g],
                                    passes=["arithmetic"])
    assert report["arithmetic"].details["rules"] == {"select_zeros_like": 2}
    assert sum(op.type == "ZerosLike" for op in optimized.get_operations()) == 1
    feed = {x: np.array([[1, -2, 0, 3, -0.5]] * 2, np.float32),
            g: np.arange(10, dtype=np.float32).reshape(2, 5) - 3}
    with tf.Session() as sess:
        got, got_flipped, got_kept = sess.run([relu_grad, flipped, kept], feed)
    np.testing.assert_array_equal(got, np.where(feed[x] > 0, feed[g], 0))
    np.testing.assert_array_equal(got_flipped, np.where(feed[x] > 0, 0, feed[g]))
    np.testing.assert_array_equal(got_kept, got)


def test_select_with_a_condition_known_when_the_plan_is_built_takes_that_operand():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    y = tf.placeholder(tf.float32, [2, 3], name="y")
    training = tf.placeholder_with_default(True, [], name="training")
    picked = tf.where(training, tf.exp(x), tf.sin(y), name="picked")
    widened = tf.where(tf.constant(False), tf.constant(1.0), y * 2.0, name="widened")
    wider = tf.where(tf.constant(True), tf.constant(1.0), y, name="wider")  # 1.0 is a scalar: kept
    graph, report = tf.optimize([picked, widened, wider], feeds=[x, y])
    types = [op.type for op in graph.get_operations()]
    assert "Sin" not in types and types.count("Select") == 1
    feed = {x: np.ones((2, 3), np.float32), y: np.full((2, 3), 2, np.float32)}
    with tf.Session() as sess:
        got = sess.run([picked, widened, wider], feed)
        np.testing.assert_allclose(got[0], np.exp(feed[x]))
        np.testing.assert_array_equal(got[1], feed[y] * 2)
        np.testing.assert_array_equal(got[2], np.ones((2, 3)))
        # fed, the flag is a run-time value again
        np.testing.assert_allclose(sess.run(picked, {**feed, training: False}), np.sin(feed[y]))


def test_select_on_a_flag_takes_an_operand_whose_unknown_dims_are_the_results():
    """tf.layers.dropout's where(training, dropped, x) with x [None, 3]: dropped provably has x's
    shape (static_value.same_shape), so the pick needs no static batch size; two independent
    [None, 3] operands are not picked (broadcasting could widen one)."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 3], name="y")
    training = tf.placeholder_with_default(False, [], name="training")
    dropped = tf.exp(tf.layers.dropout(x, rate=0.5, training=training))
    mixed = tf.where(training, y, x * 2.0, name="mixed")
    graph, _ = tf.optimize([dropped, mixed], feeds=[x, y], passes=["constant_folding",
                                                                   "arithmetic"])
    types = [op.type for op in graph.get_operations()]
    assert "RandomUniform" not in types and "Floor" not in types
    assert types.count("Select") == 1  # mixed's
    feed = {x: np.ones((2, 3), np.float32), y: np.ones((1, 3), np.float32)}
    with tf.Session() as sess:
        got_dropped, got_mixed = sess.run([dropped, mixed], feed)
    np.testing.assert_allclose(got_dropped, np.exp(feed[x]))
    np.testing.assert_array_equal(got_mixed, np.full((2, 3), 2.0))


def test_add_n_drops_zeros_like_and_ones_like_products_become_broadcasts(optimized, both, same):
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    g = tf.placeholder(tf.float32, [4, 3], name="g")
    c = tf.placeholder(tf.float32, [3], name="c")
    summed = tf.add_n([g, tf.zeros_like(x), x], name="summed")
    alone = tf.exp(tf.add_n([g, tf.zeros_like(x)]), name="alone")  # (a fetched AddN would stay)
    scaled = tf.multiply(tf.ones_like(x), c, name="scaled")  # [4, 3]: c broadcast
    opt = optimized([summed, alone, scaled], [x, g, c], passes=RULE)
    assert opt.count("ZerosLike") == 0 and opt.count("OnesLike") == 0
    assert opt.report["arithmetic"].details["rules"] == {"add_n_of_zeros": 2,
                                                         "mul_by_ones_like": 1}
    rng = np.random.default_rng(2)
    feed = {x: rng.normal(size=(4, 3)).astype(np.float32),
            g: rng.normal(size=(4, 3)).astype(np.float32),
            c: np.array([1.0, np.nan, -0.0], np.float32)}
    want, got = both([summed, alone, scaled], feed, passes=RULE)
    for w, v in zip(want, got):
        assert w.tobytes() == v.tobytes()
    assert got[2].shape == (4, 3)


def test_sum_to_shape_with_static_shapes_becomes_sums(optimized, both, same):
    from graphflow.ops import gradient_ops
    g = tf.placeholder(tf.float64, [2, 3, 4], name="g")
    same_shape = gradient_ops.sum_to_shape(g, tf.constant([2, 3, 4]))
    reduced = gradient_ops.sum_to_shape(g, tf.constant([3, 1]))  # lead axis and a stretched one
    dynamic = gradient_ops.sum_to_shape(g, tf.shape(tf.placeholder(tf.float64, [None, 1])))
    opt = optimized([tf.exp(same_shape), reduced, dynamic], [g], passes=RULE)
    assert opt.report["arithmetic"].details["rules"].get("static_sum_to_shape") == 2
    assert opt.count("SumToShape") == 1  # the shape read at run time stays
    gv = np.random.default_rng(4).normal(size=(2, 3, 4))
    with tf.Session(passes=RULE) as sess:
        got_same, got_reduced = sess.run([same_shape, reduced], {g: gv})
    np.testing.assert_array_equal(got_same, gv)
    np.testing.assert_allclose(got_reduced, gv.sum(axis=0).sum(axis=1, keepdims=True))


def _nchw_model(x, stride=2, dilation=1):
    """An NHWC input through NCHW convolution and pooling ops and back, as an imported ONNX model
    has it."""
    f = tf.constant(np.random.default_rng(1).normal(size=(3, 3, 3, 4)))
    h = tf.transpose(x, [0, 3, 1, 2])
    h = tf.nn.conv2d(h, f, strides=[1, 1, stride, stride], padding="SAME", data_format="NCHW",
                     dilations=[1, 1, dilation, dilation], name="conv")
    h = tf.transpose(h, [0, 2, 3, 1])
    h = tf.transpose(tf.nn.relu(h), [0, 3, 1, 2])
    h = tf.nn.max_pool(h, [1, 1, 2, 3], [1, 1, 1, 2], "VALID", data_format="NCHW", name="pool")
    h = tf.nn.avg_pool(h, [1, 1, 2, 2], [1, 1, 1, 1], "SAME", data_format="NCHW")
    return tf.tanh(tf.transpose(h, [0, 2, 3, 1]), name="out")


@pytest.mark.parametrize("stride, dilation", [(1, 1), (2, 1), (1, 2)])
def test_nchw_ops_between_layout_transposes_run_in_nhwc(stride, dilation, optimized, both):
    x = tf.placeholder(tf.float64, [None, 9, 11, 3], name="x")
    y = _nchw_model(x, stride, dilation)
    opt = optimized(y, [x], passes=RULE)
    assert opt.count("Transpose") == 0, opt.types()
    assert opt.report["arithmetic"].details["rules"]["nchw_of_transpose"] == 3
    assert {op.attrs["data_format"] for op in opt.ops() if "data_format" in op.attrs} == {"NHWC"}
    conv = opt.op("conv")  # the NHWC convolution keeps the name (a profile shows `conv`)
    assert conv.type == "Conv2D"
    assert conv.attrs["strides"] == [1, stride, stride, 1]
    assert conv.attrs["dilations"] == [1, dilation, dilation, 1]
    assert opt.op("pool").attrs["ksize"] == [1, 2, 3, 1]
    want, got = both(y, {x: _feed((2, 9, 11, 3))[0]}, passes=RULE)
    np.testing.assert_array_equal(got, want)  # the NCHW kernels are these transposes: bit for bit


def test_nchw_ops_without_a_layout_transpose_are_left_alone(optimized, both, same):
    x = tf.placeholder(tf.float64, [2, 3, 5, 6], name="x")  # NCHW already
    f = tf.constant(np.ones((3, 3, 3, 2)))
    a = tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME", data_format="NCHW")
    b = tf.nn.max_pool(tf.transpose(x, [0, 1, 3, 2]), [1, 1, 2, 2], [1, 1, 2, 2], "VALID",
                       data_format="NCHW")  # another permutation
    c = tf.nn.max_pool(tf.transpose(x, [0, 2, 3, 1]), [1, 2, 2, 1], [1, 2, 2, 1], "VALID")  # NHWC
    opt = optimized([a, b, c], [x], passes=RULE)
    assert opt.report["arithmetic"].rewrites == 0
    assert opt.count("Transpose") == 2
    same(*both([a, b, c], {x: _feed((2, 3, 5, 6))[0]}, passes=RULE))


def test_layout_rule_is_declared_by_the_op_facts():
    from graphflow.ops import registry
    assert "->" in inspect.getcomments(arithmetic.nchw_of_transpose)
    for op_type in ("Conv2D", "MaxPool", "AvgPool"):
        assert registry.lookup(op_type).layout_attrs is not None
        assert arithmetic.nchw_of_transpose in arithmetic.rules_for(op_type)
    assert arithmetic.nchw_of_transpose not in arithmetic.rules_for("Relu")
    x = tf.placeholder(tf.float32, [1, 2, 4, 4])
    assert arithmetic.nchw_of_transpose(tf.nn.max_pool(x, 2, 2, "VALID", "NCHW").op) is None


def test_layout_rule_keeps_gradients_of_nchw_ops(both):
    x = tf.placeholder(tf.float64, [2, 9, 11, 3], name="x")
    y = _nchw_model(x)
    grads = tf.gradients(tf.reduce_sum(y * y), [x])
    want, got = both([y, *grads], {x: _feed((2, 9, 11, 3))[0]})  # all passes
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_sum_of_a_negation_negates_the_sum(optimized, both, same):
    x = tf.placeholder(tf.float32, [8, 6, 5], name="x")
    s = tf.reduce_sum(tf.negative(x), [0, 1], name="s")
    opt = optimized(s, [x], passes=RULE)
    assert opt.op("s").type == "Sum" and opt.op("s").inputs[0].op.type == "Placeholder"
    (neg,) = [op for op in opt.ops() if op.type == "Neg"]
    assert neg.inputs[0].op is opt.op("s") and neg.outputs[0].shape.as_list() == [5]
    feed = {x: _feed((8, 6, 5))[0].astype(np.float32)}
    same(*both(s, feed, passes=RULE), rtol=0, atol=0)  # bit for bit
    # the gradient of a broadcast y in x - y: -g summed over the broadcast axes
    y = tf.placeholder(tf.float32, [5], name="y")
    gy = tf.gradients(tf.reduce_sum(tf.square(x - y)), y)[0]
    opt = optimized(gy, [x, y], passes=RULE)
    (neg,) = [op for op in opt.ops() if op.type == "Neg"]
    assert neg.outputs[0].shape.as_list() == [5]
    feed[y] = _feed((5,))[0].astype(np.float32)
    same(*both(gy, feed, passes=RULE), rtol=0, atol=0)


def test_a_negation_read_elsewhere_stays_before_its_sum(optimized):
    x = tf.placeholder(tf.float32, [8, 5], name="x")
    n = tf.negative(x)
    opt = optimized([tf.reduce_sum(n, 0), n * 2.0], [x], passes=RULE)
    assert opt.report["arithmetic"].rewrites == 0
