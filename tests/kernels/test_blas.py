"""graphflow.kernels.cpu.blas: products split over the intra-op pool give numpy's values, BLAS is pinned to
one thread, and the conv kernels computed in blocks on several threads match one thread."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu import blas


@pytest.mark.parametrize("shape", [(512, 300, 256), (64, 1000, 700), (700, 64, 100), (3, 5, 7)])
def test_split_matmul_matches_numpy(shape, rng):
    m, k, n = shape
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    np.testing.assert_allclose(blas.matmul(a, b, threads=3), a @ b, rtol=1e-5, atol=1e-4)
    # strided (transposed) operands, as MatMul(transpose_a/b) hands them over
    np.testing.assert_allclose(blas.matmul(b.T, a.T, threads=2), (a @ b).T, rtol=1e-5, atol=1e-4)


def test_blas_is_pinned_to_one_thread():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    assert blas.owns_blas_threads()
    infos = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    assert infos and all(i["num_threads"] == 1 for i in infos)


def _conv_step(threads, rng, stride):
    x = rng.standard_normal((16, 20, 20, 8)).astype(np.float32)
    w = rng.standard_normal((3, 3, 8, 32)).astype(np.float32)
    xs = tf.placeholder(tf.float32, x.shape)
    ws = tf.constant(w)
    y = tf.nn.conv2d(xs, ws, strides=[1, stride, stride, 1], padding="SAME")
    loss = tf.reduce_sum(y * y)
    gx, gw = tf.gradients(loss, [xs, ws])
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    with tf.Session(config=config) as sess:
        return sess.run([y, gx, gw], {xs: x})


@pytest.mark.parametrize("stride", [1, 2])  # 1: flipped-filter input gradient, 2: col2im
def test_conv_on_several_threads_matches_one_thread(stride):
    one = _conv_step(1, np.random.default_rng(1), stride)
    tf.reset_default_graph()
    many = _conv_step(4, np.random.default_rng(1), stride)
    for a, b in zip(one, many):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3)
