"""GraphDef export and import within graphflow (no TensorFlow): tensor protos, round trips of
MLP/CNN/control-flow graphs, TensorFlow's import_graph_def semantics, the public names, files and
graph_util on GraphDefs, and the one error listing ops with no TensorFlow form."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework.errors import GraphFormatError


def _tp():
    from graphflow.interop.tensorflow import tensor_protos
    return tensor_protos


@pytest.mark.parametrize("value", [
    np.float32(2.5), np.arange(6, dtype=np.float32).reshape(2, 3), np.arange(5, dtype=np.float16),
    np.array([1, -2], np.int8), np.array([3], np.uint16), np.arange(4, dtype=np.int64),
    np.array([2**40], np.uint64), np.array([True, False]), np.array([1 + 2j], np.complex64),
    np.array([[1 - 1j, 2j]], np.complex128), np.array([b"a", b"bc"], dtype=object),
    np.zeros((0, 3), np.float32), np.float64(-1.0), np.int32(7), np.float16(1.5)])
def test_tensor_proto_round_trip(value):
    tp = _tp()
    back = tp.to_array(tp.from_array(value))
    assert back.shape == np.shape(value)
    np.testing.assert_array_equal(back, value)


def test_tensor_proto_typed_fields_repeat_the_last_value():
    from graphflow.fileformat import tf_protos as pb
    tp = _tp()
    proto = pb.TensorProto(dtype=pb.DataType.DT_FLOAT)
    proto.tensor_shape.CopyFrom(tp.shape_proto((2, 3)))
    proto.float_val.extend([1.0, 2.0])
    np.testing.assert_array_equal(tp.to_array(proto), [[1, 2, 2], [2, 2, 2]])
    del proto.float_val[:]
    np.testing.assert_array_equal(tp.to_array(proto), np.zeros((2, 3)))
    half = pb.TensorProto(dtype=pb.DataType.DT_HALF)
    half.tensor_shape.CopyFrom(tp.shape_proto((2,)))
    half.half_val.append(int(np.float16(1.5).view(np.uint16)))
    np.testing.assert_array_equal(tp.to_array(half), np.array([1.5, 1.5], np.float16))


def test_tensor_proto_sizes_are_checked_before_allocation():
    from graphflow.fileformat import tf_protos as pb
    tp = _tp()
    proto = pb.TensorProto(dtype=pb.DataType.DT_FLOAT)
    proto.tensor_shape.CopyFrom(tp.shape_proto((2**20, 2**20)))
    proto.float_val.append(1.0)
    assert len(proto.SerializeToString()) < 30
    with pytest.raises(tp.TensorProtoError, match="limit"):
        tp.to_array(proto)
    proto.tensor_shape.CopyFrom(tp.shape_proto((4,)))
    del proto.float_val[:]
    proto.tensor_content = b"\0" * 12
    with pytest.raises(tp.TensorProtoError, match="holds 12 bytes"):
        tp.to_array(proto)
    bf16 = pb.TensorProto(dtype=pb.DataType.DT_BFLOAT16)
    with pytest.raises(tp.TensorProtoError, match="no graphflow dtype"):
        tp.to_array(bf16)


def _cnn():
    x = tf.placeholder(tf.float32, [None, 8, 8, 3], name="x")
    w = tf.Variable(np.random.RandomState(0).randn(3, 3, 3, 4).astype(np.float32), name="w")
    b = tf.Variable(np.linspace(-1, 1, 4).astype(np.float32), name="b")
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b))
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    h = tf.reshape(h, [-1, 64])
    v = tf.Variable(np.random.RandomState(1).randn(64, 3).astype(np.float32), name="v")
    logits = tf.matmul(h, v)
    probs = tf.nn.softmax(logits, name="probs")
    s = tf.reduce_sum(tf.transpose(h) * 2.0, axis=0, keepdims=True, name="s")
    return x, probs, s


def _round_trip(build, feeds_fn, outputs):
    g = tf.Graph()
    with g.as_default():
        build()
        init = tf.global_variables_initializer()
        with tf.Session() as sess:
            sess.run(init)
            expected = sess.run(outputs, feeds_fn(""))
            graph_def = sess.graph_def
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(graph_def)
        with tf.Session() as sess:
            sess.run("import/" + init.name)
            got = sess.run(["import/" + o for o in outputs], feeds_fn("import/"))
    for e, r in zip(expected, got):
        np.testing.assert_allclose(r, e, rtol=1e-6, atol=1e-6)
    return graph_def, g2


def test_cnn_round_trip():
    graph_def, _ = _round_trip(_cnn, lambda p: {p + "x:0": np.ones((2, 8, 8, 3), np.float32)},
                               ["probs:0", "s:0"])
    types = {n.op for n in graph_def.node}
    assert {"Conv2D", "VariableV2", "Assign", "Sum", "Transpose"} <= types
    assign = next(n for n in graph_def.node if n.op == "Assign")
    assert assign.input[0] == "w" and "T" in assign.attr


def test_control_flow_round_trip():
    def build():
        x = tf.placeholder(tf.float32, [3], name="x")
        c = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0)
        _, acc = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * 0.5 + c),
                               [tf.constant(0), tf.zeros([3])], maximum_iterations=3)
        tf.identity(acc, name="out")
    for sign in (1, -1):
        graph_def, _ = _round_trip(build, lambda p, s=sign: {p + "x:0": s * np.ones(3, np.float32)},
                                   ["out:0"])
    assert {"If", "While"} <= {n.op for n in graph_def.node}
    assert len(graph_def.library.function) == 4


def test_import_semantics():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        y = tf.add(x, 1.0, name="y")
        first = tf.no_op(name="first")
        with tf.control_dependencies([first]):
            tf.multiply(y, 2.0, name="z")
    graph_def = g.as_graph_def()
    z = next(n for n in graph_def.node if n.name == "z")
    assert "^first" in z.input
    with tf.Graph().as_default():
        feed = tf.constant([1.0, 2.0], name="feed")
        op, t = tf.import_graph_def(graph_def, input_map={"x:0": feed},
                                    return_elements=["z", "z:0"], name="m")
        assert op.name == "m/z" and t.name == "m/z:0"
        assert op.control_inputs[0].name == "m/first"
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(t), [4.0, 6.0])
        assert tf.import_graph_def(graph_def, name="m") is None  # a second scope: m_1
        tf.get_default_graph().get_operation_by_name("m_1/z")
        with pytest.raises(ValueError, match="not found"):
            tf.import_graph_def(graph_def, return_elements=["nope:0"])
        with pytest.raises(ValueError, match="not found in graph_def"):
            tf.import_graph_def(graph_def, input_map={"nope:0": feed})


def test_public_names_and_files(tmp_path):
    assert tf.GraphDef is tf.compat.v1.GraphDef
    g = tf.Graph()
    with g.as_default():
        tf.placeholder(tf.float32, [None, 2], name="x")
    graph_def = g.as_graph_def(add_shapes=True)
    assert "_output_shapes" in graph_def.node[0].attr
    path = tf.train.write_graph(g, str(tmp_path), "g.pbtxt")
    assert open(path).read().startswith("node {")
    binary = tf.io.write_graph(graph_def, str(tmp_path / "sub"), "g.pb", as_text=False)
    parsed = tf.GraphDef()
    parsed.ParseFromString(open(binary, "rb").read())
    assert parsed.node[0].name == "x"
    assert len(g.as_graph_def(from_version=1).node) == 0


def test_graph_util_on_graph_defs():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.eye(3, dtype=np.float32), name="w")
    tf.identity(tf.check_numerics(tf.matmul(x, w), "bad"), name="out")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        frozen = tf.graph_util.convert_variables_to_constants(sess, sess.graph_def, ["out"])
    assert isinstance(frozen, tf.GraphDef)
    assert {n.op for n in frozen.node} == {"Placeholder", "Const", "MatMul", "CheckNumerics",
                                           "Identity"}
    sub = tf.graph_util.extract_sub_graph(frozen, ["MatMul"])
    assert {n.name for n in sub.node} == {"x", "w", "MatMul"}
    slim = tf.graph_util.remove_training_nodes(frozen, protected_nodes=["out"])
    assert "CheckNumerics" not in {n.op for n in slim.node}
    with tf.Graph().as_default():
        (out,) = tf.import_graph_def(slim, return_elements=["out:0"], name="")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(out, {"x:0": [[1, 2, 3]]}), [[1, 2, 3]])
    with pytest.raises(ValueError, match="not in graph"):
        tf.graph_util.extract_sub_graph(frozen, ["nope"])


def test_unexportable_ops_are_one_error():
    from graphflow.interop.tensorflow import ExportError, export_graph_def
    g = tf.Graph()
    with g.as_default():
        from graphflow.ops.string_ops import hash_cross
        x = tf.placeholder(tf.string, [2, 1])
        hash_cross([x, x], 10, name="cross1")
        hash_cross([x, x], 10, name="cross2")
    with pytest.raises(ExportError, match=r"(?s)2 op\(s\).*HashCross 'cross1'.*HashCross 'cross2'"):
        export_graph_def(g)


def test_optimized_fused_ops_are_refused_by_name():
    from graphflow.interop.tensorflow import op_table
    assert op_table.for_export("FusedMatMul") is None
    assert "fusion" in op_table.why_unexportable("FusedConv2D")


def test_unknown_tf_ops_are_one_error():
    from graphflow.fileformat import tf_protos as pb
    graph_def = pb.GraphDef()
    graph_def.node.add(name="a", op="FancyOp")
    graph_def.node.add(name="b", op="OtherOp", input=["a"])
    with tf.Graph().as_default():
        with pytest.raises(GraphFormatError, match=r"(?s)2 node\(s\).*FancyOp, OtherOp"):
            tf.import_graph_def(graph_def)


def test_resource_variables_import():
    from graphflow.fileformat import tf_protos as pb
    from graphflow.interop.tensorflow import tensor_protos as tp
    g = pb.GraphDef()
    h = g.node.add(name="v", op="VarHandleOp")
    h.attr["dtype"].type = pb.DataType.DT_FLOAT
    h.attr["shape"].shape.CopyFrom(tp.shape_proto((2,)))
    c = g.node.add(name="init_value", op="Const")
    c.attr["value"].tensor.CopyFrom(tp.from_array(np.array([1.0, 2.0], np.float32)))
    c.attr["dtype"].type = pb.DataType.DT_FLOAT
    a = g.node.add(name="assign", op="AssignVariableOp", input=["v", "init_value"])
    a.attr["dtype"].type = pb.DataType.DT_FLOAT
    r = g.node.add(name="read", op="ReadVariableOp", input=["v"])
    r.attr["dtype"].type = pb.DataType.DT_FLOAT
    with tf.Graph().as_default():
        tf.import_graph_def(g, name="")
        with tf.Session() as sess:
            sess.run("assign")
            np.testing.assert_allclose(sess.run("read:0"), [1.0, 2.0])


def test_clear_devices_ignores_the_nodes_devices():
    from graphflow.interop.tensorflow import export_graph_def, import_graph_def
    g = tf.Graph()
    with g.as_default():
        tf.identity(tf.constant(1.0), name="out")
    graph_def = export_graph_def(g)
    for node in graph_def.node:
        node.device = "/job:worker/task:3/device:CPU:0"
    with tf.Graph().as_default() as kept:
        import_graph_def(graph_def, name="")
    assert kept.get_operation_by_name("out").device
    with tf.Graph().as_default() as cleared:
        import_graph_def(graph_def, name="", clear_devices=True)
    assert cleared.get_operation_by_name("out").device == ""
