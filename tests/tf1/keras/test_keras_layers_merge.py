"""tf.keras.layers Multiply, Subtract, Average, Maximum, Minimum and Dot against TF1-style tf_keras
(recorded numbers; live where TensorFlow is available), and their errors."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1.keras import keras_layer_programs as programs
from tests.tf1.keras.keras_comparison import assert_matches_live, assert_matches_recorded, ours
from tests.tf1.keras.keras_layer_recorded import RECORDED

PROGRAM = "keras_layers_program"
CASES = ['multiply', 'subtract', 'average', 'maximum', 'minimum', 'dot', 'dot_normalized',
         'dot_3d']


@pytest.mark.parametrize("case", CASES)
def test_outputs_weights_and_config_match_recorded_tf_keras(case):
    assert_matches_recorded(ours(programs, PROGRAM), RECORDED[PROGRAM], prefix=case, rtol=1e-4,
                            atol=1e-5)


def test_layers_match_tf_keras_live():
    assert_matches_live(programs, PROGRAM, ours(programs, PROGRAM), rtol=1e-4, atol=1e-5,
                        prefixes=CASES)


def test_merge_layers_check_their_inputs():
    a, b = tf.keras.Input((3,)), tf.keras.Input((3,))
    with pytest.raises(ValueError, match="at least 2 inputs"):
        tf.keras.layers.Multiply()([a])
    with pytest.raises(ValueError, match="exactly 2 inputs"):
        tf.keras.layers.Subtract()([a, b, a])
    with pytest.raises(ValueError, match="axes"):
        tf.keras.layers.Dot(axes=[1, 2, 3])
    out = tf.keras.layers.multiply([a, b])
    assert out.shape.as_list() == [None, 3]
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    model = tf.keras.Model([a, b], [tf.keras.layers.average([a, b]),
                                    tf.keras.layers.dot([a, b], axes=1)])
    mean, dots = model.predict([data, data + 1.0])
    np.testing.assert_allclose(mean, data + 0.5)
    np.testing.assert_allclose(dots, (data * (data + 1.0)).sum(1, keepdims=True))
