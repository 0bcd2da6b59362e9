"""graphflow.kernels.cpu.math_kernels: Sum over leading or trailing axes of large float arrays runs as
a product with a vector of ones and gives numpy's reduction (within rounding) with the same shape,
keepdims and negative axes included; other reductions keep numpy's reduce."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu import math_kernels


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [(0, 1, 2), [0], 0, (-1,), (2, 3), (1, 2, 3), (0, 2), None, (1,)])
def test_sum_matches_numpy(axis, keepdims, dtype):
    x = np.random.default_rng(0).standard_normal((16, 14, 12, 10)).astype(dtype)
    xs = tf.placeholder(tf.as_dtype(dtype), x.shape)
    with tf.Session() as sess:
        got = sess.run(tf.reduce_sum(xs, axis=axis, keepdims=keepdims), {xs: x})
    want = np.sum(x.astype(np.float64), axis=tuple(axis) if isinstance(axis, list) else axis,
                  keepdims=keepdims)
    assert got.shape == want.shape and got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-3)


def test_which_sums_are_products():
    x = np.ones((64, 28, 28, 16), np.float32)
    f32 = np.dtype(np.float32)
    assert math_kernels._sum_as_product(x, (0, 1, 2), False, f32).shape == (16,)
    assert math_kernels._sum_as_product(x, (-1,), True, f32).shape == (64, 28, 28, 1)
    assert math_kernels._sum_as_product(x, (0, 2), False, f32) is None          # not contiguous axes
    assert math_kernels._sum_as_product(x[:, ::2], (0,), False, f32) is None     # strided input
    assert math_kernels._sum_as_product(x[:2, :2], (0,), False, f32) is None     # small
    assert math_kernels._sum_as_product(x.astype(np.int32), (0,), False, np.dtype(np.int32)) is None
    np.testing.assert_array_equal(math_kernels._sum_as_product(x, (0, 1, 2), False, f32),
                                  np.full(16, 64 * 28 * 28, np.float32))
