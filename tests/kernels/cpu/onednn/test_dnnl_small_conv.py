"""graphflow.kernels.cpu.onednn.dnnl_small_conv: a small NHWC float32 FusedConv2D (below oneDNN's usual
minimum, where the gathered product ran) through one bound oneDNN primitive gives the numpy path's
values (reference Conv2D kernel, bias add, activation) to float32 rounding, with every activation
(exact ones as post-ops, others in numpy after), strides, dilations, VALID and uneven SAME padding,
on new inputs each call and from several threads at once (memory objects per thread), through the
compiled calls and through ctypes; float64,
NCHW and non-contiguous inputs keep to other routes or are made contiguous. Skipped where the
optional oneDNN library is not installed."""


import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.onednn import dnnl, dnnl_small_conv
from graphflow.kernels.cpu.reference.conv_geometry import Geometry, im2col
from graphflow.ops import fused_ops
from tests.tooling import required, run_on_threads

LIBRARY = dnnl.library()
pytestmark = pytest.mark.skipif(
    LIBRARY is None and not required("onednn"),
    reason="oneDNN is not installed (onednn-cpu-gomp) or GRAPHFLOW_NO_DNNL=1; CI provides it")

SHAPES = [  # input NHWC, filter HWIO, strides, dilations, padding
    ((1, 8, 8, 32), (3, 3, 32, 32), 1, 1, "SAME"),  # the digits CNN at batch 1
    ((1, 4, 4, 32), (3, 3, 32, 64), 1, 1, "SAME"),
    ((2, 7, 9, 6), (3, 2, 6, 5), 2, 1, "SAME"),      # uneven SAME padding
    ((1, 9, 8, 8), (3, 3, 8, 4), 1, 2, "VALID"),
]
ACTIVATIONS = ["", "Relu", "Relu6", "LeakyRelu", "Tanh"]


def _fused_graph(shape, f_shape, s, d, padding, activation, x, f, b, small_dnnl, monkeypatch):
    """The FusedConv2D's values on the inputs `x` (a list: one run each), through
    "onednn_small" or the reference."""
    tf.reset_default_graph()
    xs = tf.placeholder(tf.float32, shape)
    attrs = {"alpha": 0.2} if activation == "LeakyRelu" else {}
    y = fused_ops.fused_conv2d(xs, tf.constant(f), tf.constant(b), [1, s, s, 1], padding,
                               activation, "NHWC", dilations=[1, d, d, 1], activation_attrs=attrs)
    with cpu_kernels.TABLE.restricted_to({"onednn_small"} if small_dnnl else ()), \
            tf.Session() as sess:
        runs = [sess.run(y, {xs: v}) for v in x]
        chosen = list(sess._compiled_plans())[-1].kernel_choices()
    assert [n for _, t, _, n in chosen if t == "FusedConv2D"] == [
        "onednn_small" if small_dnnl else "reference"]
    return runs


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("shape, f_shape, s, d, padding", SHAPES, ids=str)
def test_bound_primitive_matches_the_numpy_path(shape, f_shape, s, d, padding, activation,
                                                monkeypatch):
    rng = np.random.default_rng(2)
    x = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    f = (rng.standard_normal(f_shape) * 0.2).astype(np.float32)
    b = rng.standard_normal(f_shape[3]).astype(np.float32)
    calls = []
    real = dnnl_small_conv.SmallConv.__call__
    monkeypatch.setattr(dnnl_small_conv.SmallConv, "__call__",
                        lambda self, *a: calls.append(1) or real(self, *a))
    got = _fused_graph(shape, f_shape, s, d, padding, activation, x, f, b, True, monkeypatch)
    assert len(calls) == 3, "a small NHWC float32 FusedConv2D takes the bound primitive"
    want = _fused_graph(shape, f_shape, s, d, padding, activation, x, f, b, False, monkeypatch)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("compiled", [True, False])
def test_threads_keep_their_own_memory_objects(compiled):
    """From several threads at once, through the compiled calls or ctypes: each call's values."""
    geo = Geometry(8, 8, 3, 3, 1, 1, 1, 1, "SAME")
    conv = dnnl_small_conv.SmallConv(geo, 1, 32, 32, dnnl.RELU_POST_OPS)
    if not compiled:
        conv._run = None
    elif conv._run is None:
        pytest.skip("numba is not installed (or GRAPHFLOW_NO_JIT=1)")
    rng = np.random.default_rng(5)
    f = rng.standard_normal((3, 3, 32, 32)).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    inputs = [rng.standard_normal((1, 8, 8, 32)).astype(np.float32) for _ in range(4)]
    want = [conv(x, f, b) for x in inputs]
    results, errors = {}, []

    def work(k):
        for _ in range(200):
            got = conv(inputs[k], f, b)
            if not np.array_equal(got, want[k]):
                errors.append(k)
        results[k] = got
    assert run_on_threads(work, 4) == []
    assert not errors and len(results) == 4
    reference = np.maximum(conv_kernels_reference(inputs[0], f, geo) + b, 0)
    np.testing.assert_allclose(want[0], reference, rtol=2e-5, atol=2e-5)


def conv_kernels_reference(x, f, geo):
    cols = im2col(geo.pad(x), geo)
    return np.dot(cols, f.reshape(-1, f.shape[3])).reshape(x.shape[0], geo.oh, geo.ow, f.shape[3])


def test_other_operands_take_other_routes():
    x = np.zeros((1, 8, 8, 4), np.float32)
    f = np.zeros((3, 3, 4, 8), np.float32)
    b = np.zeros(8, np.float32)
    assert dnnl_small_conv.applies(x, f, b)
    assert not dnnl_small_conv.applies(x.astype(np.float64), f.astype(np.float64),
                                       b.astype(np.float64))
    assert not dnnl_small_conv.applies(x, f, np.zeros(7, np.float32))
    assert not dnnl_small_conv.applies(np.zeros((1, 8, 16, 4), np.float32)[:, :, ::2], f, b)


def test_a_non_contiguous_input_is_made_contiguous():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 8, 8, 8)).astype(np.float32)
    f = rng.standard_normal((3, 3, 8, 8)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    tf.reset_default_graph()
    xs = tf.placeholder(tf.float32, x.shape)
    y = fused_ops.fused_conv2d(xs, tf.constant(f), tf.constant(b), [1, 1, 1, 1], "SAME", "Relu",
                               "NHWC")
    geo = Geometry(8, 8, 3, 3, 1, 1, 1, 1, "SAME")
    want = np.maximum(conv_kernels_reference(x, f, geo) + b, 0)
    with tf.Session() as sess:
        got = [sess.run(y, {xs: v}) for v in (x, np.asfortranarray(x))]
    for g in got:
        np.testing.assert_allclose(g, want, rtol=2e-5, atol=2e-5)
