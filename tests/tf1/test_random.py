"""Tests for graphflow.tf1.random (`tf.random.*`): the aliases draw what the TF1 names draw, and
`set_seed` / `set_random_seed` set the graph seed that makes programs repeatable."""

import numpy as np

import graphflow as tf


def _draw(seed_fn):
    tf.reset_default_graph()
    seed_fn(11)
    ops = [tf.random.normal([200], mean=1.0, stddev=2.0), tf.random.uniform([200], -1.0, 3.0),
           tf.random.truncated_normal([200], stddev=0.5)]
    with tf.Session() as sess:
        return sess.run(ops)


def test_aliases_and_seeds():
    assert tf.random.normal is tf.random_normal
    normal, uniform, truncated = _draw(tf.random.set_seed)
    again = _draw(tf.random.set_random_seed)
    for a, b in zip((normal, uniform, truncated), again):
        np.testing.assert_array_equal(a, b)
    assert tf.get_default_graph().seed == 11
    assert abs(normal.mean() - 1.0) < 0.4 and 1.6 < normal.std() < 2.4
    assert uniform.min() >= -1.0 and uniform.max() < 3.0
    assert np.abs(truncated).max() <= 1.0
    assert tf.random.get_seed(None)[0] == 11
