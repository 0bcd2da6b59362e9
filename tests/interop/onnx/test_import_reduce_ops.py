"""graphflow.interop.onnx.import_reduce_ops: ArgMax / ArgMin with select_last_index and ReduceMax /
ReduceMin of bools, imported and run against numpy."""

import numpy as np
import pytest

from tests.interop.onnx.onnx_nodes import run_node


@pytest.mark.parametrize("op_type", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("axis,keepdims", [(0, 1), (1, 0), (-1, 1)])
def test_arg_select_last_index_picks_the_last_of_equal_extremes(op_type, axis, keepdims):
    x = np.array([[2, 7, 7, 1], [1, 1, 7, 2], [2, 7, 1, 1]], np.float32)
    fn = np.argmax if op_type == "ArgMax" else np.argmin
    n = x.shape[axis]
    want = n - 1 - fn(np.flip(x, axis), axis=axis)
    want = np.expand_dims(want, axis) if keepdims else want
    (last,) = run_node(op_type, {"x": x}, axis=axis, keepdims=keepdims, select_last_index=1)
    (first,) = run_node(op_type, {"x": x}, axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(last, want)
    assert last.dtype == np.int64
    want_first = fn(x, axis=axis)
    np.testing.assert_array_equal(first, np.expand_dims(want_first, axis) if keepdims else want_first)
    assert not np.array_equal(last, first)  # the data has ties in every direction tested


@pytest.mark.parametrize("op_type,fn", [("ReduceMax", np.any), ("ReduceMin", np.all)])
def test_reduce_max_min_of_bools_are_any_and_all(op_type, fn):
    x = np.array([[True, False, True], [True, True, True]])
    (got,) = run_node(op_type, {"x": x}, constants={"axes": np.array([1], np.int64)}, keepdims=0)
    np.testing.assert_array_equal(got, fn(x, axis=1))
    (empty,) = run_node(op_type, {"x": np.zeros((0, 3), bool)},
                        constants={"axes": np.array([0], np.int64)}, keepdims=0)
    np.testing.assert_array_equal(empty, fn(np.zeros((0, 3), bool), axis=0))
