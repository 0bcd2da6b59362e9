"""tf.keras.losses' classes (options, reductions, sample weights) and the per-sample functions
they add against TF1-style tf_keras (recorded numbers; live where TensorFlow is available), and
loss objects in `model.compile`."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1.keras import keras_loss_programs as programs
from tests.tf1.keras.keras_comparison import assert_matches_live, assert_matches_recorded, ours
from tests.tf1.keras.keras_loss_recorded import RECORDED

PROGRAM = "keras_losses_program"


def test_loss_classes_match_recorded_tf_keras():
    assert_matches_recorded(ours(programs, PROGRAM), RECORDED[PROGRAM], rtol=1e-5, atol=1e-6)


def test_loss_classes_match_tf_keras_live():
    assert_matches_live(programs, PROGRAM, ours(programs, PROGRAM))


def test_loss_objects_in_compile_train_as_the_functions():
    rng = np.random.RandomState(0)
    x = rng.randn(32, 3).astype(np.float32)
    labels = (x[:, 0] > 0).astype(np.int64)
    results = []
    for loss in ("sparse_categorical_crossentropy",
                 tf.keras.losses.SparseCategoricalCrossentropy()):
        tf.keras.backend.clear_session()
        model = tf.keras.Sequential([tf.keras.layers.Dense(
            2, activation="softmax", input_shape=(3,), kernel_initializer="ones")])
        model.compile(tf.keras.optimizers.SGD(0.1), loss, metrics=["accuracy"])
        history = model.fit(x, labels, batch_size=8, epochs=2, shuffle=False, verbose=0)
        results.append((history.history["loss"], history.history["acc"]))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_reduction_and_arguments_are_checked():
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        tf.keras.losses.Huber(reduction="mean")
    with pytest.raises(TypeError, match="unexpected arguments"):
        tf.keras.losses.MeanSquaredError(delta=1.0)
    config = tf.keras.losses.Huber(delta=0.5, name="h").get_config()
    assert config == {"delta": 0.5, "reduction": "auto", "name": "h"}
    assert tf.keras.losses.Huber.from_config(config).get_config() == config
