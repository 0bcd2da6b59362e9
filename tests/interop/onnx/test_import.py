"""graphflow.interop.onnx import: an exported model imported back gives the same numbers, imported
graphs can be differentiated and fine-tuned, and hostile files are refused."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import graphflow as tf
from graphflow.interop import onnx as gf_onnx


def _mlp(rng):
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    h = tf.layers.dense(x, 8, activation=tf.nn.relu)
    return x, tf.layers.dense(h, 3)


def test_export_then_import_round_trip_and_fine_tune(rng, tmp_path):
    x, y = _mlp(rng)
    xs = rng.standard_normal((5, 6)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        want = sess.run(y, {x: xs})
        path = gf_onnx.export({"y": y}, tmp_path / "mlp.onnx", inputs={"x": x}, session=sess)
    model = gf_onnx.import_model(path, trainable=True)
    np.testing.assert_allclose(model.run({"x": xs})["y"], want, rtol=1e-5, atol=1e-6)
    with model.graph.as_default():  # fine-tune the imported weights
        target = tf.placeholder(tf.float32, [None, 3])
        loss = tf.reduce_mean(tf.square(model.outputs["y"] - target))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=model.variables)
        model.session.run(tf.variables_initializer(tf.global_variables()[len(model.variables):]))
    feeds = {model.inputs["x"]: xs, target: np.zeros((5, 3), np.float32)}
    before = model.session.run(loss, feeds)
    for _ in range(20):
        model.session.run(train, feeds)
    assert model.session.run(loss, feeds) < 0.5 * before


def test_run_fetches_all_outputs_or_the_named_ones(rng, tmp_path):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    a, b = tf.nn.relu(x), tf.tanh(x) * 2.0
    with tf.Session() as sess:
        path = gf_onnx.export({"a": a, "b": b}, tmp_path / "two.onnx", inputs={"x": x}, session=sess)
    model = gf_onnx.import_model(path)
    xs = rng.standard_normal((3, 4)).astype(np.float32)
    for _ in range(2):  # the second run reuses the first one's fetch list
        got = model.run({"x": xs})
        assert list(got) == ["a", "b"]
        np.testing.assert_allclose(got["a"], np.maximum(xs, 0), rtol=1e-6)
        np.testing.assert_allclose(got["b"], np.tanh(xs) * 2, rtol=1e-6)
    assert list(model.run({"x": xs}, outputs=["b"])) == ["b"]
    with pytest.raises(KeyError, match=r"Unknown input\(s\) \['y'\]"):
        model.run({"y": xs})


def test_run_of_every_input_takes_the_sessions_callable_with_its_checks(rng, tmp_path):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.Session() as sess:
        path = gf_onnx.export({"a": tf.nn.relu(x)}, tmp_path / "relu.onnx", inputs={"x": x},
                              session=sess)
    model = gf_onnx.import_model(path)
    xs = rng.standard_normal((3, 4)).astype(np.float32)
    want = model.session.run(model.outputs["a"], {model.inputs["x"]: xs})
    for _ in range(3):
        np.testing.assert_array_equal(model.run({"x": xs})["a"], want)
    assert model._callable is not None  # the runs after the first took it
    with pytest.raises(ValueError, match="cannot feed a value of shape"):  # the feed checks
        model.run({"x": xs[0]})
    with pytest.raises(KeyError, match=r"Unknown input\(s\) \['y'\]"):
        model.run({"y": xs})
    with model.graph.as_default():  # a graph grown after the import: a new callable
        tf.identity(model.outputs["a"])
    np.testing.assert_array_equal(model.run({"x": xs})["a"], want)
    assert model._callable[0] == model.graph.version
    model.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        model.run({"x": xs})


def test_unsupported_ops_are_listed_at_once():
    nodes = [helper.make_node("Celu", ["x"], ["a"]), helper.make_node("Hardmax", ["a"], ["b"]),
             helper.make_node("TfIdfVectorizer", ["b"], ["c"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(gf_onnx.OnnxImportError, match="Hardmax, TfIdfVectorizer"):
        gf_onnx.import_model(model)


def _model_with_external_data(tmp_path, location):
    tensor = onnx.numpy_helper.from_array(np.ones(4, np.float32), "w")
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value=location)
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [tensor])
    path = tmp_path / "model" / "m.onnx"
    path.parent.mkdir()
    with open(path, "wb") as f:
        f.write(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    return path


@pytest.mark.parametrize("location", ["../secret.bin", "/etc/hostname", "sub/../../secret.bin"])
def test_external_data_outside_the_model_folder_is_refused(tmp_path, location):
    (tmp_path / "secret.bin").write_bytes(np.ones(4, np.float32).tobytes())
    with pytest.raises(gf_onnx.OnnxImportError, match="outside the model's folder"):
        gf_onnx.import_model(_model_with_external_data(tmp_path, location))


def test_external_data_inside_the_model_folder_loads(tmp_path):
    path = _model_with_external_data(tmp_path, "w.bin")
    (path.parent / "w.bin").write_bytes(np.full(4, 2.0, np.float32).tobytes())
    out = gf_onnx.import_model(path).run({"x": np.ones(4, np.float32)})["y"]
    np.testing.assert_array_equal(out, np.full(4, 3.0, np.float32))


def test_absurd_initializer_dims_are_refused():
    tensor = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 20, 1 << 20])
    graph = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [tensor])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(gf_onnx.OnnxImportError, match="elements"):
        gf_onnx.import_model(model)
