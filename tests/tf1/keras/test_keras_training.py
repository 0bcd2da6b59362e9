"""tf.keras.Model: compile/fit/evaluate/predict on a separable dataset, functional models with two
inputs and two outputs, weight files, summary, and compile-time errors."""

import numpy as np
import pytest

import graphflow as tf


def _blobs(n=600, seed=0):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 3, n)
    centers = np.array([[2.0, 0.0], [-2.0, 1.5], [0.0, -2.5]])
    x = (centers[labels] + rng.randn(n, 2) * 0.5).astype(np.float32)
    return x, labels


def _mlp():
    return tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu", input_shape=(2,)),
                                tf.keras.layers.Dense(3, activation="softmax")])


def test_sequential_mlp_learns_separable_blobs():
    x, labels = _blobs()
    model = _mlp()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, labels, batch_size=32, epochs=15, verbose=0)
    assert set(history.history) == {"loss", "acc"}     # TF1 Keras's name for accuracy
    assert history.history["accuracy"] is history.history["acc"]
    assert len(history.history["loss"]) == 15 and history.epoch == list(range(15))
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    loss, accuracy = model.evaluate(x, labels, verbose=0)
    assert accuracy > 0.95
    probabilities = model.predict(x)
    assert probabilities.shape == (600, 3)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)
    assert np.mean(probabilities.argmax(1) == labels) == pytest.approx(accuracy, abs=1e-6)
    expected = np.mean(-np.log(probabilities[np.arange(600), labels]))
    assert loss == pytest.approx(expected, rel=1e-4)


def test_one_hot_targets_with_categorical_crossentropy_and_validation():
    x, labels = _blobs()
    y = tf.keras.utils.to_categorical(labels, 3)
    model = _mlp()
    model.compile(tf.keras.optimizers.SGD(0.1), "categorical_crossentropy", metrics=["acc"])
    history = model.fit(x[:500], y[:500], epochs=8, validation_data=(x[500:], y[500:]),
                        verbose=0)
    assert sorted(history.history) == ["acc", "loss", "val_acc", "val_loss"]
    assert history.history["val_acc"][-1] > 0.9
    assert model.metrics_names == ["loss", "acc"]


def test_tf_train_optimizer_in_compile_and_deferred_sequential_build():
    x, labels = _blobs(seed=1)
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="tanh"),
                                 tf.keras.layers.Dense(1, activation="sigmoid")])
    y = (labels == 0).astype(np.float32)
    model.compile(tf.train.AdamOptimizer(0.05), "binary_crossentropy", metrics=["accuracy"])
    assert model.inputs is None    # built on the first data fit sees
    model.fit(x, y, epochs=10, verbose=0)
    assert model.inputs[0].shape.as_list() == [None, 2]
    assert model.evaluate(x, y, verbose=0)[1] > 0.95


def test_functional_model_with_two_inputs_and_two_outputs():
    rng = np.random.RandomState(2)
    a = rng.randn(400, 3).astype(np.float32)
    b = rng.randn(400, 2).astype(np.float32)
    target_sum = (a.sum(1) + b.sum(1)).reshape(-1, 1)
    target_class = (a[:, 0] > b[:, 0]).astype(np.float32).reshape(-1, 1)
    in_a = tf.keras.Input(shape=(3,), name="a")
    in_b = tf.keras.Input(shape=(2,), name="b")
    h = tf.keras.layers.Concatenate()([in_a, in_b])
    h = tf.keras.layers.Dense(16, activation="relu")(h)
    regression = tf.keras.layers.Dense(1, name="regression")(h)
    classification = tf.keras.layers.Dense(1, activation="sigmoid", name="classification")(h)
    model = tf.keras.Model(inputs=[in_a, in_b], outputs=[regression, classification])
    assert [layer.name for layer in model.layers][:2] == ["a", "b"]
    model.compile(tf.keras.optimizers.Adam(0.01), loss=["mse", "binary_crossentropy"],
                  metrics=["accuracy"])
    assert model.metrics_names == ["loss", "regression_acc", "classification_acc"]
    history = model.fit([a, b], [target_sum, target_class], epochs=30, verbose=0)
    assert history.history["loss"][-1] < 0.2 * history.history["loss"][0]
    results = model.evaluate({"a": a, "b": b}, [target_sum, target_class], verbose=0)
    assert results[2] > 0.9
    predicted_sum, predicted_class = model.predict([a, b])
    assert predicted_sum.shape == predicted_class.shape == (400, 1)
    assert np.mean((predicted_sum - target_sum) ** 2) < 0.3


