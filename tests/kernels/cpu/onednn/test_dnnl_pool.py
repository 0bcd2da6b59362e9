"""graphflow.kernels.cpu.onednn.dnnl_pool: oneDNN's MaxPoolGrad gives the numpy reference kernel's values
(conv_kernels.py with oneDNN and numba off) on every MaxPoolGrad op case (in float32) and on larger
inputs with tied maxima (the gradient goes to the first maximum of a window), -inf windows,
padding, strides, overlapping windows, NCHW, 1 and 2 threads with blocks of images; other dtypes
keep the other kernels. Skipped where the optional oneDNN library (onednn-cpu-gomp) is not
installed."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu import TABLE
from graphflow.kernels.cpu.onednn import dnnl, dnnl_pool
from tests.op_cases import nn_cases, run_build
from tests.tooling import required

pytestmark = pytest.mark.skipif(
    dnnl.library() is None and not required("onednn"),
    reason="oneDNN is not installed (onednn-cpu-gomp) or GRAPHFLOW_NO_DNNL=1; CI provides it")

LIBRARY = dnnl.library()
GRAD_CASES = [c for c in nn_cases.CASES if c.op_type == "MaxPoolGrad"]


def _run(build, inputs, onednn, monkeypatch, threads=1):
    """oneDNN (the compiled loops excluded), or the numpy reference kernel instead."""
    calls = []
    real = dnnl_pool.max_pool_grad
    monkeypatch.setattr(dnnl_pool, "max_pool_grad", lambda *a: calls.append(1) or real(*a))
    with TABLE.restricted_to({"onednn"} if onednn else ()):
        values = run_build(build, inputs, threads)
    assert bool(calls) == onednn, "oneDNN's MaxPoolGrad ran" if calls else "it did not run"
    return values


def test_max_pool_grad_cases_exist():
    assert len(GRAD_CASES) >= 3


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c.name for c in GRAD_CASES])
def test_onednn_max_pool_grad_matches_the_reference_on_the_op_cases(case, monkeypatch):
    inputs = [x.astype(np.float32) for x in case.inputs]
    got = _run(case.build, inputs, True, monkeypatch)
    want = _run(case.build, inputs, False, monkeypatch)
    np.testing.assert_array_equal(got, want)


SHAPES = [  # input (NHWC), window, strides, padding
    ((16, 28, 28, 16), (2, 2), (2, 2), "VALID"),
    ((9, 15, 13, 5), (3, 3), (2, 2), "SAME"),
    ((9, 15, 13, 5), (3, 2), (1, 2), "VALID"),
    ((7, 9, 9, 7), (3, 3), (1, 1), "SAME"),
    ((5, 11, 10, 3), (2, 2), (2, 2), "SAME"),   # odd height: a padded last row of windows
    ((5, 8, 8, 4), (1, 1), (1, 1), "VALID"),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_onednn_max_pool_grad_matches_the_reference_with_ties(shape, threads, monkeypatch):
    monkeypatch.setattr(dnnl_pool, "BLOCK_MIN_BYTES", 1)  # blocks of images
    x_shape, k, s, padding = shape
    rng = np.random.default_rng(2)
    x = np.maximum(rng.standard_normal(x_shape), 0).astype(np.float32)  # ReLU-like: many tied zeros
    x[0, :3, :3, 0] = 1.0
    x[1, :, :, 1] = -np.inf  # whole windows of -inf
    x[1, :, 2, 2] = np.float32(-3.0)

    def build(xs):
        y = tf.nn.max_pool(xs, [1, *k, 1], [1, *s, 1], padding)
        g = tf.constant(np.random.default_rng(3).standard_normal(y.shape.as_list()).astype(np.float32))
        return tf.gradients(y, [xs], grad_ys=[g])[0]
    got = _run(build, [x], True, monkeypatch, threads)
    want = _run(build, [x], False, monkeypatch)
    assert np.array_equal(got != 0, want != 0)  # the same routes, ties included
    # overlapping windows add several gradients into one input, maybe in another order
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("threads", [1, 2])
def test_onednn_max_pool_grad_nchw_matches_the_reference(threads, monkeypatch):
    monkeypatch.setattr(dnnl_pool, "BLOCK_MIN_BYTES", 1)
    x = np.random.default_rng(4).standard_normal((5, 6, 11, 12)).astype(np.float32)

    def build(xs):
        y = tf.nn.max_pool(xs, [1, 1, 3, 2], [1, 1, 2, 2], "SAME", data_format="NCHW")
        return tf.gradients(tf.reduce_sum(tf.sin(y)), [xs])[0]
    got = _run(build, [x], True, monkeypatch, threads)
    want = _run(build, [x], False, monkeypatch)
    np.testing.assert_array_equal(got, want)


def test_float64_keeps_the_other_kernels(monkeypatch):
    x = np.arange(2 * 4 * 4 * 3, dtype=np.float64).reshape(2, 4, 4, 3)

    def build(xs):
        y = tf.nn.max_pool(xs, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        return tf.gradients(tf.reduce_sum(y), [xs])[0]
    calls = []
    real = dnnl_pool.max_pool_grad
    monkeypatch.setattr(dnnl_pool, "max_pool_grad", lambda *a: calls.append(1) or real(*a))
    tf.reset_default_graph()
    xs = tf.placeholder(tf.float64, x.shape)
    with tf.Session() as sess:
        dx = sess.run(build(xs), {xs: x})
    assert calls == [] and dx.dtype == np.float64
    assert dx.sum() == 2 * 2 * 2 * 3 and np.all(dx[:, 1::2, 1::2, :] == 1)  # each window's last
