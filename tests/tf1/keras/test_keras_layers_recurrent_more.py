"""GRU (both reset_after forms) and SimpleRNN against numpy on fixed weights with TF1 Keras's
equations, go_backwards, Bidirectional, a GRU that learns, and (where GRAPHFLOW_TF_PYTHON names a
TensorFlow with tf_keras) the GRU program against TF's legacy Keras."""


import numpy as np
import pytest

import graphflow as tf
from tests.tf1.keras import keras_programs as programs
from tests.tf_reference import run_in_tf_keras


def _hard_sigmoid(v):
    return np.clip(0.2 * v + 0.5, 0.0, 1.0)


def _numpy_gru(x, kernel, recurrent, bias, units, reset_after):
    h = np.zeros((x.shape[0], units))
    input_bias, recurrent_bias = (bias[0], bias[1]) if reset_after else (bias, np.zeros_like(bias))
    outputs = []
    for t in range(x.shape[1]):
        xz, xr, xh = np.split(x[:, t] @ kernel + input_bias, 3, axis=1)
        uz, ur, uh = np.split(recurrent, 3, axis=1)
        bz, br, bh = np.split(recurrent_bias, 3)
        z = _hard_sigmoid(xz + h @ uz + bz)
        r = _hard_sigmoid(xr + h @ ur + br)
        if reset_after:
            candidate = np.tanh(xh + r * (h @ uh + bh))
        else:
            candidate = np.tanh(xh + (r * h) @ uh)
        h = z * h + (1 - z) * candidate
        outputs.append(h)
    return np.stack(outputs, 1), h


def _weights(rng, features, units, gates, bias_shape):
    return [(rng.randn(features, gates * units) * 0.5).astype(np.float32),
            (rng.randn(units, gates * units) * 0.5).astype(np.float32),
            (rng.randn(*bias_shape) * 0.3).astype(np.float32)]


@pytest.mark.parametrize("reset_after", [False, True])
def test_gru_matches_numpy_tf1_equations(reset_after):
    rng = np.random.RandomState(0)
    data = rng.randn(3, 5, 4).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 5, 4])
    layer = tf.keras.layers.GRU(6, return_sequences=True, return_state=True,
                                reset_after=reset_after)
    sequence, state = layer(x)
    bias_shape = [2, 18] if reset_after else [18]
    assert [w.shape.as_list() for w in layer.weights] == [[4, 18], [6, 18], bias_shape]
    weights = _weights(rng, 4, 6, 3, bias_shape)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        defaults = sess.run(layer.weights)
        for variable, value in zip(layer.weights, weights):
            variable.load(value, sess)
        got = sess.run([sequence, state], {x: data})
    np.testing.assert_array_equal(defaults[2], np.zeros(bias_shape))
    np.testing.assert_allclose(defaults[1] @ defaults[1].T, np.eye(6), atol=1e-5)
    expected = _numpy_gru(data, *weights, 6, reset_after)
    for ours, theirs in zip(got, expected):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


def test_simple_rnn_and_go_backwards_match_numpy():
    rng = np.random.RandomState(1)
    data = rng.randn(2, 4, 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4, 3])
    forward = tf.keras.layers.SimpleRNN(5, return_sequences=True)
    backward = tf.keras.layers.SimpleRNN(5, return_sequences=True, go_backwards=True)
    outputs = [forward(x), backward(x)]
    weights = _weights(rng, 3, 5, 1, [5])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for layer in (forward, backward):
            for variable, value in zip(layer.weights, weights):
                variable.load(value, sess)
        got_forward, got_backward = sess.run(outputs, {x: data})

    def numpy_rnn(seq):
        h, out = np.zeros((2, 5)), []
        for t in range(seq.shape[1]):
            h = np.tanh(seq[:, t] @ weights[0] + h @ weights[1] + weights[2])
            out.append(h)
        return np.stack(out, 1)

    np.testing.assert_allclose(got_forward, numpy_rnn(data), rtol=1e-4, atol=1e-5)
    # Keras's go_backwards: the reversed sequence's outputs, in the order they were computed
    np.testing.assert_allclose(got_backward, numpy_rnn(data[:, ::-1]), rtol=1e-4, atol=1e-5)


def test_bidirectional_concatenates_forward_and_time_ordered_backward():
    rng = np.random.RandomState(2)
    data = rng.randn(2, 4, 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4, 3])
    layer = tf.keras.layers.Bidirectional(tf.keras.layers.SimpleRNN(5, return_sequences=True))
    summed = tf.keras.layers.Bidirectional(tf.keras.layers.GRU(4), merge_mode="sum")
    out, last = layer(x), summed(x)
    assert len(layer.weights) == 6 and len(layer.trainable_weights) == 6
    assert len(summed.weights) == 6 and out.shape.as_list()[-1] == 10
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        fw = sess.run(layer.forward_layer.weights)
        bw = sess.run(layer.backward_layer.weights)
        got, got_last = sess.run([out, last], {x: data})
        gru_fw, gru_bw = sess.run(summed.forward_layer.weights), sess.run(
            summed.backward_layer.weights)

    def numpy_rnn(seq, w):
        h, result = np.zeros((2, 5)), []
        for t in range(seq.shape[1]):
            h = np.tanh(seq[:, t] @ w[0] + h @ w[1] + w[2])
            result.append(h)
        return np.stack(result, 1)

    expected = np.concatenate([numpy_rnn(data, fw), numpy_rnn(data[:, ::-1], bw)[:, ::-1]], -1)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    expected_last = (_numpy_gru(data, *gru_fw, 4, False)[1]
                     + _numpy_gru(data[:, ::-1], *gru_bw, 4, False)[1])
    np.testing.assert_allclose(got_last, expected_last, rtol=1e-4, atol=1e-5)


