"""graphflow.kernels.cpu.reference.fused_pool_kernels: FusedMaxPoolGradReluMask gives the exact bits of the
unfused pair `where(x > 0, max_pool_grad(x, max_pool(x), g), 0)` on every route the MaxPoolGrad
kernel takes (the forward pass's recorded argmaxes, oneDNN, the compiled window search, numpy),
with tied maxima, zeros of both signs, -0.0 and NaN gradients and NaN inputs (the fallback to the
unfused computation), 2x2 and overlapping windows, padding, NHWC and NCHW; it matches the loop
reference of the op cases; and the masked-gradient pass (`positive_grad`) matches numpy's where."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu import TABLE
from graphflow.kernels.cpu.numba import jit_pool, jit_pool_nchw
from graphflow.kernels.cpu.onednn import dnnl, dnnl_pool
from graphflow.kernels.cpu.reference import fused_pool_kernels
from graphflow.ops import conv_ops, fused_ops
from tests.op_cases import nn_cases

LIBRARY = dnnl.library()
LOOPS = jit_pool.loops() or False

# route -> (oneDNN on, numba loops on, session runs, the function that must have run)
ROUTES = {
    "recorded": (False, True, 2, "max_pool_grad_from_argmax"),  # 2nd run: the MaxPool recorded
    "search": (False, True, 1, "max_pool_grad"),
    "onednn": (True, True, 1, "dnnl"),
    "numpy": (False, False, 1, None),
}

SHAPES = [  # input (NHWC), window, strides, padding
    ((4, 12, 12, 8), (2, 2), (2, 2), "VALID"),   # windows tile the input
    ((3, 11, 9, 5), (2, 2), (2, 2), "VALID"),    # ... a cropped one
    ((3, 11, 9, 5), (3, 3), (2, 2), "SAME"),     # overlapping windows, padding
    ((2, 9, 10, 6), (2, 3), (1, 2), "SAME"),
]


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _input(shape, dtype, seed=0):
    """ReLU outputs with ties: zeros of both signs, repeated values, negatives kept in part."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.standard_normal(shape) * 4) / 4  # many exact ties
    x = np.where(rng.random(shape) < 0.6, np.maximum(x, 0), x)
    x[rng.random(shape) < 0.1] = -0.0
    return x.astype(dtype)


def _grad(shape, dtype, seed=1):
    g = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    g.reshape(-1)[::7] = -0.0
    return g


def _pair(x, g, k, s, padding, data_format, route, monkeypatch, threads=1, spy=None):
    """[(fused, unfused) per run] of one session on `route` (`spy`: the function that must have
    run, if not the route's)."""
    onednn, loops, runs, route_spy = ROUTES[route]
    spy = route_spy if spy is None else spy
    if onednn and LIBRARY is None:
        pytest.skip("oneDNN is not installed (onednn-cpu-gomp) or GRAPHFLOW_NO_DNNL=1")
    if loops and not LOOPS:
        pytest.skip("numba is not installed (or GRAPHFLOW_NO_JIT=1)")
    monkeypatch.setattr(jit_pool, "MIN_ELEMENTS", 0)
    calls = []
    for module, name in ((dnnl_pool, "max_pool_grad"), (jit_pool, "max_pool_grad"),
                         (jit_pool, "max_pool_grad_from_argmax"),
                         (jit_pool, "tiled_grad_relu_mask")):
        real = getattr(module, name)
        label = "dnnl" if module is dnnl_pool else name
        monkeypatch.setattr(module, name,
                            lambda *a, real=real, label=label: calls.append(label) or real(*a))
    real_nchw = jit_pool_nchw.max_pool_grad

    def nchw(*a):
        dx = real_nchw(*a)
        if dx is not None:  # (None: not NCHW, or the loops are off)
            calls.append("nchw")
        return dx
    monkeypatch.setattr(jit_pool_nchw, "max_pool_grad", nchw)
    tf.reset_default_graph()
    xs = tf.placeholder(tf.as_dtype(x.dtype), x.shape)
    gs = tf.placeholder(tf.as_dtype(g.dtype), g.shape)
    kw = dict(ksize=[1, *k, 1], strides=[1, *s, 1], padding=padding, data_format=data_format)
    if data_format == "NCHW":
        kw.update(ksize=[1, 1, *k], strides=[1, 1, *s])
    y = tf.nn.max_pool(xs, **kw)
    fused = fused_ops.fused_max_pool_grad_relu_mask(xs, y, gs, **kw)
    dx = conv_ops.max_pool_grad(xs, y, gs, **kw)
    unfused = tf.where(xs > 0, dx, tf.zeros_like(dx))
    # optimize=False: the unfused pair stays as built (the fusion pass would fuse it)
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    names = {"onednn"} if onednn else {"numba"} if loops else set()  # oneDNN: no loops
    with TABLE.restricted_to(names), tf.Session(optimize=False, config=config) as sess:
        values = [sess.run([fused, unfused], {xs: x, gs: g}) for _ in range(runs)]
    assert spy is None or spy in calls, f"the {route} route did not run"
    if route == "recorded":  # the fused op's own loop where the windows tile the input
        assert ("tiled_grad_relu_mask" in calls) == (k == s and padding == "VALID")
    return values


