"""graphflow.interop.onnx.import_shape_ops: Pad, Slice, Split, Unsqueeze and Squeeze whose pads,
bounds, sizes or axes are graph inputs (known at run time only) give numpy's results, the same
as when they are constants."""

import numpy as np
import pytest

from tests.interop.onnx.onnx_nodes import run_node

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
i64 = np.int64


@pytest.mark.parametrize("fed", [True, False])
@pytest.mark.parametrize("mode,np_mode", [("constant", "constant"), ("reflect", "reflect"),
                                          ("edge", "edge"), ("wrap", "wrap")])
def test_pad_with_pads_fed_or_constant(fed, mode, np_mode):
    pads = np.array([0, 1, 2, 1, 2, 1], i64)  # befores of axes 0..2, then afters
    widths = [(0, 1), (1, 2), (2, 1)]
    if fed:
        (got,) = run_node("Pad", {"x": X, "pads": pads}, mode=mode)
    else:
        (got,) = run_node("Pad", {"x": X}, constants={"pads": pads}, mode=mode)
    np.testing.assert_array_equal(got, np.pad(X, widths, mode=np_mode))


def test_pad_over_fed_axes_with_a_one_element_value():
    pads, axes = np.array([1, 0, 2, 3], i64), np.array([-1, 1], i64)
    value = np.array([7.5], np.float32)
    (got,) = run_node("Pad", {"x": X, "pads": pads, "value": value, "axes": axes})
    np.testing.assert_array_equal(got, np.pad(X, [(0, 0), (0, 3), (1, 2)], constant_values=7.5))


@pytest.mark.parametrize("starts,ends,axes,steps", [
    ([1, 0], [2, -1], None, None),
    ([0, 3], [1, 0], [0, -1], [1, -1]),
    ([-100, 1], [100, 1 << 62], [2, 1], [2, 1]),
    ([2], [-(1 << 62)], [1], [-1]),
])
def test_slice_with_bounds_fed(starts, ends, axes, steps):
    feeds = {"x": X, "starts": np.array(starts, i64), "ends": np.array(ends, i64),
             "axes": None if axes is None else np.array(axes, i64),
             "steps": None if steps is None else np.array(steps, i64)}
    (got,) = run_node("Slice", feeds)
    index = [slice(None)] * 3
    for n, (s, e) in enumerate(zip(starts, ends)):
        a = n if axes is None else axes[n]
        index[a] = slice(s, e if abs(e) < (1 << 62) else None, 1 if steps is None else steps[n])
    np.testing.assert_array_equal(got, X[tuple(index)])


def test_split_with_sizes_fed_and_uneven_num_outputs():
    x = np.arange(14, dtype=np.float32).reshape(2, 7)
    got = run_node("Split", {"x": x, "split": np.array([2, 0, 5], i64)}, n_out=3, axis=1)
    for g, w in zip(got, np.split(x, [2, 2], axis=1)):
        np.testing.assert_array_equal(g, w)
    got = run_node("Split", {"x": x}, n_out=3, axis=-1, num_outputs=3)  # pieces of 3, 3, 1
    for g, w in zip(got, np.split(x, [3, 6], axis=1)):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("axes", [[0], [3], [-1], [4, 0], [1, -2]])
def test_unsqueeze_with_axes_fed(axes):
    (got,) = run_node("Unsqueeze", {"x": X, "axes": np.array(axes, i64)})
    out_rank = X.ndim + len(axes)
    np.testing.assert_array_equal(got, np.expand_dims(X, [a % out_rank for a in axes]))


def test_unsqueeze_of_a_scalar_and_squeeze_with_axes_fed():
    (got,) = run_node("Unsqueeze", {"x": np.array(3.0, np.float32), "axes": np.array([0, 1], i64)})
    np.testing.assert_array_equal(got, [[3.0]])
    x = X.reshape(1, 2, 1, 12, 1)
    (got,) = run_node("Squeeze", {"x": x, "axes": np.array([0, -1], i64)})
    np.testing.assert_array_equal(got, x.reshape(2, 1, 12))
