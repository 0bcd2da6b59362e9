"""graphflow.kernels.cpu.blocked.conv_blocked: the blocked im2col convolutions give the reference kernels'
values (conv_kernels.py, the reference: whole-input padding, im2col, col2im) on every conv op case
and on shapes that make several blocks, a short last block, strides, dilations, both paddings,
NCHW, float32/float64 and several threads, in both block layouts (planar blocks for few input
channels, tap-copy blocks for more); and their gradients pass finite differences. The plans here
choose among the reference and the "blocked" implementations only (`TABLE.restricted_to`): not
oneDNN (dnnl_conv.py, tested in test_dnnl_conv.py), the gathered kernel for small convolutions
(conv_gather.py, tested in test_conv_gather.py) or the tap products (conv_taps.py)."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.blocked import conv_blocked
from tests.op_cases import nn_cases


def _impls(blocked):
    """Plans built in the block choose the "blocked" implementations (the fused gradients: their
    members' blocked ones), or the reference only."""
    return cpu_kernels.TABLE.restricted_to({"blocked", "members"} if blocked else ())


CONV_CASES = [c for c in nn_cases.CASES
              if c.op_type in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter")]


def _run_case(case, blocked, monkeypatch):
    tf.reset_default_graph()
    placeholders = [tf.placeholder(tf.as_dtype(x.dtype), x.shape) for x in case.inputs]
    out = case.build(*placeholders)
    with _impls(blocked), tf.Session() as sess:
        return sess.run(out, dict(zip(placeholders, case.inputs)))


def test_every_conv_op_case_is_covered():
    assert {c.op_type for c in CONV_CASES} == {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"}
    assert len(CONV_CASES) >= 15


@pytest.mark.parametrize("case", CONV_CASES, ids=[c.name for c in CONV_CASES])
def test_blocked_kernels_match_the_reference_on_the_op_cases(case, monkeypatch):
    blocked = _run_case(case, True, monkeypatch)
    reference = _run_case(case, False, monkeypatch)
    np.testing.assert_allclose(blocked, reference, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(blocked, case.reference(*case.inputs), rtol=case.rtol, atol=case.atol)


def _conv_step(x, w, strides, padding, dilations, data_format, threads, blocked, monkeypatch):
    tf.reset_default_graph()
    xs = tf.placeholder(tf.as_dtype(x.dtype), x.shape)
    ws = tf.placeholder(tf.as_dtype(w.dtype), w.shape)
    y = tf.nn.conv2d(xs, ws, strides=strides, padding=padding, dilations=dilations,
                     data_format=data_format)
    g = tf.constant(np.random.default_rng(5).standard_normal(y.shape.as_list()).astype(x.dtype))
    gx, gw = tf.gradients(y, [xs, ws], grad_ys=[g])
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    with _impls(blocked), tf.Session(config=config) as sess:
        feed = {xs: x, ws: w}
        first = sess.run([y, gx, gw], feed)
        # a second call reuses the per-thread buffers: their padding positions must still be zero
        second = sess.run([y, gx, gw], {xs: x[::-1].copy(), ws: w})
        chosen = {t: name for _, t, _, name in list(sess._compiled_plans())[-1].kernel_choices()}
    assert chosen["Conv2D"] == ("blocked" if blocked else "reference")
    return first, second


GEOMETRIES = [  # x shape (NHWC), filter, strides, padding, dilations
    ((13, 9, 11, 8), (3, 3, 8, 16), (1, 1), "SAME", (1, 1)),
    ((13, 9, 11, 8), (3, 3, 8, 16), (1, 1), "VALID", (1, 1)),
    ((9, 12, 10, 3), (5, 5, 3, 6), (1, 1), "SAME", (1, 1)),     # few channels: reference input grad
    ((7, 11, 12, 9), (3, 2, 9, 4), (2, 1), "SAME", (1, 1)),     # strided: reference input grad
    ((7, 11, 12, 9), (3, 3, 9, 4), (2, 3), "VALID", (1, 1)),
    ((6, 12, 12, 10), (3, 3, 10, 5), (1, 1), "SAME", (2, 2)),   # dilated
    ((5, 10, 9, 12), (2, 4, 12, 7), (1, 1), "SAME", (1, 2)),    # even taps: uneven padding
    ((40, 28, 28, 1), (5, 5, 1, 16), (1, 1), "SAME", (1, 1)),   # several images per block
    # few channels: planar blocks (conv_blocked.MAX_PLANAR_CHANNELS)
    ((10, 13, 11, 1), (5, 5, 1, 7), (1, 1), "VALID", (1, 1)),
    ((9, 12, 10, 2), (3, 4, 2, 5), (2, 1), "VALID", (1, 1)),
    ((8, 11, 12, 3), (3, 3, 3, 6), (2, 2), "SAME", (1, 1)),
    ((7, 12, 13, 2), (3, 3, 2, 4), (1, 1), "SAME", (2, 1)),
    ((6, 10, 11, 1), (4, 2, 1, 3), (1, 3), "SAME", (1, 1)),     # even taps, column stride 3
    ((20, 9, 9, 3), (9, 9, 3, 2), (1, 1), "SAME", (1, 1)),      # taps wider than most outputs
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=lambda g: f"{g[0]}x{g[1]}s{g[2]}{g[3]}d{g[4]}")
def test_blocked_conv_and_gradients_match_the_reference(geometry, threads, dtype, monkeypatch):
    x_shape, f_shape, s, padding, d = geometry
    rng = np.random.default_rng(1)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(f_shape).astype(dtype)
    strides, dilations = [1, *s, 1], [1, *d, 1]
    got = _conv_step(x, w, strides, padding, dilations, "NHWC", threads, True, monkeypatch)
    want = _conv_step(x, w, strides, padding, dilations, "NHWC", 1, False, monkeypatch)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for got_run, want_run in zip(got, want):
        for a, b in zip(got_run, want_run):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("channels, strides", [(8, [1, 1, 1, 1]), (1, [1, 1, 1, 1]),
                                               (3, [1, 1, 2, 1]), (2, [1, 1, 1, 2])])
def test_blocked_conv_nchw_matches_the_reference(channels, strides, monkeypatch):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, channels, 10, 9))  # NCHW
    w = rng.standard_normal((3, 3, channels, 5))
    args = (strides, "SAME", [1, 1, 1, 1], "NCHW")
    got = _conv_step(x, w, *args, 2, True, monkeypatch)
    want = _conv_step(x, w, *args, 1, False, monkeypatch)
    for a, b in zip(got[0] + got[1], want[0] + want[1]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_blocks_split_the_batch_and_the_last_block_may_be_short(monkeypatch):
    monkeypatch.setattr(conv_blocked, "BLOCK_FLOATS", 3 * 10 * 9 * 9 * 8)  # 3 images per block
    monkeypatch.setattr(conv_blocked, "MIN_BLOCKS", 1)
    assert conv_blocked._images_per_block(10, 90, 72) == 3  # blocks of 3, 3, 3 and 1 images
    rng = np.random.default_rng(4)
    x = rng.standard_normal((10, 10, 9, 8))
    w = rng.standard_normal((3, 3, 8, 4))
    got = _conv_step(x, w, [1, 1, 1, 1], "SAME", [1, 1, 1, 1], "NHWC", 1, True, monkeypatch)
    want = _conv_step(x, w, [1, 1, 1, 1], "SAME", [1, 1, 1, 1], "NHWC", 1, False, monkeypatch)
    for a, b in zip(got[0] + got[1], want[0] + want[1]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("channels", [1, 2, 3])
def test_planar_blocks_split_the_batch_and_the_last_block_may_be_short(channels, monkeypatch):
    monkeypatch.setattr(conv_blocked, "BLOCK_FLOATS", 3 * 10 * 9 * 25 * channels)  # 3 images
    monkeypatch.setattr(conv_blocked, "MIN_BLOCKS", 1)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((10, 10, 9, channels))
    w = rng.standard_normal((5, 5, channels, 4))
    conv_blocked._local.buffers = {}
    got = _conv_step(x, w, [1, 1, 1, 1], "SAME", [1, 1, 1, 1], "NHWC", 1, True, monkeypatch)
    planar = {key[1] for key in conv_blocked._local.buffers if key[-1]}
    assert planar == {3, 1}  # the planar layout ran: blocks of 3 images and the short last one
    want = _conv_step(x, w, [1, 1, 1, 1], "SAME", [1, 1, 1, 1], "NHWC", 1, False, monkeypatch)
    for a, b in zip(got[0] + got[1], want[0] + want[1]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("channels", [1, 2, 3, 8])
def test_planar_and_tap_copy_blocks_agree(channels, monkeypatch):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((12, 11, 10, channels)).astype(np.float32)
    w = rng.standard_normal((5, 3, channels, 6)).astype(np.float32)
    args = ([1, 2, 1, 1], "SAME", [1, 1, 1, 1], "NHWC")
    planar = _conv_step(x, w, *args, 2, True, monkeypatch)
    monkeypatch.setattr(conv_blocked, "MAX_PLANAR_CHANNELS", 0)
    copies = _conv_step(x, w, *args, 2, True, monkeypatch)
    for a, b in zip(planar[0] + planar[1], copies[0] + copies[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_a_first_layer_filter_gradient_runs_no_input_gradient():
    """Training a first layer needs only the filter gradient: the input gradient is pruned."""
    tf.reset_default_graph()
    rng = np.random.default_rng(3)
    x = tf.placeholder(tf.float32, [4, 12, 12, 1])
    w = tf.Variable(rng.standard_normal((5, 5, 1, 3)).astype(np.float32))
    loss = tf.reduce_sum(tf.nn.relu(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        meta = tf.RunMetadata()
        sess.run(train, {x: rng.standard_normal((4, 12, 12, 1)).astype(np.float32)},
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta)
    labels = [n.timeline_label for d in meta.step_stats.dev_stats for n in d.node_stats]
    assert any("Conv2DBackpropFilter(" in label for label in labels)
    assert not any("Conv2DBackpropInput(" in label for label in labels)


def test_large_buffers_are_not_kept_between_calls(monkeypatch):
    monkeypatch.setattr(conv_blocked, "MAX_KEPT_FLOATS", 100)  # every buffer here is "large"
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 9, 8, 8))
    w = rng.standard_normal((3, 3, 8, 5))
    conv_blocked._local.buffers = {}
    got = _conv_step(x, w, [1, 1, 1, 1], "SAME", [1, 1, 1, 1], "NHWC", 1, True, monkeypatch)
    want = _conv_step(x, w, [1, 1, 1, 1], "SAME", [1, 1, 1, 1], "NHWC", 1, False, monkeypatch)
    for a, b in zip(got[0] + got[1], want[0] + want[1]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)
    assert conv_blocked._local.buffers == {}


def test_filter_gradient_does_not_depend_on_the_thread_count(monkeypatch):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((32, 16, 16, 8)).astype(np.float32)
    w = rng.standard_normal((3, 3, 8, 32)).astype(np.float32)
    args = ([1, 1, 1, 1], "SAME", [1, 1, 1, 1], "NHWC")
    one = _conv_step(x, w, *args, 1, True, monkeypatch)[0]
    two = _conv_step(x, w, *args, 2, True, monkeypatch)[0]
    assert one[2].tobytes() == two[2].tobytes()  # per-block partials summed in block order
    assert one[0].tobytes() == two[0].tobytes()


@pytest.mark.parametrize("geometry", [((2, 6, 5, 8), (3, 3, 8, 2), [1, 1, 1, 1], "SAME"),
                                      ((2, 6, 5, 12), (3, 3, 12, 2), [1, 1, 1, 1], "SAME"),
                                      ((2, 7, 6, 3), (3, 2, 3, 2), [1, 2, 1, 1], "VALID"),
                                      ((2, 7, 6, 1), (5, 5, 1, 2), [1, 1, 1, 1], "SAME"),
                                      ((1, 7, 8, 2), (3, 3, 2, 2), [1, 2, 2, 1], "SAME")])
def test_blocked_conv_gradients_pass_finite_differences(geometry):
    x_shape, f_shape, strides, padding = geometry
    rng = np.random.default_rng(7)
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(f_shape)
    xs = tf.placeholder(tf.float64, x_shape)
    ws = tf.placeholder(tf.float64, f_shape)
    y = tf.nn.conv2d(xs, ws, strides=strides, padding=padding)
    loss = tf.reduce_sum(tf.sin(y))
    gx, gw = tf.gradients(loss, [xs, ws])
    with _impls(True), tf.Session() as sess:
        def f(xv, wv):
            return sess.run(loss, {xs: xv, ws: wv})
        ax, aw = sess.run([gx, gw], {xs: x, ws: w})
        eps = 1e-6
        for value, analytic, which in ((x, ax, 0), (w, aw, 1)):
            numeric = np.zeros_like(value)
            for idx in np.ndindex(value.shape):
                plus, minus = value.copy(), value.copy()
                plus[idx] += eps
                minus[idx] -= eps
                args_p = (plus, w) if which == 0 else (x, plus)
                args_m = (minus, w) if which == 0 else (x, minus)
                numeric[idx] = (f(*args_p) - f(*args_m)) / (2 * eps)
            np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7)
