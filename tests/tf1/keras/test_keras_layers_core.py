"""Keras core layers in graph mode: in plain TF1 programs (a Session, tf.train optimizers),
their variables and names, and each layer's numbers against numpy."""

import numpy as np
import pytest

import graphflow as tf


def test_dense_layers_in_a_plain_tf1_session_program_train_with_tf_train():
    rng = np.random.RandomState(0)
    data = rng.randn(256, 3).astype(np.float32)
    target = (data @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 1])
    hidden = tf.keras.layers.Dense(16, activation="relu")(x)
    prediction = tf.keras.layers.Dense(1)(hidden)
    loss = tf.reduce_mean(tf.square(prediction - y))
    train_op = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    names = sorted(v.op.name for v in tf.trainable_variables())
    assert names == ["dense/bias", "dense/kernel", "dense_1/bias", "dense_1/kernel"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: data, y: target})
        for _ in range(300):
            sess.run(train_op, {x: data, y: target})
        assert sess.run(loss, {x: data, y: target}) < 0.02 * first


def test_dense_defaults_glorot_uniform_kernel_and_zero_bias():
    layer = tf.keras.layers.Dense(200)
    layer(tf.placeholder(tf.float32, [None, 300]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, bias = sess.run([layer.kernel, layer.bias])
    limit = np.sqrt(6.0 / 500)
    assert np.abs(kernel).max() <= limit and np.abs(kernel).max() > 0.95 * limit
    assert np.std(kernel) == pytest.approx(limit / np.sqrt(3), rel=0.03)
    np.testing.assert_array_equal(bias, 0)


def test_one_layer_called_twice_shares_its_weights():
    layer = tf.keras.layers.Dense(2, kernel_initializer="ones")
    a = layer(tf.constant([[1.0, 2.0]]))
    b = layer(tf.constant([[3.0, 4.0]]))
    assert len(tf.global_variables()) == 2 and len(layer.inbound_nodes) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run([a, b]), [[[3.0, 3.0]], [[7.0, 7.0]]])


def test_dropout_follows_the_learning_phase_and_training_argument():
    x = tf.ones([200, 50])
    layer = tf.keras.layers.Dropout(0.5)
    by_phase = layer(x)
    always = layer(x, training=True)
    never = layer(x, training=False)
    phase = tf.keras.backend.learning_phase()
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(by_phase), 1.0)
        dropped = sess.run(by_phase, {phase: True})
        assert set(np.unique(dropped)) == {0.0, 2.0}
        assert 0.4 < np.mean(dropped == 0) < 0.6
        assert np.mean(sess.run(always) == 0) > 0.4
        np.testing.assert_array_equal(sess.run(never), 1.0)


def test_batch_normalization_training_and_inference_and_moving_averages():
    rng = np.random.RandomState(1)
    data = (rng.randn(64, 3) * [1.0, 2.0, 3.0] + [1.0, -1.0, 4.0]).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3])
    layer = tf.keras.layers.BatchNormalization(momentum=0.9)
    out = layer(x, training=True)
    inference = layer(x, training=False)
    assert [w.op.name.split("/")[-1] for w in layer.weights] == [
        "gamma", "beta", "moving_mean", "moving_variance"]
    assert len(layer.trainable_weights) == 2
    assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        normalized = sess.run(out, {x: data})
        expected = (data - data.mean(0)) / np.sqrt(data.var(0) + 1e-3)
        np.testing.assert_allclose(normalized, expected, rtol=1e-4, atol=1e-5)
        sess.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS), {x: data})
        mean, variance = sess.run([layer.moving_mean, layer.moving_variance])
        np.testing.assert_allclose(mean, 0.1 * data.mean(0), rtol=1e-5)
        np.testing.assert_allclose(variance, 0.9 + 0.1 * data.var(0), rtol=1e-5)
        np.testing.assert_allclose(sess.run(inference, {x: data}),
                                   (data - mean) / np.sqrt(variance + 1e-3), rtol=1e-5)


