"""tf.layers layer objects: scopes, variable reuse on a second call, variable lists, training."""

import numpy as np
import pytest

import graphflow as tf


def test_dense_object_reuses_its_variables():
    x = tf.placeholder(tf.float32, [None, 3])
    layer = tf.layers.Dense(2, activation=tf.nn.relu, name="fc")
    y1 = layer(x)
    with tf.variable_scope("elsewhere"):
        y2 = layer.apply(x * 2.0)
    assert [v.op.name for v in tf.global_variables()] == ["fc/kernel", "fc/bias"]
    assert layer.kernel.op.name == "fc/kernel" and layer.built
    assert layer.trainable_variables == layer.variables == tf.trainable_variables()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        k, b = sess.run([layer.kernel, layer.bias])
        a, c = sess.run([y1, y2], {x: [[1.0, -1.0, 2.0]]})
    np.testing.assert_allclose(a, np.maximum(np.array([[1.0, -1.0, 2.0]]) @ k + b, 0), rtol=1e-6)
    np.testing.assert_allclose(c, np.maximum(np.array([[2.0, -2.0, 4.0]]) @ k + b, 0), rtol=1e-6)


def test_unnamed_objects_get_unique_scopes_and_non_trainable_layers():
    x = tf.placeholder(tf.float32, [None, 6, 6, 1])
    conv_a, conv_b = tf.layers.Conv2D(2, 3), tf.layers.Conv2D(2, 3, trainable=False)
    h = conv_b(conv_a(x))
    assert (conv_a.name, conv_b.name) == ("conv2d", "conv2d_1")
    assert conv_b.trainable_variables == [] and len(conv_b.non_trainable_variables) == 2
    pooled = tf.layers.MaxPooling2D(2, 2)(h)
    flat = tf.layers.Flatten()(pooled)
    dropped = tf.layers.Dropout(0.5)(flat, training=False)
    averaged = tf.layers.AveragePooling2D(2, 2, padding="same")(h)
    assert pooled.shape.as_list() == [None, 1, 1, 2] and flat.shape.as_list() == [None, 2]
    assert dropped.shape.as_list() == [None, 2] and averaged.shape.as_list() == [None, 1, 1, 2]
    with pytest.raises(TypeError, match="missing"):
        tf.layers.Conv2D(2)


def test_conv_layer_objects_build_the_functional_layers():
    x = tf.placeholder(tf.float32, [None, 4, 4, 2])
    up = tf.layers.Conv2DTranspose(3, 3, strides=2, padding="same")
    sep = tf.layers.SeparableConv2D(5, 3, depth_multiplier=2)
    vol = tf.layers.Conv3D(2, 2)
    assert up(x).shape.as_list() == [None, 8, 8, 3]
    assert sep(x).shape.as_list() == [None, 2, 2, 5]
    assert vol(tf.placeholder(tf.float32, [None, 3, 3, 3, 1])).shape.as_list() == \
        [None, 2, 2, 2, 2]
    assert sep.depthwise_kernel.shape.as_list() == [3, 3, 2, 2]
    assert sep.pointwise_kernel.shape.as_list() == [1, 1, 4, 5]
    assert up.kernel.shape.as_list() == [3, 3, 3, 2]


def test_a_small_model_of_layer_objects_trains():
    rng = np.random.default_rng(0)
    images = rng.normal(size=(32, 5, 5, 1)).astype(np.float32)
    labels = (images.mean(axis=(1, 2, 3)) > 0).astype(np.int32)
    x = tf.placeholder(tf.float32, [None, 5, 5, 1])
    y = tf.placeholder(tf.int32, [None])
    conv, dense = tf.layers.Conv2D(3, 3, activation=tf.nn.relu), tf.layers.Dense(2)
    logits = dense(tf.layers.Flatten()(conv(x)))
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: images, y: labels})
        for _ in range(30):
            sess.run(train, {x: images, y: labels})
        assert sess.run(loss, {x: images, y: labels}) < 0.5 * first


def test_pooling3d_classes_call_the_functions():
    volume = tf.placeholder(tf.float32, [None, 4, 4, 6, 2])
    mx = tf.layers.MaxPooling3D(2, (2, 2, 3), padding="same")(volume)
    av = tf.layers.AveragePooling3D((1, 2, 2), 2, name="avg")(volume)
    assert mx.op.type == "MaxPool3D" and mx.shape.as_list() == [None, 2, 2, 2, 2]
    assert av.op.type == "AvgPool3D" and av.op.name.startswith("avg")
    assert av.shape.as_list() == [None, 2, 2, 3, 2]


def test_a_layer_first_called_in_a_loop_body_knows_its_variables():
    dense = tf.layers.Dense(3, name="in_loop")
    _, out = tf.while_loop(lambda i, x: i < 2, lambda i, x: (i + 1, dense(x)),
                           (tf.constant(0), tf.ones([2, 3])))
    assert [v.op.name for v in dense.variables] == ["in_loop/kernel", "in_loop/bias"]
    assert dense.kernel is tf.trainable_variables()[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, bias, got = sess.run([dense.kernel, dense.bias, out])
    x = np.ones((2, 3))
    for _ in range(2):
        x = x @ kernel + bias
    np.testing.assert_allclose(got, x, rtol=1e-5)
