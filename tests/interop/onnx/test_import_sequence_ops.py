"""ONNX sequences at import: elements as graphflow tensors (positions known at import, a run-time
SequenceAt position, a run-time 1-D split), sequences through If, sequence outputs as lists, and
the clear errors for what needs run-time lengths."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from graphflow.interop import onnx as gf_onnx

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _vi(name, elem=F, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def test_insert_erase_and_a_position_fed_at_run_time():
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s1"]),
             helper.make_node("SequenceInsert", ["s1", "c", "front"], ["s2"]),  # c, a, b
             helper.make_node("SequenceErase", ["s2"], ["s3"]),  # c, a
             helper.make_node("SequenceAt", ["s3", "pos"], ["out"]),
             helper.make_node("SequenceLength", ["s3"], ["n"]),
             helper.make_node("ConcatFromSequence", ["s3"], ["stacked"], axis=0, new_axis=1)]
    model = _model(nodes, [_vi("a", shape=[2]), _vi("b", shape=[2]), _vi("c", shape=[2]),
                           _vi("pos", TensorProto.INT64, [])],
                   [_vi("out"), _vi("n", TensorProto.INT64), _vi("stacked")],
                   [helper.make_tensor("front", TensorProto.INT64, [], [0])])
    imported = gf_onnx.import_model(model)
    a, b, c = (np.array(v, np.float32) for v in ([1, 2], [3, 4], [5, 6]))
    for pos, want in ((0, c), (1, a), (-1, a), (-2, c)):
        got = imported.run({"a": a, "b": b, "c": c, "pos": np.array(pos, np.int64)})
        np.testing.assert_array_equal(got["out"], want)
        assert got["n"] == 2
        np.testing.assert_array_equal(got["stacked"], np.stack([c, a]))


def test_split_sizes_fed_at_run_time_and_a_sequence_output():
    nodes = [helper.make_node("SplitToSequence", ["x", "sizes"], ["seq"], axis=1)]
    model = _model(nodes, [_vi("x", shape=[2, 6]), _vi("sizes", TensorProto.INT64, [3])],
                   [helper.make_tensor_sequence_value_info("seq", F, None)])
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    got = gf_onnx.import_model(model).run({"x": x, "sizes": np.array([1, 3, 2], np.int64)})["seq"]
    assert [p.shape for p in got] == [(2, 1), (2, 3), (2, 2)]
    np.testing.assert_array_equal(np.concatenate(got, axis=1), x)


def test_split_without_sizes_drops_the_axis_unless_keepdims():
    nodes = [helper.make_node("SplitToSequence", ["x"], ["seq"], axis=-1, keepdims=0),
             helper.make_node("SequenceAt", ["seq", "two"], ["third"])]
    model = _model(nodes, [_vi("x", shape=[2, 3])], [_vi("third")],
                   [helper.make_tensor("two", TensorProto.INT64, [], [2])])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(gf_onnx.import_model(model).run({"x": x})["third"], x[:, 2])


@pytest.mark.parametrize("flag", [True, False])
def test_if_branches_give_sequences(flag):
    def branch(name, value):
        nodes = [helper.make_node("Constant", [], [f"{name}_c"],
                                  value=helper.make_tensor("v", F, [2], value)),
                 helper.make_node("SequenceConstruct", [f"{name}_c", f"{name}_c"], [f"{name}_s"])]
        return helper.make_graph(nodes, name, [],
                                 [helper.make_tensor_sequence_value_info(f"{name}_s", F, [2])])
    nodes = [helper.make_node("If", ["cond"], ["seq"], then_branch=branch("t", [1, 2]),
                              else_branch=branch("e", [3, 4])),
             helper.make_node("ConcatFromSequence", ["seq"], ["out"], axis=0)]
    model = _model(nodes, [_vi("cond", TensorProto.BOOL, [])], [_vi("out")])
    got = gf_onnx.import_model(model).run({"cond": np.array(flag)})["out"]
    np.testing.assert_array_equal(got, [1, 2, 1, 2] if flag else [3, 4, 3, 4])


def test_what_needs_run_time_lengths_is_refused_clearly():
    seq_input = _model([helper.make_node("SequenceLength", ["s"], ["n"])],
                       [helper.make_tensor_sequence_value_info("s", F, None)],
                       [_vi("n", TensorProto.INT64)])
    with pytest.raises(gf_onnx.OnnxImportError, match="'s' is not a tensor"):
        gf_onnx.import_model(seq_input)
    insert = _model([helper.make_node("SequenceConstruct", ["x"], ["s"]),
                     helper.make_node("SequenceInsert", ["s", "x", "p"], ["s2"]),
                     helper.make_node("SequenceLength", ["s2"], ["n"])],
                    [_vi("x", shape=[1]), _vi("p", TensorProto.INT64, [])],
                    [_vi("n", TensorProto.INT64)])
    with pytest.raises(gf_onnx.OnnxImportError, match="position must be a constant"):
        gf_onnx.import_model(insert)
    scalar_split = _model([helper.make_node("SplitToSequence", ["x", "k"], ["s"]),
                           helper.make_node("SequenceLength", ["s"], ["n"])],
                          [_vi("x", shape=[4]), _vi("k", TensorProto.INT64, [])],
                          [_vi("n", TensorProto.INT64)])
    with pytest.raises(gf_onnx.OnnxImportError, match="known only at run time"):
        gf_onnx.import_model(scalar_split)
