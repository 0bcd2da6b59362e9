"""Keras HDF5 model files: the fixtures tf_keras wrote (tests/fixtures/tensorflow/keras, made by
make_keras_h5.py) load in graphflow and predict what TensorFlow recorded; graphflow's own .h5
files round-trip; and, where TensorFlow is installed (GRAPHFLOW_TF_PYTHON), tf_keras loads
graphflow's files and graphflow loads tf_keras's, with equal predictions."""

import os
import warnings

import h5py
import numpy as np
import pytest

import graphflow as tf
from tests.tf_reference import run_in_tf_keras

K = tf.keras
L = tf.keras.layers
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tensorflow", "keras")


def _fixture(name):
    return os.path.join(FIXTURES, name)


def _inputs(expected, name):
    if f"{name}_x" in expected:
        return expected[f"{name}_x"]
    return [expected[f"{name}_x0"], expected[f"{name}_x1"]]


@pytest.fixture(scope="module")
def expected():
    with np.load(_fixture("expected.npz")) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("name,layers,metrics", [
    ("mlp", ["Dense", "Dropout", "Dense"], ["loss", "acc"]),
    ("cnn", ["Conv2D", "BatchNormalization", "MaxPooling2D", "Dropout", "Flatten", "Dense"],
     ["loss"]),
    ("functional", ["InputLayer", "InputLayer", "Dense", "Dense", "Concatenate", "Dense", "Add",
                    "Dense"], ["loss", "acc"]),
    ("text", ["Embedding", "LSTM", "GRU", "Dense"], ["loss", "acc"]),
])
def test_tf_keras_fixture_loads_and_predicts_as_tensorflow(expected, name, layers, metrics):
    K.backend.clear_session()
    model = K.models.load_model(_fixture(f"{name}.h5"))
    assert sorted(type(layer).__name__ for layer in model.layers) == sorted(layers)
    np.testing.assert_allclose(model.predict(_inputs(expected, name)), expected[f"{name}_y"],
                               atol=1e-5)
    assert model.metrics_names == metrics
    assert str(expected["tf_keras_version"]).startswith("2.")


def test_fixture_compile_arguments_come_back_and_training_goes_on(expected):
    K.backend.clear_session()
    model = K.models.load_model(_fixture("mlp.h5"))
    assert type(model.optimizer).__name__ == "Adam"
    assert K.backend.get_value(model.optimizer.lr) == pytest.approx(0.01)
    assert len(model.losses) == 1                    # the l2 kernel regularizer
    x = expected["mlp_x"]
    model.fit(x, np.array([0, 1, 2, 0, 1]), epochs=1, verbose=0)
    K.backend.clear_session()
    model = K.models.load_model(_fixture("cnn.h5"), compile=False)
    assert model.optimizer is None


def test_tf_keras_weights_file_loads_by_order_and_by_name(expected):
    K.backend.clear_session()
    model = K.Sequential([L.Dense(16, activation="relu", input_shape=(8,)), L.Dropout(0.2),
                          L.Dense(3, activation="softmax")])
    model.load_weights(_fixture("mlp_weights.h5"))
    np.testing.assert_allclose(model.predict(expected["mlp_x"]), expected["mlp_y"], atol=1e-5)
    # by name: the file's layers are 'dense' and 'dense_1'; a renamed layer keeps its weights
    K.backend.clear_session()
    other = K.Sequential([L.Dense(16, activation="relu", input_shape=(8,), name="dense"),
                          L.Dense(3, activation="softmax", name="renamed")])
    before = other.layers[1].get_weights()
    other.load_weights(_fixture("mlp_weights.h5"), by_name=True)
    np.testing.assert_array_equal(other.layers[1].get_weights()[0], before[0])
    with h5py.File(_fixture("mlp_weights.h5"), "r") as f:
        np.testing.assert_array_equal(other.layers[0].get_weights()[0],
                                      f["dense/dense/kernel:0"][()])


def test_weights_mismatch_is_refused_or_skipped(tmp_path):
    K.backend.clear_session()
    model = K.Sequential([L.Dense(4, input_shape=(8,), name="dense"), L.Dense(3, name="dense_1")])
    with pytest.raises(ValueError, match="Layer count mismatch|Shape mismatch"):
        model.load_weights(_fixture("mlp_weights.h5"))
    with pytest.raises(ValueError, match="Shape mismatch in layer #0 \\(named dense\\)"):
        model.load_weights(_fixture("mlp_weights.h5"), by_name=True)
    kept = model.get_weights()
    model.load_weights(_fixture("mlp_weights.h5"), by_name=True, skip_mismatch=True)
    got = model.get_weights()
    for ours, theirs in zip(got[:3], kept[:3]):        # shapes differ: skipped, as tf_keras does
        np.testing.assert_array_equal(ours, theirs)
    with h5py.File(_fixture("mlp_weights.h5"), "r") as f:   # the one weight of equal shape
        np.testing.assert_array_equal(got[3], f["dense_1/dense_1/bias:0"][()])
    with pytest.raises(ValueError, match="skip_mismatch"):
        model.load_weights(_fixture("mlp_weights.h5"), skip_mismatch=True)


