"""graphflow.kernels.cpu.reference.avg_pool_kernels: the numpy AvgPool/AvgPoolGrad kernels (the reference of
the compiled loops) divide each window's sum by its number of in-bounds elements under SAME
padding (TF's rule), checked against sums written out by hand, NHWC and NCHW, and AvgPoolGrad is
AvgPool's adjoint (<AvgPool(x), g> == <x, AvgPoolGrad(g)>)."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu import TABLE
from graphflow.ops import conv_ops


@pytest.fixture(autouse=True)
def _numpy_kernels():
    with TABLE.restricted_to():  # the reference kernels only
        yield


def _run(fetch, feed):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_same_padding_divides_by_the_in_bounds_count(data_format):
    tf.reset_default_graph()
    x = np.arange(1, 10, dtype=np.float64).reshape(1, 3, 3, 1)  # [[1 2 3] [4 5 6] [7 8 9]]
    feed_x = x if data_format == "NHWC" else x.transpose(0, 3, 1, 2)
    xs = tf.placeholder(tf.float64, feed_x.shape)
    window = [1, 2, 2, 1] if data_format == "NHWC" else [1, 1, 2, 2]
    y = _run(tf.nn.avg_pool(xs, window, window, "SAME", data_format=data_format), {xs: feed_x})
    y = y if data_format == "NHWC" else y.transpose(0, 2, 3, 1)
    want = [[(1 + 2 + 4 + 5) / 4, (3 + 6) / 2], [(7 + 8) / 2, 9 / 1]]
    np.testing.assert_array_equal(y[0, :, :, 0], want)


@pytest.mark.parametrize("shape, k, s, padding", [((2, 7, 6, 3), (3, 3), (2, 2), "SAME"),
                                                  ((2, 7, 6, 3), (2, 3), (1, 2), "VALID")])
def test_gradient_is_the_adjoint(shape, k, s, padding):
    tf.reset_default_graph()
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    xs = tf.placeholder(tf.float64, shape)
    kw = dict(ksize=[1, *k, 1], strides=[1, *s, 1], padding=padding)
    y = tf.nn.avg_pool(xs, **kw)
    g = rng.standard_normal(y.shape.as_list())
    gs = tf.placeholder(tf.float64, g.shape)
    yv, dx = _run([y, conv_ops.avg_pool_grad(list(shape), gs, **kw)], {xs: x, gs: g})
    np.testing.assert_allclose(np.vdot(yv, g), np.vdot(x, dx), rtol=1e-12)
