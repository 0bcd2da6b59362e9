"""Tests for graphflow/ops/detection_ops.py: non_max_suppression, _with_scores (soft-NMS),
_padded and crop_and_resize (with its gradients for the image and the boxes) against
TensorFlow 2.21's numbers (tests/tf1/image_reference.json, recorded by
tests/tf1/image_programs.py; compared live with GRAPHFLOW_TF_PYTHON set), static shapes and
errors."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1 import image_programs
from tests.tf1.test_image_color import _compare, _run
from tests.tf_reference import run_in_tensorflow, tf_python

REFERENCE = image_programs.load_reference()


def test_non_max_suppression_matches_tensorflow():
    _compare(_run(image_programs.detection_program), REFERENCE["detection_program"], atol=1e-6)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_non_max_suppression_matches_tensorflow_live():
    want = run_in_tensorflow([(None, image_programs._boxes, None),
                              ("r", image_programs.detection_program, {})])["r"]
    _compare(_run(image_programs.detection_program), want, atol=1e-6)


def test_shapes_dtypes_and_no_gradient():
    boxes = tf.placeholder(tf.float32, [None, 4])
    scores = tf.placeholder(tf.float32, [None])
    picked = tf.image.non_max_suppression(boxes, scores, 10)
    idx, n = tf.image.non_max_suppression_padded(boxes, scores, 7, pad_to_max_output_size=True)
    sel, sel_scores = tf.image.non_max_suppression_with_scores(boxes, scores, 3)
    assert picked.dtype == tf.int32 and picked.shape.as_list() == [None]
    assert idx.shape.as_list() == [7] and n.shape.as_list() == [] and n.dtype == tf.int32
    assert sel_scores.dtype == tf.float32 and sel.shape.as_list() == [None]
    assert tf.gradients(tf.reduce_sum(sel_scores), scores) == [None]
    with tf.Session() as sess:
        got = sess.run([picked, idx, n], {boxes: np.zeros((0, 4)), scores: np.zeros(0)})
    assert got[0].shape == (0,) and got[1].tolist() == [0] * 7 and got[2] == 0


def test_errors():
    boxes = np.zeros((3, 4), np.float32)
    with pytest.raises(ValueError, match="iou_threshold must be in"):
        tf.image.non_max_suppression(boxes, np.zeros(3, np.float32), 2, iou_threshold=1.5)
    with pytest.raises(ValueError, match="boxes must be 2-D"):
        tf.image.non_max_suppression(np.zeros((3, 5), np.float32), np.zeros(3, np.float32), 2)
    with pytest.raises(ValueError, match="one score per box"):
        tf.image.non_max_suppression(boxes, np.zeros(4, np.float32), 2)
    size = tf.placeholder(tf.int32, [])
    out = tf.image.non_max_suppression(boxes, np.zeros(3, np.float32), size)
    with tf.Session() as sess, pytest.raises(Exception, match="max_output_size must be non-neg"):
        sess.run(out, {size: -1})


def test_crop_and_resize_and_its_gradients_match_tensorflow():
    _compare(_run(image_programs.crop_program), REFERENCE["crop_program"], atol=1e-5)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_crop_and_resize_matches_tensorflow_live():
    want = run_in_tensorflow([("r", image_programs.crop_program, {})])["r"]
    _compare(_run(image_programs.crop_program), want, atol=1e-5)


def test_crop_and_resize_shapes_and_errors():
    image = tf.placeholder(tf.float32, [2, 5, 6, 3])
    crops = tf.image.crop_and_resize(image, [[0, 0, 1, 1]], box_indices=[1], crop_size=[4, 2])
    assert crops.shape.as_list() == [1, 4, 2, 3] and crops.dtype == tf.float32
    with pytest.raises(ValueError, match="needs box_ind"):
        tf.image.crop_and_resize(image, [[0, 0, 1, 1]], crop_size=[2, 2])
    with pytest.raises(ValueError, match="method must be 'bilinear' or 'nearest'"):
        tf.image.crop_and_resize(image, [[0, 0, 1, 1]], [0], [2, 2], method="bicubic")
    with pytest.raises(ValueError, match="same number of boxes"):
        tf.image.crop_and_resize(image, [[0, 0, 1, 1]], [0, 1], [2, 2])
    with pytest.raises(ValueError, match="crop_size must be positive"):
        tf.image.crop_and_resize(image, [[0, 0, 1, 1]], [0], [0, 2])
    bad = tf.image.crop_and_resize(image, [[0, 0, 1, 1]], [2], [2, 2])
    with tf.Session() as sess, pytest.raises(Exception, match=r"box_ind has values outside \[0, 2\)"):
        sess.run(bad, {image: np.zeros((2, 5, 6, 3), np.float32)})
