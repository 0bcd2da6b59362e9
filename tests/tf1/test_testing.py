"""graphflow.tf1.testing (`tf.test`): a TF1-style test case runs on its own fresh graph with its
session helpers and assertions, and compute_gradient(_error) finds a correct gradient accurate and
a wrong one off."""

import unittest

import numpy as np

import graphflow as tf


class _SquareTest(tf.test.TestCase):
    def test_square(self):
        with self.test_session():
            x = tf.constant([1.0, 2.0, 3.0])
            self.assertAllClose(tf.square(x), [1.0, 4.0, 9.0])
            self.assertAllEqual(self.evaluate(tf.shape(x)), [3])
            self.assertAllInRange(x, 1.0, 3.0)
            self.assertShapeEqual(np.zeros(3), x)

    def test_gradient(self):
        with self.cached_session():
            x = tf.placeholder(tf.float64, [2, 3])
            y = tf.reduce_sum(tf.tanh(x) * 2.0, axis=1)
            error = tf.test.compute_gradient_error(x, [2, 3], y, [2],
                                                   x_init_value=np.linspace(-1, 1, 6).reshape(2, 3))
            self.assertLess(error, 1e-6)

    def test_each_test_gets_a_fresh_graph(self):
        self.assertEqual(tf.get_default_graph().num_ops(), 0)
        tf.constant(1.0)


def test_the_test_case_runs_under_unittest():
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(_SquareTest)
    result = unittest.TextTestRunner(verbosity=0).run(suite)
    assert result.wasSuccessful(), result.failures + result.errors
    assert result.testsRun == 3


def test_compute_gradient_finds_a_wrong_gradient():
    @tf.RegisterGradient("WrongSquareGradient_testing")
    def _wrong(op, grad):
        return grad * op.inputs[0]  # should be 2x

    x = tf.placeholder(tf.float64, [3])
    with tf.get_default_graph().gradient_override_map({"Square": "WrongSquareGradient_testing"}):
        y = tf.square(x)
    with tf.Session() as sess, sess.as_default():
        theoretical, numerical = tf.test.compute_gradient(x, [3], y, [3],
                                                          x_init_value=np.array([1.0, 2.0, 3.0]))
        error = tf.test.compute_gradient_error(x, [3], y, [3],
                                               x_init_value=np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(np.diag(numerical), [2.0, 4.0, 6.0], rtol=1e-6)
    np.testing.assert_allclose(np.diag(theoretical), [1.0, 2.0, 3.0])
    assert abs(error - 3.0) < 1e-6
    assert tf.test.is_built_with_cuda() and tf.test.is_gpu_available() in (True, False)
