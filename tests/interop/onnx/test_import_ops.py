"""graphflow.interop.onnx.import_ops: single ONNX nodes imported and run against numpy, for the
attributes and inputs the builders read (Shape's start/end, Flatten's negative axis, Reshape to a
shape fed at run time, training-mode Dropout, MatMul of vectors, unsigned arithmetic)."""

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


def test_dropout_in_training_mode_fed_at_run_time():
    x = np.random.default_rng(0).uniform(1.0, 2.0, (100, 200)).astype(np.float32)
    ratio = np.array(0.75, np.float32)
    y, mask = run_node("Dropout", {"x": x, "ratio": ratio, "training": np.array(True)}, n_out=2,
                       seed=3)
    assert mask.dtype == np.bool_ and abs(mask.mean() - 0.25) < 0.01  # 20000 draws
    np.testing.assert_allclose(y[mask], x[mask] / 0.25, rtol=1e-6)
    assert not y[~mask].any()
    y, mask = run_node("Dropout", {"x": x, "ratio": ratio, "training": np.array(False)}, n_out=2)
    np.testing.assert_array_equal(y, x)
    assert mask.all()


@pytest.mark.parametrize("shape,want", [([0, -1], (2, 12)), ([2, 0, 4, 1], (2, 3, 4, 1)),
                                        ([-1, 0, 2], (4, 3, 2))])
def test_reshape_to_a_fed_shape_copies_the_dims_its_zeros_name(shape, want):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (got,) = run_node("Reshape", {"x": x, "shape": np.array(shape, np.int64)})
    np.testing.assert_array_equal(got, x.reshape(want))


def test_matmul_of_two_vectors_is_their_dot_product():
    a, b = np.array([1.0, 2.0, 3.0], np.float32), np.array([4.0, -1.0, 0.5], np.float32)
    (got,) = run_node("MatMul", {"a": a, "b": b})
    assert got.shape == () and got == np.float32(3.5)


_UNSIGNED_OPS = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.floor_divide,
                 "Mod": np.remainder, "Max": np.maximum, "Min": np.minimum, "Equal": np.equal,
                 "Greater": np.greater, "LessOrEqual": np.less_equal}


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize("op_type", sorted(_UNSIGNED_OPS))
def test_unsigned_arithmetic_and_comparisons_over_the_whole_range(op_type, dtype):
    top = np.iinfo(dtype).max
    a = np.array([0, 7, top, top - 3, top // 2 + 5, 12, top // 3], dtype)
    b = np.array([3, 7, 2, top, top // 2 + 1, top - 1, 1], dtype)  # nonzero: Div and Mod
    with np.errstate(over="ignore"):
        want = _UNSIGNED_OPS[op_type](a, b)  # wraps around, as ONNX's unsigned types do
    (got,) = run_node(op_type, {"a": a, "b": b})
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