def _layout(a, data_format):
    return np.ascontiguousarray(nn_cases._nchw(a)) if data_format == "NCHW" else a


# oneDNN's MaxPoolGrad takes float32 only: its route is not paired with float64
_ROUTE_DTYPES = [(r, d) for r in ROUTES for d in (np.float32, np.float64)
                 if not (r == "onednn" and d == np.float64)]


@pytest.mark.parametrize("route, dtype", _ROUTE_DTYPES, ids=lambda v: getattr(v, "__name__", v))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_fused_gives_the_unfused_bits_on_every_route(shape, dtype, route, monkeypatch):
    x_shape, k, s, padding = shape
    x = _input(x_shape, dtype)
    g = _grad(nn_cases._pooled_shape(x_shape, k, s, padding), dtype)
    for fused, unfused in _pair(x, g, k, s, padding, "NHWC", route, monkeypatch):
        assert np.array_equal(_bits(fused), _bits(unfused))
        assert np.any(fused != 0)


@pytest.mark.parametrize("route", [r for r in ROUTES if r != "recorded"])  # (NCHW records none)
def test_nchw_gives_the_unfused_bits(route, monkeypatch):
    x = _layout(_input((3, 10, 8, 4), np.float32), "NCHW")
    g = _layout(_grad((3, 5, 4, 4), np.float32), "NCHW")
    spy = {"search": "nchw", "onednn": "dnnl", "numpy": None}[route]  # no transposes either way
    for fused, unfused in _pair(x, g, (2, 2), (2, 2), "VALID", "NCHW", route, monkeypatch,
                                spy=spy):
        assert np.array_equal(_bits(fused), _bits(unfused))


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("shape", SHAPES[::2], ids=str)
def test_nan_inputs_and_gradients_keep_the_unfused_bits(shape, route, monkeypatch):
    x_shape, k, s, padding = shape
    x = _input(x_shape, np.float32)
    x[0, 0, 1, 0] = x[1, 3, 2, 1] = np.nan      # a NaN beside a window's first tap
    x[0, 2, 2, 2] = np.nan                      # a NaN as the first tap
    x[1, 4, 4, 3] = 5.0                         # a positive argmax next to ...
    x[1, 4, 5, 3] = np.nan                      # ... a NaN in its window
    g = _grad(nn_cases._pooled_shape(x_shape, k, s, padding), np.float32)
    g[0, 0, 0, :] = np.nan
    for fused, unfused in _pair(x, g, k, s, padding, "NHWC", route, monkeypatch):
        assert np.array_equal(_bits(fused), _bits(unfused))
        assert np.isnan(unfused).any()


@pytest.mark.parametrize("shape", SHAPES[:2], ids=str)
def test_the_masked_tiled_loop_on_several_threads(shape, monkeypatch):
    monkeypatch.setattr(jit_pool, "PARALLEL_MIN_ELEMENTS", 1)  # images split over the threads
    x_shape, k, s, padding = shape
    x = _input(x_shape, np.float32)
    g = _grad(nn_cases._pooled_shape(x_shape, k, s, padding), np.float32)
    for fused, unfused in _pair(x, g, k, s, padding, "NHWC", "recorded", monkeypatch, threads=3):
        assert np.array_equal(_bits(fused), _bits(unfused))
    x[-1, 0, 0, -1], x[-1, 0, 1, -1] = 5.0, np.nan  # in the last block: y NaN, the argmax 5.0
    for fused, unfused in _pair(x, g, k, s, padding, "NHWC", "recorded", monkeypatch, threads=3):
        assert np.array_equal(_bits(fused), _bits(unfused))


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_fused_matches_the_loop_reference(shape, route, monkeypatch):
    x_shape, k, s, padding = shape
    x = nn_cases._distinct(*x_shape).astype(np.float32)  # no ties: one reference routing
    g = _grad(nn_cases._pooled_shape(x_shape, k, s, padding), np.float32)
    want = np.where(x > 0, nn_cases._max_pool_grad_ref(x.astype(np.float64), g.astype(np.float64),
                                                       k, s, padding), 0)
    for fused, _ in _pair(x, g, k, s, padding, "NHWC", route, monkeypatch):
        np.testing.assert_allclose(fused, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_positive_grad_is_numpys_where_and_reports_nan(dtype, compiled):
    if compiled and not LOOPS:
        pytest.skip("numba is not installed (or GRAPHFLOW_NO_JIT=1)")
    positive_grad = jit_pool.positive_grad if compiled else fused_pool_kernels.positive_grad
    rng = np.random.default_rng(5)
    y = rng.standard_normal((3, 7, 5, 9)).astype(dtype)
    y.reshape(-1)[::5] = 0.0
    y.reshape(-1)[1::5] = -0.0
    g = _grad(y.shape, dtype)
    g.reshape(-1)[::11] = np.nan
    masked, nan = positive_grad(y, g)
    assert masked.dtype == dtype and not nan
    assert np.array_equal(_bits(masked), _bits(np.where(y > 0, g, dtype(0))))
    y.reshape(-1)[-1] = np.nan
    assert positive_grad(y, g)[1]
