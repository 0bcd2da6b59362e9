"""graphflow.interop.onnx.import_ops: single ONNX nodes imported and run against numpy, for the
attributes the builders read (Shape's start/end, Flatten's negative axis, ArgMax/ArgMin's
select_last_index)."""

import numpy as np
import pytest

from tests.interop.onnx.onnx_nodes import run_node


@pytest.mark.parametrize("start,end,want", [(None, None, [2, 3, 4, 5]), (1, None, [3, 4, 5]),
                                            (0, 1, [2]), (-2, -1, [4]), (-10, 10, [2, 3, 4, 5]),
                                            (3, 1, [])])
def test_shape_start_end(start, end, want):
    attrs = {k: v for k, v in (("start", start), ("end", end)) if v is not None}
    (got,) = run_node("Shape", {"x": np.zeros((2, 3, 4, 5), np.float32)}, **attrs)
    assert got.dtype == np.int64 and got.tolist() == want


@pytest.mark.parametrize("axis,want", [(0, (1, 120)), (2, (6, 20)), (4, (120, 1)), (-1, (24, 5)),
                                       (-4, (1, 120)), (-3, (2, 60))])
def test_flatten_axis_counts_negatives_from_the_end(axis, want):
    x = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    (got,) = run_node("Flatten", {"x": x}, axis=axis)
    np.testing.assert_array_equal(got, x.reshape(want))


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
