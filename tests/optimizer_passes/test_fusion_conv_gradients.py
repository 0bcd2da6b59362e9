"""Fusion's convolution gradient rules (graphflow/optimizer_passes/fusion_conv_gradients.py): a
convolution's Conv2DBackpropFilter and the bias gradient read from the same dy become one
Conv2DBackpropFilterBias; when it must not fire (another dy, a Sum that also reduces the channel
axis or keeps dims, an NCHW Add's two-step Sum, control inputs, an op fetched as a target). A hidden
layer's Conv2DBackpropInput joins its Conv2DBackpropFilterBias (Conv2DBackpropInputFilter), the
same bits; not when the two read different dy or attrs, when one reads the other's output, or with
control inputs or an op fetched. A training run gives the same numbers with and without them."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu.onednn import dnnl_matmul
from graphflow.ops import fused_ops, nn_ops
from graphflow.optimizer_passes import fusion

PASS = ["fusion"]
# the fused bias gradient sums in oneDNN's order where oneDNN runs (float32): see
# tests/kernels/cpu/reference/test_fused_conv_kernels.py's BIAS_GRAD_TOLERANCE
RTOL, ATOL = 1e-5, 1e-5


@pytest.fixture(autouse=True)
def _no_relu_mask(monkeypatch):
    """A first layer's ReLU gradient would join its Conv2DBackpropFilterBias: that rule has its
    own tests (test_fusion_filter_relu_mask.py); here the filter + bias rule alone."""
    monkeypatch.setattr(fusion, "FUSE_FILTER_RELU_MASK", False)


@pytest.fixture
def input_filter_rule(monkeypatch):
    """The input + filter + bias rule on; the filter + bias rule's own tests run without it (a
    hidden layer's Conv2DBackpropFilterBias would join its input gradient)."""
    monkeypatch.setattr(fusion, "FUSE_INPUT_FILTER_GRADIENTS", True)


@pytest.fixture(autouse=True)
def _no_input_filter_rule(monkeypatch):
    monkeypatch.setattr(fusion, "FUSE_INPUT_FILTER_GRADIENTS", False)