def _cnn():
    return K.Sequential([
        L.Conv2D(3, 3, activation="relu", padding="same", input_shape=(6, 6, 2)),
        L.BatchNormalization(), L.MaxPooling2D(), L.Dropout(0.3), L.Flatten(),
        L.Dense(4, activation="softmax")])


def _functional():
    a, b = K.Input((6,), name="a"), K.Input((4,), name="b")
    ha = L.Dense(5, activation="tanh", name="ha")(a)
    merged = L.Concatenate(name="merged")([ha, L.Dense(5, name="hb")(b)])
    skip = L.Add(name="skip")([L.Dense(5, activation="relu", name="h")(merged), ha])
    return K.Model([a, b], L.Dense(3, activation="softmax", name="out")(skip))


def _text():
    return K.Sequential([L.Embedding(20, 5, input_length=6), L.LSTM(4, return_sequences=True),
                         L.GRU(3, return_sequences=True, reset_after=True), L.SimpleRNN(2),
                         L.Dense(1, activation="sigmoid")])


def _graphflow_models(directory):
    """Saves three trained graphflow models as .h5 (and the CNN's weights); their inputs and
    predictions."""
    rng = np.random.RandomState(3)
    out = {}
    for name, make, x, y, loss, optimizer in [
            ("cnn", _cnn, rng.randn(8, 6, 6, 2), np.eye(4)[rng.randint(0, 4, 8)],
             "categorical_crossentropy", K.optimizers.SGD(0.05, momentum=0.9)),
            ("functional", _functional, [rng.randn(8, 6), rng.randn(8, 4)],
             np.eye(3)[rng.randint(0, 3, 8)], "categorical_crossentropy",
             K.optimizers.RMSprop(0.01)),
            ("text", _text, rng.randint(0, 20, (8, 6)), rng.randint(0, 2, (8, 1)),
             "binary_crossentropy", K.optimizers.Adam(0.01))]:
        K.backend.clear_session()
        model = make()
        model.compile(optimizer, loss, metrics=["accuracy"])
        model.fit(x, y, epochs=2, verbose=0)
        model.save(os.path.join(directory, f"{name}.h5"))
        model.save_weights(os.path.join(directory, f"{name}_weights.h5"))
        out[name] = (x, model.predict(x), model.get_weights())
    return out


def test_graphflow_h5_round_trip(tmp_path):
    saved = _graphflow_models(str(tmp_path))
    for name, (x, y, weights) in saved.items():
        K.backend.clear_session()
        model = K.models.load_model(str(tmp_path / f"{name}.h5"))
        np.testing.assert_allclose(model.predict(x), y, rtol=1e-6, atol=1e-7)
        for ours, theirs in zip(model.get_weights(), weights):
            np.testing.assert_array_equal(ours, theirs)
        assert model.metrics_names == ["loss", "acc"]
        K.backend.clear_session()
        fresh = {"cnn": _cnn, "functional": _functional, "text": _text}[name]()
        fresh.load_weights(str(tmp_path / f"{name}_weights.h5"))
        np.testing.assert_allclose(fresh.predict(x), y, rtol=1e-6, atol=1e-7)


def test_graphflow_h5_layout_is_keras(tmp_path):
    K.backend.clear_session()
    model = _text()
    model.compile("adam", "mse")
    path = str(tmp_path / "m.hdf5")
    K.models.save_model(model, path)
    with h5py.File(path, "r") as f:
        assert set(f.attrs) == {"model_config", "training_config", "keras_version", "backend"}
        assert f.attrs["backend"] == "tensorflow"
        weights = f["model_weights"]
        assert list(weights.attrs["layer_names"]) == [layer.name.encode() for layer in
                                                       model.layers] or \
            [n.decode() if isinstance(n, bytes) else n for n in weights.attrs["layer_names"]] \
            == [layer.name for layer in model.layers]
        names = [n.decode() if isinstance(n, bytes) else n
                 for n in weights["lstm"].attrs["weight_names"]]
        assert names == ["lstm/lstm_cell/kernel:0", "lstm/lstm_cell/recurrent_kernel:0",
                         "lstm/lstm_cell/bias:0"]
        assert weights["lstm/lstm/lstm_cell/kernel:0"].shape == (5, 16)
    # a non-h5 name keeps graphflow's own format; save_format='h5' forces HDF5
    model.save(str(tmp_path / "m.npz"))
    assert not h5py.is_hdf5(str(tmp_path / "m.npz"))
    model.save_weights(str(tmp_path / "w.bin"), save_format="h5")
    assert h5py.is_hdf5(str(tmp_path / "w.bin"))
    model.load_weights(str(tmp_path / "w.bin"))


