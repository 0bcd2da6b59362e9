"""Tests for graphflow/ops/patches_ops.py: extract_image_patches (ksizes, strides, rates,
VALID / SAME) and its gradient against TensorFlow 2.21's numbers (tests/tf1/image_reference.json;
compared live with GRAPHFLOW_TF_PYTHON set), static shapes and errors."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1 import image_programs
from tests.tf1.test_image_color import _compare, _run
from tests.tf_reference import run_in_tensorflow, tf_python

REFERENCE = image_programs.load_reference()


def test_patches_and_gradients_match_tensorflow():
    _compare(_run(image_programs.patches_program), REFERENCE["patches_program"], atol=1e-5)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_patches_match_tensorflow_live():
    want = run_in_tensorflow([("r", image_programs.patches_program, {})])["r"]
    _compare(_run(image_programs.patches_program), want, atol=1e-5)


def test_shapes_with_unknown_dims_and_errors():
    x = tf.placeholder(tf.float32, [None, 7, None, 3])
    y = tf.image.extract_image_patches(x, [1, 2, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
    assert y.shape.as_list() == [None, 4, None, 18]
    (g,) = tf.gradients(tf.reduce_sum(y), x)
    with tf.Session() as sess:
        got = sess.run(g, {x: np.ones((1, 7, 5, 3), np.float32)})
    assert got.shape == (1, 7, 5, 3) and got.min() >= 1  # every pixel lies in some patch
    with pytest.raises(ValueError, match=r"ksizes must be \[1, rows, cols, 1\]"):
        tf.extract_image_patches(x, [2, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="padding must be 'VALID' or 'SAME'"):
        tf.extract_image_patches(x, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "FULL")
    with pytest.raises(ValueError, match="images must be 4-D"):
        tf.extract_image_patches(tf.zeros([3, 3, 1]), [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1],
                                 "VALID")
