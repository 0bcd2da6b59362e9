"""The lecture notes' TensorFlow example, run unchanged except for `import graphflow as tf`."""

import numpy as np

import graphflow as tf


def test_seed_example_matches_numpy():
    np.random.seed(0)
    N, D = 3, 4
    x = tf.placeholder(tf.float32)
    y = tf.placeholder(tf.float32)
    z = tf.placeholder(tf.float32)
    a = x * y
    b = a + z
    c = tf.reduce_sum(b)
    xv, yv, zv = np.random.randn(N, D), np.random.randn(N, D), np.random.randn(N, D)
    with tf.Session() as sess:
        out_c, out_a = sess.run([c, a], feed_dict={x: xv, y: yv, z: zv})
    xf, yf, zf = (v.astype(np.float32) for v in (xv, yv, zv))
    np.testing.assert_allclose(out_a, xf * yf, rtol=1e-6)
    np.testing.assert_allclose(out_c, np.sum(xf * yf + zf), rtol=1e-5)
    assert out_a.dtype == np.float32
