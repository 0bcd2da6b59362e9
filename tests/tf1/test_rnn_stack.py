"""graphflow.tf1.rnn_stack: stacked bidirectional RNNs equal the layers built one by one with
bidirectional_dynamic_rnn / static_bidirectional_rnn from the same weights (TF 2.21 no longer
ships tf.contrib.rnn), with TF1's variable names and per-layer states."""

import numpy as np
import pytest

import graphflow as tf

rnn = tf.contrib.rnn


def _copy_weights(sess, prefix_from, prefix_to):
    by_name = {v.op.name: v for v in tf.global_variables()}
    sess.run([tf.assign(by_name[prefix_to + n[len(prefix_from):]], v)
              for n, v in by_name.items() if n.startswith(prefix_from)])


@pytest.mark.parametrize("time_major", [False, True])
def test_stacked_dynamic_layers_feed_each_other(time_major):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, 2)).astype(np.float32)
    if time_major:
        x = x.transpose(1, 0, 2)
    lengths = tf.constant([5, 3, 1])
    cells = [[tf.nn.rnn_cell.LSTMCell(4), tf.nn.rnn_cell.GRUCell(3)] for _ in range(2)]
    outputs, states_fw, states_bw = rnn.stack_bidirectional_dynamic_rnn(
        cells[0], cells[1], tf.constant(x), dtype=tf.float32, sequence_length=lengths,
        time_major=time_major)
    with tf.variable_scope("by_hand"):
        with tf.variable_scope("cell_0"):
            first, (fw0, bw0) = tf.nn.bidirectional_dynamic_rnn(
                tf.nn.rnn_cell.LSTMCell(4), tf.nn.rnn_cell.LSTMCell(4), tf.constant(x),
                sequence_length=lengths, dtype=tf.float32, time_major=time_major)
        with tf.variable_scope("cell_1"):
            second, (fw1, bw1) = tf.nn.bidirectional_dynamic_rnn(
                tf.nn.rnn_cell.GRUCell(3), tf.nn.rnn_cell.GRUCell(3), tf.concat(first, 2),
                sequence_length=lengths, dtype=tf.float32, time_major=time_major)
    names = [v.op.name for v in tf.global_variables()]
    assert "stack_bidirectional_rnn/cell_0/bidirectional_rnn/fw/lstm_cell/kernel" in names
    assert "stack_bidirectional_rnn/cell_1/bidirectional_rnn/bw/gru_cell/gates/kernel" in names
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        _copy_weights(sess, "stack_bidirectional_rnn/", "by_hand/")
        got, got_fw, got_bw, want, w_fw1, w_bw0 = sess.run(
            [outputs, states_fw, states_bw, tf.concat(second, 2), fw1, bw0])
    assert got.shape[-1] == 6 and len(got_fw) == 2 and len(got_bw) == 2
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_fw[1], w_fw1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_bw[0].h, w_bw0.h, rtol=1e-5, atol=1e-6)


def test_stacked_static_layers_feed_each_other():
    rng = np.random.default_rng(1)
    xs = [tf.constant(rng.standard_normal((2, 3)).astype(np.float32)) for _ in range(4)]
    outputs, states_fw, _ = rnn.stack_bidirectional_rnn(
        [tf.nn.rnn_cell.BasicRNNCell(2), tf.nn.rnn_cell.BasicRNNCell(2)],
        [tf.nn.rnn_cell.BasicRNNCell(2), tf.nn.rnn_cell.BasicRNNCell(2)], xs, dtype=tf.float32)
    with tf.variable_scope("by_hand"):
        with tf.variable_scope("cell_0") as scope:
            first, _, _ = tf.nn.static_bidirectional_rnn(
                tf.nn.rnn_cell.BasicRNNCell(2), tf.nn.rnn_cell.BasicRNNCell(2), xs,
                dtype=tf.float32, scope=scope)
        with tf.variable_scope("cell_1") as scope:
            second, fw1, _ = tf.nn.static_bidirectional_rnn(
                tf.nn.rnn_cell.BasicRNNCell(2), tf.nn.rnn_cell.BasicRNNCell(2), first,
                dtype=tf.float32, scope=scope)
    assert "stack_bidirectional_rnn/cell_1/fw/basic_rnn_cell/kernel" in [
        v.op.name for v in tf.global_variables()]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        _copy_weights(sess, "stack_bidirectional_rnn/", "by_hand/")
        got, want, got_fw, want_fw = sess.run([outputs, second, states_fw[1], fw1])
    assert len(got) == 4 and got[0].shape == (2, 4)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_fw, want_fw, rtol=1e-5, atol=1e-6)


def test_layers_must_pair_up():
    cell = tf.nn.rnn_cell.BasicRNNCell(2)
    with pytest.raises(ValueError, match="same depth"):
        rnn.stack_bidirectional_dynamic_rnn([cell, cell], [cell], tf.zeros([1, 2, 2]),
                                            dtype=tf.float32)
    with pytest.raises(ValueError, match="cells_fw must be a list"):
        rnn.stack_bidirectional_dynamic_rnn((cell,), [cell], tf.zeros([1, 2, 2]),
                                            dtype=tf.float32)
    with pytest.raises(ValueError, match="initial_states_fw must be a list"):
        rnn.stack_bidirectional_dynamic_rnn([cell], [cell], tf.zeros([1, 2, 2]),
                                            initial_states_fw=[None, None], dtype=tf.float32)
