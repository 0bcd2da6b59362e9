"""Hostile ONNX files: nested Ifs import in linear time, undefined inputs, self loops, cycles and
names defined twice are GraphFormatErrors naming the node, int64 shapes above 2**31 are not
wrapped, a truncated file is a GraphFormatError naming it (tests/interop/onnx/onnx_fuzzing.py
runs thousands of mutated files)."""

import time

import numpy as np
import pytest
from onnx import TensorProto, helper

from graphflow.framework.errors import GraphFormatError
from graphflow.interop import onnx as gf_onnx
from graphflow.interop.onnx import validate

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _leaf(name):
    return helper.make_graph([helper.make_node("Identity", ["x"], [name])], "leaf", [],
                             [helper.make_tensor_value_info(name, F, [1])])


def nested_ifs(depth):
    """An If whose then-branch is an If whose then-branch ... `depth` deep (2.4 KB at 19)."""
    branch = _leaf("y0")
    for level in range(1, depth + 1):
        node = helper.make_node("If", ["c"], [f"y{level}"], then_branch=branch,
                                else_branch=_leaf(f"e{level}"))
        branch = helper.make_graph([node], f"g{level}", [],
                                   [helper.make_tensor_value_info(f"y{level}", F, [1])])
    graph = branch
    graph.input.extend([helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                        helper.make_tensor_value_info("x", F, [1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_nested_ifs_import_in_linear_time():
    data = nested_ifs(19).SerializeToString()
    assert len(data) < 3000
    start = time.monotonic()
    model = gf_onnx.import_model(data)
    assert time.monotonic() - start < 5  # was > 20 s: each level cost ~1.5x the one inside
    x = np.array([2.5], np.float32)
    assert model.run({"c": np.array(True), "x": x})["y19"] == x
    assert model.run({"c": np.array(False), "x": x})["y19"] == x


def test_sub_graphs_nested_beyond_the_limit_are_refused():
    with pytest.raises(GraphFormatError, match="nested more than"):
        gf_onnx.import_model(nested_ifs(validate.MAX_DEPTH + 1).SerializeToString())


def _io():
    return ([helper.make_tensor_value_info("x", F, [2])],
            [helper.make_tensor_value_info("z", F, [2])])


@pytest.mark.parametrize("nodes,message", [
    ([helper.make_node("Add", ["x", "nowhere"], ["z"], name="adder")],
     "node 'adder' (Add) reads 'nowhere', which no input, initializer or earlier node defines"),
    ([helper.make_node("Add", ["x", "z"], ["z"], name="loop")],
     "node 'loop' (Add) reads 'z', its own output (a self loop)"),
    ([helper.make_node("Relu", ["b"], ["a"], name="first"),
      helper.make_node("Relu", ["a"], ["b"], name="second"),
      helper.make_node("Identity", ["b"], ["z"])],
     "node 'first' (Relu) reads 'b', which the later node 'second' defines (a cycle"),
    ([helper.make_node("Relu", ["x"], ["z"], name="one"),
      helper.make_node("Neg", ["x"], ["z"], name="two")],
     "node 'two' (Neg) defines 'z' a second time"),
    ([helper.make_node("Relu", ["x"], ["x"], name="over")],
     "node 'over' (Relu) defines 'x' a second time"),
])
def test_graphs_that_are_not_well_formed_are_refused_naming_the_node(nodes, message, tmp_path):
    path = tmp_path / "bad.onnx"
    path.write_bytes(_model(nodes, *_io()).SerializeToString())
    with pytest.raises(GraphFormatError) as info:
        gf_onnx.import_model(str(path))
    assert message in str(info.value) and str(path) in str(info.value)


def test_an_undefined_input_inside_a_branch_is_refused():
    then = helper.make_graph([helper.make_node("Neg", ["ghost"], ["t"], name="inner")], "then",
                             [], [helper.make_tensor_value_info("t", F, [2])])
    node = helper.make_node("If", ["c"], ["z"], then_branch=then, else_branch=_leaf("e"))
    inputs = [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
              helper.make_tensor_value_info("x", F, [2])]
    with pytest.raises(GraphFormatError, match="node 'inner' .*'ghost'"):
        gf_onnx.import_model(_model([node], inputs, _io()[1]).SerializeToString())


def test_an_output_nothing_defines_is_refused():
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    with pytest.raises(GraphFormatError, match="output 'z' that nothing defines"):
        gf_onnx.import_model(_model(nodes, *_io()).SerializeToString())


@pytest.mark.parametrize("op", ["ConstantOfShape", "Expand"])
def test_int64_dims_above_2_to_the_31_are_not_wrapped(op):
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [0, 2**32 + 3])
    if op == "ConstantOfShape":
        made = helper.make_node("ConstantOfShape", ["shape"], ["big"])
        inputs = []
    else:
        made = helper.make_node("Expand", ["x"], ["big"], name="expand")
        inputs = [helper.make_tensor_value_info("x", F, [1])]
        made.input.append("shape")
    nodes = [made, helper.make_node("Shape", ["big"], ["s"]),
             helper.make_node("ReduceSum", ["s"], ["total"], keepdims=0)]
    model = gf_onnx.import_model(_model(
        nodes, inputs, [helper.make_tensor_value_info("total", TensorProto.INT64, [])],
        [shape]).SerializeToString())
    feeds = {"x": np.ones(1, np.float32)} if inputs else {}
    assert model.run(feeds)["total"] == 2**32 + 3  # wrapped to int32 it was 3


def test_a_truncated_file_is_a_graph_format_error_naming_it(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["z"])]
    data = _model(nodes, *_io()).SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[:len(data) // 2])
    with pytest.raises(GraphFormatError, match=f"'{path}': not an ONNX model"):
        gf_onnx.import_model(str(path))


def test_a_tensor_whose_data_does_not_match_its_dims_is_refused():
    weights = TensorProto(name="w", data_type=F, dims=[4], raw_data=np.ones(2, np.float32).tobytes())
    nodes = [helper.make_node("Add", ["x", "w"], ["z"])]
    with pytest.raises(GraphFormatError, match="'w' holds 8 bytes for 4 elements"):
        gf_onnx.import_model(_model(nodes, *_io(), [weights]).SerializeToString())
