"""`tf.contrib.layers` and `tf.contrib.framework`: contrib's variable names, defaults, arg_scope,
regularizers and initializers; a small CNN built from them trains."""

import numpy as np
import pytest

import graphflow as tf

layers = tf.contrib.layers


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_fully_connected_names_defaults_and_values():
    x = tf.placeholder(tf.float32, [None, 3])
    y = layers.fully_connected(x, 4)
    z = layers.fully_connected(y, 2, activation_fn=None, scope="logits")
    names = [v.op.name for v in tf.global_variables()]
    assert names == ["fully_connected/weights", "fully_connected/biases", "logits/weights",
                     "logits/biases"]
    assert tf.contrib.framework.get_model_variables() == tf.global_variables()
    data = np.array([[1.0, -2.0, 0.5]], np.float32)
    w1, b1, w2, b2, out = _run(tf.global_variables() + [z], {x: data})
    np.testing.assert_allclose(out, np.maximum(data @ w1 + b1, 0) @ w2 + b2, rtol=1e-6)
    assert (b1 == 0).all() and np.abs(w1).max() <= np.sqrt(6.0 / 7) + 1e-6  # xavier uniform


def test_fully_connected_on_rank_3_and_reuse():
    x = tf.placeholder(tf.float32, [None, 5, 3])
    y = layers.fully_connected(x, 2, scope="fc")
    again = layers.fully_connected(x, 2, scope="fc", reuse=True)
    assert y.shape.as_list() == [None, 5, 2] and len(tf.global_variables()) == 2
    data = np.arange(30, dtype=np.float32).reshape(2, 5, 3) / 10
    a, b = _run([y, again], {x: data})
    np.testing.assert_allclose(a, b)


def test_arg_scope_supplies_defaults_and_calls_win():
    x = tf.placeholder(tf.float32, [None, 8, 8, 3])
    with tf.contrib.framework.arg_scope([layers.conv2d, layers.fully_connected],
                                        activation_fn=None,
                                        weights_regularizer=layers.l2_regularizer(0.5)):
        net = layers.conv2d(x, 4, [3, 3])
        net = layers.conv2d(net, 2, 3, stride=2, activation_fn=tf.nn.relu)
        with tf.contrib.framework.arg_scope([layers.conv2d], padding="VALID"):
            valid = layers.conv2d(x, 2, [3, 3])
        net = layers.fully_connected(layers.flatten(net), 5)
    assert net.shape.as_list() == [None, 5] and valid.shape.as_list() == [None, 6, 6, 2]
    names = [v.op.name for v in tf.global_variables()]
    assert names[:4] == ["Conv/weights", "Conv/biases", "Conv_1/weights", "Conv_1/biases"]
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 4  # one per weights variable
    values = _run(losses + [v for v in tf.global_variables() if v.op.name.endswith("weights")])
    for loss, w in zip(values[:4], values[4:]):
        np.testing.assert_allclose(loss, 0.5 * (w ** 2).sum() / 2, rtol=1e-5)
    with pytest.raises(ValueError, match="not decorated with @add_arg_scope"):
        with tf.contrib.framework.arg_scope([tf.layers.dense], units=3):
            pass


def test_regularizer_and_initializer_arguments():
    assert layers.l2_regularizer(0.0)(tf.ones([2])) is None
    with pytest.raises(ValueError, match="less than 0"):
        layers.l1_regularizer(-1.0)
    with pytest.raises(ValueError, match="integer"):
        layers.l2_regularizer(1)
    l1 = layers.l1_regularizer(0.25)(tf.constant([1.0, -3.0]))
    init = layers.variance_scaling_initializer()([400, 300])
    xavier_normal = layers.xavier_initializer(uniform=False)([400, 300])
    l1_value, he, xn = _run([l1, init, xavier_normal])
    assert l1_value == pytest.approx(1.0)
    # contrib's truncated normals: stddev sqrt(1.3 * factor / n) before truncation at 2 stddev
    assert np.abs(he).max() <= 2 * np.sqrt(1.3 * 2.0 / 400) + 1e-6
    assert he.std() == pytest.approx(np.sqrt(1.3 * 2.0 / 400) * 0.8796, rel=0.05)
    assert xn.std() == pytest.approx(np.sqrt(1.3 / 350) * 0.8796, rel=0.05)


