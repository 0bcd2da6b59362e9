"""`tf.contrib.losses` / `tf.contrib.slim.losses` take predictions or logits first, as TF1's contrib
did (`slim.losses.softmax_cross_entropy(logits, onehot_labels)`). TensorFlow 2.21 has no contrib,
so the reference numbers come from `tf.losses` (tf.compat.v1) called with the arguments contrib
passes it (labels and predictions swapped back); TF1's contrib losses are those losses with
contrib's reduction, which agrees for scalar or same-shaped weights. Recorded literals; the live
comparison runs with GRAPHFLOW_TF_PYTHON set."""

import pathlib
import sys

import numpy as np
import pytest

import graphflow as tf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from tf_reference import run_in_tensorflow, tf_python  # noqa: E402

LOGITS = [[2.0, 1.0, 0.1], [0.5, 2.5, 0.3], [1.2, -0.4, 0.9]]
ONEHOT = [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
PROBS = [[0.9, 0.2], [0.3, 0.6], [0.05, 0.7]]
TARGETS = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
WEIGHTS = [[1.0], [0.0], [2.0]]

# TensorFlow 2.21's tf.compat.v1.losses on the same values (labels given as labels)
TF_NUMBERS = {"softmax": 1.5003886222839355, "softmax_smooth_w": 1.4959347248077393,
              "sparse": 1.5003886222839355, "sigmoid": 0.5837969183921814,
              "log": 0.7580681443214417, "log_w": 1.7583284378051758, "mse": 0.21541666984558105,
              "absdiff": 0.375, "cosine": 0.25}


def tf1_reference(tf, np, logits, onehot, probs, targets, weights):
    """What TF1's contrib losses computed, through tf.losses (labels first)."""
    L = tf.losses
    out = {"softmax": L.softmax_cross_entropy(onehot, logits),
           "softmax_smooth_w": L.softmax_cross_entropy(onehot, logits, weights=np.ravel(weights),
                                                       label_smoothing=0.2),
           "sparse": L.sparse_softmax_cross_entropy(np.argmax(onehot, 1), logits),
           "sigmoid": L.sigmoid_cross_entropy(targets, probs),
           "log": L.log_loss(targets, probs),
           "log_w": L.log_loss(targets, probs, weights=weights),
           "mse": L.mean_squared_error(targets, probs),
           "absdiff": L.absolute_difference(targets, probs),
           "cosine": L.cosine_distance(targets, probs, axis=1)}
    with tf.Session() as sess:
        return sess.run(out)


def contrib_program(losses):
    out = {"softmax": losses.softmax_cross_entropy(LOGITS, ONEHOT),
           "softmax_smooth_w": losses.softmax_cross_entropy(LOGITS, ONEHOT, WEIGHTS,
                                                            label_smoothing=0.2),
           "sparse": losses.sparse_softmax_cross_entropy(LOGITS, np.argmax(ONEHOT, 1)),
           "sigmoid": losses.sigmoid_cross_entropy(PROBS, TARGETS),
           "log": losses.log_loss(PROBS, TARGETS),
           "log_w": losses.log_loss(PROBS, TARGETS, weights=WEIGHTS),
           "mse": losses.mean_squared_error(PROBS, TARGETS),
           "absdiff": losses.absolute_difference(PROBS, TARGETS),
           "cosine": losses.cosine_distance(PROBS, TARGETS, axis=1)}
    with tf.Session() as sess:
        return sess.run(out)


@pytest.mark.parametrize("losses", ["tf.contrib.losses", "tf.contrib.slim.losses"])
def test_contrib_losses_take_logits_first(losses):
    namespace = tf.contrib.losses if losses == "tf.contrib.losses" else tf.contrib.slim.losses
    with tf.Graph().as_default():
        got = contrib_program(namespace)
    for name, want in TF_NUMBERS.items():
        np.testing.assert_allclose(got[name], want, rtol=1e-6, err_msg=name)


def test_contrib_loss_weights_per_example():
    """contrib accepts weights of shape [batch] for losses [batch, k]: each weight covers a row."""
    losses = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run(tf.contrib.losses.compute_weighted_loss(losses, [1.0, 0.0, 2.0]))
    np.testing.assert_allclose(got, (3.0 + 2 * 11.0) / 4.0, rtol=1e-6)


def test_contrib_hinge_loss_is_unreduced():
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run(tf.contrib.losses.hinge_loss([[0.5, -2.0]], [[1.0, 0.0]]))
        assert tf.get_collection(tf.GraphKeys.LOSSES) == []
    np.testing.assert_allclose(got, [[0.5, 0.0]])


def test_slim_losses_collection_helpers():
    with tf.Graph().as_default():
        loss = tf.contrib.slim.losses.mean_squared_error(PROBS, TARGETS)
        assert tf.contrib.slim.losses.get_losses() == [loss]
        assert tf.contrib.slim.losses.get_total_loss(add_regularization_losses=False) is not None


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_contrib_losses_against_tensorflow_live():
    want = run_in_tensorflow([("r", tf1_reference, {
        "logits": LOGITS, "onehot": ONEHOT, "probs": PROBS, "targets": TARGETS,
        "weights": WEIGHTS})])["r"]
    with tf.Graph().as_default():
        got = contrib_program(tf.contrib.slim.losses)
    for name in TF_NUMBERS:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-6, err_msg=name)
