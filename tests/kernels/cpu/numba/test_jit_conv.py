"""graphflow.kernels.cpu.numba.jit_conv: the compiled direct convolution gives the numpy reference's
values (im2col product of conv_kernels.py, then bias add and Relu) to rounding for one to four
input channels, SAME and VALID padding, strides, dilations, float32 and float64, NaN and negative
zero through the Relu; FusedConv2D takes it for NHWC inputs with few filter taps and small outputs
(with the values of the numpy path), and leaves it for other activations, NCHW, filters of many
taps and large outputs."""

import contextlib

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.numba import jit_conv
from graphflow.kernels.cpu.reference.conv_geometry import Geometry, im2col
from graphflow.ops import fused_ops

pytestmark = pytest.mark.skipif(not jit_conv.available(),
                                reason="numba is not installed (or GRAPHFLOW_NO_JIT=1)")


def _reference(x, f, geo, bias, relu):
    cols = im2col(geo.pad(x), geo)
    out = np.dot(cols, f.reshape(-1, f.shape[3])).reshape(x.shape[0], geo.oh, geo.ow, f.shape[3])
    out += bias
    return np.maximum(out, 0) if relu else out


SHAPES = [  # input NHWC, filter HWIO, strides, dilations, padding
    ((1, 8, 8, 1), (3, 3, 1, 32), (1, 1), (1, 1), "SAME"),
    ((2, 7, 9, 3), (3, 3, 3, 16), (1, 1), (1, 1), "SAME"),
    ((3, 9, 8, 4), (5, 3, 4, 8), (2, 1), (1, 1), "SAME"),
    ((2, 10, 11, 2), (3, 3, 2, 5), (2, 3), (1, 1), "VALID"),
    ((1, 12, 12, 1), (3, 3, 1, 7), (1, 1), (2, 2), "SAME"),
    ((1, 6, 6, 1), (1, 1, 1, 3), (1, 1), (1, 1), "VALID"),
]


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_direct_loop_matches_the_im2col_reference(shape, dtype, relu):
    x_shape, f_shape, (sh, sw), (dh, dw), padding = shape
    rng = np.random.default_rng(1)
    x = rng.standard_normal(x_shape).astype(dtype)
    f = rng.standard_normal(f_shape).astype(dtype)
    bias = rng.standard_normal(f_shape[3]).astype(dtype)
    geo = Geometry(x_shape[1], x_shape[2], f_shape[0], f_shape[1], sh, sw, dh, dw,
                                padding)
    got = jit_conv.conv2d(x, f, geo, bias, relu)
    want = _reference(x, f, geo, bias, relu)
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    if relu:
        assert (got >= 0).all()
    np.testing.assert_allclose(jit_conv.conv2d(x, f, geo), _reference(x, f, geo, 0, False),
                               rtol=tol, atol=tol)  # no bias


def test_relu_keeps_nan_and_negative_zero_as_numpy_maximum():
    x = np.zeros((1, 4, 4, 1), np.float32)
    x[0, 1, 1, 0] = np.nan
    f = np.ones((1, 1, 1, 2), np.float32)
    bias = np.array([-0.0, -1.0], np.float32)
    geo = Geometry(4, 4, 1, 1, 1, 1, 1, 1, "VALID")
    got = jit_conv.conv2d(x, f, geo, bias, True)
    want = np.maximum(x * f[0, 0] + bias, 0)
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got[0, 1, 1]).all()
    assert np.signbit(got[0, 0, 0, 0]) == np.signbit(want[0, 0, 0, 0])


def _fused(x, f, b, activation, fmt="NHWC", threads=None, names=None):
    """The FusedConv2D's value, the plan choosing among the implementations `names` (and the
    reference; None: all)."""
    tf.reset_default_graph()
    xs = [tf.placeholder(tf.as_dtype(a.dtype), a.shape) for a in (x, f, b)]
    out = fused_ops.fused_conv2d(*xs, strides=[1, 1, 1, 1], padding="SAME", data_format=fmt,
                                 activation=activation)
    config = None if threads is None else tf.ConfigProto(intra_op_parallelism_threads=threads)
    restrict = (contextlib.nullcontext() if names is None
                else cpu_kernels.TABLE.restricted_to(names))
    with restrict, tf.Session(config=config) as sess:
        return sess.run(out, dict(zip(xs, (x, f, b))))


@pytest.mark.parametrize("batch, activation, fmt, threads, taken", [
    (1, "Relu", "NHWC", 1, True), (2, "", "NHWC", 2, True), (1, "Tanh", "NHWC", 2, False),
    (1, "Relu", "NCHW", 2, False), (64, "Relu", "NHWC", 1, True), (256, "Relu", "NHWC", 1, True),
    (256, "Relu", "NHWC", 2, True), (512, "Relu", "NHWC", 2, True), (1024, "Relu", "NHWC", 2, False)])
