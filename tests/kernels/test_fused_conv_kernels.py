"""graphflow.kernels.cpu.fused_conv_kernels: FusedConv2D through one oneDNN primitive (bias
argument, activation post-op) gives the values of the numpy path (Conv2D reference kernel, bias
add, activation) on every FusedConv2D op case and on every activation, and the same bits as the
unfused Conv2D kernel followed by graphflow's own bias add and activation, on 1 and 2 threads;
a bias of the wrong size names the member that failed. The oneDNN tests are skipped where the
optional library (onednn-cpu-gomp) is not installed."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu import conv_kernels, dnnl, dnnl_conv
from graphflow.ops import fused_ops
from tests.op_cases import fused_cases
from tests.tooling import required

LIBRARY = dnnl.library()
needs_dnnl = pytest.mark.skipif(
    LIBRARY is None and not required("onednn"),
    reason="oneDNN is not installed (onednn-cpu-gomp) or GRAPHFLOW_NO_DNNL=1; CI provides it")
CASES = [c for c in fused_cases.CASES if c.op_type == "FusedConv2D"]
ACTIVATIONS = list(fused_ops.CONV_ACTIVATIONS)


def _use(onednn, monkeypatch):
    monkeypatch.setattr(dnnl, "_library", LIBRARY if onednn else False)
    monkeypatch.setattr(conv_kernels, "BLOCKED", onednn)
    monkeypatch.setattr(dnnl_conv, "MIN_MACS", 0)  # small shapes go through oneDNN too


def _run(build, inputs, onednn, monkeypatch, threads=1, optimize=True):
    """`build`'s value; optimize=False keeps an unfused graph unfused (no fusion pass)."""
    _use(onednn, monkeypatch)
    tf.reset_default_graph()
    placeholders = [tf.placeholder(tf.as_dtype(x.dtype), x.shape) for x in inputs]
    out = build(*placeholders)
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    with tf.Session(config=config, optimize=optimize) as sess:
        return sess.run(out, dict(zip(placeholders, inputs)))


def _calls(monkeypatch):
    calls = []
    fn = dnnl_conv.conv2d

    def spy(*args):
        calls.append(args[4:])  # (bias, post-ops) of a FusedConv2D, () of a Conv2D
        return fn(*args)
    monkeypatch.setattr(dnnl_conv, "conv2d", spy)
    return calls


def test_post_ops_cover_the_exact_activations_only():
    assert dnnl.activation_post_ops("", {}) == ()
    assert dnnl.activation_post_ops("Relu", {}) == ((dnnl.ELTWISE_RELU, 0.0, 0.0),)
    assert dnnl.activation_post_ops("Relu6", {}) == ((dnnl.ELTWISE_CLIP, 0.0, 6.0),)
    assert dnnl.activation_post_ops("LeakyRelu", {"alpha": 0.1}) == (
        (dnnl.ELTWISE_RELU, float(np.float32(0.1)), 0.0),)
    for act in ("Tanh", "Sigmoid", "Elu", "Selu", "Softplus"):
        assert dnnl.activation_post_ops(act, {}) is None


@needs_dnnl
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_op_cases_in_float32_match_the_numpy_path(case, monkeypatch):
    inputs = [x.astype(np.float32) for x in case.inputs]
    want = _run(case.build, inputs, False, monkeypatch)
    calls = _calls(monkeypatch)
    got = _run(case.build, inputs, True, monkeypatch)
    assert calls and all(bias is not None for bias, _ in calls)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _pair(activation, attrs, fmt="NHWC", s=1):
    strides = [1, 1, s, s] if fmt == "NCHW" else [1, s, s, 1]

    def fused(x, f, b):
        return fused_ops.fused_conv2d(x, f, b, strides, "SAME", activation, fmt,
                                      activation_attrs=attrs)

    def unfused(x, f, b):
        y = tf.nn.bias_add(tf.nn.conv2d(x, f, strides, "SAME", data_format=fmt), b,
                           data_format=fmt)
        if not activation:
            return y
        return {"LeakyRelu": lambda v: tf.nn.leaky_relu(v, alpha=attrs["alpha"]),
                "Relu6": tf.nn.relu6, "Relu": tf.nn.relu, "Tanh": tf.tanh,
                "Sigmoid": tf.sigmoid, "Elu": tf.nn.elu, "Selu": tf.nn.selu,
                "Softplus": tf.nn.softplus}[activation](y)
    return fused, unfused


