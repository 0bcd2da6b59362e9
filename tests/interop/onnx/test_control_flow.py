"""Control flow through ONNX: tf.cond exports as ONNX If and tf.while_loop as Loop (sub-graphs,
captured outer values, loop-carried variables, maximum_iterations as the trip count); the models
pass the full checker, run in onnxruntime with graphflow's numbers, and import back as graphflow
If/While ops with the same numbers. ONNX Loop (with scan outputs) and Scan import as While
(Scan-8, with its batch axis, as one While per batch element)."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import graphflow as tf
from graphflow.interop import onnx as gf_onnx


def _op_types(graph_proto):
    return [n.op_type for n in graph_proto.node]


def _check_everywhere(outputs, inputs, feed_values, session=None):
    """Export, check, run in onnxruntime and import back; all equal to graphflow's outputs."""
    model = gf_onnx.build_model(outputs, inputs=inputs, session=session)
    onnx.checker.check_model(model, full_check=True)
    sess = session or tf.Session()
    want = sess.run(list(outputs.values()), {inputs[k]: v for k, v in feed_values.items()})
    runner = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = runner.run(list(outputs), feed_values)
    imported = gf_onnx.import_model(model)
    back = imported.run(feed_values)
    for name, w, g in zip(outputs, want, got):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-9, err_msg=f"{name} in onnxruntime")
        np.testing.assert_allclose(back[name], w, rtol=1e-6, atol=1e-9, err_msg=f"{name} imported")
    return model, imported


@pytest.mark.parametrize("value", [[1.0, -2.0, 3.0], [-1.0, -2.0, 0.5]], ids=["then", "else"])
def test_cond_exports_as_if_with_captured_values(value):
    x = tf.placeholder(tf.float32, [3], name="x")
    scale = tf.constant(3.0)
    y, z = tf.cond(tf.reduce_sum(x) > 0, lambda: (x * scale, tf.reduce_max(x)),
                   lambda: (x - scale, tf.reduce_min(x)))
    model, imported = _check_everywhere({"y": y, "z": z}, {"x": x},
                                        {"x": np.array(value, np.float32)})
    assert "If" in _op_types(model.graph)
    assert "If" in {op.type for op in imported.graph.get_operations()}


def test_while_loop_with_data_dependent_trip_count_exports_as_loop():
    x = tf.placeholder(tf.float64, [None], name="x")
    limit = tf.placeholder(tf.float64, [], name="limit")

    def body(i, total, v):  # doubles v until its sum passes the limit: trip count from the data
        return i + 1, total + tf.reduce_sum(v), v * 2.0

    i, total, v = tf.while_loop(lambda i, total, v: tf.reduce_sum(v) < limit, body,
                                (tf.constant(0), tf.constant(0.0, tf.float64), x))
    outputs = {"i": i, "total": total, "v": v}
    for lim in (1.0, 100.0, 1e6):
        model, imported = _check_everywhere(outputs, {"x": x, "limit": limit},
                                            {"x": np.array([0.5, 0.25]), "limit": np.array(lim)})
    assert "Loop" in _op_types(model.graph)
    assert "While" in {op.type for op in imported.graph.get_operations()}
    assert imported.run({"x": np.array([0.5, 0.25]), "limit": np.array(1e6)})["i"] == 21


def test_maximum_iterations_is_the_trip_count_and_nested_cond_in_the_body():
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    n = tf.placeholder(tf.int32, [], name="n")
    w = tf.constant([[0.5, -1.0], [1.0, 0.5]], tf.float32)

    def body(i, h):
        h = tf.matmul(h, w)
        h = tf.cond(tf.reduce_sum(h) > 0, lambda: tf.tanh(h), lambda: h * 0.5)
        return i + 1, h

    _, h = tf.while_loop(lambda i, h: i < 1000, body, (tf.constant(0), x), maximum_iterations=n)
    feeds = {"x": np.array([[1, 2], [3, -4]], np.float32)}
    for steps in (0, 1, 5):
        model, _ = _check_everywhere({"h": h}, {"x": x, "n": n}, dict(feeds, n=np.array(steps, np.int32)))
    loop = next(node for node in model.graph.node if node.op_type == "Loop")
    assert loop.input[0], "maximum_iterations must be the Loop's trip count M"
    body = helper.get_attribute_value(loop.attribute[0])
    assert "If" in _op_types(body)


def test_variables_read_in_a_loop_are_frozen():
    x = tf.placeholder(tf.float32, [3], name="x")
    v = tf.Variable([1.0, 2.0, 3.0], name="v")
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * v), (tf.constant(0), x))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        _check_everywhere({"y": y}, {"x": x}, {"x": np.array([1.0, 1.0, 2.0], np.float32)}, sess)


def test_map_fn_needs_tensor_arrays_which_do_not_export():
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    y = tf.map_fn(lambda row: row * 2.0, x)
    with pytest.raises(gf_onnx.ExportError, match="TensorArray"):
        gf_onnx.build_model({"y": y}, inputs={"x": x})


