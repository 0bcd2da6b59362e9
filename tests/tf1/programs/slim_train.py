"""A TF-Slim training program as the slim walkthrough wrote it: a model under arg_scope, slim
losses, create_train_op, slim.learning.train with a logdir, number_of_steps and an init_fn, then
a second run that resumes from the checkpoint, and an evaluation of the restored model."""
import os
import tempfile

import numpy as np
import graphflow as tf

slim = tf.contrib.slim

rng = np.random.RandomState(0)
labels_np = rng.randint(0, 3, 240).astype(np.int32)
centers = np.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]], np.float32)
points_np = (centers[labels_np] + rng.randn(240, 2) * 0.5).astype(np.float32)


def model(inputs, is_training=True):
    with slim.arg_scope([slim.fully_connected], activation_fn=tf.nn.relu,
                        weights_initializer=slim.initializers.xavier_initializer(),
                        weights_regularizer=slim.l2_regularizer(1e-4)):
        net = slim.stack(inputs, slim.fully_connected, [16, 16], scope="fc")
        net = slim.dropout(net, 0.9, is_training=is_training)
        return slim.fully_connected(net, 3, activation_fn=None, scope="logits")


def build():
    inputs, labels = tf.train.shuffle_batch([tf.constant(points_np), tf.constant(labels_np)],
                                            batch_size=32, capacity=240, min_after_dequeue=64,
                                            enqueue_many=True, seed=1)
    logits = model(inputs)
    slim.losses.softmax_cross_entropy(logits, tf.one_hot(labels, 3))
    total_loss = slim.losses.get_total_loss()
    tf.summary.scalar("losses/total_loss", total_loss)
    optimizer = tf.train.AdamOptimizer(learning_rate=0.02)
    return slim.learning.create_train_op(total_loss, optimizer)


logdir = tempfile.mkdtemp()
called = []

with tf.Graph().as_default():
    train_op = build()
    first = slim.learning.train(train_op, logdir, number_of_steps=150, save_summaries_secs=1,
                                save_interval_secs=600, log_every_n_steps=50,
                                init_fn=lambda sess: called.append(True))
print("loss after 150 steps", first)
assert called == [True]
assert tf.train.latest_checkpoint(logdir).endswith("model.ckpt-150")
assert any(name.startswith("events.out.tfevents") for name in os.listdir(logdir))

with tf.Graph().as_default():  # resumes from the checkpoint: init_fn is not called again
    train_op = build()
    second = slim.learning.train(train_op, logdir, number_of_steps=200, save_summaries_secs=1,
                                 init_fn=lambda sess: called.append(True))
print("loss after 200 steps", second)
assert called == [True] and tf.train.latest_checkpoint(logdir).endswith("model.ckpt-200")

with tf.Graph().as_default():
    points = tf.placeholder(tf.float32, [None, 2])
    predictions = tf.argmax(model(points, is_training=False), 1)
    saver = tf.train.Saver(slim.get_variables_to_restore(exclude=["global_step"]))
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint(logdir))
        accuracy = np.mean(sess.run(predictions, {points: points_np}) == labels_np)
print("accuracy", accuracy)
assert accuracy > 0.95, accuracy
assert second < 0.4, second
