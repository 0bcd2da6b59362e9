"""graphflow.tf1.initialization: report_uninitialized_variables names exactly the variables not
yet initialized; tables_initializer runs; AggregationMethod is accepted by tf.gradients."""

import numpy as np

import graphflow as tf


def test_report_uninitialized_variables_as_a_restore_check_uses_it():
    a = tf.Variable(1.0, name="a")
    tf.Variable([2.0, 3.0], name="b")
    report = tf.report_uninitialized_variables()
    with tf.Session() as sess:
        assert sorted(sess.run(report).tolist()) == [b"a", b"b"]
        sess.run(a.initializer)
        assert sess.run(report).tolist() == [b"b"]
        sess.run(tf.global_variables_initializer())
        assert sess.run(report).shape == (0,)
        sess.run(tf.tables_initializer())
    x = tf.placeholder(tf.float64, [2])
    g, = tf.gradients(x * x + x, x, aggregation_method=tf.AggregationMethod.EXPERIMENTAL_TREE)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: [1.0, 2.0]}), [3.0, 5.0])
