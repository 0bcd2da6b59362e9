"""Model structure: functional graphs (layer order, shared layers, nested models, disconnected
inputs) and subclassed models that define `call`."""

import numpy as np
import pytest

import graphflow as tf


def test_functional_layers_in_order_with_a_nested_sequential():
    inner = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu", input_shape=(3,)),
                                 tf.keras.layers.Dense(2)])
    inputs = tf.keras.Input((3,))
    outputs = tf.keras.layers.Dense(1)(inner(inputs))
    model = tf.keras.Model(inputs, outputs)
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "Sequential",
                                                                "Dense"]
    assert model.layers[0].name == "input_2"          # the Sequential's own input is input_1
    assert len(model.weights) == 6 and len(model.trainable_weights) == 6
    assert model.count_params() == 16 + 10 + 3
    x = np.random.RandomState(0).randn(32, 3).astype(np.float32)
    model.compile("sgd", "mse")
    before = inner.predict(x)
    model.fit(x, x[:, :1], verbose=0)
    assert not np.allclose(inner.predict(x), before)   # training the outer trains the inner


def test_shared_layer_and_frozen_layer():
    a, b = tf.keras.Input((2,)), tf.keras.Input((2,))
    shared = tf.keras.layers.Dense(3, name="shared")
    frozen = tf.keras.layers.Dense(1, trainable=False)
    out = frozen(tf.keras.layers.Add()([shared(a), shared(b)]))
    model = tf.keras.Model([a, b], out)
    assert [layer.name for layer in model.layers].count("shared") == 1
    assert len(model.weights) == 4 and len(model.trainable_weights) == 2
    model.compile("sgd", "mse")
    kernel = frozen.get_weights()[0]
    ones = np.ones((8, 2), np.float32)
    model.fit([ones, ones], np.zeros((8, 1)), verbose=0)
    np.testing.assert_array_equal(frozen.get_weights()[0], kernel)


def test_disconnected_graph_and_non_keras_outputs_are_errors():
    a, b = tf.keras.Input((2,)), tf.keras.Input((2,))
    out = tf.keras.layers.Dense(1)(b)
    with pytest.raises(ValueError, match="Graph disconnected"):
        tf.keras.Model(a, out)
    with pytest.raises(ValueError, match="must be the output of a Keras layer"):
        tf.keras.Model(a, a * 2.0)


class _TwoLayers(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(8, activation="relu")
        self.out = tf.keras.layers.Dense(1)

    def call(self, x, training=None):
        return self.out(self.hidden(x))


def test_subclassed_model_tracks_its_layers_and_trains():
    model = _TwoLayers()
    x = np.random.RandomState(1).randn(200, 3).astype(np.float32)
    y = x.sum(axis=1, keepdims=True)
    model.compile(tf.keras.optimizers.Adam(0.02), "mse")
    history = model.fit(x, y, epochs=20, verbose=0)
    assert [layer.name for layer in model.layers] == ["dense", "dense_1"]
    assert len(model.trainable_weights) == 4
    assert history.history["loss"][-1] < 0.1 * history.history["loss"][0]
