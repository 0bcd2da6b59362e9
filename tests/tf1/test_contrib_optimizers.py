"""Tests for graphflow/tf1/contrib_optimizers.py (`tf.contrib.layers.optimize_loss`): the
optimizer by name, class, instance or function, the learning-rate variable and decay, clipping,
update ops, summaries and their tags, and losses against TensorFlow (TF-Slim's optimize_loss
rebuilt there from tf.compat.v1.train ops)."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf_reference import run_in_tensorflow, tf_python

layers = tf.contrib.layers


def _data(np):
    rng = np.random.RandomState(3)
    x = rng.randn(16, 3).astype(np.float32)
    y = (x @ np.array([[1.5], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    return x, y


def tf_core_optimize(tf, np):
    """optimize_loss(loss, step, 0.1, 'Adam', clip_gradients=1.0, learning_rate_decay_fn=
    exponential_decay(.., 2, 0.5)) written with tf.compat.v1.train ops."""
    x, y = _data(np)
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    step = tf.train.get_or_create_global_step()
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    lr = tf.train.exponential_decay(tf.get_variable("lr", [], initializer=tf.constant_initializer(
        0.1), trainable=False), step, 2, 0.5)
    opt = tf.train.AdamOptimizer(lr)
    grads, variables = zip(*opt.compute_gradients(loss, [w, b]))
    clipped, _ = tf.clip_by_global_norm(grads, 1.0)
    with tf.control_dependencies([opt.apply_gradients(zip(clipped, variables), step)]):
        train = tf.identity(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run(train) for _ in range(6)]
        return {"losses": losses, "w": sess.run(w), "step": sess.run(step)}


# Made by a Python with TensorFlow 2.21 running tf_core_optimize (the same numbers as tf_slim 1.1's
# optimize_loss there): the loss returned by each of 6 steps, then w.
TF_LOSSES = [4.958995819091797, 4.321866035461426, 3.9076218605041504, 3.632911443710327,
             3.447791576385498, 3.3214728832244873]
TF_W = [0.2988923490047455, -0.2988795042037964, 0.2948634624481201]


def _graphflow_optimize(**kwargs):
    x, y = _data(np)
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    step = tf.train.get_or_create_global_step()
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(x), w) + b - y))
    train = layers.optimize_loss(loss, step, 0.1, "Adam", clip_gradients=1.0,
                                 learning_rate_decay_fn=lambda lr, s: tf.train.exponential_decay(
                                     lr, s, 2, 0.5), **kwargs)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run(train) for _ in range(6)]
        return train, losses, sess.run(w), sess.run(step)


def test_optimize_loss_matches_recorded_tensorflow():
    train, losses, w, step = _graphflow_optimize()
    np.testing.assert_allclose(losses, TF_LOSSES, rtol=1e-5)
    np.testing.assert_allclose(w.ravel(), TF_W, rtol=1e-5)
    assert step == 6 and train.shape.ndims == 0
    names = [v.op.name for v in tf.global_variables()]
    assert "OptimizeLoss/learning_rate" in names
    # TF's summary tensors, in TF's order
    assert [t.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)] == [
        "OptimizeLoss/learning_rate_1:0", "OptimizeLoss/global_norm/gradient_norm:0",
        "OptimizeLoss/loss:0", "OptimizeLoss/global_norm/clipped_gradient_norm:0"]


def test_optimize_loss_matches_tensorflow_live():
    if tf_python() is None:
        pytest.skip("TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON to compare with it)")
    expected = run_in_tensorflow([(None, _data, None), ("core", tf_core_optimize, {})])["core"]
    _, losses, w, _ = _graphflow_optimize()
    np.testing.assert_allclose(losses, expected["losses"], rtol=1e-5)
    np.testing.assert_allclose(w, expected["w"], rtol=1e-5)


@pytest.mark.parametrize("optimizer", ["SGD", tf.train.GradientDescentOptimizer,
                                       tf.train.GradientDescentOptimizer(0.1),
                                       lambda lr: tf.train.GradientDescentOptimizer(lr)])
def test_every_form_of_optimizer_takes_the_same_sgd_step(optimizer):
    w = tf.Variable(2.0)
    loss = tf.square(w)
    train = layers.optimize_loss(loss, None, 0.1, optimizer, summaries=[])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(train) == pytest.approx(4.0)
        assert sess.run(w) == pytest.approx(2.0 - 0.1 * 4.0)


def test_update_ops_run_before_the_loss_and_summaries_on_request():
    w = tf.Variable(1.0)
    counter = tf.Variable(0.0, trainable=False)
    tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, tf.assign_add(counter, 1.0))
    step = tf.train.get_or_create_global_step()
    train = layers.optimize_loss(tf.square(w), step, tf.constant(0.5), "Momentum",
                                 summaries=["gradients", "gradient_norm"], name="opt",
                                 increment_global_step=False)
    assert [t.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)] == [
        "opt/global_norm/gradient_norm:0", "opt/gradients/Variable_0:0",
        "opt/gradient_norm/Variable_0:0"]  # as TF names them
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        sess.run(train)
        assert sess.run([counter, step]) == [2.0, 0]


def test_bad_arguments():
    loss = tf.square(tf.Variable(1.0))
    with pytest.raises(ValueError, match="Optimizer name should be one of"):
        layers.optimize_loss(loss, None, 0.1, "Nope")
    with pytest.raises(ValueError, match="Summaries should be one of"):
        layers.optimize_loss(loss, None, 0.1, "SGD", summaries=["weights"])
    with pytest.raises(ValueError, match="Learning rate should be 0d Tensor or float"):
        layers.optimize_loss(loss, None, 1, "SGD")
    with pytest.raises(ValueError, match="Learning rate is None"):
        layers.optimize_loss(loss, None, None, "SGD")
    with pytest.raises(ValueError, match="Unknown type"):
        layers.optimize_loss(loss, None, 0.1, "SGD", clip_gradients=1)
    with pytest.raises(ValueError, match="global_step is required"):
        layers.optimize_loss(loss, None, 0.1, "SGD", learning_rate_decay_fn=lambda lr, s: lr)
