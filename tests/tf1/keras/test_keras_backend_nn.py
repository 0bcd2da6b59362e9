"""tf.keras.backend's activations, cross-entropies, convolution and pooling against TF1-style
tf_keras (recorded numbers, and live where TensorFlow is available), and its random tensors."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1.keras import keras_backend_programs as programs
from tests.tf1.keras.keras_backend_recorded import RECORDED
from tests.tf1.keras.keras_comparison import assert_matches_live, assert_matches_recorded, ours

PROGRAM = "backend_nn_program"


def test_backend_nn_matches_recorded_tf_keras():
    assert_matches_recorded(ours(programs, PROGRAM), RECORDED[PROGRAM], rtol=1e-4,
                            atol=1e-5)


def test_backend_nn_matches_tf_keras_live():
    assert_matches_live(programs, PROGRAM, ours(programs, PROGRAM), rtol=1e-4, atol=1e-5)


def test_random_tensors_have_their_distribution():
    K = tf.keras.backend
    normal = K.random_normal((4000,), mean=1.0, stddev=2.0, seed=1)
    uniform = K.random_uniform((4000,), -1.0, 3.0, seed=2)
    binomial = K.random_binomial((4000,), p=0.25, seed=3)
    truncated = K.truncated_normal((4000,), stddev=0.5, seed=4)
    n, u, b, t = K.batch_get_value([normal, uniform, binomial, truncated])
    assert n.dtype == np.float32 and abs(n.mean() - 1.0) < 0.15 and abs(n.std() - 2.0) < 0.15
    assert u.min() >= -1.0 and u.max() < 3.0 and abs(u.mean() - 1.0) < 0.1
    assert set(np.unique(b)) == {0.0, 1.0} and abs(b.mean() - 0.25) < 0.04
    assert np.abs(t).max() <= 1.0 and abs(t.std() - 0.44) < 0.05


def test_bad_padding_and_format_name_the_function():
    K = tf.keras.backend
    x = K.zeros((1, 4, 4, 1))
    with pytest.raises(ValueError, match="conv2d: unknown padding 'full'"):
        K.conv2d(x, K.ones((2, 2, 1, 1)), padding="full")
    with pytest.raises(ValueError, match="pool2d: unknown data_format"):
        K.pool2d(x, (2, 2), data_format="nhwc")
