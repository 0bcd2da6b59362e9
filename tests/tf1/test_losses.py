"""Tests for graphflow.tf1.losses: every loss against a numpy formula under every reduction and several
weights shapes, label smoothing, [batch, 1] sparse labels, the LOSSES collection and the total /
regularization helpers, gradients with all-zero weights, dtypes and argument checks."""

import numpy as np
import pytest

import graphflow as tf

R = tf.losses.Reduction
RNG = np.random.default_rng(0)
LABELS = RNG.standard_normal((4, 3))
PREDS = RNG.standard_normal((4, 3))
PROBS = RNG.uniform(0.05, 0.95, (4, 3))
BINARY = (RNG.uniform(size=(4, 3)) > 0.5).astype(np.float64)
LOGITS = RNG.standard_normal((4, 3)) * 2
ONEHOT = np.eye(3)[[0, 2, 1, 2]]
CLASSES = np.array([0, 2, 1, 2])


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def _reduce(losses, weights, reduction):
    """numpy model of TF1's compute_weighted_loss."""
    weights = np.broadcast_to(np.asarray(weights, np.float64), losses.shape)
    weighted = losses * weights
    if reduction == R.NONE:
        return weighted
    total = weighted.sum()
    if reduction == R.SUM:
        return total
    den = {R.MEAN: weights.sum(), R.SUM_OVER_BATCH_SIZE: losses.size,
           R.SUM_BY_NONZERO_WEIGHTS: (weights != 0).sum()}[reduction]
    return 0.0 if den == 0 else total / den


def _log_softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def _huber(e, delta=1.0):
    a = np.abs(e)
    q = np.minimum(a, delta)
    return 0.5 * q * q + delta * (a - q)


CASES = {
    "absolute_difference": (lambda w, r: tf.losses.absolute_difference(LABELS, PREDS, w, reduction=r),
                            np.abs(PREDS - LABELS)),
    "mean_squared_error": (lambda w, r: tf.losses.mean_squared_error(LABELS, PREDS, w, reduction=r),
                           (PREDS - LABELS) ** 2),
    "huber_loss": (lambda w, r: tf.losses.huber_loss(LABELS, PREDS * 2, w, delta=0.7, reduction=r),
                   _huber(PREDS * 2 - LABELS, 0.7)),
    "log_loss": (lambda w, r: tf.losses.log_loss(BINARY, PROBS, w, reduction=r),
                 -BINARY * np.log(PROBS + 1e-7) - (1 - BINARY) * np.log(1 - PROBS + 1e-7)),
    "hinge_loss": (lambda w, r: tf.losses.hinge_loss(BINARY, LOGITS, w, reduction=r),
                   np.maximum(0.0, 1 - (2 * BINARY - 1) * LOGITS)),
    "sigmoid_cross_entropy": (
        lambda w, r: tf.losses.sigmoid_cross_entropy(BINARY, LOGITS, w, reduction=r),
        np.maximum(LOGITS, 0) - LOGITS * BINARY + np.log1p(np.exp(-np.abs(LOGITS)))),
}
ELEMENT_WEIGHTS = [1.0, 0.5, np.array([[1.0], [0.0], [2.0], [0.5]]),
                   np.array([[0.0, 1.0, 3.0]]), (RNG.uniform(size=(4, 3)) > 0.4) * 1.5]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("reduction", [R.SUM_BY_NONZERO_WEIGHTS, R.MEAN, R.SUM,
                                       R.SUM_OVER_BATCH_SIZE, R.NONE])
