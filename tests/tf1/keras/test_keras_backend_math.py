"""tf.keras.backend's reductions, elementwise math, products (dot, batch_dot) and layout functions
against TF1-style tf_keras: recorded numbers, and a live run where TensorFlow is available."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1.keras import keras_backend_programs as programs
from tests.tf1.keras.keras_backend_recorded import RECORDED
from tests.tf1.keras.keras_comparison import assert_matches_live, assert_matches_recorded, ours

PROGRAM = "backend_math_program"


def test_backend_math_matches_recorded_tf_keras():
    assert_matches_recorded(ours(programs, PROGRAM), RECORDED[PROGRAM])


def test_backend_math_matches_tf_keras_live():
    assert_matches_live(programs, PROGRAM, ours(programs, PROGRAM))


def test_dot_and_batch_dot_follow_numpy():
    K = tf.keras.backend
    rng = np.random.RandomState(5)
    a, b = rng.randn(2, 3, 4), rng.randn(5, 4, 2)
    np.testing.assert_allclose(K.eval(K.dot(K.constant(a), K.constant(b))),
                               np.dot(a, b), rtol=1e-5, atol=1e-6)
    c = rng.randn(2, 6, 4)
    np.testing.assert_allclose(K.eval(K.batch_dot(K.constant(a), K.constant(c), axes=(2, 2))),
                               np.einsum("bik,bjk->bij", a, c), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="batch axis"):
        K.batch_dot(K.constant(a), K.constant(c), axes=(0, 0))


def test_repeat_elements_keeps_unknown_batch_and_matches_numpy():
    K = tf.keras.backend
    x = K.placeholder(shape=(None, 2, 3))
    out = K.repeat_elements(x, 3, axis=2)
    assert K.int_shape(out) == (None, 2, 9)
    data = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    np.testing.assert_array_equal(K.function([x], [out])([data])[0], np.repeat(data, 3, axis=2))
