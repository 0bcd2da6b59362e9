"""GradientTape (graphflow/engine/tape.py): the registered gradient rules replayed eagerly."""

import numpy as np
import pytest

import graphflow as tf


def test_watch_persistent_and_structures(eager):
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = tf.sin(y)
    assert tape.gradient(y, x).numpy() == 6.0
    dz = tape.gradient(z, {"x": x, "y": y})
    np.testing.assert_allclose(dz["x"].numpy(), np.cos(9.0) * 6.0, rtol=1e-6)
    np.testing.assert_allclose(dz["y"].numpy(), np.cos(9.0), rtol=1e-6)


def test_non_persistent_tape_gives_one_gradient(eager):
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="only be called once"):
        tape.gradient(y, x)


def test_nested_tapes_give_second_derivatives(eager):
    x = tf.constant(3.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy = inner.gradient(y, x)
    assert dy.numpy() == 27.0
    assert outer.gradient(dy, x).numpy() == 18.0


def test_trainable_variables_are_watched_and_unconnected_ones_give_none_or_zero(eager):
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    frozen = tf.Variable(1.0, trainable=False)
    unused = tf.Variable(5.0)
    with tf.GradientTape(persistent=True) as tape:
        loss = tf.reduce_sum(w * frozen)
    assert tape.watched_variables() == (w,)
    gw, gf, gu = tape.gradient(loss, [w, frozen, unused])
    np.testing.assert_array_equal(gw.numpy(), np.ones((2, 2), np.float32))
    assert gf is None and gu is None
    assert tape.gradient(loss, unused, unconnected_gradients="zero").numpy() == 0.0


def test_watch_accessed_variables_off_and_stop_recording(eager):
    w = tf.Variable(2.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        y = w * w
    assert tape.gradient(y, w) is None
    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x * 2.0
    assert tape.gradient(y, x) is None


def test_output_gradients_and_a_gradient_without_rule(eager):
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * 3.0
    g = tape.gradient(y, x, output_gradients=tf.constant([1.0, 10.0]))
    np.testing.assert_array_equal(g.numpy(), [3.0, 30.0])


def test_tape_in_graph_mode_is_tf_gradients():
    x = tf.placeholder(tf.float32, [])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x)
    with tf.Session() as sess:
        assert sess.run(g, {x: 3.0}) == 6.0


def test_optimizers_minimize_a_loss_function(eager):
    w = tf.Variable([1.0, -2.0])
    opt = tf.train.GradientDescentOptimizer(0.25)
    for _ in range(3):
        opt.minimize(lambda: tf.reduce_sum(w * w))
    np.testing.assert_allclose(w.numpy(), [0.125, -0.25])
    with pytest.raises(RuntimeError, match="should be a function"):
        opt.minimize(tf.reduce_sum(w * w))
    adam = tf.train.AdamOptimizer(0.1)
    grads_and_vars = adam.compute_gradients(lambda: tf.reduce_sum(w * w))
    adam.apply_gradients(grads_and_vars)
    assert len(adam.variables()) == 4  # m, v and the two beta powers