def test_max_pool_flatten_and_batch_norm():
    x = tf.placeholder(tf.float32, [None, 4, 4, 2])
    pooled = layers.max_pool2d(x, [2, 2])
    flat = layers.flatten(pooled)
    training = tf.placeholder_with_default(True, [])
    normed = layers.batch_norm(flat, is_training=training, updates_collections=None, decay=0.5)
    assert pooled.op.name == "MaxPool2D/MaxPool" and flat.shape.as_list() == [None, 8]
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["BatchNorm/beta", "BatchNorm/moving_mean", "BatchNorm/moving_variance"]
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []  # they run with the output
    data = np.random.default_rng(0).normal(size=(6, 4, 4, 2)).astype(np.float32)
    moving = [v for v in tf.global_variables() if v.op.name == "BatchNorm/moving_mean"][0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, p = sess.run([normed, pooled], {x: data})
        mean_after = sess.run(moving)
    want = (p.reshape(6, -1) - p.reshape(6, -1).mean(0)) / np.sqrt(p.reshape(6, -1).var(0) + 1e-3)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mean_after, 0.5 * p.reshape(6, -1).mean(0), rtol=1e-5, atol=1e-6)


def test_a_contrib_cnn_trains():
    rng = np.random.default_rng(1)
    images = rng.normal(size=(32, 6, 6, 1)).astype(np.float32)
    labels = (images.mean(axis=(1, 2, 3)) > 0).astype(np.int64)
    x = tf.placeholder(tf.float32, [None, 6, 6, 1])
    y = tf.placeholder(tf.int64, [None])
    net = layers.conv2d(x, 4, [3, 3])
    net = layers.max_pool2d(net, [2, 2])
    logits = layers.fully_connected(layers.flatten(net), 2, activation_fn=None)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: images, y: labels})
        for _ in range(40):
            sess.run(train, {x: images, y: labels})
        last = sess.run(loss, {x: images, y: labels})
    assert last < first * 0.5


def test_contrib_imports_and_unknown_modules():
    from graphflow.contrib import framework
    from graphflow.contrib.layers import fully_connected
    assert fully_connected is layers.fully_connected and framework is tf.contrib.framework
    from graphflow.contrib import slim
    assert slim.conv2d is layers.conv2d
    with pytest.raises(AttributeError, match="graphflow does not implement tf.contrib.learn .*"
                                             "provides tf.contrib.layers"):
        tf.contrib.learn  # noqa: B018


def test_contrib_rnn_names_its_source_module():
    try:
        import graphflow.tf1.rnn_cell  # noqa: F401
    except ImportError:
        with pytest.raises(AttributeError, match="tf.contrib.rnn.BasicLSTMCell comes from "
                                                 "graphflow.tf1.rnn_cell"):
            tf.contrib.rnn.BasicLSTMCell  # noqa: B018
    else:
        assert tf.contrib.rnn.BasicLSTMCell is graphflow.tf1.rnn_cell.BasicLSTMCell
        assert callable(tf.contrib.rnn.static_rnn)


def test_fully_connected_with_batch_norm_as_normalizer():
    x = tf.placeholder(tf.float32, [None, 3])
    training = tf.placeholder(tf.bool, [])
    h = layers.fully_connected(x, 4, normalizer_fn=layers.batch_norm,
                               normalizer_params={"is_training": training, "scale": True})
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["fully_connected/BatchNorm/beta", "fully_connected/BatchNorm/gamma",
                     "fully_connected/BatchNorm/moving_mean",
                     "fully_connected/BatchNorm/moving_variance", "fully_connected/weights"]
    assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 2  # moving mean and variance
    data = np.random.default_rng(2).normal(size=(8, 3)).astype(np.float32)
    out = _run(h, {x: data, training: True})
    np.testing.assert_allclose(out.mean(0), np.maximum(0, out).mean(0), atol=1e-6)  # post-ReLU
    assert out.shape == (8, 4) and (out >= 0).all()


def test_layer_norm_normalizes_each_example_and_trains_its_scale_and_shift():
    rng = np.random.default_rng(0)
    x_val = rng.standard_normal((4, 3, 5)) * 3 + 1
    x = tf.placeholder(tf.float64, [None, 3, 5])
    y = tf.contrib.layers.layer_norm(x)
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["LayerNorm/beta", "LayerNorm/gamma"]
    assert tf.global_variables()[0].shape.as_list() == [5]
    last = tf.contrib.layers.layer_norm(x, begin_norm_axis=-1, center=False, scope="ln2")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, got_last = sess.run([y, last], {x: x_val})
    mean = x_val.mean(axis=(1, 2), keepdims=True)
    var = x_val.var(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(got, (x_val - mean) / np.sqrt(var + 1e-12), rtol=1e-9)
    m, v = x_val.mean(-1, keepdims=True), x_val.var(-1, keepdims=True)
    np.testing.assert_allclose(got_last, (x_val - m) / np.sqrt(v + 1e-12), rtol=1e-9)
    with pytest.raises(ValueError, match="must be < rank"):
        tf.contrib.layers.layer_norm(x, begin_norm_axis=3)
