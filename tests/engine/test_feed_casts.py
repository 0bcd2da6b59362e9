"""A fed array of another kind of dtype is cast as TF1 casts it (`np.asarray(value, dtype)`) when
every value survives the cast, and refused with the value named when one would change (TF1
truncates 3.5 to 3 silently; graphflow says so instead). TensorFlow 2.21's numbers recorded."""

import pathlib
import sys

import numpy as np
import pytest

import graphflow as tf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from tf_reference import run_in_tensorflow, tf_python  # noqa: E402


def whole_floats_into_ints(tf, np):
    x = tf.placeholder(tf.int32, [None])
    b = tf.placeholder(tf.bool, [None])
    u = tf.placeholder(tf.uint8, [None])
    with tf.Session() as sess:
        return {"f64": sess.run(x * 2, {x: np.array([1.0, -2.0, 3.0])}),
                "f32": sess.run(x * 2, {x: np.array([4.0, 5.0], np.float32)}),
                "bool": sess.run(b, {b: np.array([0, 1, 1])}),
                "u8": sess.run(u, {u: np.array([0.0, 255.0])})}


TF_NUMBERS = {"f64": [2, -4, 6], "f32": [8, 10], "bool": [False, True, True], "u8": [0, 255]}


def test_whole_numbers_feed_an_integer_placeholder():
    with tf.Graph().as_default():
        got = whole_floats_into_ints(tf, np)
    for name, want in TF_NUMBERS.items():
        assert got[name].tolist() == want, name
    assert got["f64"].dtype == np.int32 and got["u8"].dtype == np.uint8


@pytest.mark.parametrize("value, shown", [(np.array([1.0, 3.5]), "3.5"),
                                          (np.array([1e20]), r"1e\+20"),
                                          (np.array([np.nan]), "nan"),
                                          (np.array([1 + 1j]), r"\(1\+1j\)")])
def test_a_value_that_would_change_is_an_error(value, shown):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [None], name="ids")
        with tf.Session() as sess, pytest.raises(TypeError, match=f"value {shown} would change.*'ids:0'"):
            sess.run(x + 1, {x: value})


def test_bool_takes_zeros_and_ones_only():
    with tf.Graph().as_default():
        b = tf.placeholder(tf.bool, [None], name="mask")
        with tf.Session() as sess, pytest.raises(TypeError, match="value 2 would change"):
            sess.run(b, {b: np.array([0, 2])})


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_feed_casts_against_tensorflow_live():
    want = run_in_tensorflow([("f", whole_floats_into_ints, {})])["f"]
    with tf.Graph().as_default():
        got = whole_floats_into_ints(tf, np)
    for name in TF_NUMBERS:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