def _x(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(np.float32)


def _layer(x, c_in, c_out, seed, fmt="NHWC", bias_add=False, nchw_add=False):
    """relu(conv2d(x, w) + b) and its variables (w, b)."""
    w = tf.Variable(_x(3, 3, c_in, c_out, seed=seed) * 0.3)
    b = tf.Variable(_x(*((c_out, 1, 1) if nchw_add else (c_out,)), seed=seed + 1))
    conv = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", data_format=fmt)
    y = tf.nn.bias_add(conv, b, data_format=fmt) if bias_add else conv + b
    return tf.nn.relu(y), w, b


def _filter_bias_ops(opt):
    return [op for op in opt.ops() if op.type == "Conv2DBackpropFilterBias"]


def test_filter_and_bias_gradients_become_one_op(optimized, both, same):
    x = tf.placeholder(tf.float32, [4, 8, 8, 3], name="x")
    h, w1, b1 = _layer(x, 3, 8, 1)                   # Add: Sum(dy, [0, 1, 2])
    h, w2, b2 = _layer(h, 8, 6, 3, bias_add=True)   # BiasAdd: BiasAddGrad(dy)
    loss = tf.reduce_sum(h * h)
    grads = tf.gradients(loss, [w1, b1, w2, b2])
    opt = optimized(grads, [x])  # the whole pipeline: the plans' Sum has static axes
    fused = _filter_bias_ops(opt)
    assert len(fused) == 2 and opt.count("Conv2DBackpropFilter") == 0
    assert opt.count("Sum") == 0 and opt.count("BiasAddGrad") == 0
    assert sorted(op.attrs["bias_reduction"] for op in fused) == ["BiasAddGrad", "Sum"]
    for op in fused:
        assert op.attrs["member_types"] in (["Conv2DBackpropFilter", "Sum"],
                                            ["Conv2DBackpropFilter", "BiasAddGrad"])
        assert op.name == op.attrs["members"][0]  # the filter gradient's name
    assert opt.report["fusion"].details["fused_conv_gradients"] == 2
    # the fetched gradients are the fused op's two outputs
    assert {t.op for t in opt.fetches} == set(fused)
    assert sorted(t.value_index for t in opt.fetches) == [0, 0, 1, 1]
    init = tf.global_variables_initializer()
    feed = {x: _x(4, 8, 8, 3, seed=5)}
    results = []
    for optimize in (False, True):
        with tf.Session(optimize=optimize) as sess:
            sess.run(init)
            results.append(sess.run(grads, feed))
    same(*results, rtol=RTOL, atol=ATOL)


def test_nchw_bias_add_fuses_and_an_nchw_add_does_not(optimized):
    x = tf.placeholder(tf.float32, [2, 3, 6, 5], name="x")
    h1, w1, b1 = _layer(x, 3, 4, 1, "NCHW", bias_add=True)
    h2, w2, b2 = _layer(x, 3, 4, 3, "NCHW", nchw_add=True)  # a [C, 1, 1] bias: Sum of a Sum
    grads = tf.gradients(tf.reduce_sum(h1 * h2), [w1, b1, w2, b2])
    opt = optimized(grads, [x])
    (fused,) = _filter_bias_ops(opt)
    assert fused.attrs["data_format"] == "NCHW" and fused.attrs["bias_reduction"] == "BiasAddGrad"
    assert opt.count("Conv2DBackpropFilter") == 1


def _grads_of(dy_shape=(2, 6, 6, 4)):
    """(x, dy, dW) of a hand-built filter gradient over placeholders."""
    x = tf.placeholder(tf.float32, [2, 6, 6, 3], name="x")
    dy = tf.placeholder(tf.float32, list(dy_shape), name="dy")
    dw = tf.nn.conv2d_backprop_filter(x, [3, 3, 3, 4], dy, [1, 1, 1, 1], "SAME")
    return x, dy, dw


@pytest.mark.parametrize("reduction", [
    lambda dy: tf.reduce_sum(dy, [0, 1, 2]),
    lambda dy: tf.reduce_sum(dy, [-4, 2, 1]),   # any spelling of the same axes
    lambda dy: nn_ops.bias_add_grad(dy),
], ids=["Sum", "Sum negative axes", "BiasAddGrad"])
def test_fires_on_the_non_channel_axes_of_the_same_dy(reduction, optimized, both, same):
    x, dy, dw = _grads_of()
    db = reduction(dy)
    opt = optimized([dw, db], [x, dy], passes=PASS)
    assert len(_filter_bias_ops(opt)) == 1
    feed = {x: _x(2, 6, 6, 3, seed=1), dy: _x(2, 6, 6, 4, seed=2)}
    same(*both([dw, db], feed, passes=PASS), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("reduction", [
    lambda dy, other: tf.reduce_sum(other, [0, 1, 2]),           # another tensor
    lambda dy, other: tf.reduce_sum(dy * 2.0, [0, 1, 2]),        # a value computed from dy
    lambda dy, other: tf.reduce_sum(dy, [0, 1, 2, 3]),           # also the channel axis
    lambda dy, other: tf.reduce_sum(dy),                         # every axis
    lambda dy, other: tf.reduce_sum(dy, [0, 1, 3]),              # the channel axis, not W
    lambda dy, other: tf.reduce_sum(dy, [0, 1, 2], keepdims=True),  # [1, 1, 1, C]
    lambda dy, other: tf.reduce_mean(dy, [0, 1, 2]),             # not a sum
    lambda dy, other: nn_ops.bias_add_grad(dy, data_format="NCHW"),  # another channel axis
], ids=["other dy", "computed from dy", "with channels", "all axes", "without W", "keepdims",
        "mean", "BiasAddGrad NCHW"])
def test_does_not_fire_on_other_reductions(reduction, optimized):
    x, dy, dw = _grads_of()
    other = tf.placeholder(tf.float32, [2, 6, 6, 4], name="other")
    db = reduction(dy, other)
    opt = optimized([dw, db], [x, dy, other], passes=PASS)
    assert not _filter_bias_ops(opt) and opt.count("Conv2DBackpropFilter") == 1


def test_an_op_fetched_as_a_target_or_with_control_inputs_stays(optimized):
    x, dy, dw = _grads_of()
    db = tf.reduce_sum(dy, [0, 1, 2])
    assert not _filter_bias_ops(optimized([dw, db.op], [x, dy], passes=PASS))
    assert not _filter_bias_ops(optimized([dw.op, db], [x, dy], passes=PASS))
    with tf.control_dependencies([tf.no_op(name="first")]):
        db_after = tf.reduce_sum(dy, [0, 1, 2])
    assert not _filter_bias_ops(optimized([dw, db_after], [x, dy], passes=PASS))


def test_control_outputs_move_to_the_fused_op(optimized, both, same):
    x, dy, dw = _grads_of()
    db = tf.reduce_sum(dy, [0, 1, 2])
    with tf.control_dependencies([db.op, dw.op]):
        after = tf.identity(x, name="after")
    opt = optimized([dw, db, after], [x, dy], passes=PASS)
    (fused,) = _filter_bias_ops(opt)
    assert list(opt.op("after").control_inputs) == [fused]
    feed = {x: _x(2, 6, 6, 3, seed=1), dy: _x(2, 6, 6, 4, seed=2)}
    same(*both([dw, db, after], feed, passes=PASS), rtol=RTOL, atol=ATOL)


def test_one_bias_gradient_pairs_with_one_filter_gradient(optimized, both, same):
    x, dy, dw = _grads_of()
    dw2 = tf.nn.conv2d_backprop_filter(x * 2.0, [3, 3, 3, 4], dy, [1, 1, 1, 1], "SAME")
    db = tf.reduce_sum(dy, [0, 1, 2])
    opt = optimized([dw, dw2, db], [x, dy], passes=PASS)
    assert len(_filter_bias_ops(opt)) == 1 and opt.count("Conv2DBackpropFilter") == 1
    feed = {x: _x(2, 6, 6, 3, seed=1), dy: _x(2, 6, 6, 4, seed=2)}
    same(*both([dw, dw2, db], feed, passes=PASS), rtol=RTOL, atol=ATOL)


def _train(fuse, monkeypatch, steps=5):
    """Losses and final variables of a small CNN trained with Adam (16 images of 16x16: float32
    convolutions large enough for oneDNN where it is installed)."""
    monkeypatch.setattr(fusion, "FUSE_CONV_GRADIENTS", fuse)
    tf.reset_default_graph()
    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [16, 16, 16, 3])
    y = tf.placeholder(tf.float32, [16, 10])
    h, _, _ = _layer(x, 3, 16, 1)
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    h = tf.layers.conv2d(h, 16, 3, padding="same", activation=tf.nn.relu)  # BiasAdd
    logits = tf.layers.dense(tf.reshape(h, [16, 8 * 8 * 16]), 10)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    rng = np.random.default_rng(7)
    feed = {x: rng.standard_normal((16, 16, 16, 3)).astype(np.float32),
            y: np.eye(10, dtype=np.float32)[rng.integers(0, 10, 16)]}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        meta = tf.RunMetadata()
        losses = [sess.run([loss, train], feed, run_metadata=meta)[0] for _ in range(steps)]
        values = sess.run(tf.trainable_variables())
    fused = sum(op.type in ("Conv2DBackpropFilterBias", "Conv2DBackpropInputFilter")
                for op in meta.plan.ops)
    return losses, values, fused


@pytest.mark.parametrize("input_rule", [False, True])
def test_training_gives_the_same_numbers_with_and_without_the_fusion(monkeypatch, same, input_rule):
    monkeypatch.setattr(fusion, "FUSE_INPUT_FILTER_GRADIENTS", input_rule)
    losses, values, fused = _train(True, monkeypatch)
    want_losses, want_values, unfused = _train(False, monkeypatch)
    assert fused == 2 and unfused == 0
    same(want_losses, losses, rtol=RTOL, atol=ATOL)
    same(want_values, values, rtol=RTOL, atol=ATOL)


# ------------------------------------------------------------------ input + filter + bias gradients
def _input_filter_ops(opt):
    return [op for op in opt.ops() if op.type == "Conv2DBackpropInputFilter"]


def test_a_hidden_layers_three_gradients_become_one_op(optimized, same, input_filter_rule):
    x = tf.placeholder(tf.float64, [2, 8, 8, 3], name="x")
    w1 = tf.Variable(_x(3, 3, 3, 4, seed=1).astype(np.float64))
    h = tf.nn.relu(tf.nn.conv2d(x, w1, [1, 1, 1, 1], "SAME"))
    w2 = tf.Variable(_x(3, 3, 4, 5, seed=2).astype(np.float64))
    b2 = tf.Variable(_x(5, seed=3).astype(np.float64))
    y = tf.nn.bias_add(tf.nn.conv2d(h, w2, [1, 1, 1, 1], "SAME"), b2)
    grads = tf.gradients(tf.reduce_sum(y * y), [w1, w2, b2])
    opt = optimized(grads, [x])
    (fused,) = _input_filter_ops(opt)
    assert opt.count("Conv2DBackpropInput") == 0 and opt.count("Conv2DBackpropFilterBias") == 0
    assert fused.attrs["member_types"] == ["Conv2DBackpropInput", "Conv2DBackpropFilter",
                                           "BiasAddGrad"]
    assert fused.name == fused.attrs["members"][0]  # the input gradient's name
    assert opt.report["fusion"].details["fused_input_filter_gradients"] == 1
    assert {t.op for t in opt.fetches[1:]} == {fused}
    # float64: the numpy kernels, the same bits with the rule and without
    same(*_with_and_without_the_rule(grads, {x: _x(2, 8, 8, 3, seed=5).astype(np.float64)}),
         rtol=0, atol=0)


def _with_and_without_the_rule(fetches, feed):
    """The values of `fetches` after initializing the variables, without the input + filter rule
    and with it."""
    init = tf.global_variables_initializer()
    results = []
    for flag in (False, True):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(fusion, "FUSE_INPUT_FILTER_GRADIENTS", flag)
            with tf.Session() as sess:
                sess.run(init)
                results.append(sess.run(fetches, feed))
    return results


def _gradient_ops():
    """Conv2DBackpropInput and Conv2DBackpropFilterBias of one dy placeholder, as built by hand."""
    x = tf.placeholder(tf.float32, [2, 6, 6, 3], name="x")
    f = tf.placeholder(tf.float32, [3, 3, 3, 4], name="f")
    dy = tf.placeholder(tf.float32, [2, 6, 6, 4], name="dy")
    dx = tf.nn.conv2d_backprop_input([2, 6, 6, 3], f, dy, [1, 1, 1, 1], "SAME")
    dw, db = fused_ops.conv2d_backprop_filter_bias(x, [3, 3, 3, 4], dy, [1, 1, 1, 1], "SAME")
    feed = {x: _x(2, 6, 6, 3, seed=1), f: _x(3, 3, 3, 4, seed=2)}
    return x, f, dy, dx, dw, db, feed


def test_input_gradient_joins_only_its_own_dy_and_attrs(optimized, input_filter_rule):
    _, _, dy, dx, dw, db, _ = _gradient_ops()
    opt = optimized([dx, dw, db], [dy], passes=PASS)
    assert len(_input_filter_ops(opt)) == 1
    tf.reset_default_graph()
    _, _, dy, _, dw, db, _ = _gradient_ops()
    other = tf.placeholder(tf.float32, [2, 6, 6, 4])
    f2 = tf.placeholder(tf.float32, [3, 3, 3, 4])
    dx2 = tf.nn.conv2d_backprop_input([2, 6, 6, 3], f2, other, [1, 1, 1, 1], "SAME")
    opt = optimized([dx2, dw, db], [dy, other], passes=PASS)
    assert not _input_filter_ops(opt)
    tf.reset_default_graph()
    _, f, dy, _, dw, db, _ = _gradient_ops()
    valid = tf.nn.conv2d_backprop_input([2, 8, 8, 3], f, dy, [1, 1, 1, 1], "VALID")  # 8x8 -> 6x6
    assert not _input_filter_ops(optimized([valid, dw, db], [dy], passes=PASS))


def test_no_fusion_when_one_gradient_reads_the_other(optimized, both, same, input_filter_rule):
    x = tf.placeholder(tf.float32, [2, 6, 6, 3], name="x")
    f = tf.placeholder(tf.float32, [3, 3, 3, 4], name="f")
    dy = tf.placeholder(tf.float32, [2, 6, 6, 4], name="dy")
    dx = tf.nn.conv2d_backprop_input([2, 6, 6, 3], f, dy, [1, 1, 1, 1], "SAME")
    dw, db = fused_ops.conv2d_backprop_filter_bias(x + dx, [3, 3, 3, 4], dy, [1, 1, 1, 1],
                                                   "SAME")
    opt = optimized([dx, dw, db], [x, f, dy], passes=PASS)
    assert not _input_filter_ops(opt)
    feed = {x: _x(2, 6, 6, 3, seed=1), f: _x(3, 3, 3, 4, seed=2), dy: _x(2, 6, 6, 4, seed=3)}
    same(*both([dx, dw, db], feed, passes=PASS), rtol=RTOL, atol=ATOL)


def test_the_input_gradients_control_inputs_go_to_the_fused_op(optimized, input_filter_rule):
    _, _, dy, dx, dw, db, _ = _gradient_ops()
    gate = tf.no_op(name="gate")
    with tf.control_dependencies([gate]):
        dx2 = tf.nn.conv2d_backprop_input([2, 6, 6, 3], tf.ones([3, 3, 3, 4]), dy, [1, 1, 1, 1],
                                          "SAME")
    fused = _input_filter_ops(optimized([dx2, dw, db], [dy], passes=PASS))
    assert [[c.name for c in op.control_inputs] for op in fused] == [["gate"]]
    # ... but not when a control input needs the filter gradient (the fused op would wait for
    # itself)
    tf.reset_default_graph()
    _, _, dy, dx, dw, db, _ = _gradient_ops()
    after_dw = tf.identity(dw, name="after_dw")
    with tf.control_dependencies([after_dw.op]):
        dx3 = tf.nn.conv2d_backprop_input([2, 6, 6, 3], tf.ones([3, 3, 3, 4]), dy, [1, 1, 1, 1],
                                          "SAME")
    assert not _input_filter_ops(optimized([dx3, dw, db, after_dw], [dy], passes=PASS))


def test_no_fusion_with_control_inputs_on_the_filter_gradient_or_a_fetched_op(optimized,
                                                                                input_filter_rule):
    x = tf.placeholder(tf.float32, [2, 6, 6, 3], name="x")
    dy = tf.placeholder(tf.float32, [2, 6, 6, 4], name="dy")
    gate = tf.no_op()
    with tf.control_dependencies([gate]):
        dw = tf.nn.conv2d_backprop_filter(x, [3, 3, 3, 4], dy, [1, 1, 1, 1], "SAME")
    dx = tf.nn.conv2d_backprop_input([2, 6, 6, 3], tf.ones([3, 3, 3, 4]), dy, [1, 1, 1, 1], "SAME")
    assert not _input_filter_ops(optimized([dx, dw], [x, dy], passes=PASS))
    tf.reset_default_graph()
    _, _, dy, dx, dw, db, _ = _gradient_ops()
    opt = optimized([dx, dw, db, dx.op], [dy], passes=PASS)
    assert not _input_filter_ops(opt)


def test_float32_layers_keep_their_bits(same, input_filter_rule):
    """The CPU kernel's shared blocks (oneDNN, where installed) against the two ops alone; the
    matrix products' threading fixed so that both runs take the same way."""
    results = []
    for flag in (False, True):
        tf.reset_default_graph()
        x = tf.placeholder(tf.float32, [16, 16, 16, 8])
        f = tf.constant(_x(3, 3, 8, 16, seed=2))
        dy = tf.placeholder(tf.float32, [16, 16, 16, 16])
        dx = tf.nn.conv2d_backprop_input([16, 16, 16, 8], f, dy, [1, 1, 1, 1], "SAME")
        dw, db = fused_ops.conv2d_backprop_filter_bias(x, [3, 3, 8, 16], dy, [1, 1, 1, 1], "SAME")
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(fusion, "FUSE_INPUT_FILTER_GRADIENTS", flag)
            patch.setattr(dnnl_matmul, "fixed_mode", lambda: dnnl_matmul.BLOCKS)
            with tf.Session() as sess:
                results.append(sess.run([dx, dw, db], {x: _x(16, 16, 16, 8, seed=4),
                                                       dy: _x(16, 16, 16, 16, seed=5)}))
    same(*results, rtol=0, atol=0)


def test_a_layer_without_bias_pairs_its_input_and_filter_gradients(optimized, same,
                                                                   input_filter_rule):
    """A convolution before a batch norm has no bias: its input gradient and Conv2DBackpropFilter
    become one Conv2DBackpropInputFilter with two outputs (bias_reduction "")."""
    x = tf.placeholder(tf.float64, [2, 8, 8, 3], name="x")
    w1 = tf.Variable(_x(3, 3, 3, 4, seed=1).astype(np.float64))
    w2 = tf.Variable(_x(3, 3, 4, 5, seed=2).astype(np.float64))
    h = tf.nn.conv2d(x, w1, [1, 1, 1, 1], "SAME")
    mean, variance = tf.nn.moments(h, [0, 1, 2])
    h = tf.nn.relu(tf.nn.batch_normalization(h, mean, variance, None, None, 1e-3))
    y = tf.nn.conv2d(h, w2, [1, 1, 1, 1], "SAME")
    grads = tf.gradients(tf.reduce_sum(y * y), [w1, w2])
    opt = optimized(grads, [x])
    (fused,) = _input_filter_ops(opt)
    assert fused.attrs["bias_reduction"] == "" and len(fused.outputs) == 2
    assert fused.attrs["member_types"] == ["Conv2DBackpropInput", "Conv2DBackpropFilter"]
    assert opt.count("Conv2DBackpropInput") == 0
    # float64: the numpy kernels, the same bits with the rule and without
    same(*_with_and_without_the_rule(grads, {x: _x(2, 8, 8, 3, seed=5).astype(np.float64)}),
         rtol=0, atol=0)
