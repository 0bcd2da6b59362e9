"""graphflow.kernels.cpu.numba.jit_pool_nchw: NCHW MaxPool, MaxPoolGrad, AvgPool and AvgPoolGrad run on
the NCHW arrays (no transposes) and give the numpy reference's values (conv_kernels.py and
avg_pool_kernels.py with the compiled pools and oneDNN off) on random geometries (SAME padding,
strides, cropped and overlapping windows, ties, zeros of both signs, float32 and float64, one and
three threads): the same bits for both forward pools (NaN included) and the average's gradient;
for the max gradient equal values where windows do not overlap (a -0.0 gradient lands as +0.0,
as on the NHWC compiled route; numpy's tiled kernel copies it) and, where they overlap, values
within float32/float64 rounding (additions in window order, not tap order) on the same routes.
NCHW MaxPoolGrad runs oneDNN's NCHW primitives where the library is installed."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu import TABLE
from graphflow.kernels.cpu.numba import jit_pool, jit_pool_nchw
from graphflow.kernels.cpu.onednn import dnnl, dnnl_pool
from graphflow.kernels.cpu.reference import pool_kernels
from graphflow.ops import conv_ops
from tests.op_cases import run_build

pytestmark = pytest.mark.skipif(jit_pool_nchw.loops() is None or jit_pool.loops() is None,
                                reason="numba is not installed (or GRAPHFLOW_NO_JIT=1)")

LIBRARY = dnnl.library()
LOOPS = jit_pool.loops() or False
SPIED = ("max_pool", "max_pool_grad", "avg_pool", "avg_pool_grad")


class _Node:
    def __init__(self, attrs):
        self.attrs = attrs


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _run(build, inputs, jit, monkeypatch, threads=1, onednn=False):
    """(values, names of the jit_pool_nchw functions that ran, whether oneDNN's NCHW pooling ran);
    without `jit` the numpy reference (compiled pools and oneDNN off)."""
    monkeypatch.setattr(jit_pool, "MIN_ELEMENTS", 0)
    if onednn and LIBRARY is None:
        pytest.skip("oneDNN is not installed (onednn-cpu-gomp) or GRAPHFLOW_NO_DNNL=1")
    calls = []
    def spy(real, name):
        def call(*a):
            out = real(*a)
            if out is not None:  # (max_pool_grad: None where these loops do not take it)
                calls.append(name)
            return out
        return call
    for name in SPIED:
        monkeypatch.setattr(jit_pool_nchw, name, spy(getattr(jit_pool_nchw, name), name))
    real_dnnl = dnnl_pool.max_pool_grad
    monkeypatch.setattr(dnnl_pool, "max_pool_grad",
                        lambda *a: calls.append("dnnl nchw" if a[4:] == (True,) else "dnnl")
                        or real_dnnl(*a))
    names = ({"numba"} if jit else set()) | ({"onednn"} if onednn else set())
    with TABLE.restricted_to(names):
        return run_build(build, inputs, threads, optimize=False), calls  # g: not folded


SHAPES = [  # input (NCHW), window, strides, padding
    ((8, 16, 28, 28), (2, 2), (2, 2), "VALID"),   # the 2x2 stride-2 loops
    ((5, 5, 11, 9), (2, 2), (2, 2), "VALID"),     # ... a cropped last row and column
    ((5, 5, 11, 9), (2, 2), (2, 2), "SAME"),      # padded: the general loops
    ((5, 5, 11, 9), (2, 2), (1, 1), "VALID"),     # overlapping windows
    ((8, 5, 15, 13), (3, 3), (2, 2), "SAME"),
    ((8, 5, 15, 13), (3, 2), (1, 2), "VALID"),
    ((4, 5, 10, 11), (3, 3), (3, 3), "VALID"),    # 3x3 windows that tile: the write-once gradient
    ((3, 4, 6, 7), (5, 4), (2, 3), "SAME"),
]


def _values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = np.round(rng.standard_normal(shape) * 4) / 4  # ties and exact cancellations
    a[rng.random(shape) < 0.2] = -0.0
    return a.astype(dtype)


def _build(kind, x_shape, k, s, padding, dtype):
    kw = dict(ksize=[1, 1, *k], strides=[1, 1, *s], padding=padding, data_format="NCHW")

    def build(xs):
        y = (tf.nn.max_pool if kind == "max" else tf.nn.avg_pool)(xs, **kw)
        g = tf.constant(_values(y.shape.as_list(), dtype, 3))
        if kind == "max":
            return [y, conv_ops.max_pool_grad(xs, y, g, **kw)]
        return [y, conv_ops.avg_pool_grad(list(x_shape), g, **kw)]
    return build


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_nchw_loops_match_the_reference(shape, kind, dtype, threads, monkeypatch):
    monkeypatch.setattr(jit_pool, "PARALLEL_MIN_ELEMENTS", 1)  # images split over the threads
    x_shape, k, s, padding = shape
    x = _values(x_shape, dtype, 2)
    build = _build(kind, x_shape, k, s, padding, dtype)
    got, calls = _run(build, [x], True, monkeypatch, threads)
    want, none = _run(build, [x], False, monkeypatch)
    assert sorted(set(calls)) == [f"{kind}_pool", f"{kind}_pool_grad"] and not none
    np.testing.assert_array_equal(_bits(got[0]), _bits(want[0]))
    overlapping = k[0] > s[0] or k[1] > s[1]
    if kind == "avg":
        np.testing.assert_array_equal(_bits(got[1]), _bits(want[1]))
    elif not overlapping:  # equal values; a -0.0 gradient lands as +0.0 (0 + g, as the NHWC
        np.testing.assert_array_equal(got[1], want[1])  # compiled search adds it; numpy's
        # tiled kernel copies g)
    else:
        tol = 1e-6 if dtype == np.float32 else 1e-13
        np.testing.assert_allclose(got[1], want[1], rtol=tol, atol=tol)
        assert np.array_equal(got[1] != 0, want[1] != 0)  # the same routes, ties included


def test_nan_propagates_in_the_forward_max(monkeypatch):
    x = _values((2, 3, 8, 8), np.float32, 5)
    x[0, 0, 1, 1] = np.nan   # second row of a 2x2 window
    x[1, 2, 4, 7] = np.nan
    for k, s, padding in [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME")]:
        kw = dict(ksize=[1, 1, *k], strides=[1, 1, *s], padding=padding, data_format="NCHW")
        got, calls = _run(lambda xs, kw=kw: tf.nn.max_pool(xs, **kw), [x], True, monkeypatch)
        want, _ = _run(lambda xs, kw=kw: tf.nn.max_pool(xs, **kw), [x], False, monkeypatch)
        assert calls == ["max_pool"]
        assert np.isnan(want).sum() >= 2
        np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.skipif(LIBRARY is None, reason="oneDNN is not installed (onednn-cpu-gomp)")
@pytest.mark.parametrize("shape", SHAPES[1:5], ids=str)  # (exactly covered 2x2: the pairs loop)
def test_nchw_max_pool_grad_through_onednn_matches_the_reference(shape, monkeypatch):
    x_shape, k, s, padding = shape
    x = _values(x_shape, np.float32, 2)
    build = _build("max", x_shape, k, s, padding, np.float32)
    got, calls = _run(build, [x], True, monkeypatch, onednn=True)
    want, _ = _run(build, [x], False, monkeypatch)
    assert "dnnl nchw" in calls and "dnnl" not in calls  # no transposed NHWC call
    np.testing.assert_array_equal(got[0], want[0])
    tol = 0 if k == s and padding == "VALID" else 1e-6
    np.testing.assert_allclose(got[1], want[1], rtol=tol, atol=tol)
    assert np.array_equal(got[1] != 0, want[1] != 0)


def test_nhwc_pools_do_not_take_these_loops(monkeypatch):
    x = _values((2, 8, 8, 3), np.float32, 6)
    got, calls = _run(lambda xs: tf.nn.avg_pool(xs, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), [x],
                      True, monkeypatch)
    assert calls == [] and got.shape == (2, 4, 4, 3)


@pytest.mark.parametrize("shape", [(3, 4, 8, 6), (2, 3, 9, 7)], ids=str)
def test_two_by_two_gradient_keeps_the_nhwc_search_rules(shape, monkeypatch):
    """The pairs loop (planes the windows cover exactly) and the 2x2 loop (cropped planes) route
    the gradient as jit_pool's NHWC window search does (first maximum, NaN inputs included, the
    same bits); with oneDNN off."""
    rng = np.random.default_rng(7)
    x = np.round(rng.standard_normal(shape) * 2) / 2  # ties
    x[rng.random(shape) < 0.1] = np.nan  # NaN at every tap position somewhere
    x[0, 0, :2, :2] = np.nan  # a window of NaN
    x = x.astype(np.float32)
    pool = pool_kernels.Pool(_Node(dict(ksize=[1, 1, 2, 2], strides=[1, 1, 2, 2],
                                        padding="VALID", data_format="NCHW")))
    geo = pool.geometry(pool.nhwc(shape))
    g = _values((shape[0], shape[1], geo.oh, geo.ow), np.float32, 8)
    got = jit_pool_nchw.max_pool_grad(x, g, geo, 1)
    assert got is not None and np.isnan(x).sum() > 10
    nhwc = jit_pool.max_pool_grad(x.transpose(0, 2, 3, 1), g.transpose(0, 2, 3, 1), geo, 1)
    np.testing.assert_array_equal(_bits(got), _bits(nhwc.transpose(0, 3, 1, 2)))
