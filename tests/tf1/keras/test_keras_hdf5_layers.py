"""Keras HDF5 files with the layers of layers_merge, layers_activation, layers_reshaping,
layers_noise and layers_conv3d: tf_keras's files (tests/fixtures/tensorflow/keras, made by
make_keras_h5_layers.py) load in graphflow and predict what TensorFlow recorded; graphflow's own
files round-trip, and load in tf_keras where TensorFlow is installed."""

import os

import numpy as np
import pytest

import graphflow as tf
from tests.tf1.keras.test_keras_hdf5_saving import tf_keras_predicts_graphflow_files
from tests.tf_reference import run_in_tf_keras

K = tf.keras
L = tf.keras.layers
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tensorflow", "keras")


@pytest.fixture(scope="module")
def expected():
    with np.load(os.path.join(FIXTURES, "layers_more_expected.npz")) as data:
        return {k: data[k] for k in data.files}


def test_tf_keras_files_load_and_predict_as_tensorflow(expected):
    K.backend.clear_session()
    model = K.models.load_model(os.path.join(FIXTURES, "layers_more.h5"))
    names = {type(layer).__name__ for layer in model.layers}
    assert {"SeparableConv2D", "PReLU", "DepthwiseConv2D", "LayerNormalization", "Dot",
            "Multiply", "Subtract", "Average", "Maximum", "Minimum", "ReLU", "ELU",
            "ThresholdedReLU", "Softmax", "RepeatVector", "Permute", "Cropping1D", "Cropping2D",
            "UpSampling1D", "ZeroPadding1D", "GaussianNoise", "GaussianDropout",
            "SpatialDropout1D", "SpatialDropout2D", "ActivityRegularization"} <= names
    np.testing.assert_allclose(
        model.predict([expected["layers_more_x0"], expected["layers_more_x1"]]),
        expected["layers_more_y"], rtol=1e-5, atol=1e-6)
    K.backend.clear_session()
    model = K.models.load_model(os.path.join(FIXTURES, "volumes.h5"))
    assert [type(layer).__name__ for layer in model.layers] == [
        "Conv3D", "ZeroPadding3D", "MaxPooling3D", "UpSampling3D", "AveragePooling3D",
        "GlobalMaxPooling3D", "Dense"]
    np.testing.assert_allclose(model.predict(expected["volumes_x"]), expected["volumes_y"],
                               rtol=1e-5, atol=1e-6)


def _model():
    image = K.Input((6, 5, 2))
    vector = K.Input((4,))
    h = L.SeparableConv2D(3, 3, padding="same", depth_multiplier=2)(image)
    h = L.PReLU(shared_axes=[1, 2])(h)
    h = L.DepthwiseConv2D(2, activation="relu")(h)
    h = L.LayerNormalization()(L.Cropping2D(1)(h))
    h = L.GlobalAveragePooling2D()(L.SpatialDropout2D(0.3)(h))
    v = L.ELU(0.5)(L.Dense(3)(L.GaussianNoise(0.2)(vector)))
    h = L.Concatenate()([L.Multiply()([h, v]), L.Subtract()([h, v]), L.Maximum()([h, v])])
    seq = L.Permute((2, 1))(L.UpSampling1D(2)(L.RepeatVector(3)(h)))
    d = L.Flatten()(L.Dot(axes=2, normalize=True)([seq, seq]))
    d = L.ActivityRegularization(l1=0.01)(L.ReLU(negative_slope=0.1)(d))
    out = L.Softmax()(L.Dense(2)(L.GaussianDropout(0.1)(d)))
    return K.Model([image, vector], out)


def _saved(directory):
    rng = np.random.RandomState(2)
    x = [rng.randn(8, 6, 5, 2).astype(np.float32), rng.randn(8, 4).astype(np.float32)]
    K.backend.clear_session()
    model = _model()
    model.compile(K.optimizers.Adam(0.01), "categorical_crossentropy")
    model.fit(x, np.eye(2)[rng.randint(0, 2, 8)], epochs=2, verbose=0)
    model.save(os.path.join(directory, "more.h5"))
    model.save_weights(os.path.join(directory, "more_weights.h5"))
    return x, model.predict(x), model.get_weights()


def test_graphflow_h5_round_trip(tmp_path):
    x, y, weights = _saved(str(tmp_path))
    K.backend.clear_session()
    model = K.models.load_model(str(tmp_path / "more.h5"))
    np.testing.assert_allclose(model.predict(x), y, rtol=1e-6, atol=1e-7)
    for ours, theirs in zip(model.get_weights(), weights):
        np.testing.assert_array_equal(ours, theirs)
    assert len(model.get_weights()) == len(weights)


def test_tf_keras_loads_graphflow_h5(tmp_path):
    x, y, _ = _saved(str(tmp_path))
    np.savez(str(tmp_path / "more_inputs.npz"), x0=x[0], x1=x[1])
    results = run_in_tf_keras([("r", tf_keras_predicts_graphflow_files,
                                {"directory": str(tmp_path), "names": ["more"]})])["r"]
    np.testing.assert_allclose(results["more_model"], y, atol=1e-6)
    np.testing.assert_allclose(results["more_weights"], y, atol=1e-6)


def test_from_config_reads_a_tf_keras_config_and_refuses_what_it_cannot_compute():
    layer = L.Conv3D.from_config({"name": "c", "trainable": True, "dtype": "float32",
                                  "filters": 2, "kernel_size": [1, 2, 3], "strides": [1, 1, 1],
                                  "padding": "same", "data_format": "channels_last",
                                  "dilation_rate": [1, 1, 1], "groups": 1,
                                  "activation": "relu", "use_bias": False})
    assert (layer.name, layer.kernel_size, layer.use_bias) == ("c", (1, 2, 3), False)
    with pytest.raises(ValueError, match="groups"):
        L.Conv3D.from_config({"name": "c", "filters": 2, "kernel_size": [1, 1, 1], "groups": 2})
    config = L.Dot(axes=(1, 2), normalize=True).get_config()
    assert config["axes"] == [1, 2] and config["normalize"] is True
