"""graphflow.kernels.cpu.reference.math_kernels: reductions as TF1 defines them (the extremes of
nothing, axes fed at run time or known when the graph is built), ArgMax/ArgMin axes, casts. Sums
as products with a vector of ones: tests/kernels/cpu/blocked/test_sum_products.py. Integer
division by zero raises as in TF."""

import numpy as np
import pytest

import graphflow as tf


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_max_and_min_of_nothing_are_the_extremes_as_in_tf1(dtype):
    xs = tf.placeholder(tf.as_dtype(dtype), [None, 3])
    empty = np.zeros((0, 3), dtype)
    with tf.Session() as sess:
        hi, lo, full = sess.run([tf.reduce_max(xs, 0), tf.reduce_min(xs, 0), tf.reduce_max(xs)],
                                {xs: empty})
    lowest, highest = ((-np.inf, np.inf) if dtype == np.float32
                       else (np.iinfo(dtype).min, np.iinfo(dtype).max))
    np.testing.assert_array_equal(hi, np.full(3, lowest, dtype))
    np.testing.assert_array_equal(lo, np.full(3, highest, dtype))
    assert full == lowest


def test_reductions_read_axes_fed_at_run_time_as_tf1_reduction_indices():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    xs = tf.placeholder(tf.float32, [2, 3, 4])
    axes = tf.placeholder(tf.int32, [None])
    total = tf.reduce_sum(xs, axis=axes)
    kept = tf.reduce_mean(xs, reduction_indices=axes, keep_dims=True)
    assert total.shape.ndims is None and kept.shape.as_list() == [None, None, None]
    with tf.Session() as sess:
        for value in ([0], [2, 0], [-1, 2], []):
            got_sum, got_mean = sess.run([total, kept], {xs: x, axes: value})
            want = tuple(sorted({a % 3 for a in value}))
            np.testing.assert_array_equal(got_sum, np.sum(x, axis=want))
            np.testing.assert_allclose(got_mean, np.mean(x, axis=want, keepdims=True))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid reduction dimension 3"):
            sess.run(total, {xs: x, axes: [3]})


def test_axes_known_when_the_graph_is_built_stay_static():
    xs = tf.placeholder(tf.float32, [2, 3, 4])
    per_example = tf.reduce_sum(xs, axis=tf.range(1, tf.rank(xs)))  # a common TF1 idiom
    assert per_example.shape.as_list() == [2] and len(per_example.op.inputs) == 1
    assert per_example.op.attrs["axis"] == [1, 2]


def test_argmax_axis_from_a_tensor_known_when_the_graph_is_built():
    xs = tf.placeholder(tf.float32, [2, 3])
    last = tf.argmax(xs, axis=tf.rank(xs) - 1)
    first = tf.argmin(xs, tf.constant(0))
    x = np.array([[1, 5, 2], [7, 0, 3]], np.float32)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(last, {xs: x}), [1, 0])
        np.testing.assert_array_equal(sess.run(first, {xs: x}), [0, 1, 0])
    with pytest.raises(TypeError, match="the axis of ArgMax must be a static integer"):
        tf.argmax(xs, axis=tf.placeholder(tf.int32, []))


def test_to_int64_to_double_and_saturate_cast():
    with tf.Session() as sess:
        u8, i32, narrowed, i64, f64 = sess.run([
            tf.saturate_cast(tf.constant([-5.0, 300.0, 3e10]), tf.uint8),
            tf.saturate_cast(tf.constant([3e10, -3e10, 5.5]), tf.int32),
            tf.saturate_cast(tf.constant([2 ** 40, -1], tf.int64), tf.dtypes.int32),
            tf.to_int64(tf.constant([1.7, -2.5])), tf.to_double(tf.constant(1))])
    np.testing.assert_array_equal(u8, [0, 255, 255])
    assert i32[0] > 2 ** 31 - 200 and i32[1] == -2 ** 31 and i32[2] == 5
    np.testing.assert_array_equal(narrowed, [2 ** 31 - 1, -1])
    assert i64.dtype == np.int64 and list(i64) == [1, -2] and f64.dtype == np.float64


