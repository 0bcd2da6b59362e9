"""tf.keras.layers PReLU, ELU, ThresholdedReLU, Softmax, ReLU and LayerNormalization against
TF1-style tf_keras (outputs, weight names and shapes, config keys; recorded and live)."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1.keras import keras_layer_programs as programs
from tests.tf1.keras.keras_comparison import assert_matches_live, assert_matches_recorded, ours
from tests.tf1.keras.keras_layer_recorded import RECORDED

PROGRAM = "keras_layers_program"
CASES = ['prelu', 'prelu_shared', 'elu', 'thresholded_relu', 'softmax', 'relu', 'relu_args',
         'layer_norm', 'layer_norm_axes']


@pytest.mark.parametrize("case", CASES)
def test_outputs_weights_and_config_match_recorded_tf_keras(case):
    assert_matches_recorded(ours(programs, PROGRAM), RECORDED[PROGRAM], prefix=case, rtol=1e-4,
                            atol=1e-5)


def test_layers_match_tf_keras_live():
    assert_matches_live(programs, PROGRAM, ours(programs, PROGRAM), rtol=1e-4, atol=1e-5,
                        prefixes=CASES)


def test_activation_layers_check_their_arguments():
    with pytest.raises(ValueError, match="theta"):
        tf.keras.layers.ThresholdedReLU(-1.0)
    with pytest.raises(ValueError, match="max_value"):
        tf.keras.layers.ReLU(max_value=-1.0)
    with pytest.raises(ValueError, match="must be known"):
        tf.keras.layers.PReLU()(tf.keras.Input((None, 3)))
    layer = tf.keras.layers.LayerNormalization(axis=3)
    with pytest.raises(ValueError, match="invalid axis 3"):
        layer(tf.keras.Input((4, 3)))


def test_prelu_and_layer_norm_train_in_a_model():
    rng = np.random.RandomState(0)
    x = rng.randn(64, 6).astype(np.float32)
    y = (x[:, :1] > 0).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, input_shape=(6,)),
                                 tf.keras.layers.PReLU(),
                                 tf.keras.layers.LayerNormalization(),
                                 tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile(tf.keras.optimizers.Adam(0.01), "binary_crossentropy")
    losses = model.fit(x, y, epochs=30, verbose=0).history["loss"]
    assert losses[-1] < 0.6 * losses[0]
    alpha = model.layers[1].get_weights()[0]
    assert alpha.shape == (8,) and np.abs(alpha).max() > 0     # alpha starts at zero and learns