def test_elementwise_losses_match_numpy(name, reduction):
    build, losses = CASES[name]
    outs = [build(w, reduction) for w in ELEMENT_WEIGHTS]
    for got, w in zip(_run(outs), ELEMENT_WEIGHTS):
        np.testing.assert_allclose(got, _reduce(losses, w, reduction), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_softmax_cross_entropy(smoothing):
    weights = np.array([1.0, 0.0, 2.0, 1.0])
    loss = tf.losses.softmax_cross_entropy(ONEHOT, LOGITS, weights, label_smoothing=smoothing)
    per_example = tf.losses.softmax_cross_entropy(ONEHOT, LOGITS, label_smoothing=smoothing,
                                                  reduction=R.NONE)
    labels = ONEHOT * (1 - smoothing) + smoothing / 3
    want = -(labels * _log_softmax(LOGITS)).sum(axis=1)
    got, got_each = _run([loss, per_example])
    np.testing.assert_allclose(got_each, want, rtol=1e-10)
    np.testing.assert_allclose(got, (want * weights).sum() / 3, rtol=1e-10)
    assert loss.op.name == "softmax_cross_entropy_loss/value"


def test_sigmoid_cross_entropy_label_smoothing():
    loss = tf.losses.sigmoid_cross_entropy(BINARY, LOGITS, label_smoothing=0.1)
    z = BINARY * 0.9 + 0.05
    want = np.maximum(LOGITS, 0) - LOGITS * z + np.log1p(np.exp(-np.abs(LOGITS)))
    np.testing.assert_allclose(_run(loss), want.mean(), rtol=1e-10)


def test_sparse_softmax_cross_entropy_labels_and_weights_shapes():
    want = -_log_softmax(LOGITS)[np.arange(4), CLASSES]
    plain = tf.losses.sparse_softmax_cross_entropy(CLASSES, LOGITS)
    column = tf.losses.sparse_softmax_cross_entropy(CLASSES[:, None].astype(np.int64), LOGITS,
                                                    weights=np.array([[1.0], [2.0], [0.0], [1.0]]))
    ph = tf.placeholder(tf.int32, [None])
    fed = tf.losses.sparse_softmax_cross_entropy(ph, tf.constant(LOGITS), reduction=R.NONE)
    p, c, f = _run([plain, column, fed], {ph: CLASSES})
    np.testing.assert_allclose(p, want.mean(), rtol=1e-10)
    np.testing.assert_allclose(c, (want * [1, 2, 0, 1]).sum() / 3, rtol=1e-10)
    np.testing.assert_allclose(f, want, rtol=1e-10)
    with pytest.raises(TypeError, match="labels must be integers"):
        tf.losses.sparse_softmax_cross_entropy(ONEHOT, LOGITS)


def test_cosine_distance():
    a = LABELS / np.linalg.norm(LABELS, axis=1, keepdims=True)
    b = PREDS / np.linalg.norm(PREDS, axis=1, keepdims=True)
    loss = tf.losses.cosine_distance(a, b, axis=1)
    np.testing.assert_allclose(_run(loss), (1 - (a * b).sum(axis=1)).mean(), rtol=1e-10)
    with pytest.raises(ValueError, match="axis"):
        tf.losses.cosine_distance(a, b)


def test_losses_collection_total_and_regularization():
    w = tf.get_variable("w", initializer=np.array([1.0, 2.0]),
                        regularizer=lambda v: 0.1 * tf.reduce_sum(v * v))
    with tf.name_scope("tower_0"):
        mse = tf.losses.mean_squared_error(LABELS, PREDS)
    absd = tf.losses.absolute_difference(LABELS, PREDS)
    hidden = tf.losses.huber_loss(LABELS, PREDS, loss_collection=None)
    assert tf.losses.get_losses() == [mse, absd]
    assert tf.losses.get_losses(scope="tower_0") == [mse]
    assert hidden not in tf.losses.get_losses()
    assert len(tf.losses.get_regularization_losses()) == 1
    total = tf.losses.get_total_loss()
    data_only = tf.losses.get_total_loss(add_regularization_losses=False)
    reg = tf.losses.get_regularization_loss()
    custom = tf.constant(2.5)
    tf.losses.add_loss(custom)
    assert tf.losses.get_losses()[-1] is custom
    with tf.Session() as sess:
        sess.run(w.initializer)
        t, d, r = sess.run([total, data_only, reg])
    want_data = ((PREDS - LABELS) ** 2).mean() + np.abs(PREDS - LABELS).mean()
    np.testing.assert_allclose([t, d, r], [want_data + 0.5, want_data, 0.5], rtol=1e-10)
    assert total.op.name == "total_loss"


def test_empty_collections():
    assert _run(tf.losses.get_regularization_loss()) == 0.0
    with pytest.raises(ValueError, match="no losses"):
        tf.losses.get_total_loss()


def test_all_zero_weights_give_zero_loss_and_finite_gradients():
    p = tf.Variable(PREDS)
    weights = tf.placeholder(tf.float64, [4, 1])
    loss = tf.losses.mean_squared_error(LABELS, p, weights)
    (grad,) = tf.gradients(loss, [p])
    with tf.Session() as sess:
        sess.run(p.initializer)
        l0, g0 = sess.run([loss, grad], {weights: np.zeros((4, 1))})
        l1, g1 = sess.run([loss, grad], {weights: [[1.0], [0.0], [1.0], [1.0]]})
    assert l0 == 0.0 and np.all(g0 == 0.0)
    mask = np.array([[1.0], [0.0], [1.0], [1.0]])
    np.testing.assert_allclose(g1, 2 * (PREDS - LABELS) * mask / 9, rtol=1e-10)
    np.testing.assert_allclose(l1, ((PREDS - LABELS) ** 2 * mask).sum() / 9, rtol=1e-10)


def test_dtypes_and_argument_checks():
    f32 = tf.losses.mean_squared_error(tf.constant([1, 2, 3]), tf.constant([1.5, 2.0, 2.0]))
    f64 = tf.losses.mean_squared_error(LABELS, PREDS)
    assert f32.dtype == tf.float32 and f64.dtype == tf.float64
    np.testing.assert_allclose(_run(f32), (0.25 + 1.0) / 3, rtol=1e-6)
    with pytest.raises(ValueError, match="weights can not be broadcast to values"):
        tf.losses.mean_squared_error(LABELS, PREDS, weights=np.ones(4))
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        tf.losses.mean_squared_error(LABELS, PREDS, reduction="average")
    with pytest.raises(ValueError, match="incompatible"):
        tf.losses.absolute_difference(LABELS, PREDS[:, :2])
    with pytest.raises(ValueError, match="labels must not be None"):
        tf.losses.log_loss(None, PROBS)


def test_float16_losses_are_reduced_in_float32_and_rounded_once():
    # TF 2.21: mean_squared_error of 70000 float16 ones against zeros is 1.0 (the float16 sum,
    # 70000, is past float16's largest value 65504); graphflow used to give nan (inf / inf)
    p = tf.placeholder(tf.float16, [None])
    w = tf.placeholder(tf.float16, [None])
    losses = [tf.losses.mean_squared_error(p * 0.0, p), tf.losses.absolute_difference(p * 0.0, p, w),
              tf.losses.mean_squared_error(p * 0.0, p, reduction=tf.losses.Reduction.MEAN)]
    grad = tf.gradients(losses[0], p)[0]
    with tf.Session() as sess:
        values = sess.run(losses + [grad], {p: np.ones(70000, np.float16),
                                            w: np.ones(70000, np.float16)})
    for v in values[:3]:
        assert v.dtype == np.float16 and v == 1.0
    assert values[3].dtype == np.float16 and np.isfinite(values[3]).all()
