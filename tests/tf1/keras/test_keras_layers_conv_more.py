"""Conv1D, 1-D pooling, Conv2DTranspose, UpSampling2D, ZeroPadding2D, LeakyReLU and
TimeDistributed against numpy, and a Conv1D text-style classifier that learns."""

import numpy as np
import pytest

import graphflow as tf


def _run(outputs, feed, layers_weights=()):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for layer, values in layers_weights:
            for variable, value in zip(layer.weights, values):
                variable.load(value, sess)
        return sess.run(outputs, feed)


def test_conv1d_and_1d_pooling_match_numpy():
    rng = np.random.RandomState(0)
    data = rng.randn(2, 9, 3).astype(np.float32)
    kernel = rng.randn(3, 3, 4).astype(np.float32)
    bias = rng.randn(4).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 9, 3])
    conv = tf.keras.layers.Conv1D(4, 3, strides=2, activation="relu")
    y = conv(x)
    assert y.shape.as_list() == [None, 4, 4]
    outs = [y, tf.keras.layers.MaxPooling1D(2)(x), tf.keras.layers.AveragePooling1D(3)(x),
            tf.keras.layers.GlobalMaxPooling1D()(x), tf.keras.layers.GlobalAveragePooling1D()(x)]
    got = _run(outs, {x: data}, [(conv, [kernel, bias])])
    expected = np.stack([np.einsum("bkc,kcf->bf", data[:, 2 * t:2 * t + 3], kernel)
                         for t in range(4)], 1) + bias
    np.testing.assert_allclose(got[0], np.maximum(expected, 0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], data[:, :8].reshape(2, 4, 2, 3).max(2), rtol=1e-6)
    np.testing.assert_allclose(got[2], data.reshape(2, 3, 3, 3).mean(2), rtol=1e-5)
    np.testing.assert_allclose(got[3], data.max(1), rtol=1e-6)
    np.testing.assert_allclose(got[4], data.mean(1), rtol=1e-5)


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_conv2d_transpose_matches_numpy_scatter(padding):
    rng = np.random.RandomState(1)
    data = rng.randn(2, 3, 4, 2).astype(np.float32)
    kernel = rng.randn(3, 3, 5, 2).astype(np.float32)     # [kh, kw, filters, in]
    x = tf.placeholder(tf.float32, [None, 3, 4, 2])
    layer = tf.keras.layers.Conv2DTranspose(5, 3, strides=2, padding=padding)
    y = layer(x)
    full = np.zeros((2, 3 * 2 + 1, 4 * 2 + 1, 5))         # (in - 1) * stride + kernel
    for i in range(3):
        for j in range(4):
            full[:, 2 * i:2 * i + 3, 2 * j:2 * j + 3] += np.einsum("bc,hwfc->bhwf",
                                                                    data[:, i, j], kernel)
    if padding == "valid":
        expected = full
    else:                                                 # TF's SAME crop: (k - s) // 2 first
        expected = full[:, 0:6, 0:8]
    assert y.shape.as_list() == [None] + list(expected.shape[1:])
    got = _run(y, {x: data}, [(layer, [kernel, np.zeros(5, np.float32)])])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_upsampling_padding_leaky_relu():
    rng = np.random.RandomState(2)
    data = rng.randn(2, 3, 2, 4).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3, 2, 4])
    outs = [tf.keras.layers.UpSampling2D((2, 3))(x), tf.keras.layers.ZeroPadding2D(((1, 0),
                                                                                    (2, 1)))(x),
            tf.keras.layers.ZeroPadding2D(1)(x), tf.keras.layers.LeakyReLU()(x)]
    got = _run(outs, {x: data})
    np.testing.assert_array_equal(got[0], data.repeat(2, axis=1).repeat(3, axis=2))
    np.testing.assert_array_equal(got[1], np.pad(data, [(0, 0), (1, 0), (2, 1), (0, 0)]))
    np.testing.assert_array_equal(got[2], np.pad(data, [(0, 0), (1, 1), (1, 1), (0, 0)]))
    np.testing.assert_allclose(got[3], np.where(data > 0, data, 0.3 * data), rtol=1e-6)


def test_time_distributed_dense_shares_weights_over_steps():
    rng = np.random.RandomState(3)
    data = rng.randn(2, 5, 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 5, 3])
    wrapper = tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(4))
    y = wrapper(x)
    assert y.shape.as_list() == [None, 5, 4] and len(wrapper.weights) == 2
    kernel, bias = rng.randn(3, 4).astype(np.float32), rng.randn(4).astype(np.float32)
    got = _run(y, {x: data}, [(wrapper, [kernel, bias])])
    np.testing.assert_allclose(got, data @ kernel + bias, rtol=1e-5, atol=1e-5)


def test_conv1d_classifier_learns_where_a_pattern_sits():
    tf.keras.backend.clear_session()
    tf.set_random_seed(0)
    rng = np.random.RandomState(4)
    x = rng.randn(400, 20, 1).astype(np.float32) * 0.3
    labels = rng.randint(0, 2, 400)
    starts = rng.randint(0, 17, 400)
    for i, (label, start) in enumerate(zip(labels, starts)):
        x[i, start:start + 3, 0] += [1.0, -1.0, 1.0] if label else [-1.0, 1.0, -1.0]
    model = tf.keras.Sequential([
        tf.keras.layers.Conv1D(8, 3, activation="relu", input_shape=(20, 1)),
        tf.keras.layers.MaxPooling1D(2),
        tf.keras.layers.Conv1D(8, 3, padding="same"),
        tf.keras.layers.LeakyReLU(0.1),
        tf.keras.layers.GlobalMaxPooling1D(),
        tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile(tf.keras.optimizers.Adam(0.01), "binary_crossentropy", metrics=["accuracy"])
    history = model.fit(x, labels.astype(np.float32), batch_size=32, epochs=15, verbose=0)
    assert history.history["acc"][-1] > 0.9
