"""Tests for graphflow.tf1.checkpoint_utils: list_variables, load_variable, load_checkpoint and
init_from_checkpoint on checkpoints written by tf.train.Saver."""

import numpy as np
import pytest

import graphflow as tf

W = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.array([0.5, -1.5], np.float64)


@pytest.fixture
def checkpoint_dir(tmp_path):
    with tf.Graph().as_default():
        with tf.variable_scope("old"):
            tf.get_variable("w", initializer=W)
            tf.get_variable("b", initializer=B)
        step = tf.train.get_or_create_global_step()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign(step, 7))
            tf.train.Saver().save(sess, str(tmp_path / "model"), global_step=7)
    return tmp_path


def test_list_and_load_variables(checkpoint_dir):
    assert tf.train.list_variables(str(checkpoint_dir)) == [
        ("global_step", []), ("old/b", [2]), ("old/w", [2, 3])]
    np.testing.assert_array_equal(tf.train.load_variable(str(checkpoint_dir), "old/w:0"), W)
    reader = tf.train.load_checkpoint(str(checkpoint_dir / "model-7"))
    assert reader.has_tensor("old/b") and not reader.has_tensor("old/x")
    assert reader.get_variable_to_dtype_map()["old/b"] == tf.float64
    assert int(reader.get_tensor("global_step")) == 7
    with pytest.raises(ValueError, match="not found"):
        reader.get_tensor("old/x")
    (checkpoint_dir / "empty").mkdir()
    with pytest.raises(ValueError, match="Couldn't find"):
        tf.train.list_variables(str(checkpoint_dir / "empty"))
    with pytest.raises(ValueError, match="Failed to find"):
        tf.train.list_variables(str(checkpoint_dir / "model-8"))


def test_init_from_checkpoint_by_scope_and_by_name(checkpoint_dir):
    with tf.Graph().as_default():
        with tf.variable_scope("new"):
            w = tf.get_variable("w", [2, 3])
            b = tf.get_variable("b", [2], dtype=tf.float64)
        other = tf.Variable(tf.zeros([2, 3]), name="other")
        untouched = tf.Variable([3.0], name="untouched")
        tf.train.init_from_checkpoint(str(checkpoint_dir), {"old/": "new/"})
        tf.train.init_from_checkpoint(str(checkpoint_dir), {"old/w": other})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run([w, b, other, untouched])
    np.testing.assert_array_equal(values[0], W)
    np.testing.assert_array_equal(values[1], B)
    np.testing.assert_array_equal(values[2], W)
    np.testing.assert_array_equal(values[3], [3.0])


def test_init_from_checkpoint_errors(checkpoint_dir):
    with tf.Graph().as_default():
        v = tf.Variable(tf.zeros([3]), name="v")
        with pytest.raises(ValueError, match="doesn't match"):
            tf.train.init_from_checkpoint(str(checkpoint_dir), {"old/w": v})
        with pytest.raises(ValueError, match="is not found"):
            tf.train.init_from_checkpoint(str(checkpoint_dir), {"old/missing": v})
        with pytest.raises(ValueError, match="should map to scope"):
            tf.train.init_from_checkpoint(str(checkpoint_dir), {"old/w": "nothing/"})
