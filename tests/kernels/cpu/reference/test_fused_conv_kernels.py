"""graphflow.kernels.cpu.reference.fused_conv_kernels (the references) and the implementations of
the fused conv ops: FusedConv2D through one oneDNN primitive (bias argument, activation post-op,
`onednn/dnnl_conv_ops.py`) gives the values of the reference (Conv2D reference kernel, bias add,
activation) on every FusedConv2D op case and on every activation, and the same bits as the
unfused Conv2D kernel followed by graphflow's own bias add and activation, on 1 and 2 threads;
a bias of the wrong size names the member that failed. Conv2DBackpropFilterBias: through oneDNN's
backward-weights primitive (the bias gradient summed per block beside it, or as its diff-bias
output), the filter gradient is the Conv2DBackpropFilter kernel's bits and the bias gradient within
BIAS_GRAD_TOLERANCE of the unfused Sum / BiasAddGrad (relative
to sum(|dy|) per channel), the same bits on 1 and 2 threads; without oneDNN (or in float64) both
outputs are the unfused kernels' bits. The oneDNN tests are skipped where the optional library
(onednn-cpu-gomp) is not installed."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.onednn import dnnl, dnnl_conv, dnnl_conv_grads
from graphflow.ops import fused_ops, nn_ops
from tests.op_cases import fused_cases, run_build
from tests.tooling import required

LIBRARY = dnnl.library()
needs_dnnl = pytest.mark.skipif(
    LIBRARY is None and not required("onednn"),
    reason="oneDNN is not installed (onednn-cpu-gomp) or GRAPHFLOW_NO_DNNL=1; CI provides it")
CASES = [c for c in fused_cases.CASES if c.op_type == "FusedConv2D"]
ACTIVATIONS = list(fused_ops.CONV_ACTIVATIONS)


def _use(onednn, monkeypatch):
    """Plans built in the returned block choose oneDNN's implementations (small shapes too) and
    the unfused gradients' members, or the references only."""
    monkeypatch.setattr(dnnl_conv, "MIN_MACS", 0)  # small shapes go through oneDNN too
    return cpu_kernels.TABLE.restricted_to({"onednn", "members"} if onednn else ())


