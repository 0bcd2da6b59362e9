"""Static shapes and broadcasting as TF1 has them: dropout behind a placeholder `training` (or a
keep_prob of unknown shape) keeps its input's shape, so a following conv2d builds; `tf.where`
with a vector condition picks rows (TF1's Select), and a condition of unknown rank leaves x's
shape; `softmax_cross_entropy_with_logits` broadcasts labels [batch, 1] or [1, classes] against
logits. Numbers and shapes recorded from TensorFlow 2.21 (tf.compat.v1); the live comparison
runs with GRAPHFLOW_TF_PYTHON set."""

import pathlib
import sys

import numpy as np
import pytest

import graphflow as tf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from tf_reference import run_in_tf_keras, tf_python  # noqa: E402

LOGITS = np.array([[2.0, 1.0, 0.1, 0.3, -1.0, 0.0, 0.5],
                   [0.5, 2.5, 0.3, 0.1, 0.2, -0.3, 1.0]], np.float32)


def shapes_program(tf, np):
    x = tf.placeholder(tf.float32, [None, 8, 8, 3])
    training = tf.placeholder(tf.bool)  # unknown rank, as TF1 programs often write it
    dropped = tf.layers.dropout(x, 0.5, training=training)
    kept = tf.nn.dropout(x, keep_prob=tf.placeholder(tf.float32))
    picked = tf.where(training, x, x * 2.0)
    branch = tf.cond(tf.placeholder(tf.bool, []), lambda: x, lambda: x * 2.0)
    conv = tf.layers.conv2d(dropped, 4, 3)
    return {name: np.array([-1 if d is None else d for d in t.shape.as_list()])
            for name, t in (("dropout", dropped), ("nn_dropout", kept), ("where", picked),
                            ("cond", branch), ("conv", conv))}


def values_program(tf, np, logits):
    lg = tf.placeholder(tf.float32, [None, 7])
    column = tf.placeholder(tf.float32, [None, 1])
    row = tf.placeholder(tf.float32, [1, 7])
    c = tf.constant([True, False])
    with tf.Session() as sess:
        return {
            "xent_column": sess.run(tf.nn.softmax_cross_entropy_with_logits(
                logits=lg, labels=column), {lg: logits, column: [[1.0], [0.5]]}),
            "xent_row": sess.run(tf.nn.softmax_cross_entropy_with_logits_v2(
                logits=lg, labels=row), {lg: logits, row: [[0, 1, 0, 0, 0, 0, 0]]}),
            "where_rows": sess.run(tf.where(c, [[1, 2], [3, 4]], [[5, 6], [7, 8]])),
            "where_scalar": sess.run(tf.where(tf.constant(False), [1, 2], [3, 4]))}


TF_SHAPES = {"dropout": [-1, 8, 8, 3], "nn_dropout": [-1, 8, 8, 3], "where": [-1, 8, 8, 3],
             "cond": [-1, 8, 8, 3], "conv": [-1, 6, 6, 4]}
TF_VALUES = {"xent_column": [16.321453, 8.500282], "xent_row": [1.7459217, 0.54293776],
             "where_rows": [[1, 2], [7, 8]], "where_scalar": [3, 4]}


def test_shapes_survive_dropout_where_and_cond():
    with tf.Graph().as_default():
        got = shapes_program(tf, np)
    for name, want in TF_SHAPES.items():
        assert got[name].tolist() == want, name


def test_broadcast_cross_entropy_and_tf1_where():
    with tf.Graph().as_default():
        got = values_program(tf, np, LOGITS)
    for name, want in TF_VALUES.items():
        np.testing.assert_allclose(got[name], want, rtol=1e-6, err_msg=name)


def test_where_with_an_unknown_rank_condition_picks_rows_at_run_time():
    with tf.Graph().as_default():
        cond = tf.placeholder(tf.bool)
        out = tf.where(cond, [[1, 2], [3, 4]], [[5, 6], [7, 8]])
        assert out.shape.as_list() == [2, 2]
        with tf.Session() as sess:
            assert sess.run(out, {cond: [False, True]}).tolist() == [[5, 6], [3, 4]]
            assert sess.run(out, {cond: [[False, True], [True, False]]}).tolist() == \
                [[5, 2], [3, 8]]


def test_where_v2_broadcasts_as_numpy():
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run(tf.where_v2([True, False], [[1, 2], [3, 4]], [[5, 6], [7, 8]]))
    assert got.tolist() == [[1, 6], [3, 8]]


def test_cross_entropy_refuses_incompatible_known_shapes():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="broadcast-compatible"):
            tf.nn.softmax_cross_entropy_with_logits(logits=tf.zeros([2, 7]), labels=tf.zeros([2, 3]))


def test_cross_entropy_gradients_reach_broadcast_labels():
    with tf.Graph().as_default():
        logits = tf.placeholder(tf.float32, [None, 7])
        labels = tf.placeholder(tf.float32, [None, 1])
        loss = tf.nn.softmax_cross_entropy_with_logits_v2(logits=logits, labels=labels)
        d_logits, d_labels = tf.gradients(tf.reduce_sum(loss), [logits, labels])
        with tf.Session() as sess:
            a, b = sess.run([d_logits, d_labels], {logits: LOGITS, labels: [[1.0], [0.5]]})
    assert a.shape == (2, 7) and b.shape == (2, 1)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_against_tensorflow_live():
    want = run_in_tf_keras([("s", shapes_program, {}),  # tf.layers: TF1 graph-mode Keras
                            ("v", values_program, {"logits": LOGITS.tolist()})])
    with tf.Graph().as_default():
        shapes = shapes_program(tf, np)
    with tf.Graph().as_default():
        values = values_program(tf, np, LOGITS)
    for name in TF_SHAPES:
        np.testing.assert_array_equal(shapes[name], want["s"][name], err_msg=name)
    for name in TF_VALUES:
        np.testing.assert_allclose(values[name], want["v"][name], rtol=1e-6, err_msg=name)
