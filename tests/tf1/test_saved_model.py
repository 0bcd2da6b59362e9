"""graphflow.tf1.saved_model (`tf.saved_model`): a model exported with simple_save or the builder
(TensorFlow's SavedModel layout) and loaded with loader.load into a fresh graph and session, as
TF1 serving code did, gives the same outputs; tags, existing directories and damaged files are
clear errors; directories older graphflow versions wrote (saved_model.json + .gfz) still load."""

import json
import os

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework.errors import GraphFormatError


def _train_and_export(export_dir, use_builder=False):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
        y = tf.nn.softmax(tf.matmul(x, w), name="probs")
        sess = tf.Session(graph=graph)
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign_add(w, tf.ones_like(w)))  # values that differ from the initializer
        if use_builder:
            builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
            sig = tf.saved_model.signature_def_utils.predict_signature_def(
                inputs={"images": x}, outputs={"scores": y})
            builder.add_meta_graph_and_variables(
                sess, [tf.saved_model.tag_constants.SERVING],
                signature_def_map={"predict": sig})
            builder.add_meta_graph(["extra"])
            builder.save()
        else:
            tf.saved_model.simple_save(sess, export_dir, inputs={"x": x}, outputs={"y": y})
        feed = np.array([[1.0, 0.5, -1.0]], np.float32)
        return feed, sess.run(y, {x: feed})


def test_simple_save_then_loader_load_in_a_fresh_session(tmp_path):
    export_dir = str(tmp_path / "model" / "1")
    feed, want = _train_and_export(export_dir)
    assert tf.saved_model.loader.maybe_saved_model_directory(export_dir)
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export_dir)
        sig = meta.signature_def[tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        assert sig.method_name == tf.saved_model.signature_constants.PREDICT_METHOD_NAME
        assert sig.inputs["x"].name == "x:0"
        assert [d.size for d in sig.inputs["x"].tensor_shape.dim] == [-1, 3]
        assert sorted(os.listdir(export_dir)) == ["saved_model.pb", "variables"]
        x = sess.graph.get_tensor_by_name(sig.inputs["x"].name)
        y = sess.graph.get_tensor_by_name(sig.outputs["y"].name)
        np.testing.assert_allclose(sess.run(y, {x: feed}), want, rtol=1e-6)


def test_builder_with_tags_and_import_scope(tmp_path):
    export_dir = str(tmp_path / "built")
    feed, want = _train_and_export(export_dir, use_builder=True)
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir, import_scope="served")
        sig = meta.signature_def["predict"]  # TensorFlow's names, without the scope (as TF)
        assert sig.inputs["images"].name == "x:0"
        got = sess.run("served/" + sig.outputs["scores"].name,
                       {"served/" + sig.inputs["images"].name: feed})
        np.testing.assert_allclose(got, want, rtol=1e-6)
    with tf.Session(graph=tf.Graph()) as sess:
        assert tf.saved_model.loader.load(sess, ["extra"], export_dir).signature_def == {}
    with tf.Session(graph=tf.Graph()) as sess, \
            pytest.raises(RuntimeError, match=r"tags \['train'\] could not be found"):
        tf.saved_model.loader.load(sess, ["train"], export_dir)


def test_an_existing_export_directory_is_refused(tmp_path):
    export_dir = str(tmp_path / "exists")
    os.makedirs(export_dir)
    with pytest.raises(AssertionError, match="Export directory already exists"):
        tf.saved_model.builder.SavedModelBuilder(export_dir)


@pytest.mark.parametrize("content", [b"not a proto \xff", b"\x12\xff\xff\xff\x0f",
                                     b'meta_graphs { meta_info_def { tags: "serve" } '
                                     b'signature_def { key: "s" value { inputs { key: "x" value '
                                     b'{ name: "nowhere:0" } } } } }'])
def test_damaged_saved_model_is_a_graph_format_error(tmp_path, content):
    export_dir = str(tmp_path / "m")
    _train_and_export(export_dir)
    with open(os.path.join(export_dir, "saved_model.pb"), "wb") as f:
        f.write(content)
    with tf.Session(graph=tf.Graph()) as sess, pytest.raises(GraphFormatError):
        tf.saved_model.loader.load(sess, ["serve"], export_dir)


def _old_layout(export_dir):
    """A directory as graphflow wrote it before TensorFlow's layout: saved_model.gfz (graph and
    values) and saved_model.json (tags and signatures)."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
        y = tf.nn.softmax(tf.matmul(x, w), name="probs")
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            os.makedirs(export_dir)
            tf.save(os.path.join(export_dir, "saved_model.gfz"), session=sess)
            feed = np.array([[1.0, 0.5, -1.0]], np.float32)
            want = sess.run(y, {x: feed})
    entry = {"name": "x:0", "dtype": "float32", "shape": [None, 3]}
    doc = {"format": "graphflow-saved-model", "version": 1, "meta_graphs": [{
        "tags": ["serve"], "signature_def": {"serving_default": {
            "inputs": {"x": entry}, "outputs": {"y": dict(entry, name="probs:0", shape=[None, 2])},
            "method_name": "tensorflow/serving/predict"}}}]}
    with open(os.path.join(export_dir, "saved_model.json"), "w") as f:
        json.dump(doc, f)
    return feed, want, doc


def test_directories_of_older_graphflow_versions_still_load(tmp_path):
    export_dir = str(tmp_path / "old")
    feed, want, _ = _old_layout(export_dir)
    assert tf.saved_model.loader.maybe_saved_model_directory(export_dir)
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        sig = meta.signature_def["serving_default"]
        got = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: feed})
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("content", [b"not json", b'{"format": "other"}',
                                     json.dumps({"format": "graphflow-saved-model", "version": 1,
                                                 "meta_graphs": [{"tags": ["serve"],
                                                                  "signature_def": {"s": {
                                                                      "inputs": {"x": {"name": 3}}}}}]
                                                 }).encode()])
def test_damaged_metadata_of_the_old_layout_is_a_graph_format_error(tmp_path, content):
    export_dir = str(tmp_path / "m")
    _old_layout(export_dir)
    with open(os.path.join(export_dir, "saved_model.json"), "wb") as f:
        f.write(content)
    with tf.Session(graph=tf.Graph()) as sess, pytest.raises(GraphFormatError):
        tf.saved_model.loader.load(sess, ["serve"], export_dir)
