"""graphflow.tf1.slim (`tf.contrib.slim`): a small network written the TF-Slim way — arg_scope over
conv2d/fully_connected, slim.repeat and slim.stack, slim.dropout with a training flag, slim.losses —
builds the variables slim names and trains."""

import numpy as np

import graphflow as tf

slim = tf.contrib.slim


def _net(images, is_training):
    with slim.arg_scope([slim.conv2d, slim.fully_connected], activation_fn=tf.nn.relu,
                        weights_regularizer=slim.l2_regularizer(0.0005)):
        net = slim.repeat(images, 2, slim.conv2d, 4, [3, 3], scope="conv1")
        net = slim.max_pool2d(net, [2, 2], scope="pool1")
        net = slim.flatten(net)
        net = slim.stack(net, slim.fully_connected, [16, 8], scope="fc")
        net = slim.dropout(net, 0.5, is_training=is_training, scope="dropout")
        return slim.fully_connected(net, 3, activation_fn=None, scope="logits")


def test_a_slim_network_names_its_variables_as_slim_and_trains():
    rng = np.random.default_rng(0)
    labels_np = rng.integers(0, 3, 48)
    images_np = (rng.standard_normal((48, 6, 6, 1)) + labels_np[:, None, None, None]).astype(
        np.float32)
    images = tf.placeholder(tf.float32, [None, 6, 6, 1])
    labels = tf.placeholder(tf.int32, [None])
    training = tf.placeholder_with_default(True, [])
    logits = _net(images, training)
    names = [v.op.name for v in slim.get_model_variables()]
    assert names[:4] == ["conv1/conv1_1/weights", "conv1/conv1_1/biases",
                         "conv1/conv1_2/weights", "conv1/conv1_2/biases"]
    assert "fc/fc_2/weights" in names and "logits/weights" in names
    slim.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    total = slim.losses.get_total_loss()
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 5  # conv1 x2, fc x2, logits
    train = tf.train.AdamOptimizer(0.01).minimize(total)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32),
                                               labels), tf.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feed = {images: images_np, labels: labels_np}
        for _ in range(150):
            sess.run(train, feed)
        eval_feed = {**feed, training: False}
        assert sess.run(accuracy, eval_feed) > 0.9
        a, b = sess.run(logits, eval_feed), sess.run(logits, eval_feed)
        np.testing.assert_array_equal(a, b)  # no dropout when not training
    one_hot = slim.one_hot_encoding(tf.constant([0, 2]), 3)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(one_hot), [[1, 0, 0], [0, 0, 1]])


def test_slim_has_the_contrib_layers_learning_and_initializers():
    layers = tf.contrib.layers
    for name in ("conv2d_transpose", "convolution2d_transpose", "separable_conv2d",
                 "instance_norm", "group_norm", "linear", "optimize_loss", "apply_regularization",
                 "summarize_activation", "summarize_activations", "layer_norm", "dropout"):
        assert getattr(slim, name) is getattr(layers, name), name
    assert slim.initializers.xavier_initializer is layers.xavier_initializer
    assert slim.initializers.variance_scaling_initializer is layers.variance_scaling_initializer
    assert callable(slim.learning.train) and callable(slim.learning.create_train_op)
    from graphflow.contrib.slim import learning  # noqa: F401 (TF1's import path)
