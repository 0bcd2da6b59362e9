"""tf.keras.optimizers Adagrad, Adadelta, Adamax, Nadam and Ftrl against TF1-style tf_keras's
(legacy OptimizerV2) updates over twelve steps of `fit`: recorded numbers, and live where
TensorFlow is available; by name in `compile`, and in plain TF1 code."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1.keras import keras_optimizer_programs as programs
from tests.tf1.keras.keras_comparison import assert_matches_recorded
from tests.tf1.keras.keras_optimizer_recorded import RECORDED
from tests.tf_reference import run_in_tf_keras

NAMES = ["adagrad", "adadelta", "adamax", "nadam", "ftrl"]


@pytest.mark.parametrize("name", NAMES)
def test_updates_match_recorded_tf_keras(name):
    ours = programs.keras_optimizer_program(tf, np, optimizer=name)
    assert_matches_recorded(ours, RECORDED[f"keras_optimizer_program_{name}"], rtol=1e-5,
                            atol=1e-6)


def test_updates_match_tf_keras_live():
    theirs = run_in_tf_keras([(n, programs.keras_optimizer_program, {"optimizer": n})
                              for n in NAMES])
    for name in NAMES:
        ours = programs.keras_optimizer_program(tf, np, optimizer=name)
        for key, value in theirs[name].items():
            np.testing.assert_allclose(ours[key], value, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} {key}")


@pytest.mark.parametrize("name", NAMES)
def test_compile_by_name_and_plain_minimize(name):
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    model.compile(name, "mse")
    assert type(model.optimizer).__name__.lower() == name
    model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0)
    w = tf.Variable([1.0, -2.0])
    opt = getattr(tf.keras.optimizers, type(model.optimizer).__name__)(0.1)
    step = opt.minimize(tf.reduce_sum(tf.square(w)), var_list=[w])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(step)
        assert np.all(np.abs(sess.run(w)) < [1.0, 2.0])


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        tf.keras.optimizers.Adagrad(initial_accumulator_value=-1.0)
    with pytest.raises(TypeError, match="unexpected optimizer arguments"):
        tf.keras.optimizers.Nadam(betas=1)
    assert tf.keras.optimizers.Adamax(lr=0.5)._learning_rate == 0.5