def _op_types(tensor):
    """The op types `tensor` depends on (its graph's ops between it and the inputs)."""
    seen, stack, types = set(), [tensor.op], set()
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        types.add(op.type)
        stack.extend(t.op for t in op.inputs)
        for inner in op.attrs.values() if hasattr(op, "attrs") else ():
            if hasattr(inner, "get_operations"):  # a cond's branch functions
                types.update(o.type for o in inner.get_operations())
    return types


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_batch_normalization_of_images_is_the_fused_op_as_in_keras(data_format):
    """4-D inputs normalized over the channels use FusedBatchNorm (Keras's fused=None); the
    moving variance takes the unbiased batch variance, as Keras's fused path; a learning phase
    fed False normalizes with the moving statistics and updates nothing."""
    rng = np.random.RandomState(2)
    axis = -1 if data_format == "channels_last" else 1
    shape = (8, 5, 5, 3) if axis == -1 else (8, 3, 5, 5)
    reduce = (0, 1, 2) if axis == -1 else (0, 2, 3)
    data = (rng.randn(*shape) * 2.0 + 1.5).astype(np.float32)
    x = tf.placeholder(tf.float32, shape)
    phase = tf.placeholder(tf.bool, [])
    layer = tf.keras.layers.BatchNormalization(axis=axis, momentum=0.9)
    out = layer(x, training=phase)
    assert "FusedBatchNorm" in _op_types(out)
    assert "FusedBatchNorm" not in _op_types(
        tf.keras.layers.BatchNormalization(axis=axis, fused=False)(x, training=True))
    with pytest.raises(ValueError, match="fused=True needs 4-D"):
        tf.keras.layers.BatchNormalization(fused=True)(tf.placeholder(tf.float32, [4, 3]))
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)[:2]
    n = data.size / 3
    keep = [1] * 4
    keep[axis] = 3
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        normalized, _ = sess.run([out, updates], {x: data, phase: True})
        mean, var = data.mean(reduce), data.var(reduce)
        expected = (data - mean.reshape(keep)) / np.sqrt(var.reshape(keep) + 1e-3)
        np.testing.assert_allclose(normalized, expected, rtol=1e-4, atol=1e-4)
        moving_mean, moving_var = sess.run([layer.moving_mean, layer.moving_variance])
        np.testing.assert_allclose(moving_mean, 0.1 * mean, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(moving_var, 0.9 + 0.1 * var * n / (n - 1), rtol=1e-5)
        inferred, _ = sess.run([out, updates], {x: data, phase: False})
        np.testing.assert_allclose(
            inferred, (data - moving_mean.reshape(keep)) / np.sqrt(moving_var.reshape(keep) + 1e-3),
            rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(sess.run(layer.moving_mean), moving_mean)
        np.testing.assert_array_equal(sess.run(layer.moving_variance), moving_var)


def test_embedding_reshape_flatten_lambda_add_concatenate_activation():
    ids = tf.constant([[0, 2], [1, 1]])
    embedding = tf.keras.layers.Embedding(3, 4, embeddings_initializer="glorot_uniform")
    vectors = embedding(ids)
    flat = tf.keras.layers.Flatten()(vectors)
    reshaped = tf.keras.layers.Reshape((4, 2))(flat)
    doubled = tf.keras.layers.Lambda(lambda t: t * 2.0)(reshaped)
    summed = tf.keras.layers.Add()([reshaped, doubled])
    joined = tf.keras.layers.Concatenate(axis=1)([reshaped, summed])
    activated = tf.keras.layers.Activation("relu")(joined)
    assert vectors.shape.as_list() == [2, 2, 4] and flat.shape.as_list() == [2, 8]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        table, v, r, s, j, a = sess.run([embedding.embeddings, vectors, reshaped, summed, joined,
                                         activated])
    np.testing.assert_array_equal(v, table[[[0, 2], [1, 1]]])
    np.testing.assert_array_equal(r, v.reshape(2, 4, 2))
    np.testing.assert_allclose(s, 3 * r)
    np.testing.assert_allclose(j, np.concatenate([r, 3 * r], axis=1))
    np.testing.assert_allclose(a, np.maximum(j, 0))


def test_layer_weights_get_and_set_and_errors():
    layer = tf.keras.layers.Dense(2, input_shape=(3,))
    layer(tf.placeholder(tf.float32, [None, 3]))
    layer.set_weights([np.ones((3, 2), np.float32), np.array([1.0, 2.0], np.float32)])
    kernel, bias = layer.get_weights()
    np.testing.assert_array_equal(kernel, 1.0)
    np.testing.assert_array_equal(bias, [1.0, 2.0])
    with pytest.raises(ValueError, match="has shape \\[3, 2\\], got \\(2, 2\\)"):
        layer.set_weights([np.ones((2, 2)), np.ones(2)])
    with pytest.raises(ValueError, match="last dimension of the inputs to `Dense`"):
        tf.keras.layers.Dense(2)(tf.placeholder(tf.float32, [None, None]))
    with pytest.raises(ValueError, match="Unknown activation function: 'rellu'"):
        tf.keras.layers.Dense(2, activation="rellu")
