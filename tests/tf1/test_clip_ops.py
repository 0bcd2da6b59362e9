"""Tests for graphflow.tf1.clip_ops: clip_by_norm, global_norm and clip_by_global_norm against numpy,
including zero tensors, None entries, axes, use_norm and TF1's NaN result for an infinite norm."""

import numpy as np
import pytest

import graphflow as tf


def _np_clip_by_norm(t, clip, axes=None):
    norm = np.sqrt((t * t).sum(axis=axes, keepdims=True))
    return t * clip / np.maximum(norm, clip)


def test_clip_by_norm():
    rng = np.random.default_rng(3)
    t_v = rng.standard_normal((4, 5)) * 3
    t = tf.constant(t_v)
    whole = tf.clip_by_norm(t, 2.0)
    rows = tf.clip_by_norm(t, 2.0, axes=[1])
    small = tf.clip_by_norm(t, 1e6)
    zero = tf.clip_by_norm(tf.zeros([3]), 1.0)
    assert whole.name == "clip_by_norm:0"
    with tf.Session() as sess:
        w, r, s, z = sess.run([whole, rows, small, zero])
    np.testing.assert_allclose(w, _np_clip_by_norm(t_v, 2.0), rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(w), 2.0, rtol=1e-12)
    np.testing.assert_allclose(r, _np_clip_by_norm(t_v, 2.0, axes=1), rtol=1e-12)
    np.testing.assert_allclose(s, t_v, rtol=1e-12)
    np.testing.assert_array_equal(z, np.zeros(3, np.float32))


def test_global_norm_and_clip_by_global_norm():
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((3, 2)), rng.standard_normal(4)]
    tensors = [tf.constant(a) for a in arrays]
    expected_norm = np.sqrt(sum((a * a).sum() for a in arrays))
    norm = tf.global_norm(tensors + [None])
    clipped, used = tf.clip_by_global_norm([tensors[0], None, tensors[1]], 1.5)
    unclipped, _ = tf.clip_by_global_norm(tensors, 100.0)
    assert clipped[1] is None
    with tf.Session() as sess:
        n, (c0, c2), u, (k0, k1) = sess.run([norm, [clipped[0], clipped[2]], used, unclipped])
    np.testing.assert_allclose(n, expected_norm, rtol=1e-12)
    np.testing.assert_allclose(u, expected_norm, rtol=1e-12)
    np.testing.assert_allclose(c0, arrays[0] * 1.5 / expected_norm, rtol=1e-12)
    np.testing.assert_allclose(c2, arrays[1] * 1.5 / expected_norm, rtol=1e-12)
    np.testing.assert_allclose(np.sqrt((c0 ** 2).sum() + (c2 ** 2).sum()), 1.5, rtol=1e-12)
    np.testing.assert_allclose(k0, arrays[0], rtol=1e-12)
    np.testing.assert_allclose(k1, arrays[1], rtol=1e-12)


def test_clip_by_global_norm_inf_gives_nan_and_use_norm():
    t = tf.constant([np.inf, 1.0])
    (c,), _ = tf.clip_by_global_norm([t], 1.0)
    (d,), used = tf.clip_by_global_norm([tf.constant([3.0, 4.0])], 1.0, use_norm=10.0)
    with tf.Session() as sess, np.errstate(invalid="ignore"):  # inf - inf is the point here
        c_v, d_v, used_v = sess.run([c, d, used])
    assert np.isnan(c_v).all()
    np.testing.assert_allclose(d_v, [0.3, 0.4], rtol=1e-6)
    assert used_v == 10.0
    with pytest.raises(TypeError, match="sequence"):
        tf.clip_by_global_norm(tf.constant([1.0]), 1.0)
