"""graphflow.kernels.cpu.onednn.dnnl_conv: the oneDNN convolutions give the numpy reference kernels' values
(conv_kernels.py: plans restricted to the reference) on every conv op case (in float32) and on larger
shapes: strides, both paddings (TF's uneven SAME padding), dilations, NCHW, odd sizes, filters
read as HWIO or reordered into oneDNN's layout, 1 and 2 threads with blocks of images (a short last
block included), the same bits in NCHW as in NHWC; their gradients pass finite differences;
other dtypes keep the numpy kernels.
Skipped where the optional oneDNN library (onednn-cpu-gomp) is not installed."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.blocked import conv_taps
from graphflow.kernels.cpu.onednn import dnnl, dnnl_conv, dnnl_conv_grads, dnnl_matmul
from graphflow.kernels.cpu.reference.conv_geometry import Geometry
from graphflow.kernels.cpu.threads import intra_op
from tests.op_cases import nn_cases, run_build
from tests.tooling import required

pytestmark = pytest.mark.skipif(
    dnnl.library() is None and not required("onednn"),
    reason="oneDNN is not installed (onednn-cpu-gomp) or GRAPHFLOW_NO_DNNL=1; CI provides it")

LIBRARY = dnnl.library()
CONV_CASES = [c for c in nn_cases.CASES
              if c.op_type in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter")]


@pytest.fixture(autouse=True)
def _small_convolutions_threaded(monkeypatch):
    """The small test convolutions run on the threads they are given, as large ones do."""
    monkeypatch.setattr(dnnl_conv, "PARALLEL_MIN_MACS", 0)


@pytest.fixture(autouse=True)
def _few_channel_convolutions_through_onednn(monkeypatch):
    """oneDNN's primitives are tested on every geometry: convolutions producing few channels,
    which the kernels otherwise give to `conv_taps.py` (tests/kernels/cpu/blocked/test_conv_taps.py), too."""
    monkeypatch.setattr(conv_taps, "forward_applies", lambda *a: False)
    monkeypatch.setattr(conv_taps, "input_grad_applies", lambda *a: False)


def _use(onednn, monkeypatch):
    """Plans built in the returned block choose oneDNN's implementations (even for the small op
    cases), or the reference kernels only (no blocked im2col)."""
    monkeypatch.setattr(dnnl_conv, "MIN_MACS", 0)  # the small op cases go through oneDNN too
    return cpu_kernels.TABLE.restricted_to({"onednn"} if onednn else ())


def _run(build, inputs, onednn, monkeypatch, threads=1):
    with _use(onednn, monkeypatch):
        return run_build(build, inputs, threads)


class _Spy:
    """Records which oneDNN convolutions ran (a layer's input and filter gradients run in one
    call where fusion paired them: both recorded)."""

    def __init__(self, monkeypatch):
        self.calls = []
        for module, name, kinds in (
                (dnnl_conv, "conv2d", ("conv2d",)),
                (dnnl_conv, "conv2d_backprop_input", ("conv2d_backprop_input",)),
                (dnnl_conv_grads, "conv2d_backprop_filter", ("conv2d_backprop_filter",)),
                (dnnl_conv_grads, "conv2d_backprop_input_filter",
                 ("conv2d_backprop_input", "conv2d_backprop_filter"))):
            fn = getattr(module, name)
            monkeypatch.setattr(module, name, self._wrap(kinds, fn))

    def _wrap(self, kinds, fn):
        def spy(*args):
            self.calls.extend(kinds)
            return fn(*args)
        return spy


def test_every_conv_op_case_is_covered():
    assert {c.op_type for c in CONV_CASES} == {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"}
    assert len(CONV_CASES) >= 15


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", CONV_CASES, ids=[c.name for c in CONV_CASES])
def test_onednn_matches_the_reference_on_the_op_cases(case, threads, monkeypatch):
    inputs = [x.astype(np.float32) if x.dtype.kind == "f" else x for x in case.inputs]
    spy = _Spy(monkeypatch)
    got = _run(case.build, inputs, True, monkeypatch, threads)
    assert spy.calls, "the oneDNN kernel did not run"
    want = _run(case.build, inputs, False, monkeypatch)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, case.reference(*case.inputs), rtol=1e-4, atol=1e-4)


def _conv_step(x, w, strides, padding, dilations, data_format, threads, onednn, monkeypatch):
    """Forward, input gradient and filter gradient, twice (the second run reuses the primitives)."""
    tf.reset_default_graph()
    xs = tf.placeholder(tf.float32, x.shape)
    ws = tf.placeholder(tf.float32, w.shape)
    y = tf.nn.conv2d(xs, ws, strides=strides, padding=padding, dilations=dilations,
                     data_format=data_format)
    g = tf.constant(np.random.default_rng(5).standard_normal(y.shape.as_list()).astype(np.float32))
    gx, gw = tf.gradients(y, [xs, ws], grad_ys=[g])
    with _use(onednn, monkeypatch), \
            tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=threads)) as sess:
        first = sess.run([y, gx, gw], {xs: x, ws: w})
        second = sess.run([y, gx, gw], {xs: x[::-1].copy(), ws: w * 2})
    return first + second


GEOMETRIES = [  # x shape (NHWC), filter, strides, padding, dilations
    ((13, 9, 11, 8), (3, 3, 8, 16), (1, 1), "SAME", (1, 1)),
    ((13, 9, 11, 8), (3, 3, 8, 16), (1, 1), "VALID", (1, 1)),
    ((9, 12, 10, 3), (5, 5, 3, 6), (1, 1), "SAME", (1, 1)),
    ((7, 11, 12, 9), (3, 2, 9, 4), (2, 1), "SAME", (1, 1)),
    ((7, 11, 12, 9), (3, 3, 9, 4), (2, 3), "VALID", (1, 1)),
    ((6, 12, 12, 10), (3, 3, 10, 5), (1, 1), "SAME", (2, 2)),
    ((5, 10, 9, 12), (2, 4, 12, 7), (1, 1), "SAME", (1, 2)),     # even taps: uneven SAME padding
    ((5, 10, 9, 12), (2, 4, 12, 7), (2, 2), "SAME", (1, 1)),     # uneven padding and strides
    ((7, 13, 11, 1), (5, 5, 1, 7), (1, 1), "VALID", (1, 1)),
    ((7, 28, 28, 1), (5, 5, 1, 16), (1, 1), "SAME", (1, 1)),     # the small CNN's layer
    ((5, 16, 16, 32), (3, 3, 32, 64), (1, 1), "SAME", (1, 1)),   # a CIFAR-shaped layer
    ((6, 10, 11, 1), (4, 2, 1, 3), (1, 3), "SAME", (1, 1)),
    ((4, 9, 9, 3), (9, 9, 3, 2), (1, 1), "SAME", (1, 1)),        # taps wider than most outputs
    ((3, 17, 19, 5), (3, 3, 5, 5), (3, 2), "SAME", (2, 1)),      # stride, dilation, odd sizes
]


@pytest.mark.parametrize("weights_any", [True, False], ids=["weights-any", "weights-hwio"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=lambda g: f"{g[0]}x{g[1]}s{g[2]}{g[3]}d{g[4]}")
def test_onednn_conv_and_gradients_match_the_reference(geometry, threads, weights_any, monkeypatch):
    monkeypatch.setattr(dnnl_conv, "WEIGHTS_ANY", weights_any)
    monkeypatch.setattr(dnnl_conv, "BLOCK_MIN_WORK", 1)  # blocks of images
    x_shape, f_shape, s, padding, d = geometry
    rng = np.random.default_rng(1)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(f_shape).astype(np.float32)
    args = ([1, *s, 1], padding, [1, *d, 1], "NHWC")
    spy = _Spy(monkeypatch)
    got = _conv_step(x, w, *args, threads, True, monkeypatch)
    assert set(spy.calls) == {"conv2d", "conv2d_backprop_input", "conv2d_backprop_filter"}
    want = _conv_step(x, w, *args, 1, False, monkeypatch)
    for a, b in zip(got, want):
        scale = max(1.0, float(np.abs(b).max()))
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5 * scale)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("channels, strides, dilations", [(8, [1, 1, 1, 1], [1, 1, 1, 1]),
                                                          (1, [1, 1, 1, 1], [1, 1, 1, 1]),
                                                          (3, [1, 1, 2, 1], [1, 1, 1, 1]),
                                                          (5, [1, 1, 1, 2], [1, 1, 2, 2])])
def test_onednn_conv_nchw_matches_the_reference(channels, strides, dilations, threads, monkeypatch):
    monkeypatch.setattr(dnnl_conv, "BLOCK_MIN_WORK", 1)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((7, channels, 10, 9)).astype(np.float32)  # NCHW
    w = rng.standard_normal((3, 3, channels, 5)).astype(np.float32)
    args = (strides, "SAME", dilations, "NCHW")
    got = _conv_step(x, w, *args, threads, True, monkeypatch)
    want = _conv_step(x, w, *args, 1, False, monkeypatch)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_blocks_of_images_with_a_short_last_one_on_one_and_two_threads(monkeypatch):
    monkeypatch.setattr(dnnl_conv, "BLOCK_MIN_WORK", 1)
    monkeypatch.setattr(dnnl_conv, "MAX_BLOCKS", 4)
    assert dnnl_conv.image_blocks(7, 1 << 30) == 2  # 4 blocks: 2, 2, 2 and 1 images
    assert dnnl_conv.image_blocks(7, 3, min_work=1) == 3  # small work: fewer blocks (3, 3, 1)
    assert dnnl_conv.image_blocks(7, 100, min_work=1000) == 7  # one block
    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 9, 8, 4)).astype(np.float32)
    w = rng.standard_normal((3, 3, 4, 6)).astype(np.float32)
    args = ([1, 1, 1, 1], "SAME", [1, 1, 1, 1], "NHWC")
    want = _conv_step(x, w, *args, 1, False, monkeypatch)
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "blocks")
    runs = []
    for threads in (1, 2):
        dnnl_conv._plans.clear()
        runs.append(_conv_step(x, w, *args, threads, True, monkeypatch))
        # the gradients: primitives for 2 images and for 1; the forward pass: a block per thread
        assert {key[13] for key in dnnl_conv._plans if key[0] != "forward"} == {2, 1}
        assert {key[13] for key in dnnl_conv._plans if key[0] == "forward"} == (
            {7} if threads == 1 else {4, 3})
        for a, b in zip(runs[-1], want):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    for a, b in zip(*runs):  # the same blocks whatever the thread count: the same bits
        assert a.tobytes() == b.tobytes()


def test_filter_gradient_does_not_depend_on_the_threads(monkeypatch):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((64, 16, 16, 32)).astype(np.float32)
    w = rng.standard_normal((3, 3, 32, 64)).astype(np.float32)
    assert dnnl_conv.image_blocks(64, 64 * 16 * 16 * w.size) == 8
    args = ([1, 1, 1, 1], "SAME", [1, 1, 1, 1], "NHWC")
    runs = [_conv_step(x, w, *args, threads, True, monkeypatch) for threads in (1, 2, 2, 4)]
    for run in runs[1:]:
        for a, b in zip(run, runs[0]):
            assert a.tobytes() == b.tobytes()


def test_small_convolutions_stay_on_the_calling_thread_with_the_same_bits(monkeypatch):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((8, 9, 8, 4)).astype(np.float32)
    w = rng.standard_normal((3, 3, 4, 6)).astype(np.float32)
    args = ([1, 1, 1, 1], "SAME", [1, 1, 1, 1], "NHWC")
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "blocks")
    monkeypatch.setattr(dnnl_conv, "BLOCK_MIN_WORK", 1)  # several blocks of images
    threaded = _conv_step(x, w, *args, 2, True, monkeypatch)
    helped = intra_op.POOL.helper_calls
    monkeypatch.setattr(dnnl_conv, "PARALLEL_MIN_MACS", 1 << 40)  # every convolution is "small"
    alone = _conv_step(x, w, *args, 2, True, monkeypatch)
    assert intra_op.POOL.helper_calls == helped  # no pool worker took a block
    for a, b in zip(alone, threaded):  # the same blocks in the same order: the same bits
        assert a.tobytes() == b.tobytes()


def test_primitives_are_created_once_per_geometry(monkeypatch):
    dnnl_conv._plans.clear()
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 8, 8, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, 5)).astype(np.float32)
    args = ([1, 1, 1, 1], "SAME", [1, 1, 1, 1], "NHWC")
    _conv_step(x, w, *args, 1, True, monkeypatch)
    assert sorted(key[0] for key in dnnl_conv._plans) == ["backward_data", "backward_weights",
                                                           "forward"]
    created = []
    real = dnnl_conv.Plan
    monkeypatch.setattr(dnnl_conv, "Plan", lambda *a: created.append(a) or real(*a))
    _conv_step(x, w, *args, 1, True, monkeypatch)
    assert created == []


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_other_dtypes_keep_the_numpy_kernels(dtype, monkeypatch):
    spy = _Spy(monkeypatch)
    x = np.ones((2, 5, 5, 3), dtype)
    w = np.ones((3, 3, 3, 2), dtype)
    y = _run(lambda a, b: tf.nn.conv2d(a, b, [1, 1, 1, 1], "SAME"), [x, w], True, monkeypatch)
    assert spy.calls == []
    assert y.dtype == dtype and y[0, 2, 2, 0] == 27


@pytest.mark.parametrize("geometry", [((2, 6, 5, 8), (3, 3, 8, 2), [1, 1, 1, 1], "SAME"),
                                      ((2, 7, 6, 3), (3, 2, 3, 2), [1, 2, 1, 1], "VALID"),
                                      ((2, 7, 6, 1), (5, 5, 1, 2), [1, 1, 1, 1], "SAME"),
                                      ((1, 7, 8, 2), (2, 3, 2, 2), [1, 2, 2, 1], "SAME")])
def test_onednn_conv_gradients_pass_finite_differences(geometry, monkeypatch):
    """float32 convolutions through oneDNN, the loss sum(u * y) in float64. The convolution is
    linear in the input and in the filter, so central differences along a direction v are exact
    up to rounding for any step: a step of 1 keeps float32 rounding out of the comparison."""
    monkeypatch.setattr(dnnl_conv, "MIN_MACS", 0)  # small ones through oneDNN too
    x_shape, f_shape, strides, padding = geometry
    rng = np.random.default_rng(7)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(f_shape).astype(np.float32)
    tf.reset_default_graph()
    xs = tf.placeholder(tf.float32, x_shape)
    ws = tf.placeholder(tf.float32, f_shape)
    y = tf.nn.conv2d(xs, ws, strides=strides, padding=padding)
    u = tf.constant(rng.standard_normal(y.shape.as_list()))
    loss = tf.reduce_sum(tf.cast(y, tf.float64) * u)
    gx, gw = tf.gradients(loss, [xs, ws])
    spy = _Spy(monkeypatch)
    with tf.Session() as sess:
        ax, aw = sess.run([gx, gw], {xs: x, ws: w})
        for which, value, analytic in ((0, x, ax), (1, w, aw)):
            for _ in range(3):
                v = rng.standard_normal(value.shape).astype(np.float32)
                feeds = []
                for sign in (1, -1):
                    feeds.append({xs: value + sign * v, ws: w} if which == 0 else
                                 {xs: x, ws: value + sign * v})
                numeric = (sess.run(loss, feeds[0]) - sess.run(loss, feeds[1])) / 2
                symbolic = float(np.sum(analytic.astype(np.float64) * v))
                np.testing.assert_allclose(symbolic, numeric, rtol=1e-4, atol=1e-4)
    assert set(spy.calls) == {"conv2d", "conv2d_backprop_input", "conv2d_backprop_filter"}


def test_a_geometry_onednn_does_not_implement_runs_the_numpy_kernels(monkeypatch):
    """The plan asks once per geometry (`dnnl_conv.implements`) and chooses another
    implementation."""
    def unimplemented(*args):
        raise dnnl.DnnlError("oneDNN: no primitive", dnnl.UNIMPLEMENTED)
    monkeypatch.setattr(dnnl_conv, "Plan", unimplemented)
    dnnl_conv._plans.clear()
    monkeypatch.setattr(dnnl_conv, "_implemented", {})
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 7, 6, 4)).astype(np.float32)
    w = rng.standard_normal((3, 3, 4, 2)).astype(np.float32)
    args = ([1, 1, 1, 1], "SAME", [1, 1, 1, 1], "NHWC")
    got = _conv_step(x, w, *args, 1, True, monkeypatch)
    assert set(dnnl_conv._implemented.values()) == {False}  # remembered: not asked again
    assert not dnnl_conv._plans
    want = _conv_step(x, w, *args, 1, False, monkeypatch)  # the reference (not the blocked ones)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_other_onednn_failures_are_errors(monkeypatch):
    def invalid(*args):
        raise dnnl.DnnlError("oneDNN: dnnl_x failed with status 2 (invalid_arguments)", 2)
    monkeypatch.setattr(dnnl_conv, "Plan", invalid)
    dnnl_conv._plans.clear()
    monkeypatch.setattr(dnnl_conv, "_implemented", {})
    x = np.ones((1, 4, 4, 2), np.float32)
    with pytest.raises(Exception, match="invalid_arguments"):
        _run(lambda a: tf.nn.conv2d(a, tf.ones([3, 3, 2, 2]), [1, 1, 1, 1], "SAME"), [x], True,
             monkeypatch)


def test_nchw_gives_the_bits_of_nhwc(monkeypatch):
    """NCHW runs transposed to NHWC (as the numpy kernels do): results do not depend on the layout."""
    monkeypatch.setattr(dnnl_conv, "MIN_MACS", 0)  # small ones through oneDNN too
    rng = np.random.default_rng(9)
    x = rng.standard_normal((3, 7, 7, 16)).astype(np.float32)
    w = rng.standard_normal((5, 5, 16, 4)).astype(np.float32)
    u = rng.standard_normal((3, 7, 7, 4)).astype(np.float32)
    runs = []
    for fmt, perm in (("NHWC", (0, 1, 2, 3)), ("NCHW", (0, 3, 1, 2))):
        tf.reset_default_graph()
        xs = tf.placeholder(tf.float32, x.transpose(perm).shape)
        ws = tf.placeholder(tf.float32, w.shape)
        y = tf.nn.conv2d(xs, ws, [1, 1, 1, 1], "SAME", data_format=fmt)
        gx, gw = tf.gradients(y, [xs, ws], grad_ys=[tf.constant(u.transpose(perm))])
        with tf.Session() as sess:
            values = sess.run([y, gx, gw], {xs: x.transpose(perm), ws: w})
        back = np.argsort(perm)
        runs.append([np.ascontiguousarray(values[0].transpose(back)),
                     np.ascontiguousarray(values[1].transpose(back)), values[2]])
    for a, b in zip(*runs):
        assert a.tobytes() == b.tobytes()


def test_small_convolutions_stay_on_the_numpy_kernels(monkeypatch):
    geo = Geometry(8, 8, 3, 3, 1, 1, 1, 1, "SAME")
    assert dnnl_conv.conv_macs(1, geo, 32, 32) == 8 * 8 * 9 * 32 * 32
    x, f = np.ones((1, 8, 8, 32), np.float32), np.ones((3, 3, 32, 32), np.float32)
    monkeypatch.setattr(dnnl, "_library", object())  # "loaded"; no call is made below
    assert not dnnl_conv.applies(x, f, macs=dnnl_conv.conv_macs(1, geo, 32, 32))
    assert dnnl_conv.applies(x, f, macs=dnnl_conv.conv_macs(4, geo, 32, 32))
    assert not dnnl_conv.applies(x.astype(np.float64), f, macs=1 << 30)


@pytest.mark.parametrize("mode", ["team", "blocks"])
def test_forward_as_a_team_or_in_blocks_gives_the_same_bits(mode, monkeypatch):
    monkeypatch.setattr(dnnl_conv, "TEAM_MIN_MACS", 1)
    monkeypatch.setattr(dnnl_conv, "BLOCK_MIN_WORK", 1)
    rng = np.random.default_rng(9)
    x = rng.standard_normal((9, 8, 8, 3)).astype(np.float32)
    f = rng.standard_normal((3, 3, 3, 16)).astype(np.float32)
    bias = rng.standard_normal(16).astype(np.float32)
    geo = Geometry(8, 8, 3, 3, 1, 1, 1, 1, "SAME")
    relu = ((dnnl.ELTWISE_RELU, 0.0, 0.0),)
    one = dnnl_conv.conv2d(x, f, geo, 1, bias, relu)  # one call on this thread
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", mode)
    dnnl_conv._plans.clear()
    two = dnnl_conv.conv2d(x, f, geo, 2, bias, relu)
    omp = {key[-1] for key in dnnl_conv._plans}
    assert omp == ({2} if mode == "team" else {1})
    assert one.tobytes() == two.tobytes()
    want = np.maximum(_run(lambda a, b: tf.nn.conv2d(a, b, [1, 1, 1, 1], "SAME"), [x, f], False,
                           monkeypatch) + bias, 0)
    np.testing.assert_allclose(two, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", ["team", "blocks"])
@pytest.mark.parametrize("strides,padding,dilation", [(1, "SAME", 1), (2, "SAME", 1),
                                                      (2, "VALID", 1), (1, "SAME", 2)])
def test_input_gradient_as_a_team_or_in_blocks_gives_the_same_bits(mode, strides, padding,
                                                                   dilation, monkeypatch):
    monkeypatch.setattr(dnnl_conv, "TEAM_MIN_MACS", 1)
    monkeypatch.setattr(dnnl_conv, "BLOCK_MIN_WORK", 1)
    monkeypatch.setattr(dnnl_conv, "PARALLEL_MIN_MACS", 1)
    rng = np.random.default_rng(11)
    geo = Geometry(9, 9, 3, 3, strides, strides, dilation, dilation, padding)
    g = rng.standard_normal((9, geo.oh, geo.ow, 16)).astype(np.float32)
    f = rng.standard_normal((3, 3, 8, 16)).astype(np.float32)
    one = dnnl_conv.conv2d_backprop_input(g, f, geo, 9, 8, 1)  # one call on this thread
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", mode)
    dnnl_conv._plans.clear()
    two = dnnl_conv.conv2d_backprop_input(g, f, geo, 9, 8, 2)
    omp = {key[-1] for key in dnnl_conv._plans}
    assert omp == ({2} if mode == "team" else {1})
    assert one.tobytes() == two.tobytes()
    want = _run(lambda a, b: tf.nn.conv2d_backprop_input(
        [9, 9, 9, 8], b, a, [1, strides, strides, 1], padding,
        dilations=[1, dilation, dilation, 1]), [g, f], False, monkeypatch)  # the numpy kernel
    np.testing.assert_allclose(two, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kind", ["forward", "backward_data"])
def test_convolutions_join_the_threading_chooser(kind, monkeypatch):
    monkeypatch.setattr(dnnl_conv, "TEAM_MIN_MACS", 1)
    monkeypatch.setattr(dnnl_conv, "PARALLEL_MIN_MACS", 1)
    monkeypatch.setattr(dnnl_conv, "CHOOSER_MIN_MACS", 1)
    monkeypatch.delenv("GRAPHFLOW_MATMUL_THREADING", raising=False)
    monkeypatch.setattr(dnnl_matmul, "CHOOSER", dnnl_matmul._Chooser())
    dnnl_conv._timings.clear()
    ones = np.ones((4, 8, 8, 2 if kind == "forward" else 4), np.float32)  # x, or dy
    f = np.ones((3, 3, 2, 4), np.float32)
    geo = Geometry(8, 8, 3, 3, 1, 1, 1, 1, "SAME")
    for _ in range(3 * dnnl_matmul._Chooser.RUN):
        if kind == "forward":
            out = dnnl_conv.conv2d(ones, f, geo, 2)
        else:
            out = dnnl_conv.conv2d_backprop_input(ones, f, geo, 4, 2, 2)
    # 3x3 taps of two input channels of ones, or of four output channels
    assert out[0, 4, 4, 0] == (18 if kind == "forward" else 36)
    (key, timing), = dnnl_conv._timings.items()
    assert key[0] == kind
    assert timing.seen["team"] >= dnnl_matmul._Chooser.RUN
    assert timing.seen["blocks"] >= dnnl_matmul._Chooser.RUN
    assert dnnl_matmul.CHOOSER.kept in ("team", "blocks")


def test_small_convolutions_follow_the_chooser_untimed(monkeypatch):
    # below CHOOSER_MIN_MACS a convolution runs the chosen way on several threads but leaves the
    # chooser's timings alone
    monkeypatch.setattr(dnnl_conv, "TEAM_MIN_MACS", 1)
    monkeypatch.setattr(dnnl_conv, "PARALLEL_MIN_MACS", 1)
    monkeypatch.delenv("GRAPHFLOW_MATMUL_THREADING", raising=False)
    chooser = dnnl_matmul._Chooser()
    monkeypatch.setattr(dnnl_matmul, "CHOOSER", chooser)
    dnnl_conv._timings.clear()
    ones = np.ones((4, 8, 8, 2), np.float32)
    f = np.ones((3, 3, 2, 4), np.float32)
    geo = Geometry(8, 8, 3, 3, 1, 1, 1, 1, "SAME")
    assert dnnl_conv.conv_macs(4, geo, 2, 4) < dnnl_conv.CHOOSER_MIN_MACS
    left = chooser.left
    for _ in range(5):
        out = dnnl_conv.conv2d(ones, f, geo, 2)
    assert out[0, 4, 4, 0] == 18
    assert all(t.seen == {"team": 0, "blocks": 0} for t in dnnl_conv._timings.values())
    assert chooser.left == left and not chooser.plans
