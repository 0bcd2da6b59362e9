"""model.save / tf.keras.models.load_model in graphflow's format: Sequential and functional
models (two inputs, shared layer, Bidirectional GRU) come back with the same predictions and
compile arguments, train on; what cannot be written is refused by name."""

import numpy as np
import pytest

import graphflow as tf


def _blobs(n=300, seed=0):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 3, n)
    centers = np.array([[2.0, 0.0], [-2.0, 1.5], [0.0, -2.5]])
    return (centers[labels] + rng.randn(n, 2) * 0.5).astype(np.float32), labels


def test_sequential_round_trip_keeps_predictions_and_compile(tmp_path):
    tf.keras.backend.clear_session()
    x, labels = _blobs()
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(16, activation="relu", input_shape=(2,),
                              kernel_regularizer=tf.keras.regularizers.l2(1e-4),
                              kernel_initializer=tf.constant_initializer(0.1)),
        tf.keras.layers.Dropout(0.1),
        tf.keras.layers.Dense(3, activation=tf.keras.activations.softmax)])
    model.compile(tf.keras.optimizers.Adam(0.02), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(x, labels, epochs=3, verbose=0)
    path = str(tmp_path / "model.npz")
    model.save(path)
    expected = model.predict(x)
    evaluated = model.evaluate(x, labels, verbose=0)

    tf.keras.backend.clear_session()
    loaded = tf.keras.models.load_model(path)
    assert [type(layer).__name__ for layer in loaded.layers] == ["Dense", "Dropout", "Dense"]
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]
    np.testing.assert_allclose(loaded.predict(x), expected, rtol=1e-6, atol=1e-7)
    assert loaded.metrics_names == ["loss", "acc"]
    np.testing.assert_allclose(loaded.evaluate(x, labels, verbose=0), evaluated, rtol=1e-5)
    assert tf.keras.backend.get_value(loaded.optimizer.lr) == pytest.approx(0.02)
    assert len(loaded.losses) == 1                     # the l2 regularizer came back
    history = loaded.fit(x, labels, epochs=2, verbose=0)
    assert history.history["acc"][-1] > 0.9
    # a save_weights file is not a model
    model_path = str(tmp_path / "weights.npz")
    loaded.save_weights(model_path)
    with pytest.raises(ValueError, match="no model configuration"):
        tf.keras.models.load_model(model_path)


def test_functional_model_with_shared_layer_and_bidirectional_gru(tmp_path):
    tf.keras.backend.clear_session()
    rng = np.random.RandomState(1)
    a = rng.randn(10, 4, 3).astype(np.float32)
    b = rng.randn(10, 4, 3).astype(np.float32)
    left = tf.keras.Input(shape=(4, 3), name="left")
    right = tf.keras.Input(shape=(4, 3), name="right")
    shared = tf.keras.layers.Bidirectional(tf.keras.layers.GRU(5, reset_after=True))
    merged = tf.keras.layers.concatenate([shared(left), shared(right)])
    out = tf.keras.layers.Dense(2, activation="softmax", name="out")(merged)
    aux = tf.keras.layers.Dense(1, name="aux")(merged)
    model = tf.keras.Model([left, right], [out, aux])
    model.compile("rmsprop", ["sparse_categorical_crossentropy", "mse"], loss_weights=[1.0, 0.5])
    expected = model.predict([a, b])
    model_weights = model.get_weights()
    path = str(tmp_path / "functional.npz")
    model.save(path)

    tf.keras.backend.clear_session()
    loaded = tf.keras.models.load_model(path)
    got = loaded.predict({"left": a, "right": b})
    for ours, theirs in zip(got, expected):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert len(loaded.weights) == len(model.weights) == 10     # 2 GRUs x 3, 2 Dense x 2
    for ours, theirs in zip(loaded.get_weights(), model_weights):
        np.testing.assert_array_equal(ours, theirs)
    loaded.fit([a, b], [np.zeros(10), np.zeros((10, 1))], epochs=1, verbose=0)


def test_save_refuses_what_json_cannot_hold(tmp_path):
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential([tf.keras.layers.Lambda(lambda t: t * 2.0, input_shape=(2,))])
    with pytest.raises(ValueError, match="cannot write"):
        model.save(str(tmp_path / "lambda.npz"))