def test_fused_conv2d_takes_the_loop_for_small_nhwc_relu_or_no_activation(batch, activation, fmt,
                                                                         threads, taken,
                                                                         monkeypatch):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((batch, 8, 8, 1) if fmt == "NHWC" else (batch, 1, 8, 8),
                            dtype=np.float32)
    f = rng.standard_normal((3, 3, 1, 32), dtype=np.float32)
    b = rng.standard_normal(32, dtype=np.float32)
    calls = []
    real, prepared = jit_conv.conv2d, jit_conv.Prepared.__call__
    monkeypatch.setattr(jit_conv, "conv2d", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(jit_conv.Prepared, "__call__",  # the route kept per shapes
                        lambda *a: calls.append(1) or prepared(*a))
    got = _fused(x, f, b, activation, fmt, threads)
    assert bool(calls) == taken
    want = _fused(x, f, b, activation, fmt, threads, names=())  # the reference
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("activation", ["Relu", "", "Tanh"])
def test_gathered_fused_conv2d_adds_the_bias_in_one_pass_with_numpy_bits(activation, monkeypatch):
    from graphflow.kernels.cpu.numba import jit_small
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 8, 8, 8), dtype=np.float32)  # 72 taps: gathered, not the loop
    f = rng.standard_normal((3, 3, 8, 16), dtype=np.float32)
    b = rng.standard_normal(16, dtype=np.float32)
    calls = []
    real = jit_small.add_bias
    monkeypatch.setattr(jit_small, "add_bias", lambda *a: calls.append(1) or real(*a))
    got = _fused(x, f, b, activation, names={"gather"})  # (onednn_small: test_dnnl_small_conv.py)
    assert bool(calls) == (activation != "Tanh")
    monkeypatch.setattr(jit_small.loops, "compiled", False)
    np.testing.assert_array_equal(got, _fused(x, f, b, activation, names={"gather"}))


def test_filters_of_many_taps_are_left_to_the_products():
    geo = Geometry(8, 8, 3, 3, 1, 1, 1, 1, "SAME")
    x = np.ones((4, 8, 8, 5), np.float32)
    assert not jit_conv.applies(x, np.ones((3, 3, 5, 8), np.float32), geo)  # 45 taps
    assert jit_conv.applies(x[..., :4], np.ones((3, 3, 4, 8), np.float32), geo)
    assert not jit_conv.applies(x[:1, :4, :4, :1], np.ones((3, 3, 1, 8), np.float32),
                                Geometry(4, 4, 3, 3, 1, 1, 1, 1, "SAME"))  # 128 out


@pytest.mark.parametrize("f_shape, top", [((3, 3, 1, 32), jit_conv.MAX_OUTPUTS_FEW_TAPS),
                                          ((3, 3, 3, 32), jit_conv.MAX_OUTPUTS),
                                          ((5, 5, 1, 16), jit_conv.MAX_OUTPUTS)])
def test_filters_of_few_taps_take_the_loop_up_to_larger_outputs(f_shape, top):
    """Up to FEW_TAPS taps the loop beats oneDNN at every measured size; with more, only small
    outputs run here."""
    geo = Geometry(8, 8, f_shape[0], f_shape[1], 1, 1, 1, 1, "SAME")
    f = np.ones(f_shape, np.float32)
    batch = top // (64 * f_shape[3])
    assert jit_conv.applies(np.ones((batch, 8, 8, f_shape[2]), np.float32), f, geo)
    assert not jit_conv.applies(np.ones((batch + 1, 8, 8, f_shape[2]), np.float32), f, geo)


@pytest.mark.parametrize("shape, f_shape, strides, padding", [
    ((1, 8, 8, 1), (3, 3, 1, 32), (1, 1), "SAME"),
    ((2, 9, 7, 3), (3, 3, 3, 8), (2, 1), "SAME"),
    ((1, 10, 11, 2), (3, 3, 2, 5), (2, 3), "VALID"),
])
def test_prepared_route_is_conv2d_on_new_inputs_each_call(shape, f_shape, strides, padding):
    """The kept per-shape route gives `conv2d`'s bits on each new input (its buffer's border stays
    zero), and a strided input view is copied in as it is."""
    rng = np.random.default_rng(4)
    geo = Geometry(shape[1], shape[2], f_shape[0], f_shape[1], *strides, 1, 1,
                                padding)
    f = rng.standard_normal(f_shape).astype(np.float32)
    b = rng.standard_normal(f_shape[3]).astype(np.float32)
    x0 = rng.standard_normal(shape).astype(np.float32)
    run = jit_conv.Prepared(x0, f, geo, True)
    for k in range(3):
        x = rng.standard_normal(shape).astype(np.float32) * (k + 1)
        if k == 2:
            x = np.asfortranarray(x)
        np.testing.assert_array_equal(run(x, f, b), jit_conv.conv2d(x, f, geo, b, True))
