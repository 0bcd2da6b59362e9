"""Behaviour of the nn ops beyond the generic harness (tests/test_ops.py covers forward values and
shape inference of every op through tests/op_cases/nn_cases.py): TF1 call conventions, errors,
dropout, moments/l2_normalize/xw_plus_b, layout equivalence and a small CNN that must learn."""

import time

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework.errors import InvalidArgumentError
from graphflow.ops import registry
from graphflow.ops.registry import OpBuildError


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# ---------------------------------------------------------------- softmax and losses
def test_cross_entropy_functions_need_named_arguments():
    logits = tf.constant([[1.0, 2.0]])
    with pytest.raises(ValueError, match="named arguments"):
        tf.nn.softmax_cross_entropy_with_logits(logits, logits)
    with pytest.raises(ValueError, match="labels= and logits="):
        tf.nn.sparse_softmax_cross_entropy_with_logits(logits=logits)


def test_softmax_rows_sum_to_one_and_dim_alias():
    x = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    a, b = _run([tf.nn.softmax(x), tf.nn.softmax(x, dim=0)])
    np.testing.assert_allclose(a.sum(axis=1), 1, rtol=1e-6)
    np.testing.assert_allclose(b.sum(axis=0), 1, rtol=1e-6)
    with pytest.raises(ValueError, match="both"):
        tf.nn.softmax(x, axis=0, dim=0)


def test_softmax_xent_matches_sparse_version_with_one_hot_labels():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(5, 4))
    labels = np.array([0, 3, 1, 1, 2])
    dense = tf.nn.softmax_cross_entropy_with_logits_v2(labels=np.eye(4)[labels], logits=logits)
    sparse = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    a, b = _run([dense, sparse])
    np.testing.assert_allclose(a, b, rtol=1e-12)


def test_tf1_softmax_xent_sends_no_gradient_to_labels_but_v2_does():
    logits = tf.constant([[1.0, 2.0, 0.5]], dtype=tf.float64)
    labels = tf.constant([[0.2, 0.3, 0.5]], dtype=tf.float64)
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    assert tf.gradients(v1, labels) == [None]
    g_logits, g_labels = tf.gradients(v2, [logits, labels])
    got_logits, got_labels, log_p = _run([g_logits, g_labels, tf.nn.log_softmax(logits)])
    np.testing.assert_allclose(got_labels, -log_p)
    np.testing.assert_allclose(got_logits, np.exp(log_p) - [[0.2, 0.3, 0.5]])


def test_sparse_xent_label_out_of_range_names_the_op():
    labels = tf.placeholder(tf.int32, [None])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=tf.ones([2, 3]),
                                                          name="my_loss")
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match=r"my_loss.*outside the valid range of \[0, 3\)"):
            sess.run(loss, {labels: [0, 3]})


def test_sparse_xent_rejects_mismatched_label_rank():
    with pytest.raises(OpBuildError, match="labels must have rank 1"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.zeros([2, 1], tf.int32),
                                                       logits=tf.ones([2, 3]))
    with pytest.raises(TypeError, match="labels must be one of"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.zeros([2]), logits=tf.ones([2, 3]))


def test_weighted_cross_entropy_reduces_to_sigmoid_xent_with_unit_weight():
    rng = np.random.default_rng(2)
    x, z = rng.normal(size=(3, 4)) * 5, rng.uniform(size=(3, 4))
    weighted = tf.nn.weighted_cross_entropy_with_logits(labels=z, logits=x, pos_weight=3.0)
    plain = tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
    w, p = _run([weighted, plain])
    np.testing.assert_allclose(p, np.logaddexp(0, x) - x * z, rtol=1e-12)
    np.testing.assert_allclose(w, (1 - z) * x + (1 + 2 * z) * np.logaddexp(0, -x), rtol=1e-12)


# ---------------------------------------------------------------- small compositions
def test_moments_l2_normalize_xw_plus_b():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 3, 2))
    mean, var = tf.nn.moments(tf.constant(x), axes=[0, 1])
    mean_k, var_k = tf.nn.moments(tf.constant(x), axes=[0], keep_dims=True)
    assert mean.shape.as_list() == [2] and mean_k.shape.as_list() == [1, 3, 2]
    w, b = rng.normal(size=(2, 5)), rng.normal(size=5)
    got = _run([mean, var, mean_k, var_k, tf.nn.l2_normalize(x, axis=2),
                tf.nn.xw_plus_b(x[0], w, b)])
    np.testing.assert_allclose(got[0], x.mean(axis=(0, 1)))
    np.testing.assert_allclose(got[1], x.var(axis=(0, 1)))
    np.testing.assert_allclose(got[2], x.mean(axis=0, keepdims=True))
    np.testing.assert_allclose(got[3], x.var(axis=0, keepdims=True))
    np.testing.assert_allclose(got[4], x / np.linalg.norm(x, axis=2, keepdims=True))
    np.testing.assert_allclose(got[5], x[0] @ w + b)


