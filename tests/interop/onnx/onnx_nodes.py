"""Test support: a model of one ONNX node, imported into graphflow and run, whose inputs are
graph inputs fed at run time (values only known then) or initializers (constants); and the same
model run by onnx's own reference evaluator, to compare with."""

import numpy as np
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from graphflow.interop import onnx as gf_onnx

_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
          np.dtype(np.int64): TensorProto.INT64, np.dtype(np.int32): TensorProto.INT32,
          np.dtype(np.bool_): TensorProto.BOOL, np.dtype(np.uint16): TensorProto.UINT16,
          np.dtype(np.uint32): TensorProto.UINT32, np.dtype(np.uint64): TensorProto.UINT64}


def node_model(op_type, feeds, n_out=1, constants=None, opset=18, **attrs):
    """The model of one `op_type` node. Its inputs, in order, are `feeds` (graph inputs; a None
    value is an omitted input) then `constants` (initializers); its outputs out0, out1, ..."""
    constants = constants or {}
    names = [n if v is not None else "" for n, v in feeds.items()] + list(constants)
    outs = [f"out{i}" for i in range(n_out)]
    inputs = [helper.make_tensor_value_info(n, _TYPES[np.asarray(v).dtype], np.shape(v))
              for n, v in feeds.items() if v is not None]
    graph = helper.make_graph(
        [helper.make_node(op_type, names, outs, **attrs)], "g", inputs,
        [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outs],
        initializer=[numpy_helper.from_array(np.asarray(v), n) for n, v in constants.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _feeds(feeds):
    return {n: np.asarray(v) for n, v in feeds.items() if v is not None}


def run_node(op_type, feeds, n_out=1, constants=None, opset=18, **attrs):
    """Import `node_model(...)` into graphflow and run it: the list of its `n_out` outputs."""
    model = node_model(op_type, feeds, n_out, constants, opset, **attrs)
    got = gf_onnx.import_model(model.SerializeToString()).run(_feeds(feeds))
    return [got[f"out{i}"] for i in range(n_out)]


def check_against_reference(op_type, feeds, n_out=1, constants=None, opset=18, rtol=1e-5,
                            **attrs):
    """graphflow's outputs equal onnx's reference evaluator's (dtype, shape and values)."""
    model = node_model(op_type, feeds, n_out, constants, opset, **attrs)
    want = ReferenceEvaluator(model).run(None, _feeds(feeds))
    got = run_node(op_type, feeds, n_out, constants, opset, **attrs)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)
