"""graphflow.interop.onnx.import_index_ops: TopK, OneHot and CumSum whose k, depth or axis are graph
inputs (known at run time only) give numpy's results."""

import numpy as np
import pytest

from tests.interop.onnx.onnx_nodes import check_against_reference, run_node

i64 = np.int64


@pytest.mark.parametrize("axis,largest", [(-1, 1), (0, 0)])
def test_top_k_with_k_fed(axis, largest):
    x = np.array([[3, 1, 4, 1], [5, 9, 2, 6], [5, 3, 5, 8]], np.float32)
    values, indices = run_node("TopK", {"x": x, "k": np.array([2], i64)}, n_out=2, axis=axis,
                               largest=largest)
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    want = np.take(order, [0, 1], axis=axis)
    np.testing.assert_array_equal(indices, want)
    np.testing.assert_array_equal(values, np.take_along_axis(x, want, axis=axis))


@pytest.mark.parametrize("depth", [np.array(4, i64), np.array([3.0], np.float32)])
@pytest.mark.parametrize("axis", [-1, 0])
def test_one_hot_with_depth_fed(depth, axis):
    indices = np.array([[0, -1], [2, 5]], i64)
    values = np.array([-2.0, 3.0], np.float32)
    (got,) = run_node("OneHot", {"indices": indices, "depth": depth, "values": values}, axis=axis)
    d = int(np.asarray(depth).reshape(-1)[0])
    index = np.where(indices < 0, indices + d, indices)  # ONNX counts a negative from the end
    hot = index[..., None] == np.arange(d)
    want = np.where(hot, 3.0, -2.0)
    np.testing.assert_array_equal(got, want if axis == -1 else np.moveaxis(want, -1, 0))


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 1)])
def test_cumsum_with_axis_fed(axis, exclusive, reverse):
    x = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    (got,) = run_node("CumSum", {"x": x, "axis": np.array(axis, np.int32)}, exclusive=exclusive,
                      reverse=reverse)
    flipped = np.flip(x, axis) if reverse else x
    want = np.cumsum(flipped, axis) - (flipped if exclusive else 0)
    np.testing.assert_array_equal(got, np.flip(want, axis) if reverse else want)


@pytest.mark.parametrize("op_type,shape", [("DepthToSpace", (2, 8, 3, 2)),
                                           ("SpaceToDepth", (2, 2, 4, 6))])
@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_space_moves_in_both_channel_orders(op_type, shape, mode):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    n, c, h, w = shape
    if op_type == "DepthToSpace":
        if mode == "DCR":  # channels as (block row, block column, channel)
            want = x.reshape(n, 2, 2, c // 4, h, w).transpose(0, 3, 4, 1, 5, 2)
        else:  # (channel, block row, block column)
            want = x.reshape(n, c // 4, 2, 2, h, w).transpose(0, 1, 4, 2, 5, 3)
        want = want.reshape(n, c // 4, h * 2, w * 2)
    else:
        blocks = x.reshape(n, c, h // 2, 2, w // 2, 2)
        want = (blocks.transpose(0, 3, 5, 1, 2, 4) if mode == "DCR"
                else blocks.transpose(0, 1, 3, 5, 2, 4)).reshape(n, c * 4, h // 2, w // 2)
    (got,) = run_node(op_type, {"x": x}, blocksize=2, mode=mode)
    np.testing.assert_array_equal(got, want)


def test_gather_nd_with_batch_dims():
    params = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    indices = np.array([[[1, 2], [0, 3]], [[2, 0], [1, 1]]], np.int64)
    check_against_reference("GatherND", {"params": params, "indices": indices}, batch_dims=1)
    per_row = np.array([[[3], [0], [1]], [[2], [2], [0]]], np.int64)  # one index per (i, j)
    check_against_reference("GatherND", {"params": params, "indices": per_row}, batch_dims=2)


@pytest.mark.parametrize("reduction", ["max", "min", "mul"])
def test_scatter_nd_max_min_mul_with_repeated_indices(reduction):
    data = np.random.default_rng(2).standard_normal((4, 3, 2)).astype(np.float32)
    indices = np.array([[1], [3], [1], [0]], np.int64)
    updates = np.random.default_rng(3).standard_normal((4, 3, 2)).astype(np.float32)
    check_against_reference("ScatterND", {"data": data, "indices": indices, "updates": updates},
                            reduction=reduction)
    element = np.array([[0, 1, 1], [0, 1, 1], [2, 0, 0]], np.int64)  # element-wise indices
    check_against_reference("ScatterND", {"data": data, "indices": element,
                                          "updates": np.array([5.0, -5.0, 0.25], np.float32)},
                            reduction=reduction)


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.uint64, np.int32, np.int64])
@pytest.mark.parametrize("largest", [1, 0])
def test_top_k_of_integers_over_their_whole_range(dtype, largest):
    info = np.iinfo(dtype)
    x = np.array([[info.min, 3, info.max, 0, info.max - 1, info.min + 1]], dtype)
    check_against_reference("TopK", {"x": x, "k": np.array([4], np.int64)}, n_out=2,
                            largest=largest)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("ordered", [1, 0])
def test_unique_along_an_axis(axis, ordered):
    x = np.random.default_rng(6).integers(0, 2, (4, 3, 4)).astype(np.float32)
    x = np.concatenate([x, np.take(x, [2, 0], axis=axis)], axis=axis)  # repeated slices
    y, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                          return_counts=True, axis=axis)
    if not ordered:  # in order of first appearance
        order = np.argsort(first)
        y, first, counts = np.take(y, order, axis=axis), first[order], counts[order]
        inverse = np.argsort(order)[inverse.reshape(-1)]
    got = run_node("Unique", {"x": x}, n_out=4, axis=axis, sorted=ordered)
    for g, w in zip(got, [y, first, inverse.reshape(-1), counts]):
        np.testing.assert_array_equal(g, w)
    assert [g.dtype for g in got[1:]] == [np.int64] * 3