def test_moments_is_built_as_tf_builds_it_and_its_gradients_match_finite_differences():
    # one Mean over x (squeezed after, not a second Mean), the variance around
    # stop_gradient(mean): the variance's gradient reaches x only through the squared difference
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float64, [4, 3, 2])
        mean, var = tf.nn.moments(x, axes=[0, 1])
        types = [op.type for op in graph.get_operations()]
        assert types.count("Mean") == 2 and types.count("Squeeze") == 2
        assert "StopGradient" in types
        loss = tf.reduce_sum(mean * [1.0, -2.0]) + tf.reduce_sum(var * [0.5, 3.0])
        grad, = tf.gradients(loss, [x])
        xv = np.random.default_rng(8).normal(size=(4, 3, 2))
        with tf.Session() as sess:
            error = tf.test.compute_gradient_error(x, [4, 3, 2], loss, [], x_init_value=xv)
            got = sess.run(grad, {x: xv})
    assert error < 1e-6
    n = 12
    expected = np.array([1.0, -2.0]) / n + np.array([0.5, 3.0]) * 2 * (xv - xv.mean((0, 1))) / n
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_moments_of_float16_sums_in_float32():
    x = np.linspace(-3, 3, 4096).astype(np.float16) + np.float16(1000)
    graph = tf.Graph()
    with graph.as_default():
        moments = tf.nn.moments(tf.constant(x), axes=[0])
        means = [op for op in graph.get_operations() if op.type == "Mean"]
        assert means and all(op.inputs[0].dtype == tf.float32 for op in means)
        with tf.Session() as sess:
            mean, var = sess.run(moments)
    assert mean.dtype == np.float16 and var.dtype == np.float16
    np.testing.assert_allclose(float(mean), x.astype(np.float32).mean(), rtol=1e-3)
    np.testing.assert_allclose(float(var), x.astype(np.float32).var(), rtol=1e-2)


def test_batch_normalization_and_embedding_lookup():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(6, 3))
    mean, var = x.mean(axis=0), x.var(axis=0)
    offset, scale = rng.normal(size=3), rng.normal(size=3)
    table, ids = rng.normal(size=(5, 2)), np.array([[4, 0], [4, 2]])
    got = _run([tf.nn.batch_normalization(x, mean, var, offset, scale, 1e-3),
                tf.nn.batch_normalization(x, mean, var, None, None, 1e-3),
                tf.nn.embedding_lookup(table, ids), tf.nn.embedding_lookup([table], ids[0])])
    np.testing.assert_allclose(got[0], scale * (x - mean) / np.sqrt(var + 1e-3) + offset)
    np.testing.assert_allclose(got[1], (x - mean) / np.sqrt(var + 1e-3))
    np.testing.assert_array_equal(got[2], table[ids])
    np.testing.assert_array_equal(got[3], table[ids[0]])


def test_bias_add_checks_channels():
    with pytest.raises(OpBuildError, match="channel dimension"):
        tf.nn.bias_add(tf.zeros([2, 3]), tf.zeros([4]))
    with pytest.raises(OpBuildError, match="rank >= 2"):
        tf.nn.bias_add(tf.zeros([3]), tf.zeros([3]))


# ---------------------------------------------------------------- convolution and pooling
def test_conv_and_pool_in_nchw_match_nhwc():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 7, 6, 3))
    f = rng.normal(size=(3, 3, 3, 4))
    nchw = np.transpose(x, (0, 3, 1, 2))
    pairs = [
        (tf.nn.conv2d(x, f, [1, 2, 2, 1], "SAME"),
         tf.nn.conv2d(nchw, f, [1, 1, 2, 2], "SAME", data_format="NCHW")),
        (tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
         tf.nn.max_pool(nchw, [1, 1, 3, 3], [1, 1, 2, 2], "SAME", data_format="NCHW")),
        (tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
         tf.nn.avg_pool(nchw, [1, 1, 2, 2], [1, 1, 1, 1], "VALID", data_format="NCHW")),
    ]
    for a, b in zip(*[iter(_run([t for pair in pairs for t in pair]))] * 2):
        np.testing.assert_allclose(a, np.transpose(b, (0, 2, 3, 1)), rtol=1e-12)


