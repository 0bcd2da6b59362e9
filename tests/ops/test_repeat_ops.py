"""Tests for graphflow/ops/repeat_ops.py beyond the op cases: `tf.repeat` against TensorFlow's
numbers (recorded, and live with GRAPHFLOW_TF_PYTHON), its gradient (the repeated slices'
gradients summed), static shapes, errors; `tf.is_tensor`."""

import pathlib
import sys

import numpy as np
import pytest

import graphflow as tf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from tf_reference import run_in_tensorflow, tf_python  # noqa: E402


def repeat_program(tf, np):
    x = tf.constant(np.arange(6.0).reshape(2, 3))
    per_slice = tf.repeat(x, [2, 0, 1], axis=1)
    weights = tf.constant(np.arange(1.0, 7.0).reshape(2, 3))
    out = {"per_slice": per_slice, "flat": tf.repeat(x, 2), "rows": tf.repeat(x, [1, 2], axis=0),
           "grad": tf.gradients(tf.reduce_sum(tf.repeat(x, [3, 1, 2], axis=1) ** 2), [x])[0],
           "grad_flat": tf.gradients(tf.reduce_sum(per_slice * weights), [x])[0]}
    with tf.Session() as sess:
        return sess.run(out)


# TensorFlow 2.21's values of repeat_program
TF_NUMBERS = {
    "per_slice": [[0.0, 0.0, 2.0], [3.0, 3.0, 5.0]],
    "flat": [0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0, 5.0, 5.0],
    "rows": [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [3.0, 4.0, 5.0]],
    "grad": [[0.0, 2.0, 8.0], [18.0, 8.0, 20.0]],
    "grad_flat": [[3.0, 0.0, 3.0], [9.0, 0.0, 6.0]],
}


def test_repeat_matches_tensorflow_recorded():
    got = repeat_program(tf, np)
    for key, want in TF_NUMBERS.items():
        np.testing.assert_array_equal(got[key], want, err_msg=key)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_repeat_matches_tensorflow_live():
    want = run_in_tensorflow([("r", repeat_program, {})])["r"]
    got = repeat_program(tf, np)
    for key in TF_NUMBERS:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


def test_static_shapes():
    x = tf.zeros([4, 5])
    assert tf.repeat(x, 3, axis=1).shape.as_list() == [4, 15]
    assert tf.repeat(x, [1, 2, 0, 1], axis=0).shape.as_list() == [4, 5]
    assert tf.repeat(x, 2).shape.as_list() == [40]
    assert tf.repeat(x, tf.placeholder(tf.int32, [5]), axis=1).shape.as_list() == [4, None]


def test_errors():
    with pytest.raises(TypeError, match="integers"):
        tf.repeat(tf.zeros([2]), 1.5)
    with pytest.raises(ValueError, match="out of range"):
        tf.repeat(tf.zeros([2]), 2, axis=1)
    with pytest.raises(ValueError, match="non-negative"):
        tf.repeat(tf.zeros([2]), [1, -1])
    r = tf.placeholder(tf.int32, [None])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(tf.repeat(tf.zeros([2]), r), {r: [1, 2, 3]})


def test_is_tensor():
    x = tf.constant(1.0)
    v = tf.Variable(1.0)
    sp = tf.SparseTensor([[0]], [1.0], [2])
    assert tf.is_tensor(x) and tf.is_tensor(v) and tf.is_tensor(sp)
    assert not any(tf.is_tensor(o) for o in (1.0, np.ones(2), [x], None))
