"""Tests for graphflow.tf1.layers: variable names/shapes/initial values, TF1 naming and sharing through
variable scopes, outputs against numpy (dense, conv2d, pooling, flatten), dropout in every
`training` form, reuse, regularizers, and that gradients flow through the layers so they train."""

import numpy as np
import pytest

import graphflow as tf


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def _np_conv2d(x, k, stride, padding):
    """Direct NHWC cross-correlation with TF's SAME padding split (extra pixel at the end)."""
    n, h, w, c = x.shape
    kh, kw, _, f = k.shape
    if padding == "same":
        oh, ow = -(-h // stride), -(-w // stride)
        ph = max((oh - 1) * stride + kh - h, 0)
        pw = max((ow - 1) * stride + kw - w, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    else:
        oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    out = np.zeros((n, oh, ow, f))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, k, axes=([1, 2, 3], [0, 1, 2]))
    return out


# ------------------------------------------------------------------ variables
def test_seeded_layers_are_reproducible():
    def build():
        tf.reset_default_graph()
        tf.set_random_seed(42)
        tf.layers.dense(tf.placeholder(tf.float32, [None, 4]), 3)
        return _run(tf.trainable_variables()[0])
    np.testing.assert_array_equal(build(), build())


# ------------------------------------------------------------------ dense
def test_dense_variables_and_values():
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.layers.dense(x, 3, activation=tf.nn.relu)
    z = tf.layers.dense(y, 2, use_bias=False)
    names = [v.name for v in tf.trainable_variables()]
    assert names == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0"]
    assert y.shape.as_list() == [None, 3] and z.shape.as_list() == [None, 2]
    x_v = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    k1, b1, k2, y_v, z_v = _run(tf.trainable_variables() + [y, z], {x: x_v})
    np.testing.assert_array_equal(b1, np.zeros(3, np.float32))
    want_y = np.maximum(x_v @ k1 + b1, 0)
    np.testing.assert_allclose(y_v, want_y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(z_v, want_y @ k2, rtol=1e-5, atol=1e-6)


def test_dense_rank3_and_float64():
    x = tf.placeholder(tf.float64, [None, 5, 6])
    y = tf.layers.dense(x, 2, bias_initializer=tf.ones_initializer())
    assert y.shape.as_list() == [None, 5, 2] and y.dtype == tf.float64
    x_v = np.random.default_rng(1).standard_normal((3, 5, 6))
    kernel, y_v = _run([tf.trainable_variables()[0], y], {x: x_v})
    np.testing.assert_allclose(y_v, x_v @ kernel + 1.0, rtol=1e-12)


def test_dense_reuse_and_name_clash():
    x = tf.placeholder(tf.float32, [None, 4])
    a = tf.layers.dense(x, 3, name="head")
    b = tf.layers.dense(x, 3, name="head", reuse=True)
    assert len(tf.trainable_variables()) == 2
    out_a, out_b = _run([a, b], {x: np.ones((2, 4), np.float32)})
    np.testing.assert_array_equal(out_a, out_b)
    with pytest.raises(ValueError, match="Variable head/kernel already exists, disallowed"):
        tf.layers.dense(x, 3, name="head")
    with pytest.raises(ValueError, match="does not exist"):
        tf.layers.dense(x, 3, name="other", reuse=True)
    with pytest.raises(ValueError, match="Trying to share"):
        tf.layers.dense(x, 5, name="head", reuse=True)


def _names():
    return [v.op.name for v in tf.global_variables()]


def test_layer_variables_follow_tf1_variable_scope_naming():
    x = tf.placeholder(tf.float32, [None, 4])
    tf.layers.dense(x, 3)
    tf.layers.dense(x, 3)
    with tf.name_scope("ns"):  # name scopes do not change variable names
        out = tf.layers.dense(x, 3)
    with tf.variable_scope("model"):
        tf.layers.dense(x, 2, use_bias=False)
        tf.layers.conv2d(tf.placeholder(tf.float32, [None, 5, 5, 1]), 2, 3, use_bias=False)
    assert _names() == ["dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias",
                        "dense_2/kernel", "dense_2/bias", "model/dense/kernel",
                        "model/conv2d/kernel"]
    assert out.op.name == "ns/dense/BiasAdd"  # ops: name scope; variables: variable scope
    # the layer's variables are get_variable's: a reusing scope hands them back
    with tf.variable_scope("model", reuse=True):
        assert tf.get_variable("dense/kernel") is tf.global_variables()[6]


def test_reentering_a_reusing_scope_shares_a_whole_model():
    def model(x):
        h = tf.layers.dense(x, 5, activation=tf.nn.relu)
        return tf.layers.dense(h, 2)

    x = tf.placeholder(tf.float32, [None, 3])
    with tf.variable_scope("net"):
        train_out = model(x)
    with tf.variable_scope("net", reuse=True):
        eval_out = model(x)
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        a1 = model(x)
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        a2 = model(x)
    assert _names() == ["net/dense/kernel", "net/dense/bias", "net/dense_1/kernel",
                        "net/dense_1/bias", "auto/dense/kernel", "auto/dense/bias",
                        "auto/dense_1/kernel", "auto/dense_1/bias"]
    assert eval_out.op.name == "net_1/dense_1/BiasAdd"
    x_v = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    t, e, b1, b2 = _run([train_out, eval_out, a1, a2], {x: x_v})
    np.testing.assert_array_equal(t, e)
    np.testing.assert_array_equal(b1, b2)


def test_unnamed_reuse_shares_the_first_layer_and_scope_initializer_applies():
    x = tf.placeholder(tf.float32, [None, 2])
    with tf.variable_scope("init", initializer=tf.constant_initializer(0.25)):
        a = tf.layers.dense(x, 3)
        b = tf.layers.dense(x, 3, reuse=True)  # TF1: an unnamed reusing layer is 'dense'
    assert _names() == ["init/dense/kernel", "init/dense/bias"]
    kernel, bias, a_v, b_v = _run(tf.global_variables() + [a, b], {x: np.ones((1, 2))})
    np.testing.assert_array_equal(kernel, np.full((2, 3), 0.25, np.float32))
    np.testing.assert_array_equal(bias, np.zeros(3, np.float32))  # bias keeps its zeros default
    np.testing.assert_array_equal(a_v, b_v)


def test_dense_errors_and_regularizer():
    with pytest.raises(ValueError, match="last dimension"):
        tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 3)
    with pytest.raises(TypeError, match="floating point"):
        tf.layers.dense(tf.placeholder(tf.int32, [None, 3]), 3)
    x = tf.placeholder(tf.float32, [None, 3])
    tf.layers.dense(x, 2, kernel_regularizer=lambda w: 0.5 * tf.reduce_sum(w * w))
    (penalty,) = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    kernel = tf.trainable_variables()[0]
    p, k = _run([penalty, kernel])
    np.testing.assert_allclose(p, 0.5 * (k * k).sum(), rtol=1e-5)


# ------------------------------------------------------------------ conv2d, pooling, flatten
@pytest.mark.parametrize("padding,stride", [("same", 1), ("valid", 1), ("same", 2)])
def test_conv2d_matches_numpy(padding, stride):
    x = tf.placeholder(tf.float64, [None, 7, 6, 2])
    y = tf.layers.conv2d(x, 3, (3, 2), strides=stride, padding=padding, activation=tf.nn.relu)
    kernel, bias = tf.trainable_variables()
    assert kernel.name == "conv2d/kernel:0" and kernel.shape.as_list() == [3, 2, 2, 3]
    assert bias.shape.as_list() == [3]
    x_v = np.random.default_rng(2).standard_normal((2, 7, 6, 2))
    k_v, y_v = _run([kernel, y], {x: x_v})
    want = np.maximum(_np_conv2d(x_v, k_v, stride, padding), 0)
    assert y.shape.as_list()[1:] == list(want.shape[1:])
    np.testing.assert_allclose(y_v, want, rtol=1e-10, atol=1e-12)


def test_max_and_average_pooling():
    x_v = np.random.default_rng(3).standard_normal((2, 4, 6, 3))
    x = tf.constant(x_v)
    mx = tf.layers.max_pooling2d(x, 2, 2)
    av = tf.layers.average_pooling2d(x, (2, 3), (2, 3))
    mx_v, av_v = _run([mx, av])
    assert mx.op.name == "max_pooling2d/MaxPool"
    np.testing.assert_array_equal(mx_v, x_v.reshape(2, 2, 2, 3, 2, 3).max(axis=(2, 4)))
    np.testing.assert_allclose(av_v, x_v.reshape(2, 2, 2, 2, 3, 3).mean(axis=(2, 4)), rtol=1e-12)


def test_flatten():
    x_v = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    known = tf.layers.flatten(tf.constant(x_v))
    p = tf.placeholder(tf.float32, [None, None, 5])
    unknown = tf.layers.flatten(p)
    first = tf.layers.flatten(tf.constant(x_v), data_format="channels_first")
    assert known.shape.as_list() == [2, 60]
    k, u, f = _run([known, unknown, first], {p: x_v.reshape(2, 12, 5)})
    np.testing.assert_array_equal(k, x_v.reshape(2, 60))
    np.testing.assert_array_equal(u, x_v.reshape(2, 60))
    np.testing.assert_array_equal(f, x_v.transpose(0, 2, 3, 1).reshape(2, 60))


# ------------------------------------------------------------------ dropout
def test_dropout_python_bool():
    x_v = np.ones((200, 50), np.float32)
    x = tf.constant(x_v)
    off = tf.layers.dropout(x, rate=0.4)
    on = tf.layers.dropout(x, rate=0.4, training=True, seed=1)
    off_v, on_v = _run([off, on])
    np.testing.assert_array_equal(off_v, x_v)
    kept = on_v != 0
    np.testing.assert_allclose(on_v[kept], 1 / 0.6, rtol=1e-6)
    assert abs(kept.mean() - 0.6) < 0.02


def test_dropout_training_placeholder():
    x = tf.constant(np.ones((100, 100), np.float32))
    training = tf.placeholder_with_default(False, [])
    y = tf.layers.dropout(x, rate=0.5, training=training)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y), np.ones((100, 100), np.float32))
        dropped = sess.run(y, {training: True})
        again = sess.run(y, {training: True})
    assert set(np.unique(dropped)) <= {0.0, 2.0}
    assert abs((dropped == 0).mean() - 0.5) < 0.03
    assert not np.array_equal(dropped, again)  # a new mask every run
    with pytest.raises(TypeError, match="scalar bool"):
        tf.layers.dropout(x, training=tf.placeholder(tf.float32, []))


