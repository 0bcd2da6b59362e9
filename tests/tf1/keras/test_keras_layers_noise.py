"""tf.keras.layers GaussianNoise, GaussianDropout, SpatialDropout1D/2D and ActivityRegularization:
inference and the activity loss against TF1-style tf_keras, and their training-time statistics."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1.keras import keras_layer_programs as programs
from tests.tf1.keras.keras_comparison import assert_matches_live, assert_matches_recorded, ours
from tests.tf1.keras.keras_layer_recorded import RECORDED

PROGRAM = "keras_layers_program"
CASES = ['gaussian_noise', 'gaussian_dropout', 'spatial_dropout1d', 'spatial_dropout2d',
         'activity_regularization']


@pytest.mark.parametrize("case", CASES)
def test_outputs_weights_and_config_match_recorded_tf_keras(case):
    assert_matches_recorded(ours(programs, PROGRAM), RECORDED[PROGRAM], prefix=case, rtol=1e-4,
                            atol=1e-5)


def test_layers_match_tf_keras_live():
    assert_matches_live(programs, PROGRAM, ours(programs, PROGRAM), rtol=1e-4, atol=1e-5,
                        prefixes=CASES)


def test_noise_layers_act_in_training_only():
    x = tf.ones([400, 50])
    noise = tf.keras.layers.GaussianNoise(0.5)
    dropout = tf.keras.layers.GaussianDropout(0.5)
    spatial = tf.keras.layers.SpatialDropout1D(0.5)
    seq = tf.ones([400, 6, 5])
    outs = [noise(x, training=True), dropout(x, training=True), spatial(seq, training=True),
            noise(x), spatial(seq)]
    with tf.Session() as sess:
        n, d, s, n_test, s_test = sess.run(outs)
    assert abs((n - 1.0).std() - 0.5) < 0.02 and abs(n.mean() - 1.0) < 0.01
    assert abs(d.std() - 1.0) < 0.03 and abs(d.mean() - 1.0) < 0.02   # sqrt(0.5 / 0.5)
    assert np.all(s == s[:, :1, :])                     # one mask value per example and channel
    assert set(np.unique(s)) == {0.0, 2.0}
    np.testing.assert_array_equal(n_test, 1.0)
    np.testing.assert_array_equal(s_test, 1.0)
    with pytest.raises(ValueError, match="rank 4"):
        tf.keras.layers.SpatialDropout2D(0.5)(seq)
