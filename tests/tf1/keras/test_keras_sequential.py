"""Sequential: built as layers are added (input_shape, InputLayer, Input), deferred until data,
`pop`, and the BatchNormalization updates `fit` runs."""

import numpy as np
import pytest

import graphflow as tf


def test_ways_to_give_the_input_shape():
    first = tf.keras.Sequential([tf.keras.layers.Dense(2, input_dim=3)])
    second = tf.keras.Sequential()
    second.add(tf.keras.layers.InputLayer(input_shape=(3,)))
    second.add(tf.keras.layers.Dense(2))
    third = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(2)])
    for model in (first, second, third):
        assert model.inputs[0].shape.as_list() == [None, 3]
        assert model.outputs[0].shape.as_list() == [None, 2]
        assert [type(layer).__name__ for layer in model.layers] == ["Dense"]
    deferred = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    assert deferred.inputs is None
    assert deferred.predict(np.ones((4, 5))).shape == (4, 2)
    assert deferred.layers[0].kernel.shape.as_list() == [5, 2]


def test_pop_and_add_errors():
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(3,)),
                                 tf.keras.layers.Dense(2)])
    model.pop()
    assert model.outputs[0].shape.as_list() == [None, 4]
    with pytest.raises(TypeError, match="must be an instance of class Layer"):
        model.add("dense")


def test_fit_runs_batch_normalization_updates():
    x = (np.random.RandomState(0).randn(64, 2) * 3 + 5).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.layers.BatchNormalization(input_shape=(2,)),
                                 tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    assert len(model.updates) == 2
    model.fit(x, np.zeros((64, 1)), batch_size=64, epochs=3, verbose=0)
    moving_mean = model.layers[0].get_weights()[2]
    np.testing.assert_allclose(moving_mean, (1 - 0.99 ** 3) * x.mean(0), rtol=1e-4)
