"""Tests for graphflow/tf1/layers_norm.py (`tf.layers.batch_normalization`): TF1 variable and
update-op names, the UPDATE_OPS idiom with a training placeholder, numbers against TensorFlow,
the fused and the moments paths, and the Python-bool forms."""

import numpy as np
import pytest

import graphflow as tf

# Made by a Python with TensorFlow 2.21 (tf.compat.v1, graph mode): TF1's layer
# logic rebuilt from tf.compat.v1.nn.fused_batch_norm (4-D) / tf.nn.moments +
# tf.nn.batch_normalization (2-D), moving -= (moving - batch) * (1 - 0.9) as update ops, three
# GradientDescentOptimizer(0.01) steps on sum(y * y * [1, 2, ...] + y), then the inference outputs.
# (tf.compat.v1.layers itself needs Keras 2, absent from that TensorFlow.)
TF_AFTER_3_STEPS = {
    "4d": ([0.021997754, -0.08492756], [-0.489024, -0.271296], [0.27717835, 0.36139947],
           [1.7614216, 1.6372688], [-0.47288013, -0.2961377, -0.45582318, -0.32758936]),
    "2d": ([0.7290791, 0.5120927, 0.34312052], [-0.1355, -0.12200002, -0.10950003],
           [0.034873463, 0.3767773, 0.53501904], [1.5611426, 1.8517071, 1.7201028],
           [1.5987691, -0.35247093, 0.9651816, -1.1130068]),
}


def _inputs():
    rng = np.random.default_rng(0)
    x4 = (rng.standard_normal((4, 3, 3, 2)) * 2 + 1).astype(np.float32)
    x2 = (rng.standard_normal((5, 3)) * 2 + 1).astype(np.float32)
    return {"4d": x4, "2d": x2}


@pytest.mark.parametrize("kind", ["4d", "2d"])
def test_training_placeholder_and_update_ops_match_tensorflow(kind):
    xv = _inputs()[kind]
    c = xv.shape[-1]
    x = tf.placeholder(tf.float32, xv.shape)
    training = tf.placeholder(tf.bool, [])
    y = tf.layers.batch_normalization(x, training=training, momentum=0.9)
    loss = tf.reduce_sum(y * y * tf.range(1.0, c + 1) + y)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    assert [v.name for v in tf.global_variables()] == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0",
        "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
    assert [v.name for v in tf.trainable_variables()] == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0"]
    assert [op.name for op in tf.get_collection(tf.GraphKeys.UPDATE_OPS)] == [
        "batch_normalization/AssignMovingAvg/AssignSub",
        "batch_normalization/AssignMovingAvg_1/AssignSub"]
    # 4-D: FusedBatchNorm in a tf.cond on the flag (as TF1's layer: only one branch runs)
    ops = tf.get_default_graph().get_operations()
    forward = [op for op in ops if op.type == "If" and not op.name.startswith("gradients/")]
    branches = [op.attrs[b] for op in forward for b in ("then_branch", "else_branch")]
    fused = [any(o.type == "FusedBatchNorm" for o in g.get_operations()) for g in branches]
    assert fused == ([True, True] if kind == "4d" else [])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train, {x: xv, training: True})
        # a run with training false changes no moving statistic
        before = sess.run(tf.global_variables())
        sess.run(train, {x: xv, training: False})
        after = sess.run(tf.global_variables())
        np.testing.assert_array_equal(before[2], after[2])
        np.testing.assert_array_equal(before[3], after[3])
        inference = sess.run(y, {x: xv, training: False})
    want = TF_AFTER_3_STEPS[kind]
    for got, expected in zip(before, want[:4]):
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-6)
    # the fourth step (training false) used the moving statistics; recompute its outputs here
    gamma, beta, mean, var = after
    expected = (xv - mean) / np.sqrt(var + 1e-3) * gamma + beta
    np.testing.assert_allclose(inference, expected, rtol=1e-5, atol=1e-5)


def test_python_bool_training_and_defaults():
    xv = _inputs()["4d"]
    x = tf.constant(xv)
    y_infer = tf.layers.batch_normalization(x)  # training=False: moving statistics, no updates
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    y_train = tf.layers.batch_normalization(x, training=True, center=False, scale=False,
                                            name="bn")
    names = [v.name for v in tf.global_variables()]
    assert "bn/moving_mean:0" in names and "bn/gamma:0" not in names and "bn/beta:0" not in names
    assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run([y_infer, y_train])
        sess.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS))
        mean, var = sess.run(["bn/moving_mean:0", "bn/moving_variance:0"])
    np.testing.assert_allclose(a, xv / np.sqrt(1 + 1e-3), rtol=1e-6)
    mu, sigma2 = xv.mean(axis=(0, 1, 2)), xv.var(axis=(0, 1, 2))
    np.testing.assert_allclose(b, (xv - mu) / np.sqrt(sigma2 + 1e-3), rtol=1e-4, atol=1e-5)
    n = xv.size / 2
    np.testing.assert_allclose(mean, 0.01 * mu, rtol=1e-5)
    np.testing.assert_allclose(var, 0.99 + 0.01 * sigma2 * n / (n - 1), rtol=1e-5)


def test_channels_first_and_middle_axis():
    rng = np.random.default_rng(1)
    xv = rng.standard_normal((3, 2, 4, 4)).astype(np.float64)
    x = tf.constant(xv)
    y1 = tf.layers.batch_normalization(x, axis=1, training=True)       # fused, NCHW
    y2 = tf.layers.batch_normalization(x, axis=2, training=True)       # moments path
    types = [op.type for op in tf.get_default_graph().get_operations()]
    assert types.count("FusedBatchNorm") == 1
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run([y1, y2])
    for got, axes in ((a, (0, 2, 3)), (b, (0, 1, 3))):
        mu = xv.mean(axis=axes, keepdims=True)
        np.testing.assert_allclose(got, (xv - mu) / np.sqrt(xv.var(axis=axes, keepdims=True) + 1e-3),
                                   rtol=1e-10, atol=1e-12)


def test_reuse_and_errors():
    x = tf.placeholder(tf.float32, [None, 4])
    tf.layers.batch_normalization(x, name="bn")
    tf.layers.batch_normalization(x, name="bn", reuse=True)
    assert len(tf.global_variables()) == 4
    with pytest.raises(ValueError, match="fused=True"):
        tf.layers.batch_normalization(x, fused=True)
    with pytest.raises(TypeError, match="training must be a scalar bool"):
        tf.layers.batch_normalization(x, training=tf.placeholder(tf.float32, []))
    with pytest.raises(ValueError, match="must be known"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32, [None, None]))