def test_conv2d_accepts_short_stride_forms_and_filters_keyword():
    x = tf.zeros([1, 8, 8, 2])
    f = tf.zeros([3, 3, 2, 5])
    assert tf.nn.conv2d(x, filters=f, strides=2, padding="SAME").shape.as_list() == [1, 4, 4, 5]
    assert tf.nn.conv2d(x, f, [2, 1], "VALID").shape.as_list() == [1, 3, 6, 5]
    assert tf.nn.conv2d(x, f, [1, 1, 1, 1], "VALID", dilations=2).shape.as_list() == [1, 4, 4, 5]


def test_conv2d_build_errors_name_the_problem():
    x = tf.zeros([1, 5, 5, 2])
    with pytest.raises(OpBuildError, match="in_channels"):
        tf.nn.conv2d(x, tf.zeros([3, 3, 4, 1]), [1, 1, 1, 1], "SAME")
    with pytest.raises(OpBuildError, match="larger than the input"):
        tf.nn.conv2d(x, tf.zeros([7, 7, 2, 1]), [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="padding"):
        tf.nn.conv2d(x, tf.zeros([3, 3, 2, 1]), [1, 1, 1, 1], "FULL")
    with pytest.raises(ValueError, match="batch and channel"):
        tf.nn.conv2d(x, tf.zeros([3, 3, 2, 1]), [2, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="data_format"):
        tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME", data_format="HWNC")


def test_conv2d_runtime_channel_mismatch_is_an_op_error():
    x = tf.placeholder(tf.float32)
    y = tf.nn.conv2d(x, tf.zeros([3, 3, 2, 1]), [1, 1, 1, 1], "SAME", name="conv")
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match="conv.*3 channels"):
            sess.run(y, {x: np.zeros((1, 4, 4, 3), np.float32)})


def test_conv2d_with_unknown_batch_infers_spatial_dims():
    x = tf.placeholder(tf.float32, [None, 9, 8, 3])
    y = tf.nn.conv2d(x, tf.zeros([3, 3, 3, 6]), [1, 2, 3, 1], "SAME")
    p = tf.nn.max_pool(y, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    assert y.shape.as_list() == [None, 5, 3, 6]
    assert p.shape.as_list() == [None, 2, 1, 6]


def test_max_pool_grad_goes_to_first_maximum_on_ties():
    x = tf.constant(np.ones((1, 2, 2, 1)))
    (g,) = tf.gradients(tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), x)
    np.testing.assert_array_equal(_run(g)[0, :, :, 0], [[1, 0], [0, 0]])


# ---------------------------------------------------------------- dropout
def test_dropout_keeps_a_fraction_and_rescales():
    x = tf.ones([200, 100])
    y = tf.nn.dropout(x, keep_prob=0.25)
    with tf.Session() as sess:
        a, b = sess.run(y), sess.run(y)
    assert set(np.unique(a)) <= {0.0, 4.0}
    assert abs((a > 0).mean() - 0.25) < 0.02
    assert (a != b).any(), "each run must draw a new mask"


def test_dropout_rate_placeholder_noise_shape_and_identity():
    x = tf.placeholder(tf.float32, [None, 50])
    keep = tf.placeholder(tf.float32, [])
    rows = tf.nn.dropout(x, keep, noise_shape=[200, 1])
    by_rate = tf.nn.dropout(x, rate=0.5)
    assert tf.nn.dropout(x, keep_prob=1.0) is x
    assert rows.shape.as_list() == [200, 50] and by_rate.shape.as_list() == [None, 50]
    ones = np.ones((200, 50), np.float32)
    r, q = _run([rows, by_rate], {x: ones, keep: 0.5})
    assert (r.min(axis=1) == r.max(axis=1)).all(), "noise_shape [n, 1] drops whole rows"
    assert set(np.unique(q)) <= {0.0, 2.0} and abs((q > 0).mean() - 0.5) < 0.03
    with pytest.raises(ValueError, match="keep_prob"):
        tf.nn.dropout(x, keep_prob=1.5)
    with pytest.raises(ValueError, match="exactly one"):
        tf.nn.dropout(x, keep_prob=0.5, rate=0.5)


def test_dropout_is_seeded_and_uses_a_random_op():
    def build():
        tf.reset_default_graph()
        tf.set_random_seed(7)
        return tf.nn.dropout(tf.ones([30, 30]), 0.5)
    y = build()
    assert any(registry.lookup(op.type).random for op in tf.get_default_graph().get_operations())
    first = _run(y)
    np.testing.assert_array_equal(first, _run(build()))


# ---------------------------------------------------------------- end to end
def test_small_cnn_learns_8x8_digits():
    datasets = pytest.importorskip("sklearn.datasets")
    digits = datasets.load_digits()
    images = (digits.images / 16.0).astype(np.float32)[..., None]
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(images))
    images, labels = images[order], labels[order]
    train_x, train_y, test_x, test_y = images[:1400], labels[:1400], images[1400:], labels[1400:]

    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 8, 8, 1])
    y = tf.placeholder(tf.int64, [None])
    keep = tf.placeholder_with_default(1.0, [])
    w1 = tf.Variable(tf.truncated_normal([3, 3, 1, 16], stddev=0.3))
    b1 = tf.Variable(tf.zeros([16]))
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w1, [1, 1, 1, 1], "SAME"), b1))
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    w2 = tf.Variable(tf.truncated_normal([3, 3, 16, 32], stddev=0.1))
    b2 = tf.Variable(tf.zeros([32]))
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, w2, [1, 1, 1, 1], "SAME"), b2))
    h = tf.nn.avg_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    h = tf.nn.dropout(tf.reshape(h, [-1, 2 * 2 * 32]), keep)
    w3 = tf.Variable(tf.truncated_normal([128, 10], stddev=0.1))
    logits = tf.nn.xw_plus_b(h, w3, tf.Variable(tf.zeros([10])))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    loss += 1e-4 * tf.nn.l2_loss(w3)
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        start = time.perf_counter()
        for _ in range(5):
            for i in range(0, len(train_x), 50):
                sess.run(train, {x: train_x[i:i + 50], y: train_y[i:i + 50], keep: 0.9})
        elapsed = time.perf_counter() - start
        acc = sess.run(accuracy, {x: test_x, y: test_y})
    assert acc > 0.9, f"held-out accuracy {acc:.3f}"
    assert elapsed < 30, f"140 training steps took {elapsed:.1f}s"


