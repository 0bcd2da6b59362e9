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
