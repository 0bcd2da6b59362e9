"""Tests for graphflow.compat: `import graphflow.compat.v1 as tf` is graphflow, the TF2-era
switches TF1 programs call exist (and refuse what graphflow cannot do), `tf.compat.as_*`, and an
end-to-end TF1 training script (variable_scope + get_variable MLP, tf.losses, AdamOptimizer,
global_step, Saver) written exactly as a TF1 user writes it."""

import importlib
import sys

import numpy as np
import pytest

import graphflow
import graphflow.compat.v1 as tf


def test_compat_v1_is_graphflow():
    assert tf is graphflow
    assert graphflow.compat.v1 is graphflow
    assert importlib.import_module("graphflow.compat.v1") is graphflow
    assert sys.modules["graphflow.compat.v1"] is graphflow
    assert tf.compat.v1.placeholder is graphflow.placeholder
    with pytest.raises(AttributeError,
                       match=r"graphflow does not implement tf.compat.v3 \(see docs/compat.md\)"):
        graphflow.compat.v3  # noqa: B018


def test_switches():
    assert tf.disable_eager_execution() is None
    assert tf.disable_v2_behavior() is None
    tf.compat.v1.disable_resource_variables()
    tf.compat.v1.disable_v2_tensorshape()
    assert tf.executing_eagerly() is False
    # the switches change nothing: graphs still build and run the TF1 way
    x = tf.placeholder(tf.float32, [None])
    with tf.Session() as sess:
        assert sess.run(tf.reduce_sum(x * 2.0), {x: [1.0, 2.0]}) == 6.0
    with pytest.raises(ValueError, match="program startup"):  # graph ops exist already
        tf.enable_eager_execution()
    tf.reset_default_graph()
    tf.compat.v1.enable_eager_execution()
    assert tf.executing_eagerly() and tf.constant(2.0).numpy() == 2.0
    tf.disable_eager_execution()
    assert tf.executing_eagerly() is False
    with pytest.raises(NotImplementedError, match="TF1 API only"):
        tf.compat.v1.enable_v2_behavior()


def test_as_bytes_and_text():
    assert tf.compat.as_bytes("héllo") == "héllo".encode()
    assert tf.compat.as_bytes(bytearray(b"ab")) == b"ab"
    assert tf.compat.as_text(b"h\xc3\xa9") == "hé" == tf.compat.as_str("hé")
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        tf.compat.as_bytes(3)


def test_tf1_names_present():
    assert tf.newaxis is None
    assert tf.random.normal is tf.random_normal and tf.random.uniform is tf.random_uniform
    assert tf.random.truncated_normal is tf.truncated_normal
    assert tf.TensorShape([None, 3]).as_list() == [None, 3]


# ------------------------------------------------------------------ a TF1 program
def _blobs(n, seed):
    rng = np.random.RandomState(seed)
    centers = np.array([[2.0, 0.0, 0.0, 1.0], [-2.0, 1.0, 0.0, -1.0], [0.0, -2.0, 2.0, 0.0]])
    labels = rng.randint(0, 3, size=n)
    return (centers[labels] + rng.randn(n, 4)).astype(np.float32), labels.astype(np.int64)


def build_model(x, num_hidden, num_classes, reuse=None):
    with tf.variable_scope("mlp", reuse=reuse,
                           regularizer=lambda w: 1e-4 * tf.nn.l2_loss(w)):
        with tf.variable_scope("hidden"):
            w = tf.get_variable("weights", [int(x.get_shape()[1]), num_hidden],
                                initializer=tf.truncated_normal_initializer(stddev=0.5))
            b = tf.get_variable("biases", [num_hidden], initializer=tf.zeros_initializer(),
                                regularizer=tf.no_regularizer)
            h = tf.nn.relu(tf.matmul(x, w) + b)
        with tf.variable_scope("softmax_linear"):
            w = tf.get_variable("weights", [num_hidden, num_classes])
            b = tf.get_variable("biases", [num_classes], initializer=tf.constant_initializer(0.0),
                                regularizer=tf.no_regularizer)
            return tf.nn.xw_plus_b(h, w, b)


def build_graph():
    tf.set_random_seed(1234)
    images = tf.placeholder(tf.float32, shape=[None, 4], name="images")
    labels = tf.placeholder(tf.int64, shape=[None], name="labels")
    logits = build_model(images, 16, 3)
    tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    total_loss = tf.losses.get_total_loss()
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(learning_rate=0.05).minimize(total_loss,
                                                                   global_step=global_step)
    eval_logits = build_model(images, 16, 3, reuse=True)
    correct = tf.equal(tf.argmax(eval_logits, 1), labels)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    return images, labels, total_loss, train_op, global_step, accuracy, eval_logits


def test_tf1_training_script_end_to_end(tmp_path):
    tf.disable_v2_behavior()
    train_x, train_y = _blobs(300, 0)
    test_x, test_y = _blobs(200, 1)
    with tf.Graph().as_default():
        images, labels, total_loss, train_op, global_step, accuracy, logits = build_graph()
        assert [v.name for v in tf.trainable_variables()] == [
            "mlp/hidden/weights:0", "mlp/hidden/biases:0", "mlp/softmax_linear/weights:0",
            "mlp/softmax_linear/biases:0"]
        assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 2
        saver = tf.train.Saver(max_to_keep=2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first_loss = sess.run(total_loss, {images: train_x, labels: train_y})
            for step in range(60):
                batch = slice((step * 50) % 300, (step * 50) % 300 + 50)
                _, loss_value = sess.run([train_op, total_loss],
                                         {images: train_x[batch], labels: train_y[batch]})
            assert tf.train.global_step(sess, global_step) == 60
            acc = sess.run(accuracy, {images: test_x, labels: test_y})
            saved_logits = sess.run(logits, {images: test_x})
            path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=global_step)
        assert loss_value < 0.5 * first_loss
        assert acc > 0.9
    assert path.endswith("model.ckpt-60")

    # a new process would rebuild the same graph and restore the checkpoint
    tf.reset_default_graph()
    images, labels, _, _, global_step, accuracy, logits = build_graph()
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        assert sess.run(global_step) == 60
        np.testing.assert_array_equal(sess.run(logits, {images: test_x}), saved_logits)
        assert sess.run(accuracy, {images: test_x, labels: test_y}) == acc
