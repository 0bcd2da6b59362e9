"""TensorFlow's `.meta` + checkpoint and SavedModel directories, read from files TensorFlow 2.21
wrote (tests/fixtures/tensorflow/, made by make_saved_models.py, with TensorFlow's outputs) and
written by graphflow and read back, without TensorFlow: the "restore and continue training" and
"restore and predict" tutorials, three signatures and an asset, and `graphflow run/inspect` on a
SavedModel directory and a frozen `.pb`."""

import io
import os
import pathlib

import numpy as np
import pytest

import graphflow as tf
from graphflow.fileformat import tf_protos as pb
from graphflow.tools import cli

FIXTURES = pathlib.Path(__file__).parents[2] / "fixtures" / "tensorflow"
META_DIR = FIXTURES / "meta"
SAVED_MODEL = FIXTURES / "saved_model" / "two_heads"


def test_tensorflow_meta_restore_and_continue_training():
    expected = np.load(META_DIR / "expected.npz")
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(str(META_DIR / "mlp-20.meta"))
        saver.restore(sess, str(META_DIR / "mlp-20"))
        assert len(tf.trainable_variables()) == 4 and len(tf.global_variables()) == 15
        assert saver.saver_def.restore_op_name == "save/restore_all"
        train_op = tf.get_collection("train_op")[0]
        feeds = {"x:0": expected["x"], "labels:0": expected["labels"]}
        np.testing.assert_allclose(sess.run("probs:0", feeds), expected["probs"], atol=1e-5)
        losses = [sess.run([train_op, "loss:0"], feeds)[1] for _ in range(5)]
        np.testing.assert_allclose(losses, expected["continued_losses"], atol=1e-5)
        assert losses[-1] < losses[0]
        np.testing.assert_allclose(sess.run("probs:0", feeds), expected["probs_after"], atol=1e-5)
        assert sess.run("global_step:0") == 25
        assert tf.get_collection("predictions")[0].name == "probs:0"


def test_tensorflow_meta_under_an_import_scope():
    expected = np.load(META_DIR / "expected.npz")
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(str(META_DIR / "mlp-20.meta"), import_scope="m")
        saver.restore(sess, str(META_DIR / "mlp-20"))
        got = sess.run("m/probs:0", {"m/x:0": expected["x"]})
        np.testing.assert_allclose(got, expected["probs"], atol=1e-5)


def _inference_graph():
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    w = tf.Variable(np.linspace(-1, 1, 18, dtype=np.float32).reshape(6, 3), name="w")
    b = tf.Variable(np.float32([0.1, -0.2, 0.3]), name="b")
    probs = tf.nn.softmax(tf.nn.bias_add(tf.matmul(x, w), b), name="probs")
    return x, probs


def test_graphflow_meta_graph_round_trip(tmp_path):
    feed = np.random.RandomState(0).randn(4, 6).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        x, probs = _inference_graph()
        tf.add_to_collection("predictions", probs)
        tf.add_to_collection("sizes", 3)
        sess.run(tf.global_variables_initializer())
        prefix = tf.train.Saver().save(sess, str(tmp_path / "m"))
        want = sess.run(probs, {x: feed})
    meta = pb.MetaGraphDef.FromString((tmp_path / "m.meta").read_bytes())
    assert meta.saver_def.filename_tensor_name == "save/Const:0"
    assert {"save/SaveV2", "save/RestoreV2", "save/restore_all"} <= {n.name for n in
                                                                     meta.graph_def.node}
    assert list(meta.collection_def["sizes"].int64_list.value) == [3]
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        saver.restore(sess, prefix)
        np.testing.assert_allclose(sess.run("probs:0", {"x:0": feed}), want, atol=1e-6)
        assert tf.get_collection("sizes") == [3]
        assert [v.name for v in tf.trainable_variables()] == ["w:0", "b:0"]


