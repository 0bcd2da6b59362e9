"""Tests for graphflow/tf1/image_metrics.py: total_variation, image_gradients, sobel_edges, psnr,
ssim and ssim_multiscale against TensorFlow 2.21's numbers (tests/tf1/image_reference.json;
compared live with GRAPHFLOW_TF_PYTHON set), their gradients and errors."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1 import image_programs
from tests.tf1.test_image_color import _compare, _run
from tests.tf_reference import run_in_tensorflow, tf_python

REFERENCE = image_programs.load_reference()


def test_measures_match_tensorflow():
    _compare(_run(image_programs.metrics_program), REFERENCE["metrics_program"], atol=2e-5)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_measures_match_tensorflow_live():
    want = run_in_tensorflow([(None, image_programs._images, None),
                              ("r", image_programs.metrics_program, {})])["r"]
    _compare(_run(image_programs.metrics_program), want, atol=2e-5)


def test_ssim_of_an_image_with_itself_is_one_and_its_gradient_flows():
    rng = np.random.default_rng(1)
    a = rng.random((1, 12, 12, 2)).astype(np.float32)
    x = tf.placeholder(tf.float32, [1, 12, 12, 2])
    same = tf.image.ssim(a, a, 1.0)
    loss = 1.0 - tf.image.ssim(x, a * 0.5, 1.0)[0]
    tv = tf.image.total_variation(x)
    (g, gtv) = tf.gradients([loss], [x])[0], tf.gradients(tv, x)[0]
    with tf.Session() as sess:
        s, grad, grad_tv = sess.run([same, g, gtv], {x: a})
    np.testing.assert_allclose(s, [1.0], rtol=1e-5)
    assert np.isfinite(grad).all() and np.abs(grad).sum() > 0
    assert set(np.unique(grad_tv)) <= {-4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0}


def test_measure_errors():
    with pytest.raises(ValueError, match="total_variation: 'images' must be either 3 or 4"):
        tf.image.total_variation(np.zeros((3, 3), np.float32))
    with pytest.raises(ValueError, match="image_gradients expects a 4D tensor"):
        tf.image.image_gradients(np.zeros((3, 3, 1), np.float32))
    with pytest.raises(ValueError, match="sobel_edges"):
        tf.image.sobel_edges(np.zeros((3, 3, 1), np.float32))
    with pytest.raises(ValueError, match="at least filter_size"):
        tf.image.ssim(np.zeros((5, 5, 1), np.float32), np.zeros((5, 5, 1), np.float32), 1.0)
