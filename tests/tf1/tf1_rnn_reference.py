"""Reference numbers from TensorFlow 1 (`tf.compat.v1` graph mode, TF1's own rnn cells and
dynamic_rnn) for tests/tf1/test_rnn_against_tf1.py. Run with a Python that has TensorFlow:

    python tf1_rnn_reference.py inputs.npz out.npz

Reads `x` [batch, time, depth] and `lengths`; for each model ('lstm': BasicLSTMCell stacked on a
peephole LSTMCell with a projection, 'gru': GRUCell) writes every variable's value under its TF
name, the outputs, the flattened final state and the gradient of a loss w.r.t. the inputs."""

import sys

import numpy as np
import tensorflow as tf
from tensorflow.python.keras.layers.legacy_rnn import rnn_cell_impl as cells

v1 = tf.compat.v1


def build(kind):
    if kind == "lstm":
        return cells.MultiRNNCell([cells.BasicLSTMCell(5, forget_bias=0.7),
                                   cells.LSTMCell(4, use_peepholes=True, num_proj=3,
                                                  cell_clip=2.0)])
    return cells.GRUCell(4)


def main(in_path, out_path):
    v1.disable_eager_execution()
    data = np.load(in_path)
    result = {}
    for kind in ("lstm", "gru"):
        graph = tf.Graph()
        with graph.as_default():
            v1.set_random_seed(7)
            x = v1.placeholder(tf.float64, data["x"].shape)
            outputs, state = v1.nn.dynamic_rnn(build(kind), x, sequence_length=data["lengths"],
                                               dtype=tf.float64)
            flat_state = tf.nest.flatten(state)
            loss = tf.reduce_sum(outputs * outputs) + sum(tf.reduce_sum(s) for s in flat_state)
            grad_x = tf.gradients(loss, x)[0]
            with v1.Session() as sess:
                sess.run(v1.global_variables_initializer())
                values = sess.run([outputs, flat_state, grad_x], {x: data["x"]})
                for var in v1.global_variables():
                    result[f"{kind}:var:{var.name[:-2]}"] = sess.run(var)
        result[f"{kind}:outputs"] = values[0]
        for i, s in enumerate(values[1]):
            result[f"{kind}:state:{i}"] = s
        result[f"{kind}:grad_x"] = values[2]
    np.savez(out_path, **result)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
