"""tf.nn.conv3d / max_pool3d / avg_pool3d: shape rules and their errors, and (where TensorFlow is
installed) TensorFlow's numbers for the same program: outputs and gradients, SAME and VALID,
strides, dilations, a tied max-pool window."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf_reference import run_in_tensorflow, tf_python


def three_d_program(tf, np):
    rng = np.random.RandomState(0)
    x = tf.constant(rng.normal(size=(2, 5, 6, 7, 3)).astype(np.float32))
    f = tf.constant(rng.normal(size=(2, 3, 2, 3, 4)).astype(np.float32))
    tied = tf.constant(np.round(rng.normal(size=(1, 4, 4, 4, 2)) * 2).astype(np.float32))
    outs = {
        "conv_same": tf.nn.conv3d(x, f, [1, 2, 1, 2, 1], "SAME"),
        "conv_valid": tf.nn.conv3d(x, f, [1, 1, 2, 1, 1], "VALID"),
        "conv_dilated": tf.nn.conv3d(x, f, [1, 1, 1, 1, 1], "SAME", dilations=[1, 2, 1, 2, 1]),
        "max_same": tf.nn.max_pool3d(x, [1, 2, 3, 2, 1], [1, 2, 2, 2, 1], "SAME"),
        "avg_same": tf.nn.avg_pool3d(x, [1, 3, 2, 3, 1], [1, 2, 1, 2, 1], "SAME"),
        "max_tied": tf.nn.max_pool3d(tied, [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID"),
    }
    results = {}
    for name, y in outs.items():
        weights = tf.constant(rng.normal(size=y.shape.as_list()).astype(np.float32))
        source = tied if name == "max_tied" else x
        grads = tf.gradients(tf.reduce_sum(y * weights), [source] + ([f] if "conv" in name else []))
        results[name] = y
        for k, g in enumerate(grads):
            results[f"{name}_grad{k}"] = g
    with tf.Session() as sess:
        return sess.run(results)


def test_shapes_and_their_errors():
    x = tf.placeholder(tf.float32, [None, 5, 6, 7, 3])
    f = tf.placeholder(tf.float32, [2, 3, 2, 3, 4])
    assert tf.nn.conv3d(x, f, [1, 2, 1, 2, 1], "SAME").shape.as_list() == [None, 3, 6, 4, 4]
    assert tf.nn.conv3d(x, f, 1, "VALID", dilations=[1, 2, 1, 1, 1]).shape.as_list() == \
        [None, 3, 4, 6, 4]
    first = tf.placeholder(tf.float32, [2, 3, 5, 6, 7])
    assert tf.nn.max_pool3d(first, 2, 2, "VALID", data_format="NCDHW").shape.as_list() == \
        [2, 3, 2, 3, 3]
    assert tf.nn.avg_pool3d(x, [1, 3, 3, 3, 1], 1, "SAME").shape.as_list() == [None, 5, 6, 7, 3]
    with pytest.raises(ValueError, match="in_channels"):
        tf.nn.conv3d(x, tf.placeholder(tf.float32, [1, 1, 1, 2, 4]), 1, "SAME")
    with pytest.raises(ValueError, match="batch and channel"):
        tf.nn.max_pool3d(x, [2, 2, 2, 2, 2], 1, "SAME")
    with pytest.raises(ValueError, match="larger than the input"):
        tf.nn.avg_pool3d(x, [1, 6, 1, 1, 1], 1, "VALID")
    with pytest.raises(ValueError, match="5-D"):
        tf.nn.conv3d(tf.placeholder(tf.float32, [1, 2, 3, 4]), f, 1, "SAME")
    with pytest.raises(ValueError, match="NDHWC"):
        tf.nn.max_pool3d(x, 2, 2, "SAME", data_format="NHWC")


def test_matches_tensorflow():
    if tf_python() is None:
        pytest.skip("TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON to compare with it)")
    theirs = run_in_tensorflow([("3d", three_d_program, {})])["3d"]
    ours = three_d_program(tf, np)
    assert sorted(ours) == sorted(theirs)
    for key in ours:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-4, atol=1e-4, err_msg=key)
