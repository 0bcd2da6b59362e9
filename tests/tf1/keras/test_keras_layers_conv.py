"""Keras image layers: Conv2D, pooling and global pooling against numpy, and a small CNN that
learns in a Sequential model."""

import numpy as np

import graphflow as tf


def _conv_valid(x, kernel):
    kh, kw = kernel.shape[:2]
    h, w = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    out = np.zeros((x.shape[0], h, w, kernel.shape[3]))
    for i in range(h):
        for j in range(w):
            out[:, i, j] = np.tensordot(x[:, i:i + kh, j:j + kw], kernel, axes=3)
    return out


def test_conv2d_and_poolings_against_numpy():
    rng = np.random.RandomState(0)
    data = rng.randn(2, 6, 6, 3).astype(np.float32)
    x = tf.constant(data)
    conv = tf.keras.layers.Conv2D(4, (3, 3), activation="relu", bias_initializer="ones")
    convolved = conv(x)
    pooled = tf.keras.layers.MaxPooling2D()(convolved)
    averaged = tf.keras.layers.AveragePooling2D(pool_size=2, strides=1)(convolved)
    global_average = tf.keras.layers.GlobalAveragePooling2D()(convolved)
    assert conv.kernel.shape.as_list() == [3, 3, 3, 4]
    assert convolved.shape.as_list() == [2, 4, 4, 4] and pooled.shape.as_list() == [2, 2, 2, 4]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, c, p, a, g = sess.run([conv.kernel, convolved, pooled, averaged, global_average])
    expected = np.maximum(_conv_valid(data, kernel) + 1.0, 0)
    np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(p, expected.reshape(2, 2, 2, 2, 2, 4).max(axis=(2, 4)), rtol=1e-5)
    windows = (expected[:, :-1, :-1] + expected[:, 1:, :-1] + expected[:, :-1, 1:]
               + expected[:, 1:, 1:]) / 4
    np.testing.assert_allclose(a, windows, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(g, expected.mean(axis=(1, 2)), rtol=1e-4)


def test_sequential_cnn_learns_bright_left_versus_bright_right():
    tf.set_random_seed(3)  # the initial weights and dropout too: the same run every time
    rng = np.random.RandomState(3)
    images = rng.rand(240, 8, 8, 1).astype(np.float32)
    labels = rng.randint(0, 2, 240)
    images[labels == 0, :, :4] += 0.6
    images[labels == 1, :, 4:] += 0.6
    model = tf.keras.models.Sequential([
        tf.keras.layers.Conv2D(4, 3, padding="same", activation="relu", input_shape=(8, 8, 1)),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dropout(0.1),
        tf.keras.layers.Dense(2, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(images, labels, batch_size=16, epochs=8, verbose=0)
    assert model.evaluate(images, labels, verbose=0)[1] > 0.95
    assert [type(layer).__name__ for layer in model.layers] == [
        "Conv2D", "MaxPooling2D", "Flatten", "Dropout", "Dense"]
