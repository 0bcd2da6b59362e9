"""tf.layers.conv2d_transpose, conv3d and separable_conv2d: variables, shapes, values, reuse."""

import numpy as np
import pytest

import graphflow as tf


@pytest.mark.parametrize("padding,size", [("same", 8), ("valid", 9)])
def test_conv2d_transpose_sizes_and_values(padding, size):
    x = tf.placeholder(tf.float32, [None, 4, 4, 2])
    kernel = np.random.default_rng(0).normal(size=(3, 3, 5, 2)).astype(np.float32)
    y = tf.layers.conv2d_transpose(x, 5, 3, strides=2, padding=padding,
                                   kernel_initializer=tf.constant_initializer(kernel))
    assert y.shape.as_list() == [None, size, size, 5]
    assert [v.op.name for v in tf.global_variables()] == ["conv2d_transpose/kernel",
                                                          "conv2d_transpose/bias"]
    reference = tf.nn.conv2d_transpose(x, kernel, tf.stack([tf.shape(x)[0], size, size, 5]),
                                       [1, 2, 2, 1], padding.upper())
    value = np.random.default_rng(1).normal(size=(2, 4, 4, 2)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, want = sess.run([y, reference], {x: value})
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_conv3d_and_separable_conv2d_variables_and_reuse():
    volume = tf.placeholder(tf.float32, [None, 4, 5, 5, 2])
    out = tf.layers.conv3d(volume, 3, (2, 3, 3), strides=(1, 2, 2), padding="same", name="c3")
    again = tf.layers.conv3d(volume, 3, (2, 3, 3), strides=(1, 2, 2), padding="same", name="c3",
                             reuse=True)
    assert out.shape.as_list() == again.shape.as_list() == [None, 4, 3, 3, 3]
    image = tf.placeholder(tf.float32, [None, 6, 6, 3])
    sep = tf.layers.separable_conv2d(image, 4, 3, depth_multiplier=2, activation=tf.nn.relu)
    assert sep.shape.as_list() == [None, 4, 4, 4]
    assert sorted(v.op.name for v in tf.global_variables()) == [
        "c3/bias", "c3/kernel", "separable_conv2d/bias", "separable_conv2d/depthwise_kernel",
        "separable_conv2d/pointwise_kernel"]
    with pytest.raises(ValueError, match="channels_last"):
        tf.layers.conv3d(volume, 3, 2, data_format="channels_first")


def test_pooling3d_layers_match_tf_nn_and_conv3d_takes_dilations():
    volume = tf.placeholder(tf.float64, [None, 4, 5, 6, 2])
    mx = tf.layers.max_pooling3d(volume, 2, (2, 1, 2), padding="same", name="mp")
    av = tf.layers.average_pooling3d(volume, (2, 2, 3), 2)
    first = tf.layers.max_pooling3d(tf.transpose(volume, [0, 4, 1, 2, 3]), 2, 2,
                                    data_format="channels_first")
    assert mx.op.name == "mp/MaxPool3D" and mx.shape.as_list() == [None, 2, 5, 3, 2]
    assert av.shape.as_list() == [None, 2, 2, 2, 2]
    dilated = tf.layers.conv3d(volume, 3, 2, dilation_rate=(1, 2, 2), name="dil")
    assert dilated.shape.as_list() == [None, 3, 3, 4, 3]
    value = np.random.default_rng(2).normal(size=(2, 4, 5, 6, 2))
    want_mx = tf.nn.max_pool3d(volume, [1, 2, 2, 2, 1], [1, 2, 1, 2, 1], "SAME")
    want_av = tf.nn.avg_pool3d(volume, [1, 2, 2, 3, 1], [1, 2, 2, 2, 1], "VALID")
    want_first = tf.nn.max_pool3d(volume, 2, 2, "VALID")
    with tf.Session() as sess:
        got = sess.run([mx, av, first], {volume: value})
        want = sess.run([want_mx, want_av, want_first], {volume: value})
    np.testing.assert_allclose(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1])
    np.testing.assert_allclose(got[2], np.transpose(want[2], [0, 4, 1, 2, 3]))
    np.testing.assert_allclose(got[1][0, 0, 0, 0, 0], value[0, :2, :2, :3, 0].mean())


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_conv1d_and_1d_poolings_against_numpy(padding):
    rng = np.random.default_rng(2)
    kernel = rng.normal(size=(3, 2, 4)).astype(np.float32)
    value = rng.normal(size=(2, 7, 2)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 7, 2])
    y = tf.layers.conv1d(x, 4, 3, padding=padding, activation=tf.nn.relu,
                         kernel_initializer=tf.constant_initializer(kernel),
                         bias_initializer=tf.constant_initializer(0.1))
    pooled_max = tf.layers.max_pooling1d(x, 2, 2, padding=padding)
    pooled_avg = tf.layers.average_pooling1d(x, 3, 1)
    assert [v.op.name for v in tf.global_variables()] == ["conv1d/kernel", "conv1d/bias"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, mx, av = sess.run([y, pooled_max, pooled_avg], {x: value})
    padded = np.pad(value, [(0, 0), (1, 1), (0, 0)]) if padding == "same" else value
    width = padded.shape[1] - 2
    want = np.stack([np.einsum("bkc,kcf->bf", padded[:, i:i + 3], kernel)
                     for i in range(width)], axis=1) + 0.1
    np.testing.assert_allclose(got, np.maximum(want, 0), rtol=1e-5, atol=1e-6)
    pairs = 4 if padding == "same" else 3  # 'same' pools the last column alone
    want_max = np.stack([value[:, 2 * i:2 * i + 2].max(axis=1) for i in range(pairs)], axis=1)
    np.testing.assert_array_equal(mx, want_max)
    want_avg = np.stack([value[:, i:i + 3].mean(axis=1) for i in range(5)], axis=1)
    np.testing.assert_allclose(av, want_avg, rtol=1e-6)
