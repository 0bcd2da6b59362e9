"""graphflow.tf1.rnn_cell_conv: convolutional LSTM cells against numpy of TF1's contrib formula
('SAME' convolutions of [inputs, h]; TF 2.21 no longer ships these cells), in 1 and 2 spatial
dimensions, with the skip connection, under dynamic_rnn, and with TF1's variable names."""

import numpy as np
import pytest

import graphflow as tf

rnn = tf.contrib.rnn


def _conv_same(x, kernel):
    """'SAME' stride-1 convolution, x [batch, *spatial, in], kernel [*k, in, out]."""
    spatial = kernel.shape[:-2]
    pads = [(0, 0)] + [((k - 1) // 2, k // 2) for k in spatial] + [(0, 0)]
    padded = np.pad(x, pads)
    out = np.zeros(x.shape[:-1] + (kernel.shape[-1],), np.float64)
    for offset in np.ndindex(*spatial):
        window = padded[(slice(None),) + tuple(slice(o, o + n) for o, n in
                                               zip(offset, x.shape[1:-1]))]
        out += window @ kernel[offset]
    return out


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _step(x, c, h, kernel, bias, skip):
    gates = _conv_same(np.concatenate([x, h], -1), kernel) + bias
    i, j, f, o = np.split(gates, 4, -1)
    c = _sigmoid(f + 1.0) * c + _sigmoid(i) * np.tanh(j)
    h = np.tanh(c) * _sigmoid(o)
    return (np.concatenate([h, x], -1) if skip else h), c


@pytest.mark.parametrize("ndims,skip", [(2, False), (1, True)])
def test_conv_lstm_steps_are_tf1s_formula(ndims, skip):
    rng = np.random.default_rng(0)
    spatial = [5, 4][:ndims] if ndims == 2 else [6]
    cls = rnn.Conv2DLSTMCell if ndims == 2 else rnn.Conv1DLSTMCell
    cell = cls(input_shape=spatial + [2], output_channels=3, kernel_shape=[3] * ndims,
               skip_connection=skip)
    assert cell.output_size.as_list() == spatial + [3 + (2 if skip else 0)]
    xs = rng.standard_normal((4 if not skip else 1, 2, *spatial, 2)).astype(np.float32)
    if skip:  # TF1's state h then holds the skipped input too: one step only
        with tf.variable_scope("rnn"):
            output, state = cell(tf.constant(xs[0]), cell.zero_state(2, tf.float32))
        outputs = tf.expand_dims(output, 0)
    else:
        outputs, state = tf.nn.dynamic_rnn(cell, tf.constant(xs), dtype=tf.float32,
                                           time_major=True)
    name = f"rnn/conv_{ndims}d_lstm_cell/"
    assert sorted(v.op.name for v in tf.global_variables()) == [name + "biases",
                                                                name + "kernel"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([tf.assign(v, v + 0.2) for v in tf.global_variables() if "biases" in v.op.name])
        got, got_c = sess.run([outputs, state.c])
        kernel, bias = sess.run([v for v in sorted(tf.global_variables(),
                                                   key=lambda v: v.op.name)][::-1])
    assert kernel.shape == (3,) * ndims + (5, 12)
    c = h = np.zeros((2, *spatial, 3))
    for t, x in enumerate(xs):
        out, c = _step(x, c, h, kernel, bias, skip)
        h = out[..., :3]
        np.testing.assert_allclose(got[t], out, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_c, c, rtol=1e-4, atol=1e-5)


def test_conv_lstm_checks_its_shapes():
    with pytest.raises(ValueError, match="Invalid input_shape"):
        rnn.ConvLSTMCell(2, [4, 2], 3, [3, 3])
    cell = rnn.Conv2DLSTMCell(input_shape=[4, 4, 2], output_channels=3, kernel_shape=[3, 3])
    state = cell.zero_state(2, tf.float32)
    assert state.c.shape.as_list() == [2, 4, 4, 3]
    with pytest.raises(ValueError, match="expected inputs of rank 4"):
        cell(tf.zeros([2, 4, 2]), state)
