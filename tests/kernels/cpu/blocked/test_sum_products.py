"""graphflow.kernels.cpu.blocked.sum_products: Sum and Mean over leading, trailing or consecutive
middle axes of large float arrays run as products with a vector of ones ("ones_product"), chosen
when the plan is built, and give numpy's reduction within rounding with the same shape, keepdims
and negative axes included; the Mean is that sum divided by the count."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import KernelNode, SessionState
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.blocked import sum_products

SHAPE = (16, 14, 12, 10)
PRODUCT_AXES = [(0, 1, 2), [0], 0, (-1,), (2, 3), (1, 2, 3), (1,), (1, 2)]


def _choice(tensor):
    return cpu_kernels.TABLE.choose(KernelNode.describing(tensor.op, SessionState())).name


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", PRODUCT_AXES + [(0, 2), None])
def test_sum_matches_numpy(axis, keepdims, dtype):
    x = np.random.default_rng(0).standard_normal(SHAPE).astype(dtype)
    xs = tf.placeholder(tf.as_dtype(dtype), x.shape)
    total = tf.reduce_sum(xs, axis=axis, keepdims=keepdims)
    assert _choice(total) == ("ones_product" if axis in PRODUCT_AXES else "reference")
    with tf.Session() as sess:
        got = sess.run(total, {xs: x})
    want = np.sum(x.astype(np.float64), axis=tuple(axis) if isinstance(axis, list) else axis,
                  keepdims=keepdims)
    assert got.shape == want.shape and got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [(0, 1, 2), (-1,), (2, 3), (0, 2), None, (1,)])
def test_mean_matches_numpy(axis, keepdims, dtype):
    x = np.random.default_rng(1).standard_normal(SHAPE).astype(dtype) + 3
    xs = tf.placeholder(tf.as_dtype(dtype), x.shape)
    mean = tf.reduce_mean(xs, axis=axis, keepdims=keepdims)
    products = axis in ((0, 1, 2), (-1,), (2, 3), (1,))  # leading, trailing or middle axes
    assert _choice(mean) == ("ones_product" if products else "reference")
    with tf.Session() as sess:
        got = sess.run(mean, {xs: x})
    want = np.mean(x.astype(np.float64), axis=axis, keepdims=keepdims)
    assert got.shape == want.shape and got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-13)


def test_which_sums_are_products():
    def choice(shape, axis, dtype=tf.float32):
        return _choice(tf.reduce_sum(tf.placeholder(dtype, shape), axis=axis))
    assert choice((64, 28, 28, 16), (0, 1, 2)) == "ones_product"
    assert choice((64, 28, 28, 16), (1, 2)) == "ones_product"   # middle axes
    assert choice((64, 28, 28, 16), (0, 2)) == "reference"      # not consecutive axes
    assert choice((2, 2, 28, 16), (0,)) == "reference"          # small
    assert choice((64, 28, 28, 16), (0,), tf.int32) == "reference"
    assert choice((None, 28, 28, 16), (0,)) == "by-shape"       # chosen per the run's shapes
    with cpu_kernels.TABLE.restricted_to():
        assert choice((64, 28, 28, 16), (0, 1, 2)) == "reference"


def test_strided_inputs_and_exact_values():
    x = np.ones((64, 28, 28, 16), np.float32)
    np.testing.assert_array_equal(sum_products.sum_as_product(x, (0, 1, 2), False),
                                  np.full(16, 64 * 28 * 28, np.float32))
    np.testing.assert_array_equal(sum_products.sum_as_product(x, (2, 1), True),
                                  np.full((64, 1, 1, 16), 28 * 28, np.float32))
    strided = np.random.default_rng(2).standard_normal((64, 56, 28, 16)).astype(np.float32)[:, ::2]
    np.testing.assert_allclose(sum_products.sum_as_product(strided, (0,), False),
                               strided.sum(axis=0), rtol=1e-5, atol=1e-4)
