"""graphflow.kernels.cpu.blocked.conv_taps: convolutions producing few channels (Conv2D to one channel,
Conv2DBackpropInput to 1-3 channels) as tap products and shifted sums give the reference kernels'
values (conv_kernels.py, the reference) on strides, dilations, both paddings, NCHW, float32 and
float64, batches split over threads; the kernels take the route exactly where the rules say;
FusedConv2D to one channel takes it too and equals Conv2D + bias + activation."""

import contextlib

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.blocked import conv_taps
from graphflow.kernels.cpu.reference.conv_geometry import Geometry


def _run(build, inputs, blocked, monkeypatch, calls=None):
    """`build`'s value with every implementation (blocked) or the reference only."""
    tf.reset_default_graph()
    placeholders = [tf.placeholder(tf.as_dtype(v.dtype), v.shape) for v in inputs]
    restrict = contextlib.nullcontext() if blocked else cpu_kernels.TABLE.restricted_to()
    with restrict, tf.Session() as sess:
        return sess.run(build(*placeholders), dict(zip(placeholders, inputs)))


def _counting(monkeypatch):
    calls = []
    for name in ("conv2d", "conv2d_backprop_input"):
        original = getattr(conv_taps, name)
        monkeypatch.setattr(conv_taps, name,
                            lambda *a, _f=original, _n=name: calls.append(_n) or _f(*a))
    return calls


def _tolerance(dtype):
    return dict(rtol=2e-4, atol=2e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)


FORWARD = [  # x shape, filter, strides, padding, dilations, data format, dtype
    ((64, 28, 28, 16), (5, 5, 16, 1), 1, "SAME", 1, "NHWC", np.float32),   # threads, oneDNN size
    ((8, 30, 28, 4), (3, 2, 4, 1), 1, "VALID", (2, 1), "NHWC", np.float64),
    ((4, 5, 24, 24), (3, 3, 5, 1), 1, "SAME", 1, "NCHW", np.float64),
]
# (smaller ones run the gathered kernel, `conv_gather.py`, first)


@pytest.mark.parametrize("shape, f_shape, strides, padding, dilations, fmt, dtype", FORWARD)
def test_forward_to_one_channel_equals_the_reference(shape, f_shape, strides, padding, dilations,
                                                     fmt, dtype, monkeypatch):
    r = np.random.default_rng(0)
    x, f = r.standard_normal(shape).astype(dtype), r.standard_normal(f_shape).astype(dtype)

    def build(xs, fs):
        return tf.nn.conv2d(xs, fs, strides, padding, data_format=fmt, dilations=dilations)
    want = _run(build, [x, f], False, monkeypatch)
    calls = _counting(monkeypatch)
    got = _run(build, [x, f], True, monkeypatch)
    assert calls == ["conv2d"]
    np.testing.assert_allclose(got, want, **_tolerance(dtype))


INPUT_GRADS = [  # input shape, filter, strides, padding, dilations, data format, dtype
    ((64, 28, 28, 1), (5, 5, 1, 16), 1, "SAME", 1, "NHWC", np.float32),
    ((16, 32, 32, 3), (4, 4, 3, 32), 2, "SAME", 1, "NHWC", np.float32),   # conv2d_transpose to RGB
    ((3, 9, 8, 2), (3, 3, 2, 5), (2, 3), "VALID", 1, "NHWC", np.float64),  # rows no window reaches
    ((2, 10, 9, 1), (3, 2, 1, 4), 1, "SAME", (2, 3), "NHWC", np.float64),
    ((2, 2, 7, 6), (3, 3, 2, 3), 1, "SAME", 1, "NCHW", np.float64),
]


@pytest.mark.parametrize("shape, f_shape, strides, padding, dilations, fmt, dtype", INPUT_GRADS)
def test_input_gradient_to_few_channels_equals_the_reference(shape, f_shape, strides, padding,
                                                             dilations, fmt, dtype, monkeypatch):
    r = np.random.default_rng(1)
    f = r.standard_normal(f_shape).astype(dtype)
    s = [1, 1, *np.broadcast_to(strides, 2)] if fmt == "NCHW" else [1, *np.broadcast_to(strides, 2), 1]
    d = [1, 1, *np.broadcast_to(dilations, 2)] if fmt == "NCHW" else [1, *np.broadcast_to(dilations, 2), 1]
    y_shape = tf.nn.conv2d(tf.zeros(shape, tf.as_dtype(dtype)), tf.constant(f), s, padding,
                           data_format=fmt, dilations=d).shape.as_list()
    g = r.standard_normal(y_shape).astype(dtype)

    def build(fs, gs):
        return tf.nn.conv2d_backprop_input(list(shape), fs, gs, s, padding, data_format=fmt,
                                           dilations=d)
    want = _run(build, [f, g], False, monkeypatch)
    calls = _counting(monkeypatch)
    got = _run(build, [f, g], True, monkeypatch)
    assert calls == ["conv2d_backprop_input"]
    np.testing.assert_allclose(got, want, **_tolerance(dtype))


@pytest.mark.parametrize("strides, many, few, forward, input_grad", [
    (1, 16, 1, True, True),    # to one channel, and the input gradient of a 1-channel layer
    (1, 16, 2, False, True),   # forward to 2 channels: not taken; a 2-channel input's gradient: taken
    (1, 16, 3, False, False),  # 3 channels at stride 1: oneDNN was faster
    (2, 16, 3, False, True),   # ... with a stride, the input gradient (conv2d_transpose to RGB)
    (2, 16, 1, False, True),   # a strided forward computes every padded pixel's taps: not taken
    (1, 1, 1, False, False),   # nothing to reduce
])
def test_the_routes(strides, many, few, forward, input_grad):
    """forward: `many` channels in, `few` out; input gradient: of a layer with `few` channels in,
    `many` out."""
    geo = Geometry(16, 16, 3, 3, strides, strides, 1, 1, "SAME")
    assert conv_taps.forward_applies(geo, many, few) == forward
    assert conv_taps.input_grad_applies(geo, few, many) == input_grad


def test_fused_conv_to_one_channel_takes_the_route_and_equals_the_unfused_graph(monkeypatch):
    r = np.random.default_rng(2)
    x = r.standard_normal((32, 20, 20, 8)).astype(np.float32)
    f = r.standard_normal((3, 3, 8, 1)).astype(np.float32)
    b = r.standard_normal(1).astype(np.float32)
    runs = {}
    for optimize in (True, False):
        calls = _counting(monkeypatch)
        tf.reset_default_graph()
        xs = tf.placeholder(tf.float32, x.shape)
        y = tf.nn.relu(tf.nn.conv2d(xs, tf.constant(f), [1, 1, 1, 1], "SAME") + b)
        with tf.Session(optimize=optimize) as sess:
            runs[optimize] = sess.run(y, {xs: x})
        assert calls == ["conv2d"]
    np.testing.assert_array_equal(runs[True], runs[False])
