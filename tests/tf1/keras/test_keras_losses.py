"""Keras losses and metrics against numpy: per-sample values, the logits path after a Keras
softmax/sigmoid, and how 'accuracy' resolves."""

import numpy as np
import pytest

import graphflow as tf

K = tf.keras.losses


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


def test_crossentropies_on_probabilities_and_after_keras_activations():
    logits = np.array([[2.0, -1.0, 0.5], [0.1, 0.2, 3.0]], np.float32)
    onehot = np.array([[1, 0, 0], [0, 1, 0]], np.float32)
    log_softmax = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    expected = -(onehot * log_softmax).sum(1)
    probabilities = np.exp(log_softmax)
    through_activation = tf.keras.activations.softmax(tf.constant(logits))
    np.testing.assert_allclose(_run(K.categorical_crossentropy(onehot, through_activation)),
                               expected, rtol=1e-5)
    np.testing.assert_allclose(_run(K.categorical_crossentropy(onehot, probabilities)),
                               expected, rtol=1e-5)
    np.testing.assert_allclose(_run(K.sparse_categorical_crossentropy([0, 1], probabilities)),
                               expected, rtol=1e-5)
    np.testing.assert_allclose(
        _run(K.sparse_categorical_crossentropy(np.array([[0], [1]]), logits, from_logits=True)),
        expected, rtol=1e-5)
    saturated = tf.keras.activations.softmax(tf.constant([[200.0, 0.0]]))
    assert _run(K.categorical_crossentropy([[0.0, 1.0]], saturated))[0] == pytest.approx(200.0)
    assert _run(K.categorical_crossentropy([[0.0, 1.0]], [[1.0, 0.0]]))[0] == pytest.approx(
        -np.log(1e-7), rel=1e-4)    # probabilities are clipped to [epsilon, 1 - epsilon]


def test_binary_crossentropy_mse_mae():
    p = np.array([[0.9, 0.2], [0.4, 0.7]], np.float32)
    y = np.array([[1.0, 0.0], [0.0, 0.0]], np.float32)
    expected = -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean(1)
    np.testing.assert_allclose(_run(K.binary_crossentropy(y, p)), expected, rtol=1e-5)
    np.testing.assert_allclose(_run(K.mse(y, p)), ((y - p) ** 2).mean(1), rtol=1e-6)
    np.testing.assert_allclose(_run(K.mae(y, p)), np.abs(y - p).mean(1), rtol=1e-6)
    assert K.get("mean_squared_error") is K.mse


def test_accuracy_resolves_as_keras_does():
    from graphflow.tf1.keras import losses
    assert losses.get_metric("accuracy", K.binary_crossentropy, [None, 3]) is \
        losses.binary_accuracy
    assert losses.get_metric("acc", K.mse, [None, 1]) is losses.binary_accuracy
    assert losses.get_metric("accuracy", K.sparse_categorical_crossentropy, [None, 3]) is \
        losses.sparse_categorical_accuracy
    assert losses.get_metric("accuracy", K.categorical_crossentropy, [None, 3]) is \
        losses.categorical_accuracy
    values = _run(tf.keras.metrics.binary_accuracy([[1.0], [0.0]], [[0.7], [0.6]]))
    np.testing.assert_array_equal(values, [1.0, 0.0])


def test_unknown_loss_names_list_the_known_ones():
    with pytest.raises(ValueError, match="Unknown loss function: 'cross_entropy'.*"
                                         "sparse_categorical_crossentropy"):
        K.get("cross_entropy")
