"""tf.keras.layers Conv3D, SeparableConv2D, DepthwiseConv2D and the 3-D poolings against TF1-style
tf_keras (outputs, weight names, order and shapes; recorded and live)."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1.keras import keras_layer_programs as programs
from tests.tf1.keras.keras_comparison import assert_matches_live, assert_matches_recorded, ours
from tests.tf1.keras.keras_layer_recorded import RECORDED

PROGRAM = "keras_layers_program"
CASES = ['conv3d', 'conv3d_same', 'separable', 'separable_same', 'depthwise', 'max_pool3d',
         'avg_pool3d', 'global_avg3d', 'global_max3d']


@pytest.mark.parametrize("case", CASES)
def test_outputs_weights_and_config_match_recorded_tf_keras(case):
    assert_matches_recorded(ours(programs, PROGRAM), RECORDED[PROGRAM], prefix=case, rtol=1e-4,
                            atol=1e-5)


def test_layers_match_tf_keras_live():
    assert_matches_live(programs, PROGRAM, ours(programs, PROGRAM), rtol=1e-4, atol=1e-5,
                        prefixes=CASES)


def test_conv3d_matches_numpy_and_refuses_channels_first():
    rng = np.random.RandomState(4)
    data = rng.randn(2, 4, 3, 5, 2).astype(np.float32)
    kernel = rng.randn(2, 2, 3, 2, 3).astype(np.float32)
    bias = rng.randn(3).astype(np.float32)
    layer = tf.keras.layers.Conv3D(3, (2, 2, 3))
    out = layer(tf.constant(data))
    assert out.shape.as_list() == [2, 3, 2, 3, 3]
    layer.set_weights([kernel, bias])
    got = tf.keras.backend.get_value(out)
    expected = np.zeros((2, 3, 2, 3, 3))
    for d in range(3):
        for h in range(2):
            for w in range(3):
                expected[:, d, h, w] = np.einsum("bijkc,ijkcf->bf",
                                                 data[:, d:d + 2, h:h + 2, w:w + 3], kernel)
    np.testing.assert_allclose(got, expected + bias, rtol=1e-4, atol=1e-5)
    with pytest.raises(NotImplementedError, match="channels_last"):
        tf.keras.layers.Conv3D(2, 2, data_format="channels_first")