def test_onnx_loop_with_scan_outputs_imports_as_while():
    """Loop(M, cond, acc): acc += i each iteration, the running acc is also a scan output."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["acc_in", "i_f"], ["acc_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("scan", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["m", "", "a0"], ["a", "trace"], body=body)], "g",
        [helper.make_tensor_value_info("m", TensorProto.INT64, []),
         helper.make_tensor_value_info("a0", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("trace", TensorProto.FLOAT, [None, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    feeds = {"m": np.array(4, np.int64), "a0": np.array([1.0, 10.0], np.float32)}
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    got = gf_onnx.import_model(model).run(feeds)
    np.testing.assert_allclose(got["a"], want[0])
    np.testing.assert_allclose(got["trace"], want[1])
    assert got["trace"].shape == (4, 2)


def test_a_saved_file_with_a_loop_and_a_nested_cond_exports_from_the_command_line(tmp_path):
    """A graph read from a .gfz file knows its functions' captures only by position in the op's
    inputs; the export must wire them from there."""
    from graphflow.tools.cli import main
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    scale = tf.constant(2.0)

    def body(i, y):
        return i + 1, tf.cond(i > 1, lambda: y * scale, lambda: y + 1.0)

    _, y = tf.while_loop(lambda i, y: tf.reduce_sum(y) < 50.0, body, (tf.constant(0), x))
    feed = np.ones((2, 3), np.float32)
    with tf.Session() as sess:
        want = sess.run(y, {x: feed})
        tf.save(tmp_path / "loop.gfz", inputs={"x": x}, outputs={"y": y}, session=sess)
    assert main(["export-onnx", str(tmp_path / "loop.gfz"), str(tmp_path / "loop.onnx")]) == 0
    model = onnx.load(str(tmp_path / "loop.onnx"))
    onnx.checker.check_model(model, full_check=True)
    runner = ort.InferenceSession(str(tmp_path / "loop.onnx"), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(runner.run(None, {"x": feed})[0], want)
    np.testing.assert_allclose(gf_onnx.import_model(model).run({"x": feed})["y"], want)


def test_gradient_of_the_preview_training_domain_is_tf_gradients():
    nodes = [helper.make_node("Mul", ["a", "b"], ["c"]),
             helper.make_node("Add", ["c", "a"], ["d"]),
             helper.make_node("Gradient", ["a", "b"], ["da", "db"], domain="ai.onnx.preview.training",
                              xs=["a", "b"], y="d"),
             helper.make_node("Gradient", ["a", "b"], ["da_z", "db_z"],
                              domain="ai.onnx.preview.training", xs=["a", "b"], zs=["c"], y="d")]
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ("a", "b")]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
            for n in ("d", "da", "db", "da_z", "db_z")]
    model = helper.make_model(helper.make_graph(nodes, "g", vi, outs), opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.preview.training", 1)])
    a, b = np.array([1.0, 2.0], np.float32), np.array([3.0, -4.0], np.float32)
    got = gf_onnx.import_model(model).run({"a": a, "b": b})
    np.testing.assert_allclose(got["da"], b + 1)  # d = a * b + a
    np.testing.assert_allclose(got["db"], a)
    np.testing.assert_allclose(got["da_z"], [1.0, 1.0])  # c held constant: only the '+ a' path
    np.testing.assert_allclose(got["db_z"], [0.0, 0.0])  # b reaches d only through c
    late = helper.make_model(helper.make_graph(
        [nodes[2], nodes[0], nodes[1]], "g", vi, outs[:3]), opset_imports=model.opset_import)
    with pytest.raises(gf_onnx.OnnxImportError, match="no earlier node"):
        gf_onnx.import_model(late)


@pytest.mark.parametrize("direction", [0, 1])
def test_scan_8_runs_one_scan_per_batch_element(direction):
    """Scan-8 (a batch axis first): running sums of each batch element's sequence."""
    f = TensorProto.FLOAT
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y_t"])], "body",
        [helper.make_tensor_value_info("s_in", f, [2]), helper.make_tensor_value_info("x_t", f, [2])],
        [helper.make_tensor_value_info("s_out", f, [2]), helper.make_tensor_value_info("y_t", f, [2])])
    node = helper.make_node("Scan", ["", "init", "x"], ["final", "ys"], body=body,
                            num_scan_inputs=1, directions=[direction])
    graph = helper.make_graph(
        [node], "scan8", [helper.make_tensor_value_info("init", f, [3, 2]),
                          helper.make_tensor_value_info("x", f, [3, 4, 2])],
        [helper.make_tensor_value_info("final", f, [3, 2]),
         helper.make_tensor_value_info("ys", f, [3, 4, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])
    rng = np.random.default_rng(7)
    init = rng.standard_normal((3, 2)).astype(np.float32)
    x = rng.standard_normal((3, 4, 2)).astype(np.float32)
    got = gf_onnx.import_model(model).run({"init": init, "x": x})
    steps = x[:, ::-1] if direction else x
    want = init[:, None] + np.cumsum(steps, axis=1)
    np.testing.assert_allclose(got["ys"], want, rtol=1e-6)
    np.testing.assert_allclose(got["final"], want[:, -1], rtol=1e-6)
