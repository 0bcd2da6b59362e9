"""A training flag the signature cannot feed is fixed to its default when a graph is saved or
exported to ONNX: dropout's random numbers, batch normalization's batch statistics and a tf.cond's
train branch leave the file, the user's graph stays as built, and a flag listed among the inputs
stays feedable."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.fileformat.signature_graph import fixed_defaults, inference_graph
from graphflow.framework.graph import needed_ops

TRAINING_ONLY = {"RandomUniform", "If", "Select", "Mean", "SquaredDifference", "PlaceholderWithDefault"}


def _model():
    """x [None, 4, 4, 2] -> fused batch norm (a tf.cond on the flag) -> dense -> batch norm over
    axis 1 (moments and tf.where) -> dropout (tf.where) -> a tf.cond of our own on the flag."""
    x = tf.placeholder(tf.float32, [None, 4, 4, 2], name="x")
    training = tf.placeholder_with_default(False, [], name="training")
    h = tf.layers.batch_normalization(x, training=training)           # 4-D: fused, a cond
    h = tf.layers.dense(tf.layers.flatten(h), 6, activation=tf.nn.relu)
    h = tf.layers.batch_normalization(h, training=training)           # 2-D: moments, where
    h = tf.layers.dropout(h, rate=0.5, training=training)
    y = tf.cond(training, lambda: h * 2.0, lambda: h + 1.0)
    return x, training, tf.identity(y, name="y")


def _compute_ops(inputs, outputs):
    fed = set(inputs.values())
    return needed_ops([t.op for t in outputs.values()], fed)


@pytest.fixture
def trained(rng):
    x, training, y = _model()
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    images = rng.standard_normal((5, 4, 4, 2)).astype(np.float32)
    update = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    for _ in range(3):  # moving statistics away from their initial values
        sess.run(update, {x: images, training: True})
    yield x, training, y, sess, images
    sess.close()


def test_save_folds_the_flag_and_leaves_the_users_graph_alone(trained, tmp_path):
    x, training, y, sess, images = trained
    graph = tf.get_default_graph()
    before = [(op.name, op.type, [t.name for t in op.inputs]) for op in graph.get_operations()]
    want = sess.run(y, {x: images})
    path = str(tmp_path / "m.gfz")
    tf.save(path, {"x": x}, {"y": y}, session=sess)
    assert [(op.name, op.type, [t.name for t in op.inputs]) for op in graph.get_operations()] \
        == before
    assert [op.name for op in fixed_defaults({"x": x}, {"y": y})] == ["training"]
    with tf.load(path) as model:
        types = {op.type for op in _compute_ops(model.inputs, model.outputs)}
        names = {op.name for op in model.graph.get_operations()}
        got = model.run({"x": images})["y"]
    assert not types & TRAINING_ONLY, types
    assert "training" not in names
    assert not [n for n in names if n.startswith("dropout")]
    assert "FusedBatchNorm" in types
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_a_flag_among_the_inputs_stays_feedable(trained, tmp_path):
    x, training, y, sess, images = trained
    path = str(tmp_path / "m.gfz")
    tf.save(path, {"x": x, "training": training}, {"y": y}, session=sess)
    want_infer = sess.run(y, {x: images})
    with tf.load(path) as model:
        assert model.graph.get_operation_by_name("training").type == "PlaceholderWithDefault"
        assert "RandomUniform" in {op.type for op in _compute_ops({"x": model.inputs["x"]},
                                                                   model.outputs)}
        np.testing.assert_array_equal(model.run({"x": images})["y"], want_infer)
        train_out = model.run({"x": images, "training": True})["y"]
    assert (train_out == 0).any()  # dropout ran: the cond took its train branch (h * 2)


def test_inference_false_saves_the_graph_as_built(trained, tmp_path):
    x, training, y, sess, images = trained
    path = str(tmp_path / "m.gfz")
    tf.save(path, {"x": x}, {"y": y}, session=sess, inference=False)
    with tf.load(path) as model:
        types = {op.type for op in _compute_ops(model.inputs, model.outputs)}
        np.testing.assert_array_equal(model.run({"x": images})["y"], sess.run(y, {x: images}))
    assert {"RandomUniform", "If", "Select", "PlaceholderWithDefault"} <= types


def test_inference_graph_is_a_copy_and_none_without_a_fixed_flag(trained):
    x, training, y, sess, images = trained
    assert inference_graph({"x": x, "training": training}, {"y": y}) is None
    inferred = inference_graph({"x": x}, {"y": y})
    assert inferred.folded == ["training"]
    assert inferred.graph is not tf.get_default_graph()
    assert list(inferred.inputs) == ["x"] and inferred.outputs["y"].name == "y:0"
    with tf.Session(graph=inferred.graph) as copy_sess:
        copy_sess.set_variable_values(sess.variable_values())
        np.testing.assert_allclose(copy_sess.run(inferred.outputs["y"],
                                                 {inferred.inputs["x"]: images}),
                                   sess.run(y, {x: images}), rtol=1e-6, atol=1e-6)


def test_a_flag_without_a_build_time_default_is_left_as_it_is(tmp_path):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    flag_source = tf.placeholder(tf.bool, [], name="flag_source")
    flag = tf.placeholder_with_default(flag_source, [], name="flag")
    y = tf.where(flag, x * 2.0, x)
    assert [op.name for op in fixed_defaults({"x": x}, {"y": y})] == ["flag"]
    assert inference_graph({"x": x}, {"y": y}) is None


def test_onnx_export_folds_the_flag(trained, tmp_path):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from graphflow.interop import onnx as gf_onnx
    x, training, y, sess, images = trained
    graph = tf.get_default_graph()
    ops_before = graph.num_ops()
    path = str(tmp_path / "m.onnx")
    gf_onnx.export({"y": y}, path, inputs={"x": x}, session=sess)
    assert graph.num_ops() == ops_before
    got = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(
        None, {"x": images})[0]
    np.testing.assert_allclose(got, sess.run(y, {x: images}), rtol=1e-5, atol=1e-6)
