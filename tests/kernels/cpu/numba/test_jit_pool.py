"""graphflow.kernels.cpu.numba.jit_pool: the compiled MaxPool/MaxPoolGrad give the numpy kernels' values
(pool_kernels.py, the reference) on every pooling op case and on larger inputs with tied maxima,
padding, strides, NCHW and several threads, and the 2x2 loops with ties, NaN, -inf, odd sizes and
channel counts 1 to 64; the gradient passes finite differences. oneDNN's
MaxPoolGrad (dnnl_pool.py, tested in test_dnnl_pool.py) is switched off here."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu import TABLE
from graphflow.kernels.cpu.numba import jit_pool
from tests.op_cases import nn_cases, run_build

pytestmark = pytest.mark.skipif(jit_pool.loops() is None,
                                reason="numba is not installed (or GRAPHFLOW_NO_JIT=1)")



@pytest.fixture(autouse=True)
def _without_onednn():
    with TABLE.restricted_to({"numba"}):  # the compiled loops, not oneDNN's MaxPoolGrad
        yield


POOL_CASES = [c for c in nn_cases.CASES if c.op_type in ("MaxPool", "MaxPoolGrad")]


def _run(build, inputs, jit, monkeypatch, threads=1):
    monkeypatch.setattr(jit_pool, "MIN_ELEMENTS", 0)
    with TABLE.restricted_to({"numba"} if jit else ()):
        return run_build(build, inputs, threads)


def test_pool_cases_exist():
    assert {c.op_type for c in POOL_CASES} == {"MaxPool", "MaxPoolGrad"}


@pytest.mark.parametrize("case", POOL_CASES, ids=[c.name for c in POOL_CASES])
def test_compiled_pooling_matches_the_reference_on_the_op_cases(case, monkeypatch):
    got = _run(case.build, case.inputs, True, monkeypatch)
    want = _run(case.build, case.inputs, False, monkeypatch)
    np.testing.assert_array_equal(got, want)


SHAPES = [  # input (NHWC), window, strides, padding
    ((16, 28, 28, 16), (2, 2), (2, 2), "VALID"),
    ((8, 15, 13, 5), (3, 3), (2, 2), "SAME"),
    ((8, 15, 13, 5), (3, 2), (1, 2), "VALID"),
    ((6, 9, 9, 7), (3, 3), (1, 1), "SAME"),
    ((4, 10, 11, 5), (3, 3), (3, 3), "VALID"),  # 3x3 windows that tile: the write-once gradient
]


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_compiled_pooling_matches_the_reference_with_ties(shape, dtype, threads, monkeypatch):
    monkeypatch.setattr(jit_pool, "PARALLEL_MIN_ELEMENTS", 1)  # images split over the threads
    x_shape, k, s, padding = shape
    rng = np.random.default_rng(2)
    x = np.maximum(rng.standard_normal(x_shape), 0).astype(dtype)  # ReLU-like: many tied zeros
    x[0, :3, :3, 0] = 1.0

    def build(xs):
        y = tf.nn.max_pool(xs, [1, *k, 1], [1, *s, 1], padding)
        g = tf.constant(np.random.default_rng(3).standard_normal(y.shape.as_list()).astype(dtype))
        return [y, tf.gradients(y, [xs], grad_ys=[g])[0]]
    got = _run(build, [x], True, monkeypatch, threads)
    want = _run(build, [x], False, monkeypatch)
    np.testing.assert_array_equal(got[0], want[0])
    # overlapping windows add several gradients into one input in another order than the reference
    tol = 1e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got[1], want[1], rtol=tol, atol=tol)
    assert np.array_equal(got[1] != 0, want[1] != 0)  # the same routes, ties included


def test_compiled_pooling_nchw_matches_the_reference(monkeypatch):
    x = np.random.default_rng(4).standard_normal((4, 6, 10, 12)).astype(np.float32)

    def build(xs):
        y = tf.nn.max_pool(xs, [1, 1, 2, 2], [1, 1, 2, 2], "VALID", data_format="NCHW")
        return [y, tf.gradients(tf.reduce_sum(tf.sin(y)), [xs])[0]]
    for a, b in zip(_run(build, [x], True, monkeypatch), _run(build, [x], False, monkeypatch)):
        np.testing.assert_array_equal(a, b)


def test_compiled_max_pool_gradient_passes_finite_differences(monkeypatch):
    monkeypatch.setattr(jit_pool, "MIN_ELEMENTS", 0)
    x = np.random.default_rng(5).permutation(2 * 5 * 5 * 3).reshape(2, 5, 5, 3) * 0.1  # distinct
    xs = tf.placeholder(tf.float64, x.shape)
    loss = tf.reduce_sum(tf.sin(tf.nn.max_pool(xs, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")))
    (gx,) = tf.gradients(loss, [xs])
    with tf.Session() as sess:
        analytic = sess.run(gx, {xs: x})
        numeric = np.zeros_like(x)
        eps = 1e-6
        for idx in np.ndindex(x.shape):
            plus, minus = x.copy(), x.copy()
            plus[idx] += eps
            minus[idx] -= eps
            numeric[idx] = (sess.run(loss, {xs: plus}) - sess.run(loss, {xs: minus})) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_gradient_reuses_the_forward_argmaxes_from_the_second_step(shape, threads, monkeypatch):
    monkeypatch.setattr(jit_pool, "PARALLEL_MIN_ELEMENTS", 1)  # images split over the threads
    x_shape, k, s, padding = shape
    rng = np.random.default_rng(6)
    x = np.maximum(rng.standard_normal(x_shape), 0).astype(np.float32)  # ties
    x[1, :4, :4, :] = np.nan
    x[2, 0, 0, 0] = -np.inf
    x[0, 0, 0, 0] = -np.inf
    calls = []
    scatter = jit_pool.max_pool_grad_from_argmax
    monkeypatch.setattr(jit_pool, "max_pool_grad_from_argmax",
                        lambda *a: calls.append(1) or scatter(*a))

    def build(xs):
        y = tf.nn.max_pool(xs, [1, *k, 1], [1, *s, 1], padding)
        g = np.random.default_rng(7).standard_normal(y.shape.as_list()).astype(np.float32)
        return [y, tf.gradients(y * 1.5, [xs], grad_ys=[tf.constant(g)])[0]]
    monkeypatch.setattr(jit_pool, "MIN_ELEMENTS", 0)
    placeholder = tf.placeholder(tf.float32, x.shape)
    fetches = build(placeholder)
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=threads)) as sess:
        runs = [sess.run(fetches, {placeholder: x}) for _ in range(3)]
    assert len(calls) == 2  # the first gradient asks, the next two forward passes record
    # the compiled window search (a fresh session's first step) routes NaN windows as the scatter
    # does; the numpy reference agrees away from NaN (checked on the rows without NaN)
    searched = _run(build, [x], True, monkeypatch, threads)
    reference = _run(build, [x], False, monkeypatch)
    clean = [0] + list(range(2, x.shape[0]))
    for got in runs:
        np.testing.assert_array_equal(got[0], searched[0])
        np.testing.assert_allclose(got[1], searched[1], rtol=1e-6, atol=1e-6)
        assert np.array_equal(got[1] != 0, searched[1] != 0)
        np.testing.assert_allclose(got[1][clean], reference[1][clean], rtol=1e-6, atol=1e-6)


TWO_BY_TWO = [  # input (NHWC), strides, padding: the 2x2 loops (no padding) and the general ones
    ((3, 8, 8, 1), (2, 2), "VALID"),  # windows tile the input: the write-once gradient
    ((3, 7, 9, 3), (2, 2), "VALID"),  # odd sizes: a row and a column no window covers
    ((3, 7, 9, 16), (2, 2), "SAME"),  # border windows of one row / column
    ((2, 6, 5, 17), (1, 1), "SAME"),  # overlapping windows: the scatter adds
    ((2, 6, 5, 17), (1, 1), "VALID"),
    ((2, 5, 6, 64), (1, 2), "VALID"),
    ((2, 9, 7, 3), (3, 3), "SAME"),  # stride above the window: gaps
]


@pytest.mark.parametrize("codes", [True, False], ids=["tap-codes", "positions"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", TWO_BY_TWO, ids=str)
def test_two_by_two_loops_keep_the_reference_rules(shape, dtype, codes, monkeypatch):
    monkeypatch.setattr(jit_pool, "TAP_CODES", codes)  # how tiling windows record argmaxes
    x_shape, s, padding = shape
    rng = np.random.default_rng(8)
    x = np.round(rng.standard_normal(x_shape), 0).astype(dtype)  # many ties
    x[0, 0, :2, :] = -np.inf
    x[0, 1, :2, :] = -np.inf  # a window of -inf only
    x[1, 2, 2, ::2] = np.inf

    def build(xs):
        y = tf.nn.max_pool(xs, [1, 2, 2, 1], [1, *s, 1], padding)
        g = np.random.default_rng(9).standard_normal(y.shape.as_list()).astype(dtype)
        return [y, tf.gradients(y, [xs], grad_ys=[tf.constant(g)])[0]]
    monkeypatch.setattr(jit_pool, "MIN_ELEMENTS", 0)

    def two_steps(inputs):  # the window search, then the recorded argmaxes
        tf.reset_default_graph()
        placeholder = tf.placeholder(tf.as_dtype(dtype), x.shape)
        fetches = build(placeholder)
        with tf.Session() as sess:
            return [sess.run(fetches, {placeholder: inputs}) for _ in range(2)]
    nan = x.copy()
    nan[0, 1, 1, :] = np.nan  # a later tap: NaN wins the forward max
    nan[1, 0, 0, :] = np.nan  # the first tap
    nan[1, 2:4, 2:4, 0] = np.nan
    runs, (searched, recorded) = two_steps(x), two_steps(nan)
    want = _run(build, [x], False, monkeypatch)  # (the numpy kernels from here on)
    for got in runs:
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-6)
        assert np.array_equal(got[1] != 0, want[1] != 0)  # first maximum of each window
    # with NaN the recorded argmaxes route as the search does; the forward max is the reference's
    np.testing.assert_array_equal(recorded[0], searched[0])
    np.testing.assert_array_equal(recorded[1], searched[1])
    assert np.isnan(searched[0]).any()
    np.testing.assert_array_equal(searched[0], _run(build, [nan], False, monkeypatch)[0])


@pytest.mark.parametrize("shape, window, strides, padding, dtype", [
    ((1, 8, 8, 32), (2, 2), (2, 2), "VALID", np.float32),  # the digits CNN at batch 1
    ((1, 4, 4, 64), (2, 2), (2, 2), "VALID", np.float32),
    ((2, 9, 7, 5), (3, 3), (2, 2), "SAME", np.float64),    # the any-window loop, padded
    ((3, 7, 7, 4), (2, 2), (1, 1), "VALID", np.float32),   # overlapping 2x2 windows
])
def test_inference_runner_matches_the_reference(shape, window, strides, padding, dtype,
                                                monkeypatch):
    """Without a gradient kernel in the process, MaxPool runs a per-shape runner from its second
    call on: the numpy kernel's values, on new inputs of the shape each call."""
    from graphflow.kernels.cpu.reference import pool_records
    monkeypatch.setattr(pool_records, "recalling", False)
    made = []
    real = jit_pool.runner
    monkeypatch.setattr(jit_pool, "runner", lambda *a: made.append(real(*a)) or made[-1])
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal(shape).astype(dtype) for _ in range(3)]
    inputs[1][0, 0, 0, 0] = np.nan  # NaN propagates, as the reference's maximum
    ksize, s = [1, *window, 1], [1, *strides, 1]

    def run(jit):
        monkeypatch.setattr(jit_pool, "MIN_ELEMENTS", 0)
        tf.reset_default_graph()
        xs = tf.placeholder(tf.as_dtype(dtype), shape)
        y = tf.nn.max_pool(xs, ksize, s, padding)
        with TABLE.restricted_to({"numba"} if jit else ()), tf.Session() as sess:
            return [sess.run(y, {xs: x}) for x in inputs]
    got = run(True)
    assert len(made) == 1 and made[0] is not None  # made once, then reused
    want = run(False)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_no_runner_once_a_gradient_kernel_was_built(monkeypatch):
    """A MaxPoolGrad kernel built in the process makes MaxPool record its outputs for it (the
    runner records nothing), and several threads on a large input keep the pool's split."""
    from graphflow.kernels.cpu.reference import conv_geometry, pool_records
    monkeypatch.setattr(pool_records, "recalling", False)
    x = np.zeros((1, 8, 8, 32), np.float32)
    geo = conv_geometry.Geometry(8, 8, 2, 2, 2, 2, 1, 1, "VALID")
    assert jit_pool.runner(x, geo, 2) is not None
    big = np.zeros((64, 256, 256, 1), np.float32)
    big_geo = conv_geometry.Geometry(256, 256, 2, 2, 2, 2, 1, 1, "VALID")
    assert jit_pool.runner(big, big_geo, 2) is None and jit_pool.runner(big, big_geo, 1)
    tf.reset_default_graph()
    xs = tf.placeholder(tf.float32, x.shape)
    with tf.Session() as sess:  # the plan's kernels are built at its first run
        sess.run(tf.gradients(tf.nn.max_pool(xs, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), xs),
                 {xs: x})
    assert pool_records.recalling
    assert jit_pool.runner(x, geo, 1) is None