@needs_dnnl
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_fused_is_the_unfused_graphs_bits(activation, threads, monkeypatch):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 11, 9, 16)).astype(np.float32)
    f = (rng.standard_normal((3, 3, 16, 24)) * 0.3).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)
    attrs = {"alpha": 0.3} if activation == "LeakyRelu" else {}
    fused, unfused = _pair(activation, attrs)
    calls = _calls(monkeypatch)
    want = _run(unfused, [x, f, b], True, monkeypatch, threads, optimize=False)
    assert calls == [()]  # Conv2D alone through oneDNN
    calls.clear()
    got = _run(fused, [x, f, b], True, monkeypatch, threads)
    post = dnnl.activation_post_ops(activation, attrs)
    assert [p for _, p in calls] == [post if post is not None else ()]
    np.testing.assert_array_equal(got, want)


@needs_dnnl
def test_nchw_and_strides_through_the_primitive(monkeypatch):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 8, 13, 12)).astype(np.float32)
    f = rng.standard_normal((3, 3, 8, 16)).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    fused, unfused = _pair("Relu", {}, "NCHW", 2)
    want = _run(unfused, [x, f, b], False, monkeypatch, optimize=False)
    got = _run(fused, [x, f, b], True, monkeypatch)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("onednn", [False, True])
def test_a_bias_of_the_wrong_size_names_the_member(onednn, monkeypatch):
    if onednn and LIBRARY is None:
        pytest.skip("oneDNN is not installed")
    x = np.ones((2, 6, 6, 3), np.float32)
    f = np.ones((3, 3, 3, 4), np.float32)
    b = np.ones(5, np.float32)
    _use(onednn, monkeypatch)
    tf.reset_default_graph()
    xs = [tf.placeholder(tf.float32, None) for _ in range(3)]
    out = fused_ops.fused_conv2d(*xs, [1, 1, 1, 1], "SAME", "Relu", members=[])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bias of shape"):
            sess.run(out, dict(zip(xs, [x, f, b])))


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("activation", ["Relu", "Tanh"])
def test_small_convolutions_take_the_gathered_kernel_with_the_unfused_bits(fmt, activation,
                                                                             monkeypatch):
    from graphflow.kernels.cpu import conv_gather
    rng = np.random.default_rng(8)
    shape = (1, 8, 8, 5) if fmt == "NHWC" else (1, 5, 8, 8)
    x = rng.standard_normal(shape).astype(np.float32)
    f = rng.standard_normal((3, 3, 5, 6)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    fused, unfused = _pair(activation, {}, fmt)
    gathered = []
    real = conv_gather.conv2d
    monkeypatch.setattr(conv_gather, "conv2d", lambda *a: gathered.append(1) or real(*a))
    monkeypatch.setattr(dnnl, "_library", LIBRARY)
    monkeypatch.setattr(conv_kernels, "BLOCKED", True)  # default MIN_MACS: small ones gathered

    def run(build, optimize):
        tf.reset_default_graph()
        xs = [tf.placeholder(tf.float32, a.shape) for a in (x, f, b)]
        with tf.Session(optimize=optimize) as sess:
            return [sess.run(build(*xs), dict(zip(xs, [x, f, b]))) for _ in range(2)]
    want = run(unfused, False)
    got = run(fused, True)
    assert len(gathered) == 4  # both graphs, both runs
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    reference = _run(unfused, [x, f, b], False, monkeypatch, optimize=False)
    np.testing.assert_allclose(got[0], reference, rtol=1e-5, atol=1e-5)
