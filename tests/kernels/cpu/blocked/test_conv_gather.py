"""graphflow.kernels.cpu.blocked.conv_gather: the gathered im2col convolution of small inputs gives the
reference kernel's values (conv_kernels.py) on every forward conv op case and on strides, dilations,
both paddings, NCHW, float32/float64; its kept zero-bordered buffers stay zero at the border across
calls and threads; larger inputs do not take it. The plans choose among the reference and "gather"
only (`TABLE.restricted_to`)."""

import threading

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.blocked import conv_gather
from graphflow.kernels.cpu.reference.conv_geometry import Geometry
from tests.op_cases import nn_cases


def _impls(gathered):
    return cpu_kernels.TABLE.restricted_to({"gather"} if gathered else ())


FORWARD_CASES = [c for c in nn_cases.CASES if c.op_type == "Conv2D"]


def _conv(x, w, gathered, **kw):
    tf.reset_default_graph()
    xs = tf.placeholder(tf.as_dtype(x.dtype), x.shape)
    y = tf.nn.conv2d(xs, tf.constant(w), **kw)
    with _impls(gathered), tf.Session() as sess:
        runs = [sess.run(y, {xs: v}) for v in (x, x[::-1] * -2)]  # second call: buffers reused
        chosen = [n for _, t, _, n in list(sess._compiled_plans())[-1].kernel_choices()
                  if t == "Conv2D"]
    assert chosen == ["gather" if gathered else "reference"]
    return runs


@pytest.mark.parametrize("case", FORWARD_CASES, ids=[c.name for c in FORWARD_CASES])
def test_gathered_kernel_matches_the_reference_on_the_op_cases(case, monkeypatch):
    calls = []
    original = conv_gather.conv2d
    monkeypatch.setattr(conv_gather, "conv2d", lambda *a: calls.append(1) or original(*a))
    tf.reset_default_graph()
    placeholders = [tf.placeholder(tf.as_dtype(x.dtype), x.shape) for x in case.inputs]
    with _impls(True), tf.Session() as sess:
        got = sess.run(case.build(*placeholders), dict(zip(placeholders, case.inputs)))
    assert calls, "the op case is small: the gathered kernel must run"
    np.testing.assert_allclose(got, case.reference(*case.inputs), rtol=case.rtol, atol=case.atol)


@pytest.mark.parametrize("shape, f_shape, strides, padding, dilations, fmt, dtype", [
    ((1, 8, 8, 1), (3, 3, 1, 32), 1, "SAME", 1, "NHWC", np.float32),     # digits, first layer
    ((1, 8, 8, 32), (3, 3, 32, 32), 1, "SAME", 1, "NHWC", np.float32),
    ((1, 4, 4, 32), (3, 3, 32, 64), 1, "SAME", 1, "NHWC", np.float32),
    ((3, 7, 9, 2), (3, 2, 2, 5), (2, 3), "SAME", 1, "NHWC", np.float64),  # uneven SAME padding
    ((2, 9, 8, 3), (3, 3, 3, 4), 1, "VALID", (2, 3), "NHWC", np.float64),
    ((2, 9, 8, 3), (5, 4, 3, 4), 2, "SAME", 1, "NHWC", np.float32),
    ((2, 3, 6, 7), (3, 3, 3, 4), 1, "SAME", 1, "NCHW", np.float64),
    ((1, 5, 5, 2), (1, 1, 2, 3), 1, "VALID", 1, "NHWC", np.float64),      # 1x1 filter
])
def test_gathered_kernel_equals_the_reference(shape, f_shape, strides, padding, dilations, fmt,
                                              dtype, monkeypatch):
    r = np.random.default_rng(0)
    x = r.standard_normal(shape).astype(dtype)
    w = r.standard_normal(f_shape).astype(dtype)
    n, h, wd, c = shape if fmt == "NHWC" else (shape[0], shape[2], shape[3], shape[1])
    s = (strides, strides) if isinstance(strides, int) else strides
    d = (dilations, dilations) if isinstance(dilations, int) else dilations
    geo = Geometry(h, wd, f_shape[0], f_shape[1], *s, *d, padding)
    assert conv_gather.applies(n, geo, c)
    four = (lambda v: [1, *v, 1]) if fmt == "NHWC" else (lambda v: [1, 1, *v])
    kw = dict(strides=four(s), padding=padding, dilations=four(d), data_format=fmt)
    gathered = _conv(x, w, True, **kw)
    reference = _conv(x, w, False, **kw)
    for got, want in zip(gathered, reference):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)  # the same product of the same matrices


def test_buffers_are_per_thread_and_keep_a_zero_border():
    geo = Geometry(6, 6, 3, 3, 1, 1, 1, 1, "SAME")
    w = np.random.default_rng(1).standard_normal((3, 3, 2, 4))
    inputs = [np.random.default_rng(k).standard_normal((2, 6, 6, 2)) for k in range(4)]
    want = [conv_gather.conv2d(x, w, geo) for x in inputs]
    results = {}

    def work(k):
        for _ in range(50):
            results[k] = conv_gather.conv2d(inputs[k], w, geo)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        np.testing.assert_array_equal(results[k], want[k])
    g = conv_gather._gather(geo, 2, 2, np.dtype(np.float64))
    border = g.padded.reshape(2, 8, 8, 2).copy()
    border[:, 1:7, 1:7] = 0
    assert not border.any()


def test_large_inputs_take_the_blocked_kernel():
    geo = Geometry(8, 8, 3, 3, 1, 1, 1, 1, "SAME")
    assert conv_gather.applies(1, geo, 32)
    assert not conv_gather.applies(64, geo, 32)
    assert not conv_gather.applies(0, geo, 32)
