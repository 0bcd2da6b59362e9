"""Tests for graphflow.tf1.checkpoint_utils: list_variables, load_variable, load_checkpoint and
init_from_checkpoint on checkpoints written by tf.train.Saver."""

import os

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


# ------------------------------------------------------------------ TensorFlow's checkpoints
FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "tensorflow",
                        "checkpoints")


def _expected(name):
    with np.load(os.path.join(FIXTURES, "expected.npz")) as npz:
        return {k.partition("/")[2]: npz[k] for k in npz.files if k.startswith(name + "/")}


def test_readers_on_tensorflows_checkpoints():
    mlp = _expected("mlp")
    listed = tf.train.list_variables(os.path.join(FIXTURES, "mlp"))
    assert [n for n, _ in listed] == sorted(k for k in mlp if not k.startswith(":"))
    assert dict(listed)["dense/kernel/Adam_1"] == [4, 16]
    reader = tf.train.NewCheckpointReader(os.path.join(FIXTURES, "mlp", "model-2"))
    assert reader.get_variable_to_dtype_map()["global_step"] == tf.int64
    assert int(reader.get_tensor("global_step")) == 2
    assert b"dense/kernel (float) [4,16]\n" in reader.debug_string()
    assert b"global_step (int64) []\n" in reader.debug_string()
    parts = _expected("partitioned")
    reader = tf.train.load_checkpoint(os.path.join(FIXTURES, "partitioned"))
    assert reader.get_variable_to_shape_map() == {"emb": [10, 4], "scope/big": [7, 3],
                                                  "whole": [5]}
    np.testing.assert_array_equal(reader.get_tensor("emb"), parts["emb"])
    np.testing.assert_array_equal(tf.train.load_variable(os.path.join(FIXTURES, "partitioned"),
                                                         "scope/big:0"), parts["scope/big"])
    sharded = tf.train.load_checkpoint(os.path.join(FIXTURES, "sharded"))
    assert sharded.get_tensor("flags").tolist() == [True, False, True]
    assert tf.train.load_variable(os.path.join(FIXTURES, "dtypes"), "word") == b"graph"


def test_init_from_checkpoint_forms_on_a_tensorflow_checkpoint():
    mlp = _expected("mlp")
    path = os.path.join(FIXTURES, "mlp")
    with tf.Graph().as_default():
        with tf.variable_scope("new"):
            k = tf.get_variable("kernel", [4, 16])
            b = tf.get_variable("bias", [16])
        with tf.variable_scope("other"):
            k2 = tf.get_variable("kernel", [16, 3])
        with tf.variable_scope("root"):
            step = tf.get_variable("global_step", [], tf.int64)
            beta = tf.get_variable("beta1_power", [])
        direct = tf.Variable(tf.zeros([3]), name="direct")
        named = tf.Variable(tf.zeros([3]), name="named")
        tf.train.init_from_checkpoint(path, {"dense/": "new/"})
        tf.train.init_from_checkpoint(path, [("dense_1/kernel", "other/kernel"),
                                             ("dense_1/bias", direct)])
        tf.train.init_from_checkpoint(path, {"dense_1/bias": "named"})
        tf.train.init_from_checkpoint(path, {"/": "root/"})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run([k, b, k2, direct, named, step, beta])
        with pytest.raises(ValueError, match="Tensor dense/missing \\(missing in dense/\\) is "
                                             "not found"):
            tf.get_variable("new/missing", [1])
            tf.train.init_from_checkpoint(path, {"dense/": "new/"})
        with pytest.raises(ValueError, match="should map to scope only"):
            tf.train.init_from_checkpoint(path, {"dense/kernel": "not_a_variable/"})
    for value, name in zip(got, ["dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias",
                                 "dense_1/bias", "global_step", "beta1_power"], strict=True):
        np.testing.assert_array_equal(value, mlp[name])


def test_readers_on_an_older_npz_checkpoint(tmp_path):
    from graphflow.fileformat import file_io
    with file_io.atomic_write(tmp_path / "old.npz") as f:
        file_io.write_npz(f, {"old/w": W, "old/b": B})
    prefix = str(tmp_path / "old")
    assert tf.train.list_variables(prefix) == [("old/b", [2]), ("old/w", [2, 3])]
    with tf.Graph().as_default():
        with tf.variable_scope("new"):
            w = tf.get_variable("w", [2, 3])
        tf.train.init_from_checkpoint(prefix, {"old/": "new/"})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(w), W)
