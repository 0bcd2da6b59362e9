"""TF1 programs that use the math and linear-algebra functions as tutorials did (Gaussian-process
regression through a Cholesky factor, discounted returns with a reverse cumsum, a mixture density
with reduce_logsumexp, grids from linspace/meshgrid, segment statistics and bincount, a bilinear
layer with tensordot), run with `import graphflow as tf` and checked against numpy."""

import math

import numpy as np
import pytest

import graphflow as tf
from tests.tf_reference import run_in_tensorflow, tf_python


def _rbf(a, b, lengthscale, variance):
    d2 = np.sum((a[:, None, :] - b[None, :, :]) ** 2, -1)
    return variance * np.exp(-0.5 * d2 / lengthscale ** 2)


def test_gaussian_process_marginal_likelihood_and_hyperparameter_fit():
    rng = np.random.RandomState(0)
    x_train = rng.uniform(-3, 3, (20, 1))
    y_train = np.sin(x_train[:, 0]) + 0.1 * rng.randn(20)

    x = tf.placeholder(tf.float64, [None, 1])
    y = tf.placeholder(tf.float64, [None])
    log_lengthscale = tf.Variable(np.log(0.5), dtype=tf.float64)
    log_variance = tf.Variable(0.0, dtype=tf.float64)
    lengthscale, variance = tf.exp(log_lengthscale), tf.exp(log_variance)
    sq = tf.reduce_sum(tf.square(x), 1)
    d2 = sq[:, None] - 2 * tf.matmul(x, x, transpose_b=True) + sq[None, :]
    n = tf.shape(x)[0]
    k = variance * tf.exp(-0.5 * d2 / tf.square(lengthscale)) + 0.01 * tf.eye(20, dtype=tf.float64)
    chol = tf.cholesky(k)
    alpha = tf.matmul(tf.matrix_inverse(k), y[:, None])
    nll = (0.5 * tf.reduce_sum(y[:, None] * alpha)
           + tf.reduce_sum(tf.log(tf.matrix_diag_part(chol)))
           + 0.5 * tf.cast(n, tf.float64) * math.log(2 * math.pi))
    logdet = tf.linalg.logdet(k)
    det = tf.matrix_determinant(k)
    train = tf.train.GradientDescentOptimizer(0.01).minimize(nll)

    feed = {x: x_train, y: y_train}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first, got_logdet, got_det = sess.run([nll, logdet, det], feed)
        for _ in range(30):
            sess.run(train, feed)
        last = sess.run(nll, feed)

    kk = _rbf(x_train, x_train, 0.5, 1.0) + 0.01 * np.eye(20)
    sign, want_logdet = np.linalg.slogdet(kk)
    want = (0.5 * y_train @ np.linalg.solve(kk, y_train) + 0.5 * want_logdet
            + 10 * math.log(2 * math.pi))
    np.testing.assert_allclose(first, want, rtol=1e-8)
    np.testing.assert_allclose(got_logdet, want_logdet, rtol=1e-10)
    np.testing.assert_allclose(got_det, sign * np.exp(want_logdet), rtol=1e-8)
    assert last < first - 1.0  # fitting the hyperparameters raises the marginal likelihood