def test_older_graphflow_meta_files_still_import(tmp_path):
    with tf.Graph().as_default():
        x, probs = _inference_graph()
        tf.save(str(tmp_path / "old.meta"))  # what graphflow wrote as .meta before
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(str(tmp_path / "old.meta"))
        assert saver is not None
        sess.run(tf.global_variables_initializer())
        assert sess.run("probs:0", {"x:0": np.zeros((1, 6), np.float32)}).shape == (1, 3)


def test_tensorflow_saved_model_three_signatures_and_an_asset():
    expected = np.load(FIXTURES / "saved_model" / "saved_model_expected.npz")
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(SAVED_MODEL))
        assert sorted(meta.signature_def) == ["classify", "regress", "serving_default"]
        runs = {"serving_default": {"probabilities": "probs"},
                "classify": {"classes": "classes", "scores": "scores"},
                "regress": {"outputs": "value"}}
        for key, outputs in runs.items():
            sig = meta.signature_def[key]
            (info,) = sig.inputs.values()
            got = sess.run({k: sig.outputs[k].name for k in outputs}, {info.name: expected["x"]})
            for k, name in outputs.items():
                np.testing.assert_allclose(got[k], expected[name], atol=1e-5)
        assert sess.run("counter:0") == 7  # the legacy init op ran, with the asset path fed


def test_graphflow_saved_model_round_trip(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n")
    feed = np.random.RandomState(1).randn(3, 6).astype(np.float32)
    export_dir = str(tmp_path / "export")
    with tf.Graph().as_default(), tf.Session() as sess:
        x, probs = _inference_graph()
        asset = tf.constant(str(vocab), name="vocab")
        sess.run(tf.global_variables_initializer())
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        builder.add_meta_graph_and_variables(
            sess, ["serve"], {"serving_default": tf.saved_model.predict_signature_def(
                {"x": x}, {"p": probs})}, assets_collection=[asset])
        builder.add_meta_graph(["extra"])
        builder.save(as_text=True)
        want = sess.run(probs, {x: feed})
    assert sorted(os.listdir(export_dir)) == ["assets", "saved_model.pbtxt", "variables"]
    assert os.listdir(os.path.join(export_dir, "assets")) == ["vocab.txt"]
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        assert meta.asset_file_def[0].filename == "vocab.txt"
        sig = meta.signature_def["serving_default"]
        got = sess.run(sig.outputs["p"].name, {sig.inputs["x"].name: feed})
        np.testing.assert_allclose(got, want, atol=1e-6)
    with pytest.raises(AssertionError, match="already exists"):
        tf.saved_model.builder.SavedModelBuilder(export_dir)
    assert not [n for n in os.listdir(tmp_path) if ".tmp-" in n]


def _cli(*argv):
    out = io.StringIO()
    assert cli.main(list(argv), out=out) == 0
    return out.getvalue()


def test_cli_on_a_saved_model_directory_and_a_frozen_graph(tmp_path):
    expected = np.load(FIXTURES / "saved_model" / "saved_model_expected.npz")
    np.save(tmp_path / "x.npy", expected["x"])
    text = _cli("inspect", str(SAVED_MODEL), "--brief")
    assert "signature 'serving_default'" in text and "probabilities: float32 [?, 3]" in text
    _cli("run", str(SAVED_MODEL), "--signature", "classify", "--input",
         f"inputs={tmp_path / 'x.npy'}", "--output", str(tmp_path / "out.npz"))
    with np.load(tmp_path / "out.npz") as got:
        np.testing.assert_allclose(got["scores"], expected["scores"], atol=1e-5)
        np.testing.assert_array_equal(got["classes"], expected["classes"])
    meta = np.load(META_DIR / "expected.npz")
    np.save(tmp_path / "m.npy", meta["x"])
    text = _cli("run", str(META_DIR / "frozen.pb"), "--input", f"x={tmp_path / 'm.npy'}",
                "--output", str(tmp_path / "p.npz"))
    assert "outputs chosen as the ops no other op uses: probs" in text
    with np.load(tmp_path / "p.npz") as got:
        np.testing.assert_allclose(got["probs"], meta["probs"], atol=1e-5)
    assert cli.main(["run", str(SAVED_MODEL), "--tag-set", "train"], out=io.StringIO()) == 2