def test_graphflow_zip_named_h5_says_what_it_is(tmp_path):
    K.backend.clear_session()
    model = K.Sequential([L.Dense(2, input_shape=(3,))])
    path = str(tmp_path / "old.npz")
    model.save_weights(path)
    os.rename(path, str(tmp_path / "old.h5"))
    with pytest.warns(UserWarning, match="graphflow's own weights format"):
        model.load_weights(str(tmp_path / "old.h5"))
    (tmp_path / "junk.h5").write_bytes(b"not a keras file at all")
    with pytest.raises(tf.errors.GraphFormatError, match="not an HDF5 file"):
        model.load_weights(str(tmp_path / "junk.h5"))
    with pytest.raises(tf.errors.GraphFormatError, match="not an HDF5 file"):
        K.models.load_model(str(tmp_path / "junk.h5"))
    with pytest.raises(ValueError, match="No model config"):
        model.save_weights(str(tmp_path / "w.h5"))
        K.models.load_model(str(tmp_path / "w.h5"))


def test_what_cannot_be_written_is_refused_by_name(tmp_path):
    K.backend.clear_session()
    model = K.Sequential([L.Dense(2, input_shape=(3,)), L.Lambda(lambda t: t * 2.0)])
    with pytest.raises(ValueError, match="cannot write layer 'lambda' of class Lambda"):
        model.save(str(tmp_path / "m.h5"))
    assert not os.path.exists(str(tmp_path / "m.h5"))
    K.backend.clear_session()
    model = K.Sequential([L.Dense(2, input_shape=(3,))])
    model.compile(tf.train.GradientDescentOptimizer(0.1), "mse")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.save(str(tmp_path / "m.h5"))
    assert any("no compile arguments" in str(w.message) for w in caught)
    with h5py.File(str(tmp_path / "m.h5"), "r") as f:
        assert "training_config" not in f.attrs


# ------------------------------------------------------------------ both ways with tf_keras
def tf_keras_predicts_graphflow_files(tf, np, directory, names):
    import tf_keras as keras
    out = {}
    for name in names:
        keras.backend.clear_session()
        with np.load(f"{directory}/{name}_inputs.npz") as data:
            x = [data[k] for k in sorted(data.files)]
        model = keras.models.load_model(f"{directory}/{name}.h5")
        out[f"{name}_model"] = model.predict(x if len(x) > 1 else x[0])
        out[f"{name}_optimizer"] = np.array(type(model.optimizer).__name__)
        model.load_weights(f"{directory}/{name}_weights.h5")
        out[f"{name}_weights"] = model.predict(x if len(x) > 1 else x[0])
    return out


def test_tf_keras_loads_graphflow_h5(tmp_path):
    saved = _graphflow_models(str(tmp_path))
    for name, (x, _, _) in saved.items():
        xs = x if isinstance(x, list) else [x]
        np.savez(str(tmp_path / f"{name}_inputs.npz"),
                 **{f"x{i}": np.asarray(a, np.float32) for i, a in enumerate(xs)})
    results = run_in_tf_keras([("r", tf_keras_predicts_graphflow_files,
                                {"directory": str(tmp_path), "names": sorted(saved)})])["r"]
    optimizers = {"cnn": "SGD", "functional": "RMSprop", "text": "Adam"}
    for name, (_, y, _) in saved.items():
        np.testing.assert_allclose(results[f"{name}_model"], y, atol=1e-6)
        np.testing.assert_allclose(results[f"{name}_weights"], y, atol=1e-6)
        assert str(results[f"{name}_optimizer"]) == optimizers[name]


def tf_keras_saves_models(tf, np, directory):
    import tf_keras as keras
    rng = np.random.RandomState(5)
    out = {}
    keras.backend.clear_session()
    a = keras.Input((5,), name="a")
    h = keras.layers.Dense(6, activation="elu", kernel_regularizer=keras.regularizers.l1(1e-3))(a)
    h = keras.layers.Reshape((2, 3))(h)
    h = keras.layers.Conv1D(4, 2, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    b = keras.layers.Activation("sigmoid")(keras.layers.Dense(4)(a))
    out_t = keras.layers.Dense(2, activation="softmax")(keras.layers.Add()([h, b]))
    model = keras.Model(a, out_t)
    model.compile(keras.optimizers.legacy.SGD(0.1, nesterov=True, momentum=0.5), "mse",
                  metrics=["mae"])
    x = rng.randn(6, 5).astype(np.float32)
    model.fit(x, rng.randn(6, 2), epochs=1, verbose=0)
    model.save(f"{directory}/live.h5")
    model.save_weights(f"{directory}/live_weights.h5")
    out["x"], out["y"] = x, model.predict(x)
    return out


def test_graphflow_loads_tf_keras_h5_live(tmp_path):
    results = run_in_tf_keras([("r", tf_keras_saves_models, {"directory": str(tmp_path)})])["r"]
    K.backend.clear_session()
    model = K.models.load_model(str(tmp_path / "live.h5"))
    np.testing.assert_allclose(model.predict(results["x"]), results["y"], atol=1e-6)
    assert type(model.optimizer).__name__ == "SGD" and model.metrics_names == ["loss", "mae"]
    model.set_weights([np.zeros_like(w) for w in model.get_weights()])
    model.load_weights(str(tmp_path / "live_weights.h5"))
    np.testing.assert_allclose(model.predict(results["x"]), results["y"], atol=1e-6)