_INTEGER_DIVISIONS = [("FloorDiv", tf.floordiv), ("FloorDiv", lambda a, b: a // b),
                      ("FloorDiv", tf.div), ("FloorMod", tf.mod), ("FloorMod", tf.floormod),
                      ("FloorMod", lambda a, b: a % b)]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int16])
@pytest.mark.parametrize("op_type,divide", _INTEGER_DIVISIONS)
@pytest.mark.parametrize("optimize", [False, True])
def test_integer_division_by_zero_raises_naming_the_op_and_line_as_tf(dtype, op_type, divide,
                                                                      optimize):
    # TF 2.21 (tf.compat.v1): floordiv, div, mod, floormod, // and % of int32/int64/uint8/int16
    # by a zero divisor raise InvalidArgumentError "Integer division by zero"
    x = tf.placeholder(tf.as_dtype(dtype), [None])
    y = tf.placeholder(tf.as_dtype(dtype), [None])
    z = divide(x, y)
    with tf.Session(optimize=optimize) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero") as err:
            sess.run(z, {x: np.array([7, 3, 1], dtype), y: np.array([2, 0, 1], dtype)})
        assert f"({op_type}) created at {__file__}:" in str(err.value)  # the user's op and line
        want = (np.floor_divide if op_type == "FloorDiv" else np.mod)(np.array([7, 3], dtype),
                                                                     np.array([2, 1], dtype))
        np.testing.assert_array_equal(
            sess.run(z, {x: np.array([7, 3], dtype), y: np.array([2, 1], dtype)}), want)


def test_integer_division_by_a_zero_constant_raises_when_run_not_when_built():
    q = tf.constant([6, 4]) // tf.constant([3, 0])  # shape arithmetic and folding leave it to run
    r = tf.constant(5, tf.int64) % tf.constant(0, tf.int64)
    with tf.Session() as sess:
        for t in (q, r):
            with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
                sess.run(t)