def test_model_called_on_a_new_tensor_shares_weights():
    inputs = tf.keras.Input(shape=(4,))
    outputs = tf.keras.layers.Dense(2)(tf.keras.layers.Dense(3, activation="relu")(inputs))
    model = tf.keras.Model(inputs, outputs)
    x = tf.placeholder(tf.float32, [None, 4])
    y = model(x)
    assert len(model.weights) == 4 and len(tf.global_variables()) == 4
    data = np.random.RandomState(0).randn(5, 4).astype(np.float32)
    session = tf.keras.backend.get_session()
    np.testing.assert_allclose(session.run(y, {x: data}), model.predict(data), rtol=1e-6)


def test_save_and_load_weights_round_trip(tmp_path):
    x, labels = _blobs()
    model = _mlp()
    model.compile("rmsprop", "sparse_categorical_crossentropy")
    model.fit(x, labels, epochs=2, verbose=0)
    path = str(tmp_path / "weights.npz")
    model.save_weights(path)
    before = model.predict(x)
    other = _mlp()           # fresh weights, other names (dense_2, dense_3)
    assert not np.allclose(other.predict(x), before)
    other.load_weights(path)
    np.testing.assert_array_equal(other.predict(x), before)
    for w, v in zip(other.get_layer(index=0).get_weights(), model.layers[0].get_weights()):
        np.testing.assert_array_equal(w, v)
    smaller = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(2,))])
    with pytest.raises(ValueError, match="holds 4 weights, the model has 2"):
        smaller.load_weights(path)


def test_summary_lists_layers_and_parameter_counts():
    lines = []
    _mlp().summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "dense (Dense)" in text and "(None, 16)" in text and "(None, 3)" in text
    assert "Total params: 99" in text and "Trainable params: 99" in text


def test_compile_errors_are_clear():
    model = _mlp()
    with pytest.raises(ValueError, match="Unknown loss function: 'categorical_crossentropyy'"):
        model.compile("adam", "categorical_crossentropyy")
    with pytest.raises(ValueError, match="Unknown optimizer: 'adamm'"):
        model.compile("adamm", "mse")
    with pytest.raises(ValueError, match="Unknown metric function: 'precisionn'"):
        model.compile("adam", "mse", metrics=["precisionn"])
    with pytest.raises(RuntimeError, match="must compile"):
        model.fit(np.zeros((4, 2), np.float32), np.zeros(4), verbose=0)


def test_fit_checks_data_shapes():
    model = _mlp()
    model.compile("adam", "sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match="expected .* to have shape \\[None, 2\\] but got array "
                                         "with shape \\(4, 5\\)"):
        model.fit(np.zeros((4, 5), np.float32), np.zeros(4), verbose=0)


class _Scale(tf.keras.layers.Layer):
    """A user-defined layer as TF1 programs write them: build with add_weight, call."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def build(self, input_shape):
        self.scale = self.add_weight(name="scale", shape=(int(input_shape[-1]),),
                                     initializer="ones")
        super().build(input_shape)

    def call(self, inputs):
        return inputs * self.scale


def test_user_defined_layer_trains_in_a_model():
    x = np.random.RandomState(4).randn(128, 2).astype(np.float32)
    model = tf.keras.Sequential([_Scale(input_shape=(2,))])
    model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    model.fit(x, x * [2.0, -1.0], epochs=30, verbose=0)
    assert model.layers[0].name == "scale" and len(model.trainable_weights) == 1
    np.testing.assert_allclose(model.layers[0].get_weights()[0], [2.0, -1.0], atol=1e-3)
