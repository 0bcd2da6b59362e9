"""graphflow's tf.keras against TF1-style tf.keras (TensorFlow's legacy Keras in graph mode) on the
programs of keras_programs.py: the same initial weights and batches must give the same epoch
losses, metrics, evaluation, predictions and trained weights. Runs where GRAPHFLOW_TF_PYTHON names
a Python with TensorFlow and tf_keras (TF1's Keras); skips otherwise."""


import numpy as np
import pytest

import graphflow as tf
from tests.tf1.keras import keras_programs as programs
from tests.tf_reference import run_in_tf_keras

_MLP_CASES = [("adam", "categorical_crossentropy"), ("sgd", "binary_crossentropy"),
              ("sgd_momentum", "sparse_categorical_crossentropy"), ("rmsprop", "mse")]


@pytest.fixture(scope="module")
def tensorflow_results():
    calls = [(f"{opt}-{loss}", programs.keras_mlp, {"optimizer": opt, "loss": loss})
             for opt, loss in _MLP_CASES] + [("cnn", programs.keras_cnn, {}),
                                             ("lstm", programs.keras_lstm, {})]
    return run_in_tf_keras(calls)


def _assert_matches(ours, theirs, rtol, atol):
    assert sorted(ours) == sorted(theirs)
    for key in ours:
        np.testing.assert_allclose(np.asarray(ours[key], np.float64), theirs[key], rtol=rtol,
                                   atol=atol, err_msg=key)


@pytest.mark.parametrize("optimizer,loss", _MLP_CASES[:3])
def test_mlp_epochs_match_tf1_keras(tensorflow_results, optimizer, loss):
    ours = programs.keras_mlp(tf, np, optimizer=optimizer, loss=loss)
    _assert_matches(ours, tensorflow_results[f"{optimizer}-{loss}"], rtol=1e-4, atol=1e-5)


def test_rmsprop_matches_tf1_keras_up_to_where_epsilon_goes(tensorflow_results):
    """TF 1.15's Keras RMSprop divides by sqrt(ms + epsilon) (graphflow does too); the
    optimizers of Keras 2.11 and later (tf_keras's default) divide by sqrt(ms) + epsilon. With
    epsilon 1e-7 the two differ by ~1e-3 after a few steps; the first batch's loss is the same."""
    ours = programs.keras_mlp(tf, np, optimizer="rmsprop", loss="mse")
    theirs = tensorflow_results["rmsprop-mse"]
    np.testing.assert_allclose(ours["loss"][0], theirs["loss"][0], rtol=1e-4)
    _assert_matches(ours, theirs, rtol=3e-3, atol=1e-3)


def test_functional_cnn_with_batch_norm_matches_tf1_keras(tensorflow_results):
    ours = programs.keras_cnn(tf, np)
    _assert_matches(ours, tensorflow_results["cnn"], rtol=1e-4, atol=1e-5)


def test_embedding_lstm_classifier_matches_tf1_keras(tensorflow_results):
    ours = programs.keras_lstm(tf, np)
    _assert_matches(ours, tensorflow_results["lstm"], rtol=1e-4, atol=1e-5)
