"""graphflow.tf1.math (`tf.math`): the composites it adds to the math ops — reduce_variance,
reduce_std, log_sigmoid — against numpy, with gradients by finite differences."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.optimizer_passes import fusion_elementwise


@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, False), ([0, 2], True), (-1, True)])
def test_reduce_variance_and_std_match_numpy(axis, keepdims):
    x = np.random.default_rng(0).standard_normal((3, 4, 5))
    xs = tf.placeholder(tf.float64, x.shape)
    var = tf.math.reduce_variance(xs, axis=axis, keepdims=keepdims)
    std = tf.math.reduce_std(xs, axis=axis, keepdims=keepdims)
    with tf.Session() as sess:
        got_var, got_std = sess.run([var, std], {xs: x})
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    np.testing.assert_allclose(got_var, np.var(x, axis=np_axis, keepdims=keepdims), rtol=1e-12)
    np.testing.assert_allclose(got_std, np.std(x, axis=np_axis, keepdims=keepdims), rtol=1e-12)
    assert var.shape.as_list() == list(np.var(x, axis=np_axis, keepdims=keepdims).shape)


def test_reduce_std_gradient_matches_finite_differences():
    x = np.random.default_rng(1).standard_normal((3, 4))
    xs = tf.placeholder(tf.float64, x.shape)
    y = tf.reduce_sum(tf.math.reduce_std(xs, axis=1) * [1.0, 2.0, 3.0])
    grad, = tf.gradients(y, [xs])
    with tf.Session() as sess:
        got = sess.run(grad, {xs: x})
    eps, numeric = 1e-6, np.zeros_like(x)
    f = lambda v: np.sum(np.std(v, axis=1) * [1.0, 2.0, 3.0])  # noqa: E731
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        numeric[i] = (f(x + d) - f(x - d)) / (2 * eps)
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8)


def test_log_sigmoid_is_stable_for_large_inputs():
    x = np.array([-800.0, -3.0, 0.0, 3.0, 800.0])
    with tf.Session() as sess:
        got = sess.run(tf.math.log_sigmoid(tf.constant(x)))
    want = -np.logaddexp(0.0, -x)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.all(np.isfinite(got))


@pytest.mark.parametrize("fused", [False, True], ids=["op", "fused"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_keeps_its_relative_precision_in_the_tails(dtype, fused, monkeypatch):
    # TF1 gives sigmoid(-20) = 2.0611537e-09 in float32; the formula through tanh gave 0 there
    # op: the Sigmoid kernel itself (a large op alone would be a fused program of one instruction)
    monkeypatch.setattr(fusion_elementwise, "SINGLE_OP_MIN_ELEMENTS", 1 << 40)
    x = np.tile(np.array([-90.0, -40.0, -20.0, -10.0, -1.0, 0.0, 1.0, 10.0, 20.0]), 8192)
    xs = tf.placeholder(dtype, x.shape)
    # fused: the sigmoid of x / 2 * 2 (exact), one FusedElementwise with the multiply
    y = tf.sigmoid(xs * 2.0) if fused else tf.sigmoid(xs)
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        got = sess.run(y, {xs: (x / 2 if fused else x).astype(dtype)},
                       options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                       run_metadata=metadata)
    labels = [n.timeline_label for d in metadata.step_stats.dev_stats for n in d.node_stats]
    assert any("FusedElementwise" in label for label in labels) == fused
    want = 1.0 / (1.0 + np.exp(-x))
    assert got.dtype == dtype and np.all(got[x < 0] > 0)
    # (-90: a float32 denormal, rounded to its own spacing)
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps,
                               atol=2 * np.finfo(dtype).smallest_subnormal)
