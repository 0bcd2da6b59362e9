"""The tf.keras namespaces: what they export, `from tensorflow.keras import layers` style imports,
and the errors for names graphflow lacks (tf.keras.datasets needs the network)."""

import numpy as np
import pytest

import graphflow as tf


def test_namespaces_and_aliases():
    assert tf.keras.models.Sequential is tf.keras.Sequential
    assert tf.keras.models.Model is tf.keras.Model
    from graphflow.keras import layers, optimizers
    assert layers.Dense is tf.keras.layers.Dense and optimizers.Adam is tf.keras.optimizers.Adam
    assert isinstance(tf.keras.optimizers.Adam(), tf.train.Optimizer)
    assert tf.keras.optimizers.Adam()._epsilon == 1e-7
    assert tf.keras.regularizers.l2(0.1).l2 == 0.1
    assert "np" not in dir(tf.keras.layers)


def test_unknown_names_say_graphflow_does_not_implement_them():
    with pytest.raises(AttributeError, match="does not implement tf.keras.layers.ConvLSTM2D"):
        tf.keras.layers.ConvLSTM2D  # noqa: B018 - the lookup is the test
    with pytest.raises(AttributeError, match="tf.keras.datasets.*works offline"):
        tf.keras.datasets  # noqa: B018 - the lookup is the test
    assert not hasattr(tf.keras, "applications")


def test_to_categorical():
    np.testing.assert_array_equal(tf.keras.utils.to_categorical([0, 2, 1]),
                                  [[1, 0, 0], [0, 0, 1], [0, 1, 0]])
    assert tf.keras.utils.to_categorical([[1], [0]], 3).shape == (2, 3)
    with pytest.raises(ValueError, match="class indices must be in \\[0, 2\\)"):
        tf.keras.utils.to_categorical([0, 2], 2)


def test_regularizers_add_to_the_model_loss():
    x = np.ones((8, 2), np.float32)
    y = np.zeros((8, 1), np.float32)
    model = tf.keras.Sequential([tf.keras.layers.Dense(
        1, input_shape=(2,), kernel_initializer="ones",
        kernel_regularizer=tf.keras.regularizers.l2(0.5))])
    model.compile("sgd", "mse")
    assert len(model.losses) == 1
    assert model.evaluate(x, y, verbose=0) == pytest.approx(4.0 + 0.5 * 2.0)
