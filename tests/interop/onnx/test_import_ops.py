"""graphflow.interop.onnx.import_ops: single ONNX nodes imported and run against numpy, for the
attributes and run-time inputs the builders read (Shape's start/end, Flatten's negative axis,
ArgMax's select_last_index, values fed at run time)."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from graphflow.interop import onnx as gf_onnx

_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
          np.dtype(np.int32): TensorProto.INT32}


def _run(op_type, feeds, n_out=1, constants=None, opset=18, **attrs):
    """Import a model of one `op_type` node whose inputs are `feeds` (graph inputs, fed at run time;
    a None value is an omitted input) and `constants` (initializers), and run it."""
    constants = constants or {}
    names = list(feeds) + list(constants)
    outs = [f"out{i}" for i in range(n_out)]
    node = helper.make_node(op_type, [n if (feeds.get(n) is not None or n in constants) else ""
                                      for n in names], outs, **attrs)
    inputs = [helper.make_tensor_value_info(n, _TYPES[np.asarray(v).dtype], np.shape(v))
              for n, v in feeds.items() if v is not None]
    graph = helper.make_graph(
        [node], "g", inputs, [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
                              for o in outs],
        initializer=[numpy_helper.from_array(np.asarray(v), n) for n, v in constants.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    got = gf_onnx.import_model(model.SerializeToString()).run(
        {n: v for n, v in feeds.items() if v is not None})
    return [got[o] for o in outs]


@pytest.mark.parametrize("start,end,want", [(None, None, [2, 3, 4, 5]), (1, None, [3, 4, 5]),
                                            (0, 1, [2]), (-2, -1, [4]), (-10, 10, [2, 3, 4, 5]),
                                            (3, 1, [])])
def test_shape_start_end(start, end, want):
    attrs = {k: v for k, v in (("start", start), ("end", end)) if v is not None}
    (got,) = _run("Shape", {"x": np.zeros((2, 3, 4, 5), np.float32)}, **attrs)
    assert got.dtype == np.int64 and got.tolist() == want


@pytest.mark.parametrize("axis,want", [(0, (1, 120)), (2, (6, 20)), (4, (120, 1)), (-1, (24, 5)),
                                       (-4, (1, 120)), (-3, (2, 60))])
def test_flatten_axis_counts_negatives_from_the_end(axis, want):
    x = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    (got,) = _run("Flatten", {"x": x}, axis=axis)
    np.testing.assert_array_equal(got, x.reshape(want))