# ------------------------------------------------------------------ training through layers
def test_layers_train_a_small_classifier():
    tf.set_random_seed(0)
    rng = np.random.default_rng(0)
    x_v = rng.standard_normal((200, 2)).astype(np.float32)
    y_v = (x_v[:, 0] * x_v[:, 1] > 0).astype(np.int64)  # XOR-like: needs the hidden layer
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.placeholder(tf.int64, [None])
    h = tf.layers.dense(x, 32, activation=tf.nn.relu)
    logits = tf.layers.dense(h, 2)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: x_v, y: y_v})
        for _ in range(150):
            sess.run(train_op, {x: x_v, y: y_v})
        last, out = sess.run([loss, logits], {x: x_v, y: y_v})
    assert last < 0.3 * first
    assert (out.argmax(axis=1) == y_v).mean() > 0.95


def test_conv_layers_gradients_flow():
    tf.set_random_seed(1)
    x_v = np.random.default_rng(5).standard_normal((4, 6, 6, 1)).astype(np.float32)
    x = tf.constant(x_v)
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    out = tf.layers.dense(tf.layers.flatten(h), 1)
    loss = tf.reduce_mean(tf.square(out - 1.0))
    grads = tf.gradients(loss, tf.trainable_variables())
    assert all(g is not None for g in grads)
    train_op = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(30):
            sess.run(train_op)
        assert sess.run(loss) < 0.1 * first
