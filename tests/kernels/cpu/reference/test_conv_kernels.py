"""CPU pooling kernels on inputs with tied window maxima (ReLU outputs are mostly zeros): the gradient
goes to the first maximum of each window in row-major order, as TF1's CPU kernel routes it."""

import numpy as np
import pytest

import graphflow as tf


def _first_max_grad(x, g, k):
    n, h, w, c = x.shape
    dx = np.zeros_like(x)
    for b in range(n):
        for i in range(h // k):
            for j in range(w // k):
                for ch in range(c):
                    window = x[b, i * k:(i + 1) * k, j * k:(j + 1) * k, ch]
                    r, s = np.unravel_index(np.argmax(window), window.shape)  # first maximum
                    dx[b, i * k + r, j * k + s, ch] += g[b, i, j, ch]
    return dx


@pytest.mark.parametrize("k", [2, 3])
def test_max_pool_grad_routes_ties_to_the_first_maximum(k):
    rng = np.random.default_rng(3)
    x = np.maximum(rng.standard_normal((2, 6, 6, 3)), 0).astype(np.float32)  # many all-zero windows
    x[0, :k, :k, 0] = 1.0                                                      # a window of equal maxima
    xs = tf.placeholder(tf.float32, x.shape)
    y = tf.nn.max_pool(xs, [1, k, k, 1], [1, k, k, 1], "VALID")
    g = rng.standard_normal((2, 6 // k, 6 // k, 3)).astype(np.float32)
    (dx,) = tf.gradients(y, [xs], grad_ys=[tf.constant(g)])
    with tf.Session() as sess:
        got = sess.run(dx, {xs: x})
    np.testing.assert_array_equal(got, _first_max_grad(x, g, k))