def test_discounted_returns_and_mixture_density():
    gamma = 0.9
    rewards = tf.placeholder(tf.float32, [None])
    n = tf.shape(rewards)[0]
    # the classic policy-gradient trick: discount^t * reward, reverse cumsum, undo the discount
    discounts = tf.pow(gamma, tf.cast(tf.range(n), tf.float32))
    returns = tf.cumsum(rewards * discounts, reverse=True) / discounts
    # a 1-D mixture of 3 Gaussians, log-likelihood with reduce_logsumexp
    points = tf.placeholder(tf.float32, [None])
    logits = tf.Variable([0.0, 1.0, -1.0])
    means = tf.constant([-2.0, 0.0, 3.0])
    log_weights = logits - tf.reduce_logsumexp(logits)
    log_pdf = -0.5 * tf.square(points[:, None] - means) - 0.5 * math.log(2 * math.pi)
    log_lik = tf.reduce_sum(tf.reduce_logsumexp(log_weights + log_pdf, axis=1))
    (grad_logits,) = tf.gradients(log_lik, [logits])

    r = np.array([1.0, 0.0, 0.5, 2.0, -1.0], np.float32)
    p = np.array([-2.5, 0.1, 2.9, 3.3], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_returns, got_lik, got_grad = sess.run([returns, log_lik, grad_logits],
                                                  {rewards: r, points: p})
    want_returns = np.array([sum(gamma ** (k - t) * r[k] for k in range(t, 5)) for t in range(5)])
    np.testing.assert_allclose(got_returns, want_returns, rtol=1e-5)
    w = np.exp([0.0, 1.0, -1.0]) / np.exp([0.0, 1.0, -1.0]).sum()
    comp = np.exp(-0.5 * (p[:, None] - np.array([-2.0, 0.0, 3.0])) ** 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(got_lik, np.log(comp @ w).sum(), rtol=1e-5)
    responsibilities = comp * w / (comp @ w)[:, None]
    np.testing.assert_allclose(got_grad, (responsibilities - w).sum(0), rtol=1e-4, atol=1e-6)


def test_grids_segments_histograms_and_a_bilinear_layer():
    xs = tf.linspace(-1.0, 1.0, 5)
    ys = tf.lin_space(0.0, 2.0, 3)
    gx, gy = tf.meshgrid(xs, ys)
    surface = tf.sin(gx) * tf.cos(gy)
    radius = tf.norm(tf.stack([gx, gy], axis=-1), axis=-1)

    features = tf.placeholder(tf.float32, [None, 2])
    doc_ids = tf.placeholder(tf.int32, [None])
    per_doc_mean = tf.segment_mean(features, doc_ids)
    per_doc_max = tf.unsorted_segment_max(features, doc_ids, 3)
    word_counts = tf.bincount(doc_ids, minlength=4)

    left = tf.placeholder(tf.float32, [None, 3])
    right = tf.placeholder(tf.float32, [None, 4])
    w = tf.Variable(np.random.RandomState(1).randn(3, 4, 2).astype(np.float32) * 0.1)
    bilinear = tf.reduce_sum(tf.tensordot(left, w, axes=[[1], [0]]) * right[:, :, None], 1)
    target = tf.placeholder(tf.float32, [None, 2])
    loss = tf.reduce_mean(tf.square(bilinear - target))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)

    f = np.array([[1, 2], [3, 4], [5, -6], [0, 1]], np.float32)
    ids = np.array([0, 0, 1, 2], np.int32)
    rng = np.random.RandomState(2)
    a, b = rng.randn(64, 3).astype(np.float32), rng.randn(64, 4).astype(np.float32)
    true_w = rng.randn(3, 4, 2).astype(np.float32)
    t = np.einsum("ni,ijk,nj->nk", a, true_w, b)
    feed = {features: f, doc_ids: ids, left: a, right: b, target: t}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run([surface, radius, per_doc_mean, per_doc_max, word_counts, loss], feed)
        for _ in range(150):
            sess.run(train, feed)
        final_loss = sess.run(loss, feed)
    npx, npy = np.meshgrid(np.linspace(-1, 1, 5), np.linspace(0, 2, 3))
    np.testing.assert_allclose(out[0], np.sin(npx) * np.cos(npy), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1], np.hypot(npx, npy), rtol=1e-5)
    np.testing.assert_allclose(out[2], [[2, 3], [5, -6], [0, 1]])
    np.testing.assert_allclose(out[3], [[3, 4], [5, -6], [0, 1]])
    np.testing.assert_array_equal(out[4], [2, 1, 1, 0])
    assert final_loss < 0.05 * out[5]  # the tensordot layer learns the bilinear map


