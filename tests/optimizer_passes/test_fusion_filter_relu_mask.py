"""Fusion (graphflow/optimizer_passes/fusion.py), its filter gradient + ReLU mask rule: a first
layer's Conv2DBackpropFilterBias whose dy is the ReLU gradient `where(y > 0, g, 0)` read by nothing
else becomes one Conv2DBackpropFilterBiasReluMask(x, sizes, g, y); not when the masked dy has
another reader (a layer whose input gradient is needed) or is fetched; a training run gives the
same bits with and without it (the kernel masks the same blocks the unfused plan's filter gradient
reads)."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.optimizer_passes import fusion

FUSED = "Conv2DBackpropFilterBiasReluMask"


def _x(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(np.float32)


def _layer(x, c_in, c_out, seed):
    w = tf.Variable(_x(3, 3, c_in, c_out, seed=seed) * 0.3)
    b = tf.Variable(_x(c_out, seed=seed + 1))
    return tf.nn.relu(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME") + b), w, b


def _model(n=16, size=16):
    x = tf.placeholder(tf.float32, [n, size, size, 3], name="x")
    h1, w1, b1 = _layer(x, 3, 16, 1)
    h2, w2, b2 = _layer(h1, 16, 8, 3)
    loss = tf.reduce_sum(h2 * h2) * 1e-3
    return x, loss, [w1, b1, w2, b2]


def test_the_first_layers_relu_gradient_joins_its_filter_gradient(optimized, same):
    x, loss, params = _model()
    grads = tf.gradients(loss, params)
    opt = optimized(grads, [x])
    fused = [op for op in opt.ops() if op.type == FUSED]
    assert len(fused) == 1  # the second layer's dy also feeds the first layer's input gradient
    # the second layer's filter and bias gradients, with its input gradient
    assert opt.count("Conv2DBackpropInputFilter") == 1
    (op,) = fused
    assert op.attrs["member_types"][:2] == ["Conv2DBackpropFilter", "Sum"]
    assert "Select" in op.attrs["member_types"] and op.name == op.attrs["members"][0]
    assert op.inputs[3].op.type == "FusedConv2D"  # relu(conv2d(x, w) + b), fused too
    assert opt.report["fusion"].details["fused_filter_relu_masks"] == 1
    feed = {x: _x(16, 16, 16, 3, seed=5)}
    init = tf.global_variables_initializer()
    results = []
    for optimize in (False, True):
        with tf.Session(optimize=optimize) as sess:
            sess.run(init)
            results.append(sess.run(grads, feed))
    same(*results, rtol=1e-5, atol=1e-5)


def test_not_when_the_masked_gradient_has_another_reader_or_is_fetched(optimized):
    x, loss, params = _model()
    relu_grad = tf.gradients(loss, params + [x])
    opt = optimized(relu_grad, [x])  # dL/dx: the first layer's input gradient reads the mask
    assert not any(op.type == FUSED for op in opt.ops())
    tf.reset_default_graph()
    x, loss, params = _model()
    grads = tf.gradients(loss, params)
    select = next(op for op in tf.get_default_graph().get_operations()
                  if op.type == "Select" and any(c.type == "Conv2DBackpropFilter"
                                                 and c.inputs[0] is x
                                                 for c in op.outputs[0]._consumers))
    opt = optimized(grads + [select.outputs[0]], [x])
    assert not any(op.type == FUSED for op in opt.ops())


def _train(fuse, monkeypatch, threads, steps=4):
    monkeypatch.setattr(fusion, "FUSE_FILTER_RELU_MASK", fuse)
    tf.reset_default_graph()
    x, loss, params = _model(n=32, size=32)  # large enough for oneDNN's blocks where installed
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    feed = {x: _x(32, 32, 32, 3, seed=9)}
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        meta = tf.RunMetadata()
        losses = [sess.run([loss, train], feed, run_metadata=meta)[0] for _ in range(steps)]
        values = sess.run(params)
    return losses, values, sum(op.type == FUSED for op in meta.plan.ops)


@pytest.mark.parametrize("threads", [1, 2])
def test_training_gives_the_same_bits_with_and_without_the_fusion(monkeypatch, threads):
    losses, values, fused = _train(True, monkeypatch, threads)
    want_losses, want_values, unfused = _train(False, monkeypatch, threads)
    assert fused == 1 and unfused == 0
    assert losses == want_losses
    for got, want in zip(values, want_values):
        np.testing.assert_array_equal(got, want)