def _run(build, inputs, onednn, monkeypatch, threads=1, optimize=True):
    """`build`'s value; optimize=False keeps an unfused graph unfused (no fusion pass)."""
    with _use(onednn, monkeypatch):
        return run_build(build, inputs, threads, optimize)


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
    tf.reset_default_graph()
    xs = [tf.placeholder(tf.float32, None) for _ in range(3)]
    out = fused_ops.fused_conv2d(*xs, [1, 1, 1, 1], "SAME", "Relu", members=[])
    with _use(onednn, monkeypatch), tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bias of shape"):
            sess.run(out, dict(zip(xs, [x, f, b])))


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("activation", ["Relu", "Tanh"])
def test_small_convolutions_take_the_gathered_kernel_with_the_unfused_bits(fmt, activation,
                                                                             monkeypatch):
    from graphflow.kernels.cpu.blocked import conv_gather
    # (onednn_small: test_dnnl_small_conv.py)
    names = {i.name for i in cpu_kernels.TABLE.implementations("FusedConv2D")} - {"onednn_small"}
    rng = np.random.default_rng(8)
    shape = (1, 8, 8, 5) if fmt == "NHWC" else (1, 5, 8, 8)
    x = rng.standard_normal(shape).astype(np.float32)
    f = rng.standard_normal((3, 3, 5, 6)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    fused, unfused = _pair(activation, {}, fmt)
    gathered = []
    real = conv_gather.conv2d
    monkeypatch.setattr(conv_gather, "conv2d", lambda *a: gathered.append(1) or real(*a))

    def run(build, optimize):
        tf.reset_default_graph()
        xs = [tf.placeholder(tf.float32, a.shape) for a in (x, f, b)]
        with cpu_kernels.TABLE.restricted_to(names), tf.Session(optimize=optimize) as sess:
            return [sess.run(build(*xs), dict(zip(xs, [x, f, b]))) for _ in range(2)]
    want = run(unfused, False)
    got = run(fused, True)
    assert len(gathered) == 4  # both graphs, both runs
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    reference = _run(unfused, [x, f, b], False, monkeypatch, optimize=False)
    np.testing.assert_allclose(got[0], reference, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------ Conv2DBackpropFilterBias
# |fused bias gradient - unfused| <= BIAS_GRAD_TOLERANCE * sum(|dy|) per channel: two float32
# sums of the same values in different orders (per block of images and then the blocks, against
# one BLAS ones @ dy (Sum) or numpy's sum (BiasAddGrad)), each within a few float32 epsilons of the
# exact sum (measured on the CNN benchmarks' layers: the fused one within 3e-8 of sum(|dy|), the
# Sum kernel's 2.2e-8, numpy's 1.6e-7).
BIAS_GRAD_TOLERANCE = 5e-7


def _filter_bias_pair(reduction, f_shape, fmt="NHWC", s=1):
    strides = [1, 1, s, s] if fmt == "NCHW" else [1, s, s, 1]

    def fused(x, g):
        return fused_ops.conv2d_backprop_filter_bias(x, list(f_shape), g, strides, "SAME", fmt,
                                                     bias_reduction=reduction)

    def unfused(x, g):
        df = tf.nn.conv2d_backprop_filter(x, list(f_shape), g, strides, "SAME", data_format=fmt)
        if reduction == "BiasAddGrad":
            return df, nn_ops.bias_add_grad(g, data_format=fmt)
        return df, tf.reduce_sum(g, [0, 1, 2] if fmt == "NHWC" else [0, 2, 3])
    return fused, unfused


def _filter_bias_inputs(x_shape, f_shape, fmt, s=1, dtype=np.float32, seed=5):
    rng = np.random.default_rng(seed)
    n, h, w = x_shape[0], *(x_shape[1:3] if fmt == "NHWC" else x_shape[2:])
    oh, ow = -(-h // s), -(-w // s)
    g_shape = (n, oh, ow, f_shape[3]) if fmt == "NHWC" else (n, f_shape[3], oh, ow)
    return [rng.standard_normal(x_shape).astype(dtype), rng.standard_normal(g_shape).astype(dtype)]


def _bias_grad_calls(monkeypatch):
    calls = []
    fn = dnnl_conv_grads.conv2d_backprop_filter

    def spy(*args, bias=False, **options):
        calls.append(bias)
        return fn(*args, bias=bias, **options)
    monkeypatch.setattr(dnnl_conv_grads, "conv2d_backprop_filter", spy)
    return calls


def _assert_bias_grad_close(got, want, g, fmt):
    scale = np.abs(g.astype(np.float64)).sum(axis=(0, 1, 2) if fmt == "NHWC" else (0, 2, 3))
    assert np.all(np.abs(got.astype(np.float64) - want) <= BIAS_GRAD_TOLERANCE * scale)


@needs_dnnl
@pytest.mark.parametrize("by_primitive", [False, True], ids=["BLAS per block", "diff-bias"])
@pytest.mark.parametrize("fmt,reduction,s", [("NHWC", "Sum", 1), ("NHWC", "BiasAddGrad", 2),
                                             ("NCHW", "Sum", 1), ("NCHW", "BiasAddGrad", 1)])
def test_filter_bias_gradients_beside_the_primitive(fmt, reduction, s, by_primitive, monkeypatch):
    monkeypatch.setattr(dnnl_conv_grads, "BIAS_BY_PRIMITIVE", by_primitive)
    f_shape = (3, 3, 16, 32)
    # 16 images of 16x16: two blocks of images (dnnl_conv.image_blocks), summed in order
    x_shape = (16, 16, 16, 16)
    x, g = _filter_bias_inputs(x_shape, f_shape, fmt, s)
    fused, unfused = _filter_bias_pair(reduction, f_shape, fmt, s)
    calls = _bias_grad_calls(monkeypatch)
    want = _run(unfused, [x, g], True, monkeypatch, optimize=False)
    assert calls == [False]
    got = {}
    for threads in (1, 2):
        calls.clear()
        got[threads] = _run(fused, [x, g], True, monkeypatch, threads)
        assert calls == [True]
    for threads in (1, 2):
        np.testing.assert_array_equal(got[threads][0], want[0])  # the filter gradient's bits
        np.testing.assert_array_equal(got[threads][1], got[1][1])  # thread-independent
        _assert_bias_grad_close(got[threads][1], want[1], g, fmt)
    reference = _run(unfused, [x, g], False, monkeypatch, optimize=False)  # numpy kernels
    np.testing.assert_allclose(got[1][0], reference[0], rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fmt,reduction", [("NHWC", "Sum"), ("NHWC", "BiasAddGrad"),
                                           ("NCHW", "Sum"), ("NCHW", "BiasAddGrad")])
def test_filter_bias_gradients_without_onednn_are_the_unfused_bits(fmt, reduction, dtype,
                                                                   monkeypatch):
    f_shape = (3, 3, 8, 16)
    # dy of 32768 values: the Sum kernel takes its BLAS route, BiasAddGrad numpy's sum
    x_shape = (8, 16, 16, 8) if fmt == "NHWC" else (8, 8, 16, 16)
    x, g = _filter_bias_inputs(x_shape, f_shape, fmt, dtype=dtype)
    fused, unfused = _filter_bias_pair(reduction, f_shape, fmt)
    for onednn in ([False, True] if LIBRARY is not None else [False]):
        # oneDNN installed: float64 never goes through it; float32 only without it
        if onednn and dtype == np.float32:
            continue
        want = _run(unfused, [x, g], onednn, monkeypatch, optimize=False)
        got = _run(fused, [x, g], onednn, monkeypatch)
        for a, b in zip(got, want):
            assert a.dtype == b.dtype == dtype
            np.testing.assert_array_equal(a, b)
    if dtype == np.float64:  # every implementation: "members", the unfused graph's kernels
        want = run_build(unfused, [x, g], optimize=False)
        for a, b in zip(run_build(fused, [x, g]), want):
            np.testing.assert_array_equal(a, b)


def test_filter_bias_gradient_shape_errors_name_out_backprop(monkeypatch):
    tf.reset_default_graph()
    x, g = tf.placeholder(tf.float32, None), tf.placeholder(tf.float32, None)
    dw, db = fused_ops.conv2d_backprop_filter_bias(x, [3, 3, 3, 4], g, [1, 1, 1, 1], "SAME")
    with _use(False, monkeypatch), tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="out_backprop"):
            sess.run([dw, db], {x: np.ones((2, 6, 6, 3), np.float32),
                                g: np.ones((2, 5, 6, 4), np.float32)})