def edge_semantics(tf, np):
    """The corners of TF1's definitions, evaluated by graphflow and by TensorFlow alike."""
    x = tf.constant([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]], tf.float64)
    spd = tf.constant([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], tf.float64)
    ids = tf.constant([0, 0, 2, 2])
    data = tf.constant([[1, 2], [3, 4], [5, 6], [-7, 9]], tf.int32)
    out = {
        "cumsum_excl_rev": tf.cumsum(x, axis=1, exclusive=True, reverse=True),
        "cumprod_excl": tf.cumprod(x, axis=0, exclusive=True),
        "cumprod_rev": tf.cumprod(x, axis=-1, reverse=True),
        "logsumexp_inf": tf.reduce_logsumexp(tf.constant([[-np.inf, -np.inf], [1.0, np.inf]]), 1),
        "logsumexp_keep": tf.reduce_logsumexp(x, axis=0, keepdims=True),
        "norm_inf": tf.norm(x, ord=np.inf),
        "norm_3": tf.norm(x, ord=3, axis=1, keepdims=True),
        "norm_mat_1": tf.norm(x, ord=1, axis=[0, 1]),
        "norm_mat_inf": tf.norm(x, ord=np.inf, axis=[-2, -1]),
        "tensordot_2": tf.tensordot(tf.reshape(tf.range(24.0), [2, 3, 4]),
                                    tf.reshape(tf.range(12.0), [3, 4]), axes=2),
        "linspace": tf.linspace(-1.0, 2.0, 7),
        "meshgrid_xy": tf.meshgrid([1, 2, 3], [4, 5], [6, 7, 8, 9])[2],
        "band": tf.matrix_band_part(tf.ones([4, 5]), 1, 2),
        "diag_part_rect": tf.matrix_diag_part(x),
        "set_diag_rect": tf.matrix_set_diag(x, tf.constant([9.0, 8.0], tf.float64)),
        "trace": tf.trace(spd),
        "inv_adjoint": tf.matrix_inverse(spd + tf.constant(np.triu(np.ones([3, 3]), 1)),
                                         adjoint=True),
        "det": tf.matrix_determinant(spd),
        "chol": tf.cholesky(spd),
        "segment_mean_int": tf.segment_mean(data, ids),
        "segment_max_empty": tf.segment_max(data, ids),
        "unsorted_min_empty": tf.unsorted_segment_min(data, ids, 4),
        "unsorted_max_neg": tf.unsorted_segment_max(tf.constant([1.0, 5.0, 2.0]),
                                                    tf.constant([1, -1, 1]), 2),
        "bincount_w": tf.bincount(tf.constant([[0, 3], [3, 5]]), weights=tf.constant([[1.0, 2.0],
                                                                                      [3.0, 4.0]]),
                                  minlength=3, maxlength=5),
        "lgamma": tf.lgamma(tf.constant([-2.5, -0.5, 0.5, 7.0], tf.float64)),
        "digamma": tf.digamma(tf.constant([-2.5, -0.5, 0.5, 7.0], tf.float64)),
        "polygamma": tf.polygamma(tf.constant([1.0, 2.0, 3.0], tf.float64),
                                  tf.constant([0.5, 2.0, 7.0], tf.float64)),
    }
    ties = tf.constant([1.0, 1.0, 3.0, 2.0])
    gammas = tf.constant([0.5, 3.0, -1.5], tf.float64)
    grads = {
        "g_cumprod": tf.gradients(tf.reduce_sum(tf.cumprod(x, 1, exclusive=True) * x), x)[0],
        "g_logsumexp": tf.gradients(tf.reduce_sum(tf.reduce_logsumexp(x, 1) ** 2), x)[0],
        "g_det": tf.gradients(tf.matrix_determinant(spd), spd)[0],
        "g_inv": tf.gradients(tf.reduce_sum(tf.matrix_inverse(spd) * x[:1, :]), spd)[0],
        "g_chol": tf.gradients(tf.reduce_sum(tf.cholesky(spd) * tf.reshape(
            tf.range(9.0, dtype=tf.float64), [3, 3])), spd)[0],
        "g_band": tf.gradients(tf.reduce_sum(tf.matrix_band_part(x, 0, 1) * x), x)[0],
        "g_segment_max": tf.gradients(tf.reduce_sum(tf.segment_max(ties, ids)
                                                    * tf.constant([1.0, 2.0, 5.0])), ties)[0],
        "g_unsorted_min": tf.gradients(tf.reduce_sum(tf.unsorted_segment_min(ties, ids, 3)
                                                     * tf.constant([1.0, 2.0, 5.0])), ties)[0],
        "g_segment_mean": tf.gradients(tf.reduce_sum(tf.segment_mean(ties, ids)
                                                     * tf.constant([1.0, 2.0, 5.0])), ties)[0],
        "g_digamma": tf.gradients(tf.reduce_sum(tf.digamma(gammas)), gammas)[0],
        "g_lgamma": tf.gradients(tf.reduce_sum(tf.lgamma(gammas)), gammas)[0],
    }
    out.update(grads)
    with tf.Session() as sess:
        return dict(zip(out, sess.run(list(out.values()))))


def test_corner_cases_agree_with_tensorflow():
    ours = edge_semantics(tf, np)
    if tf_python() is None:
        pytest.skip("TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON to compare with it)")
    theirs = run_in_tensorflow([("edges", edge_semantics, {})])["edges"]
    assert set(theirs) == set(ours)
    for name, want in theirs.items():
        got = np.asarray(ours[name])
        assert got.shape == want.shape and got.dtype == want.dtype, (name, got, want)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9, err_msg=name)
