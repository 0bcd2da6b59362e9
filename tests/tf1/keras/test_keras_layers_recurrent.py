"""Keras's LSTM over dynamic_rnn: TF1 Keras's gate layout and defaults against a numpy LSTM, and
a sequence classifier that learns."""

import numpy as np
import pytest

import graphflow as tf


def _numpy_lstm(x, kernel, recurrent, bias, units):
    def hard_sigmoid(v):
        return np.clip(0.2 * v + 0.5, 0.0, 1.0)
    h = np.zeros((x.shape[0], units))
    c = np.zeros_like(h)
    outputs = []
    for t in range(x.shape[1]):
        z = x[:, t] @ kernel + h @ recurrent + bias
        i, f, g, o = np.split(z, 4, axis=1)
        c = hard_sigmoid(f) * c + hard_sigmoid(i) * np.tanh(g)
        h = hard_sigmoid(o) * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs, 1), h, c


def test_lstm_matches_a_numpy_lstm_with_tf1_keras_defaults():
    rng = np.random.RandomState(0)
    data = rng.randn(3, 5, 4).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 5, 4])
    layer = tf.keras.layers.LSTM(6, return_sequences=True, return_state=True)
    sequence, last_h, last_c = layer(x)
    assert sequence.shape.as_list()[1:] == [5, 6] or sequence.shape.as_list()[2] == 6
    assert [w.shape.as_list() for w in layer.weights] == [[4, 24], [6, 24], [24]]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, recurrent, bias = sess.run(layer.weights)
        got = sess.run([sequence, last_h, last_c], {x: data})
    np.testing.assert_array_equal(bias, np.r_[np.zeros(6), np.ones(6), np.zeros(12)])
    np.testing.assert_allclose(recurrent @ recurrent.T, np.eye(6), atol=1e-5)
    for ours, expected in zip(got, _numpy_lstm(data, kernel, recurrent, bias, 6)):
        np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-5)


def test_lstm_classifier_learns_the_sign_of_the_sequence_sum():
    rng = np.random.RandomState(1)
    x = rng.randn(300, 6, 1).astype(np.float32)
    y = (x.sum(axis=(1, 2)) > 0).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.layers.LSTM(8, input_shape=(6, 1)),
                                 tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile(tf.keras.optimizers.Adam(0.02), "binary_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, batch_size=32, epochs=12, verbose=0)
    assert history.history["accuracy"][-1] > 0.9


def test_lstm_rejects_what_it_does_not_support():
    with pytest.raises(NotImplementedError, match="stateful"):
        tf.keras.layers.LSTM(4, stateful=True)
