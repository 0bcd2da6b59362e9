"""Tests for graphflow/ops/bounding_box_ops.py: draw_bounding_boxes against TensorFlow 2.21's
images (tests/tf1/image_reference.json; compared live with GRAPHFLOW_TF_PYTHON set), and
sample_distorted_bounding_box's windows: inside the image, within the aspect-ratio and area
ranges, covering enough of a box, the same for the same op seed, the whole image when no window
qualifies, and TF1's errors."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1 import image_programs
from tests.tf1.test_image_color import _compare, _run
from tests.tf_reference import run_in_tensorflow, tf_python

REFERENCE = image_programs.load_reference()


def test_draw_bounding_boxes_matches_tensorflow():
    _compare(_run(image_programs.draw_program), REFERENCE["draw_program"], atol=0)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_draw_bounding_boxes_matches_tensorflow_live():
    want = run_in_tensorflow([("r", image_programs.draw_program, {})])["r"]
    _compare(_run(image_programs.draw_program), want, atol=0)


def _windows(seed, draws=200, **kwargs):
    with tf.Graph().as_default():
        sample = tf.image.sample_distorted_bounding_box(
            tf.constant([60, 80, 3]), [[[0.2, 0.1, 0.6, 0.5], [0.5, 0.6, 0.9, 0.95]]], seed=seed,
            **kwargs)
        with tf.Session() as sess:
            return [sess.run(sample) for _ in range(draws)]


def test_sampled_windows_satisfy_the_constraints():
    boxes = np.array([[12, 8, 36, 40], [30, 48, 54, 76]])  # (y0, x0, y1, x1) in pixels
    windows = _windows(7, min_object_covered=0.5, aspect_ratio_range=[0.5, 2.0],
                       area_range=[0.1, 0.6])
    sizes = set()
    for begin, size, bbox in windows:
        (y, x, z), (h, w, c) = begin, size
        assert z == 0 and c == -1 and y >= 0 and x >= 0 and y + h <= 60 and x + w <= 80
        assert 0.1 * 4800 <= h * w <= 0.6 * 4800 + 1e-3
        assert 0.5 - 0.05 <= w / h <= 2.0 + 0.05  # the ratio drawn, up to rounding to pixels
        covered = [max(0, min(y + h, b[2]) - max(y, b[0])) * max(0, min(x + w, b[3]) - max(x, b[1]))
                   / ((b[2] - b[0]) * (b[3] - b[1])) for b in boxes]
        assert max(covered) >= 0.5
        np.testing.assert_allclose(bbox[0, 0], [y / 60, x / 80, (y + h) / 60, (x + w) / 80],
                                   rtol=1e-6)
        sizes.add((h, w))
    assert len(sizes) > 50  # spread over the allowed windows


def test_op_seed_repeats_and_impossible_constraints_give_the_whole_image():
    a, b, c = _windows(3, draws=10), _windows(3, draws=10), _windows(4, draws=10)
    assert all(np.array_equal(x[1], y[1]) and np.array_equal(x[0], y[0]) for x, y in zip(a, b))
    assert any(not np.array_equal(x[0], y[0]) for x, y in zip(a, c))
    whole = _windows(1, draws=3, min_object_covered=1.0, area_range=[0.05, 0.06])
    for begin, size, bbox in whole:
        assert begin.tolist() == [0, 0, 0] and size.tolist() == [60, 80, -1]
        assert bbox.tolist() == [[[0.0, 0.0, 1.0, 1.0]]]


def test_sample_distorted_bounding_box_errors():
    empty = tf.image.sample_distorted_bounding_box([10, 10, 3], np.zeros((1, 0, 4), np.float32),
                                                   seed=1)
    with tf.Session() as sess, pytest.raises(Exception, match="use_image_if_no_bounding_boxes"):
        sess.run(empty)
    whole = tf.image.sample_distorted_bounding_box([10, 10, 3], np.zeros((1, 0, 4), np.float32),
                                                   seed=1, use_image_if_no_bounding_boxes=True)
    outside = tf.image.sample_distorted_bounding_box([10, 10, 3], [[[0, 0, 1.5, 1]]], seed=1)
    with tf.Session() as sess:
        begin, size, _ = sess.run(whole)
        assert size[0] * size[1] >= 0.05 * 100
        with pytest.raises(Exception, match=r"must be in \[0.0, 1.0\]"):
            sess.run(outside)
    with pytest.raises(ValueError, match="area_range must be within"):
        tf.image.sample_distorted_bounding_box([10, 10, 3], [[[0, 0, 1, 1]]], area_range=[0.1, 2])
    with pytest.raises(ValueError, match="bounding_boxes must be 3-D"):
        tf.image.sample_distorted_bounding_box([10, 10, 3], [[0, 0, 1, 1]])
    with pytest.raises(ValueError, match="depth 1, 3 or 4"):
        tf.image.draw_bounding_boxes(np.zeros((1, 4, 4, 2), np.float32), [[[0, 0, 1, 1]]])
