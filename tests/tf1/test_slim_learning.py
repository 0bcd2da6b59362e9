"""Tests for graphflow/tf1/slim_learning.py (`slim.learning`): create_train_op's step (update
ops first, gradient multipliers, per-gradient clipping, NaN check, TRAIN_OP), and `train` under a
Supervisor: the global step reached, checkpoints and summaries in the logdir, init_fn, resuming,
traces, and argument errors. (tests/tf1/programs/slim_train.py trains a model with it.)"""

import json
import os

import numpy as np
import pytest

import graphflow as tf

slim = tf.contrib.slim


def test_create_train_op_takes_a_multiplied_clipped_sgd_step_after_the_update_ops():
    a = tf.Variable([3.0, 4.0], name="a")
    b = tf.Variable(1.0, name="b")
    counter = tf.Variable(0.0, trainable=False)
    tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, tf.assign_add(counter, 1.0))
    loss = tf.reduce_sum(tf.square(a)) + 3.0 * b
    train = slim.learning.create_train_op(loss, tf.train.GradientDescentOptimizer(0.1),
                                          clip_gradient_norm=5.0,
                                          gradient_multipliers={"b": 2.0})
    assert tf.get_collection(tf.GraphKeys.TRAIN_OP)[-1] is train  # after apply_gradients
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(train) == pytest.approx(28.0)
        # grad a = [6, 8] (norm 10) clipped to norm 5: [3, 4]; grad b = 3 * 2 = 6, clipped to 5
        np.testing.assert_allclose(sess.run(a), [2.7, 3.6], rtol=1e-6)
        assert sess.run(b) == pytest.approx(0.5)
        assert sess.run([counter, tf.train.get_global_step()]) == [1.0, 1]


@pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt")
def test_create_train_op_checks_the_loss_for_nan():
    w = tf.Variable(-1.0)
    train = slim.learning.create_train_op(tf.sqrt(w), tf.train.GradientDescentOptimizer(0.1))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError, match="LossTensor is inf or nan"):
            sess.run(train)


def _regression():
    rng = np.random.RandomState(0)
    x = rng.randn(64, 3).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(x), w) - y))
    tf.summary.scalar("loss", loss)
    return w, slim.learning.create_train_op(loss, tf.train.GradientDescentOptimizer(0.1))


def test_train_runs_to_number_of_steps_saves_and_resumes(tmp_path):
    logdir = str(tmp_path)
    calls = []
    with tf.Graph().as_default():
        w, train = _regression()
        loss = slim.learning.train(train, logdir, number_of_steps=40, save_summaries_secs=1,
                                   save_interval_secs=0, init_fn=calls.append,
                                   trace_every_n_steps=20)
    assert len(calls) == 1 and loss < 0.05
    assert tf.train.latest_checkpoint(logdir).endswith("model.ckpt-40")
    with open(os.path.join(logdir, "tf_trace-20.json")) as f:
        assert json.load(f)["traceEvents"]
    with tf.Graph().as_default():
        w, train = _regression()
        again = slim.learning.train(train, logdir, number_of_steps=60, init_fn=calls.append)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, tf.train.latest_checkpoint(logdir))
            np.testing.assert_allclose(sess.run(w).ravel(), [1.0, -2.0, 0.5], atol=0.05)
    assert len(calls) == 1 and again < loss  # restored, not re-initialized
    assert tf.train.latest_checkpoint(logdir).endswith("model.ckpt-60")
    from tensorboard.backend.event_processing import event_accumulator
    acc = event_accumulator.EventAccumulator(logdir, size_guidance={"scalars": 0})
    acc.Reload()
    assert "loss" in acc.Tags()["scalars"]


def test_train_without_logdir_and_argument_errors():
    with tf.Graph().as_default():
        _, train = _regression()
        assert slim.learning.train(train, None, number_of_steps=3, log_every_n_steps=0) > 0
        with pytest.raises(ValueError, match="number_of_steps"):
            slim.learning.train(train, None, number_of_steps=0)
        with pytest.raises(ValueError, match="summary_op because logdir=None"):
            slim.learning.train(train, None, summary_op=None)
        with pytest.raises(ValueError, match="train_op cannot be None"):
            slim.learning.train(None, None)
