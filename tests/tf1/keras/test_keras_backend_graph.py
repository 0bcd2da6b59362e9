"""tf.keras.backend's variables, placeholders, `function` (inputs, outputs, updates, the learning
phase), gradients, switch/in_train_phase and moving_average_update against TF1-style tf_keras
(recorded numbers, and live where TensorFlow is available)."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1.keras import keras_backend_programs as programs
from tests.tf1.keras.keras_backend_recorded import RECORDED
from tests.tf1.keras.keras_comparison import assert_matches_live, assert_matches_recorded, ours

PROGRAM = "backend_graph_program"


def test_backend_graph_matches_recorded_tf_keras():
    assert_matches_recorded(ours(programs, PROGRAM), RECORDED[PROGRAM], rtol=1e-5,
                            atol=1e-6)


def test_backend_graph_matches_tf_keras_live():
    assert_matches_live(programs, PROGRAM, ours(programs, PROGRAM))


def test_variables_of_known_shape_and_placeholders():
    K = tf.keras.backend
    assert isinstance(K.zeros((2, 3)), tf.Variable)
    assert not isinstance(K.zeros(K.shape(K.placeholder(ndim=1))), tf.Variable)
    v = K.variable([[1, 2]], name="v")
    assert v.dtype.base_dtype == tf.float32 and K.int_shape(v) == (1, 2)
    np.testing.assert_array_equal(K.get_value(v), [[1.0, 2.0]])
    p = K.placeholder(ndim=3, dtype="int32")
    assert K.int_shape(p) == (None, None, None) and p.dtype == tf.int32
    assert K.is_keras_tensor(tf.keras.layers.Dense(1)(tf.keras.Input((2,))))
    assert not K.is_keras_tensor(p)


def test_switch_on_a_vector_condition_selects_rows_as_tf1():
    K = tf.keras.backend
    x = K.placeholder(shape=(None, 3))
    rows = K.switch(K.greater(K.sum(x, 1), 0.0), x, -x)
    data = np.array([[1.0, 2.0, -4.0], [1.0, 0.5, 0.0]], np.float32)
    np.testing.assert_array_equal(K.function([x], [rows])([data])[0], [[-1, -2, 4], [1, 0.5, 0]])
    with pytest.raises(ValueError, match="Rank of `condition`"):
        K.switch(K.ones((2, 2, 2)) > 0, K.ones((2, 2)), K.zeros((2, 2)))


def test_function_returns_the_outputs_structure_and_checks_arguments():
    K = tf.keras.backend
    x = K.placeholder(shape=(2,))
    assert isinstance(K.function([x], x * 2.0)([np.ones(2)]), np.ndarray)
    assert isinstance(K.function([x], (x, x))([np.ones(2)]), tuple)
    with pytest.raises(ValueError, match="Invalid argument 'bogus'"):
        K.function([x], [x], bogus=1)
    with pytest.raises(TypeError, match="list or tuple"):
        K.function(x, [x])
    with pytest.raises(ValueError, match="1 inputs was called with 2"):
        K.function([x], [x])([np.ones(2), np.ones(2)])


def test_learning_phase_scope_and_image_data_format():
    K = tf.keras.backend
    with K.learning_phase_scope(1):
        assert K.learning_phase() == 1
        assert K.in_train_phase(1.0, 2.0) == 1.0
    assert K.learning_phase().dtype == tf.bool
    assert K.image_data_format() == "channels_last"
    with pytest.raises(ValueError, match="data_format"):
        K.set_image_data_format("nchw")
