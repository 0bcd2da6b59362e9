"""Hostile GraphDefs: the reader follows docs/security.md (size before parse, protobuf faults as
GraphFormatError naming the file, limits before allocation, cycles, dangling inputs, duplicate
names, attrs of wrong types), and a fuzzer over the fixtures' .pb files finds no unexpected
outcome in at least 3,000 mutants."""

import pathlib

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework.errors import GraphFormatError

GRAPHS = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "tensorflow" / "graphs"


def _import(graph_def, **kw):
    with tf.Graph().as_default():
        return tf.import_graph_def(graph_def, **kw)


def _graph(*nodes):
    from graphflow.fileformat import tf_protos as pb
    g = pb.GraphDef()
    for name, op, inputs in nodes:
        g.node.add(name=name, op=op, input=inputs)
    return g


def _const(g, name, value):
    from graphflow.interop.tensorflow import tensor_protos as tp
    node = g.node.add(name=name, op="Const")
    proto = tp.from_array(value)
    node.attr["value"].tensor.CopyFrom(proto)
    node.attr["dtype"].type = proto.dtype
    return node


def test_structural_faults():
    with pytest.raises(GraphFormatError, match="cycle"):
        _import(_graph(("a", "Identity", ["b"]), ("b", "Identity", ["a"])))
    with pytest.raises(GraphFormatError, match="no node 'ghost'"):
        _import(_graph(("a", "Identity", ["ghost:0"])))
    with pytest.raises(GraphFormatError, match="duplicate node name 'a'"):
        _import(_graph(("a", "NoOp", []), ("a", "NoOp", [])))
    with pytest.raises(GraphFormatError, match="malformed input"):
        _import(_graph(("a", "NoOp", []), ("b", "Identity", ["a:x"])))
    with pytest.raises(GraphFormatError, match="not a valid TensorFlow name"):
        _import(_graph(("bad name", "NoOp", [])))


def test_attr_faults_name_the_node():
    g = _graph()
    node = _const(g, "c", np.ones(3, np.float32))
    node.attr["value"].i = 3
    with pytest.raises(GraphFormatError, match="node 'c' \\(Const\\): attr 'value' holds a int"):
        _import(g)
    g = _graph()
    _const(g, "c", np.ones(3, np.float32))
    x = g.node.add(name="m", op="MatMul", input=["c", "c"])
    x.attr["T"].type = 1
    x.attr["transpose_a"].s = b"yes"
    with pytest.raises(GraphFormatError, match="node 'm'.*transpose_a"):
        _import(g)
    g = _graph()
    _const(g, "c", np.ones(3, np.float32))
    g.node.add(name="m", op="MatMul", input=["c", "c"])
    with pytest.raises(GraphFormatError, match="node 'm'.*required attr 'T'"):
        _import(g)


def test_tensor_limits_before_allocation():
    from graphflow.interop.tensorflow import tensor_protos as tp
    g = _graph()
    node = _const(g, "c", np.float32(1))
    node.attr["value"].tensor.tensor_shape.CopyFrom(tp.shape_proto((2**20, 2**20)))
    assert len(g.SerializeToString()) <= 64
    with pytest.raises(GraphFormatError, match="node 'c'.*limit"):
        _import(g)


def test_file_faults_name_the_file(tmp_path):
    from graphflow.interop.tensorflow.graph_io import read_graph_def
    from graphflow.interop.tensorflow.tensor_protos import Limits
    bad = tmp_path / "bad.pb"
    bad.write_bytes(b"\xff\xff\xff\xff garbage")
    with pytest.raises(GraphFormatError, match="bad.pb: not a binary GraphDef"):
        read_graph_def(bad)
    text = tmp_path / "bad.pbtxt"
    text.write_text("node { name: ")
    with pytest.raises(GraphFormatError, match="bad.pbtxt: not a text GraphDef"):
        read_graph_def(text)
    big = tmp_path / "big.pb"
    big.write_bytes(b"\0" * 2000)
    with pytest.raises(GraphFormatError, match="big.pb. is 2000 bytes, more than the limit"):
        read_graph_def(big, limits=Limits(max_file_bytes=1000))
    deep = tmp_path / "deep.pb"  # nested AttrValue lists of functions: protobuf's recursion limit
    deep.write_bytes(b"\x0a\x02" * 0 + _nested(200))
    try:
        read_graph_def(deep)
    except GraphFormatError as exc:
        assert "deep.pb" in str(exc)


def _nested(depth):
    """A GraphDef whose library nests NameAttrList -> AttrValue -> NameAttrList `depth` deep."""
    from graphflow.fileformat import tf_protos as pb
    g = pb.GraphDef()
    node = g.node.add(name="a", op="NoOp")
    av = node.attr["x"]
    for _ in range(depth):
        av = av.func.attr["y"]
    av.i = 1
    return g.SerializeToString()


def test_fuzzed_fixtures(fuzz_share):
    from tests.interop.tensorflow.graph_def_fuzzing import fuzz
    counts = fuzz([GRAPHS / "cnn.pb", GRAPHS / "control_v2.pb", GRAPHS / "control_v1.pb",
                   GRAPHS / "nested_v1.pb"], per_file=1650, seed=0, share=fuzz_share)
    assert counts["total"] >= 6000 * fuzz_share
    assert counts["unexpected"] == 0, counts["examples"]
