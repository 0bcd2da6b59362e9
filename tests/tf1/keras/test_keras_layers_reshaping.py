"""tf.keras.layers RepeatVector, Permute, Cropping1D/2D, ZeroPadding1D/3D and UpSampling1D/3D
against TF1-style tf_keras (recorded numbers; live where TensorFlow is available)."""

import pytest

import graphflow as tf
from tests.tf1.keras import keras_layer_programs as programs
from tests.tf1.keras.keras_comparison import assert_matches_live, assert_matches_recorded, ours
from tests.tf1.keras.keras_layer_recorded import RECORDED

PROGRAM = "keras_layers_program"
CASES = ['repeat_vector', 'permute', 'cropping1d', 'cropping2d', 'cropping2d_first',
         'zero_padding1d', 'zero_padding3d', 'upsampling1d', 'upsampling3d']


@pytest.mark.parametrize("case", CASES)
def test_outputs_weights_and_config_match_recorded_tf_keras(case):
    assert_matches_recorded(ours(programs, PROGRAM), RECORDED[PROGRAM], prefix=case, rtol=1e-4,
                            atol=1e-5)


def test_layers_match_tf_keras_live():
    assert_matches_live(programs, PROGRAM, ours(programs, PROGRAM), rtol=1e-4, atol=1e-5,
                        prefixes=CASES)


def test_reshaping_layers_keep_static_shapes():
    L = tf.keras.layers
    seq = tf.keras.Input((6, 3))
    assert L.RepeatVector(4)(tf.keras.Input((3,))).shape.as_list() == [None, 4, 3]
    assert L.UpSampling1D(2)(seq).shape.as_list() == [None, 12, 3]
    assert L.Permute((2, 1))(seq).shape.as_list() == [None, 3, 6]
    assert L.Cropping1D(2)(seq).shape.as_list() == [None, 2, 3]
    assert L.ZeroPadding1D(1)(seq).shape.as_list() == [None, 8, 3]
    vol = tf.keras.Input((2, 3, 4, 1))
    assert L.UpSampling3D(2)(vol).shape.as_list() == [None, 4, 6, 8, 1]
    with pytest.raises(ValueError, match="consecutive"):
        L.Permute((1, 3))
