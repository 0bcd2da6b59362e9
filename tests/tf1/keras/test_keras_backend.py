"""tf.keras.backend: the session Keras runs in (and the variables it initializes), the learning
phase, clear_session, floatx and epsilon."""

import numpy as np
import pytest

import graphflow as tf


def test_get_session_initializes_keras_variables_once():
    layer = tf.keras.layers.Dense(2, kernel_initializer="ones")
    out = layer(tf.constant([[1.0, 1.0]]))
    session = tf.keras.backend.get_session()
    assert tf.keras.backend.get_session() is session
    np.testing.assert_allclose(session.run(out), [[2.0, 2.0]])
    session.run(layer.kernel.assign(tf.zeros([2, 2])))
    tf.keras.backend.get_session()             # must not re-initialize what is initialized
    np.testing.assert_allclose(session.run(out), [[0.0, 0.0]])


def test_an_open_default_session_is_the_keras_session():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,),
                                                       kernel_initializer="ones")])
    with tf.Session() as sess:
        assert tf.keras.backend.get_session() is sess
        np.testing.assert_allclose(model.predict(np.array([[1.0, 2.0]])), [[3.0]])
        other = tf.Session()
        tf.keras.backend.set_session(other)
    assert tf.keras.backend.get_session() is other


def test_learning_phase_and_set_learning_phase():
    phase = tf.keras.backend.learning_phase()
    assert phase.dtype == tf.bool and phase is tf.keras.backend.learning_phase()
    tf.keras.backend.set_learning_phase(1)
    try:
        assert tf.keras.backend.learning_phase() == 1
        out = tf.keras.layers.Dropout(0.5)(tf.ones([100, 100]))
        with tf.Session() as sess:
            assert np.mean(sess.run(out) == 0) > 0.3
    finally:
        tf.keras.backend.clear_session()
    assert tf.keras.backend.learning_phase().dtype == tf.bool
    with pytest.raises(ValueError, match="0 or 1"):
        tf.keras.backend.set_learning_phase(2)


def test_clear_session_resets_the_graph_and_layer_names():
    tf.keras.layers.Dense(1)(tf.ones([1, 1]))
    assert tf.keras.layers.Dense(1).name == "dense_1"
    tf.keras.backend.clear_session()
    assert tf.global_variables() == []
    assert tf.keras.layers.Dense(1).name == "dense"


def test_floatx_epsilon_and_values():
    assert tf.keras.backend.floatx() == "float32"
    assert tf.keras.backend.epsilon() == 1e-7
    v = tf.keras.layers.Dense(2)
    v(tf.ones([1, 3]))
    tf.keras.backend.set_value(v.bias, [1.0, 2.0])
    np.testing.assert_allclose(tf.keras.backend.get_value(v.bias), [1.0, 2.0])
    assert tf.keras.backend.int_shape(v.kernel) == (3, 2)
