"""graphflow/ops/pool_argmax_ops.py: tf.nn.max_pool_with_argmax (values, TF's flattened argmax
indices, the gradient through the values) against TensorFlow's numbers, recorded in
data/tf_pool_argmax_reference.json by data/make_tf_pool_argmax_reference.py and compared live
where GRAPHFLOW_TF_PYTHON is set; TF1's argument rules."""

import json
import pathlib
import sys

import numpy as np
import pytest

import graphflow as tf

DATA = pathlib.Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from pool_argmax_program import argmax_program  # noqa: E402
from tf_reference import run_in_tensorflow, tf_python  # noqa: E402

RECORDED = json.loads((DATA / "tf_pool_argmax_reference.json").read_text())["outputs"]


def _check(got, want, name):
    assert got.shape == want.shape and got.dtype == want.dtype, (name, got.dtype, want.dtype)
    if want.dtype.kind == "i":
        np.testing.assert_array_equal(got, want, err_msg=name)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=name)


def test_max_pool_with_argmax_gives_tensorflows_recorded_numbers():
    got = argmax_program(tf, np)
    assert set(got) == set(RECORDED)
    for name, record in RECORDED.items():
        _check(got[name], np.array(record["values"], record["dtype"]).reshape(record["shape"]),
               name)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_max_pool_with_argmax_against_tensorflow_live():
    want = run_in_tensorflow([("r", argmax_program, {})])["r"]
    got = argmax_program(tf, np)
    for name, value in want.items():
        _check(got[name], value, name)


def test_max_pool_with_argmax_arguments():
    x = tf.placeholder(tf.float32, [None, 6, 6, 2])
    y, arg = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID",
                                        Targmax=tf.int32)
    assert y.shape.as_list() == [None, 3, 3, 2] and arg.dtype == tf.int32
    _, arg64 = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    assert arg64.dtype == tf.int64
    with pytest.raises(ValueError, match="data_format"):
        tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID", data_format="NCHW")
    with pytest.raises(TypeError, match="Targmax must be int32 or int64"):
        tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID", Targmax=tf.float32)
    with tf.Session() as sess:
        values = np.arange(72, dtype=np.float32).reshape(1, 6, 6, 2)
        got = sess.run(arg, {x: values})
    # each 2x2 window's maximum is its bottom-right element: (2i + 1) * 6 + 2j + 1, times 2 + c
    want = [[[((2 * i + 1) * 6 + 2 * j + 1) * 2 + c for c in range(2)] for j in range(3)]
            for i in range(3)]
    np.testing.assert_array_equal(got[0], want)