def test_float_division_by_zero_stays_ieee_as_tf():
    # TF: floordiv([1, 0, -1], 0.) = [inf, nan, -inf], floormod = [nan, nan, nan], 1/0 = inf;
    # integer truediv divides in floats: [7, -7, 3] / [2, 0, 1] = [3.5, -inf, 3]
    x = tf.constant([1.0, 0.0, -1.0])
    with tf.Session() as sess:
        fd, fm = sess.run([x // 0.0, x % 0.0])
        quotient = sess.run(tf.truediv(tf.constant([7, -7, 3]), tf.constant([2, 0, 1])))
    np.testing.assert_array_equal(fd, [np.inf, np.nan, -np.inf])
    assert np.isnan(fm).all()
    np.testing.assert_array_equal(quotient, [3.5, -np.inf, 3.0])


_NAN = np.nan
_LOWEST = float(np.finfo(np.float32).min)
# TF 2.21 (tf.compat.v1, CPU): argmax / argmin / reduce_max / reduce_min over each axis
_ARG_CASES = [
    ([[1, _NAN, 3], [_NAN, 2, 5], [4, 6, _NAN]],
     {0: ([2, 2, 1], [0, 1, 0]), 1: ([2, 2, 1], [0, 1, 0])}),
    ([[_NAN, _NAN, 1], [2, _NAN, _NAN], [_NAN, 0, _NAN]],
     {0: ([1, 2, 0], [1, 2, 0]), 1: ([2, 0, 1], [2, 0, 1])}),
    ([[-1, -2, _NAN], [_NAN, -5, -3]], {0: ([0, 0, 1], [0, 1, 1]), 1: ([0, 2], [1, 1])}),
    ([_NAN, 5, _NAN, -1], {0: (1, 3)}),
    ([np.inf, _NAN, -np.inf], {0: (0, 2)}),
    ([[_NAN, _NAN], [_NAN, _NAN]], {0: ([0, 0], [0, 0]), 1: ([0, 0], [0, 0])}),
    ([_NAN, -np.inf], {0: (0, 1)}),
    ([_NAN, _LOWEST], {0: (0, 1)}),
    ([_LOWEST, _NAN, _LOWEST], {0: (0, 0)}),
    ([-np.inf, _NAN], {0: (0, 0)}),
    ([_NAN, np.inf], {0: (1, 0)}),
    ([_NAN, 1, _NAN, 1], {0: (1, 1)}),
    ([-np.inf, -np.inf, 3], {0: (2, 0)}),
]


@pytest.mark.parametrize("values,want", _ARG_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_argmax_and_argmin_skip_nan_as_tf(values, want, dtype):
    x = np.array(values, np.float32)
    if dtype != np.float32:  # (the float32 lowest is not a value of the others)
        x = np.where(x == _LOWEST, np.finfo(dtype).min, x).astype(dtype)
    xs = tf.placeholder(tf.as_dtype(dtype), x.shape)
    with tf.Session() as sess:
        for axis, (arg_max, arg_min) in want.items():
            got = sess.run([tf.argmax(xs, axis), tf.argmin(xs, axis)], {xs: x})
            np.testing.assert_array_equal(got[0], arg_max)
            np.testing.assert_array_equal(got[1], arg_min)
            # reduce_max / reduce_min propagate NaN (TF: nan wherever the reduced values hold one)
            hi, lo = sess.run([tf.reduce_max(xs, axis), tf.reduce_min(xs, axis)], {xs: x})
            has_nan = np.isnan(x).any(axis=axis)
            np.testing.assert_array_equal(np.isnan(hi), has_nan)
            np.testing.assert_array_equal(np.isnan(lo), has_nan)


def test_argmax_of_large_rows_with_nan_is_the_largest_other_value_as_tf():
    # TF 2.21 on these rows: argmax / argmin ignore the NaN; reduce_max is nan where one is
    rng = np.random.RandomState(0)
    x = rng.randn(5, 1000).astype(np.float32)
    x[0, 10] = x[1, 500] = x[1, 3] = x[2, 999] = np.nan
    xs = tf.placeholder(tf.float32, x.shape)
    with tf.Session() as sess:
        am, an, am0 = sess.run([tf.argmax(xs, 1), tf.argmin(xs, 1), tf.argmax(xs, 0)], {xs: x})
    assert am.tolist() == [943, 54, 60, 118, 909] and an.tolist() == [589, 446, 18, 752, 469]
    np.testing.assert_array_equal(am0, np.nanargmax(x, 0))


@pytest.mark.parametrize("optimize", [False, True])
def test_float16_sums_and_means_accumulate_in_float32(optimize):
    # float16 running sums stop at 2048 and overflow at 65504; accumulated in float32 and rounded
    # once, as TF's GPU kernels and PyTorch. TF 2.21 on the CPU: sum of 3000 ones 3000, of 70000
    # ones inf (the float16 result overflows), but mean of 70000 ones nan (inf / 70000 in float16)
    # where graphflow gives 1.0
    x = tf.placeholder(tf.float16, [None])
    y = tf.placeholder(tf.float16, [None, 4])
    with tf.Session(optimize=optimize) as sess:
        mean, total = sess.run([tf.reduce_mean(x), tf.reduce_sum(x)], {x: np.ones(70000, np.float16)})
        assert mean.dtype == np.float16 and mean == 1.0 and np.isinf(total)
        assert sess.run(tf.reduce_sum(x), {x: np.ones(3000, np.float16)}) == 3000
        # a fused program summed over its leading axes (FusedElementwiseSum when optimized)
        rows = np.full((30000, 4), 0.5, np.float16)
        fused = sess.run(tf.reduce_sum(y * 2.0 - 0.5, 0), {y: rows})
        mean_sq = sess.run(tf.reduce_mean(tf.square(y - 0.25), 0), {y: rows})
    np.testing.assert_array_equal(fused, np.full(4, 15000, np.float16))
    np.testing.assert_array_equal(mean_sq, np.full(4, 0.0625, np.float16))