def test_gru_classifier_learns_the_sign_of_the_sequence_sum():
    tf.keras.backend.clear_session()
    tf.set_random_seed(0)
    rng = np.random.RandomState(1)
    x = rng.randn(300, 6, 1).astype(np.float32)
    y = (x.sum(axis=(1, 2)) > 0).astype(np.float32)
    model = tf.keras.Sequential([
        tf.keras.layers.Bidirectional(tf.keras.layers.GRU(8), input_shape=(6, 1)),
        tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile(tf.keras.optimizers.Adam(0.02), "binary_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, batch_size=32, epochs=12, verbose=0)
    assert history.history["acc"][-1] > 0.9


def test_gru_program_matches_numpy_before_training():
    for reset_after in (False, True):
        ours = programs.keras_gru(tf, np, reset_after=reset_after)
        rng = np.random.RandomState(11)           # the program's draws, in its order
        x = rng.randn(24, 6, 3).astype(np.float32)
        kernel = (rng.randn(3, 15) * 0.5).astype(np.float32)
        recurrent = (rng.randn(5, 15) * 0.5).astype(np.float32)
        bias = (rng.randn(*((2, 15) if reset_after else (15,))) * 0.2).astype(np.float32)
        expected, _ = _numpy_gru(x, kernel, recurrent, bias, 5, reset_after)
        np.testing.assert_allclose(ours["sequences"], expected, rtol=1e-4, atol=1e-5)


@pytest.fixture(scope="module")
def tensorflow_gru():
    return run_in_tf_keras([(f"gru-{r}", programs.keras_gru, {"reset_after": r})
                            for r in (False, True)])


@pytest.mark.parametrize("reset_after", [False, True])
def test_gru_matches_tf_legacy_keras(tensorflow_gru, reset_after):
    ours = programs.keras_gru(tf, np, reset_after=reset_after)
    theirs = tensorflow_gru[f"gru-{reset_after}"]
    assert sorted(ours) == sorted(theirs)
    for key in ours:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-4, atol=1e-5, err_msg=key)


def test_masking_keeps_state_over_masked_steps():
    rng = np.random.RandomState(5)
    data = rng.randn(3, 6, 2).astype(np.float32)
    data[0, 4:] = 0.0                       # padded at the end
    data[1, :2] = 0.0                       # padded at the start
    data[2, 3] = 0.0                        # a hole
    x = tf.placeholder(tf.float32, [None, 6, 2])
    masked = tf.keras.layers.Masking()(x)
    gru = tf.keras.layers.GRU(4, return_sequences=True, return_state=True)
    lstm = tf.keras.layers.LSTM(4, return_sequences=True)
    sequence, state = gru(masked)
    lstm_out = lstm(masked)
    weights = _weights(rng, 2, 4, 3, [12])
    lstm_weights = _weights(rng, 2, 4, 4, [16])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for layer, values in ((gru, weights), (lstm, lstm_weights)):
            for variable, value in zip(layer.weights, values):
                variable.load(value, sess)
        got_seq, got_state, got_lstm = sess.run([sequence, state, lstm_out], {x: data})
    keep = np.any(data != 0, axis=-1)
    for row in range(3):
        kept = data[row:row + 1, keep[row]]
        expected_seq, expected_state = _numpy_gru(kept, *weights, 4, False)
        np.testing.assert_allclose(got_state[row], expected_state[0], rtol=1e-4, atol=1e-5)
        # TF1 Keras: a masked step repeats the previous output (zeros before the first)
        positions = np.cumsum(keep[row]) - 1
        repeated = np.concatenate([np.zeros((1, 4)), expected_seq[0]])[positions + 1]
        np.testing.assert_allclose(got_seq[row], repeated, rtol=1e-4, atol=1e-5)
    # the LSTM's sequence also stands still over the masked steps
    np.testing.assert_allclose(got_lstm[0, 4:], np.repeat(got_lstm[0, 3:4], 2, 0), rtol=1e-6)
    np.testing.assert_allclose(got_lstm[1, :2], 0.0)
    np.testing.assert_allclose(got_lstm[2, 3], got_lstm[2, 2], rtol=1e-6)
    assert np.abs(got_lstm[2, 4] - got_lstm[2, 3]).max() > 1e-3


@pytest.fixture(scope="module")
def tensorflow_masked():
    return run_in_tf_keras([(kind, programs.keras_masked_rnn, {"kind": kind})
                            for kind in ("GRU", "LSTM")])


@pytest.mark.parametrize("kind", ["GRU", "LSTM"])
def test_masked_embedding_rnn_matches_tf_legacy_keras(tensorflow_masked, kind):
    ours = programs.keras_masked_rnn(tf, np, kind=kind)
    theirs = tensorflow_masked[kind]
    for key in ours:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-4, atol=1e-5, err_msg=key)