def test_swish_crelu_and_zero_fraction():
    x = np.array([[-2.0, 0.0, 1.5], [0.0, 3.0, -0.5]], np.float32)
    with tf.Graph().as_default():
        t = tf.constant(x)
        swish, crelu, crelu0, frac = tf.nn.swish(t), tf.nn.crelu(t), tf.nn.crelu(t, axis=0), \
            tf.nn.zero_fraction(t)
        (g,) = tf.gradients(tf.reduce_sum(swish), [t])
        with tf.Session() as sess:
            s, c, c0, f, g = sess.run([swish, crelu, crelu0, frac, g])
    sig = 1 / (1 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(s, x * sig, rtol=1e-6)
    np.testing.assert_allclose(g, sig * (1 + x * (1 - sig)), rtol=1e-5)
    np.testing.assert_array_equal(c, np.maximum(np.concatenate([x, -x], axis=1), 0))
    np.testing.assert_array_equal(c0, np.maximum(np.concatenate([x, -x], axis=0), 0))
    assert f.dtype == np.float32 and f == np.float32(2 / 6)


def test_float16_nn_sums_accumulate_in_float32():
    # TF 2.21 (CPU): l2_loss of 70000 float16 ones 3.5e+04; moments of 1 + (i % 3) (2.0, 0.6665);
    # softmax of 70000 float16 zeros gives 0 there (its float16 sum overflows), 1/70000 here
    ones = np.ones(70000, np.float16)
    x = tf.placeholder(tf.float16, [None])
    g = tf.placeholder(tf.float16, [None, 2])
    with tf.Session() as sess:
        l2, soft, log_soft = sess.run([tf.nn.l2_loss(x), tf.nn.softmax(x * 0.0),
                                       tf.nn.log_softmax(x * 0.0)], {x: ones})
        mean, var = sess.run(tf.nn.moments(x, [0]), {x: (1 + np.arange(70000) % 3).astype(np.float16)})
        b = tf.placeholder(tf.float16, [2])
        db = sess.run(tf.gradients(tf.nn.bias_add(g, b), b)[0],  # BiasAddGrad: 30000 rows of 1
                      {g: np.ones((30000, 2), np.float16), b: np.zeros(2, np.float16)})
    assert l2.dtype == np.float16 and l2 == np.float16(35000)
    np.testing.assert_array_equal(soft[:3], np.full(3, 1 / 70000, np.float16))
    np.testing.assert_array_equal(log_soft[:3], np.full(3, -np.log(70000), np.float16))
    assert (mean, var) == (np.float16(2.0), np.float16(2 / 3))
    assert db.dtype == np.float16 and (db == 30000).all()
