"""graphflow's `.meta` + checkpoints and SavedModel directories read by TensorFlow itself, and
TensorFlow's read by graphflow, in both directions, equal to 1e-6. Runs where GRAPHFLOW_TF_PYTHON
names a Python with TensorFlow (tests/tf_reference.py); skips otherwise."""

import numpy as np
import pytest

import graphflow as tf
from tests import tf_reference

pytestmark = pytest.mark.skipif(tf_reference.tf_python() is None,
                                reason="TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON)")

FEED = np.random.RandomState(5).randn(4, 6).astype(np.float32)


def _graphflow_model():
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    w = tf.Variable(np.linspace(-1, 1, 24, dtype=np.float32).reshape(6, 4), name="w")
    b = tf.Variable(np.float32([0.1, -0.2, 0.3, 0.0]), name="b")
    h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b), name="h")
    probs = tf.nn.softmax(h, name="probs")
    return x, probs, tf.argmax(h, 1, name="classes")


def tf_restore_meta(tf, np, prefix, feed):
    feed = np.asarray(feed, np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        saver.restore(sess, prefix)
        return {"probs": sess.run("probs:0", {"x:0": feed}),
                "n_trainable": len(tf.trainable_variables()),
                "predictions": sess.run(tf.get_collection("predictions")[0], {"x:0": feed})}


def tf_load_saved_model(tf, np, export_dir, feed):
    feed = np.asarray(feed, np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        out = {}
        for key in ("serving_default", "classify"):
            sig = meta.signature_def[key]
            (info,) = sig.inputs.values()
            got = sess.run({k: v.name for k, v in sig.outputs.items()}, {info.name: feed})
            out.update({f"{key}.{k}": v for k, v in got.items()})
        return out


def tf_write_both(tf, np, directory, feed):
    feed = np.asarray(feed, np.float32)
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    w = tf.get_variable("w", [6, 3], initializer=tf.random_normal_initializer(seed=1))
    probs = tf.nn.softmax(tf.matmul(x, w), name="probs")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver().save(sess, directory + "/ckpt/model")
        tf.saved_model.simple_save(sess, directory + "/export", {"x": x}, {"p": probs})
        return {"probs": sess.run(probs, {x: feed})}


def test_graphflow_meta_and_checkpoint_restored_by_tensorflow(tmp_path):
    with tf.Graph().as_default(), tf.Session() as sess:
        x, probs, _ = _graphflow_model()
        tf.add_to_collection("predictions", probs)
        sess.run(tf.global_variables_initializer())
        prefix = tf.train.Saver().save(sess, str(tmp_path / "model"), global_step=7)
        want = sess.run(probs, {x: FEED})
    got = tf_reference.run_in_tensorflow([("r", tf_restore_meta, {"prefix": prefix,
                                                                   "feed": FEED.tolist()})])["r"]
    np.testing.assert_allclose(got["probs"], want, atol=1e-6)
    np.testing.assert_allclose(got["predictions"], want, atol=1e-6)
    assert got["n_trainable"] == 2


def test_graphflow_saved_model_loaded_by_tensorflow(tmp_path):
    export_dir = str(tmp_path / "export")
    with tf.Graph().as_default(), tf.Session() as sess:
        x, probs, classes = _graphflow_model()
        sess.run(tf.global_variables_initializer())
        info = tf.saved_model.utils.build_tensor_info
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        builder.add_meta_graph_and_variables(sess, ["serve"], {
            "serving_default": tf.saved_model.predict_signature_def({"x": x}, {"p": probs}),
            "classify": tf.saved_model.build_signature_def({"inputs": info(x)},
                                                           {"classes": info(classes)},
                                                           "tensorflow/serving/classify")})
        builder.save()
        want_p, want_c = sess.run([probs, classes], {x: FEED})
    got = tf_reference.run_in_tensorflow([("s", tf_load_saved_model, {
        "export_dir": export_dir, "feed": FEED.tolist()})])["s"]
    np.testing.assert_allclose(got["serving_default.p"], want_p, atol=1e-6)
    np.testing.assert_array_equal(got["classify.classes"], want_c)


def test_tensorflow_meta_and_saved_model_read_by_graphflow(tmp_path):
    want = tf_reference.run_in_tensorflow([("w", tf_write_both, {
        "directory": str(tmp_path), "feed": FEED.tolist()})])["w"]["probs"]
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(str(tmp_path / "ckpt" / "model.meta"))
        saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path / "ckpt")))
        np.testing.assert_allclose(sess.run("probs:0", {"x:0": FEED}), want, atol=1e-6)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "export"))
        sig = meta.signature_def["serving_default"]
        got = sess.run(sig.outputs["p"].name, {sig.inputs["x"].name: FEED})
        np.testing.assert_allclose(got, want, atol=1e-6)
