"""graphflow.kernels.cpu.reference.conv_geometry: what a plan knows of a conv node (`static_conv`:
sizes and geometry from static shapes, None where a dim is unknown or the shapes do not make a
convolution), and the implementation the plan chooses for each conv op type from it: the same
path the kernels took at run time before the choice moved to the plan (gathered small
convolutions, tap products for few channels, oneDNN for large float32 ones, blocked numpy
otherwise; the few-tap compiled loop and the bound small oneDNN primitive for FusedConv2D; the
members' kernels for the fused gradients), float64 never on oneDNN, unknown batch dims on the
general implementation, and the reference alone under `TABLE.restricted_to()`."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import KernelNode, SessionState
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.reference.conv_geometry import static_conv
from graphflow.ops import fused_ops

TABLE = cpu_kernels.TABLE
ONEDNN = TABLE.feature("onednn")
NUMBA = TABLE.feature("numba")
SAME = dict(strides=[1, 1, 1, 1], padding="SAME")


def _node(op):
    return KernelNode.describing(op, SessionState())


def _chosen(tensor):
    return TABLE.choose(_node(tensor.op)).name


def _conv(x_shape, f_shape, dtype=np.float32, fmt="NHWC", strides=(1, 1)):
    tf.reset_default_graph()
    x = tf.placeholder(tf.as_dtype(dtype), x_shape)
    f = tf.placeholder(tf.as_dtype(dtype), f_shape)
    s = [1, *strides, 1] if fmt == "NHWC" else [1, 1, *strides]
    return tf.nn.conv2d(x, f, s, "SAME", data_format=fmt)


def test_static_conv_reads_the_static_shapes():
    y = _conv((2, 3, 10, 9), (3, 3, 3, 5), fmt="NCHW", strides=(2, 1))
    shapes = static_conv(_node(y.op))
    assert (shapes.n, shapes.c, shapes.oc, shapes.fmt) == (2, 3, 5, "NCHW")
    assert (shapes.geo.oh, shapes.geo.ow) == (5, 9) and shapes.out_shape == (2, 5, 9, 5)
    assert shapes.macs == 2 * 5 * 9 * 9 * 3 * 5
    assert static_conv(_node(_conv((None, 8, 8, 3), (3, 3, 3, 4)).op)) is None  # batch unknown
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, (2, 4, 4, 3))
    y = tf.nn.conv2d(x, tf.placeholder(tf.float32, (3, 3, 3, 2)), [1, 1, 1, 1], "VALID")
    assert static_conv(_node(y.op)).geo.oh == 2
    tf.reset_default_graph()
    g = tf.placeholder(tf.float32, (2, 8, 8, 4))
    dx = tf.nn.conv2d_backprop_input([2, 8, 8, 3], tf.placeholder(tf.float32, (3, 3, 3, 4)), g,
                                     [1, 1, 1, 1], "SAME")
    shapes = static_conv(_node(dx.op))  # the input's shape from the op's output
    assert (shapes.n, shapes.c, shapes.oc) == (2, 3, 4)


LARGE = ((64, 16, 16, 32), (3, 3, 32, 64))  # a CIFAR-shaped layer: oneDNN's where it is loaded


@pytest.mark.parametrize("x_shape, f_shape, dtype, want", [
    ((1, 8, 8, 32), (3, 3, 32, 32), np.float32, "gather"),     # batch 1: below oneDNN's minimum
    ((2, 8, 8, 32), (3, 3, 32, 32), np.float64, "gather"),     # small, float64
    (*LARGE, np.float32, "onednn" if ONEDNN else "blocked"),
    (*LARGE, np.float64, "blocked"),                           # float64: never oneDNN
    ((None, 16, 16, 32), (3, 3, 32, 64), np.float32, "by-shape"),  # batch unknown: per shapes
    ((64, 28, 28, 16), (5, 5, 16, 1), np.float32, "taps"),     # one output channel
    ((1, 8, 8, 16), (3, 3, 16, 1), np.float32, "gather"),      # ... small: gathered first
])
def test_conv2d_choices(x_shape, f_shape, dtype, want):
    y = _conv(x_shape, f_shape, dtype)
    assert _chosen(y) == want
    with TABLE.restricted_to():
        assert _chosen(y) == "reference"


def test_the_plan_records_the_choice():
    x = np.ones((1, 8, 8, 32), np.float32)
    y = _conv(x.shape, (3, 3, 32, 32))
    xs, fs = y.op.inputs
    with tf.Session() as sess:
        value = sess.run(y, {xs: x, fs: np.ones((3, 3, 32, 32), np.float32)})
        choices = list(sess._compiled_plans())[-1].kernel_choices()
    assert value[0, 3, 3, 0] == 9 * 32
    assert [name for _, t, _, name in choices if t == "Conv2D"] == ["gather"]


def _input_grad(x_shape, f_shape, dtype=np.float32, strides=(1, 1)):
    y = _conv(x_shape, f_shape, dtype, strides=strides)
    g = tf.placeholder(y.dtype, y.shape)
    return tf.nn.conv2d_backprop_input(list(x_shape), y.op.inputs[1], g, [1, *strides, 1], "SAME")


@pytest.mark.parametrize("x_shape, f_shape, dtype, strides, want", [
    ((64, 28, 28, 1), (5, 5, 1, 16), np.float32, (1, 1), "taps"),   # to one channel
    (*LARGE, np.float32, (1, 1), "onednn" if ONEDNN else "blocked"),
    (*LARGE, np.float64, (1, 1), "blocked"),                        # stride 1, 32 channels
    (*LARGE, np.float64, (2, 2), "reference"),                      # strided: col2im
    ((2, 8, 8, 4), (3, 3, 4, 8), np.float64, (1, 1), "reference"),  # few channels: col2im
])
def test_conv2d_backprop_input_choices(x_shape, f_shape, dtype, strides, want):
    dx = _input_grad(x_shape, f_shape, dtype, strides)
    assert _chosen(dx) == want
    with TABLE.restricted_to():
        assert _chosen(dx) == "reference"


@pytest.mark.parametrize("dtype, batch, want", [
    (np.float32, 64, "onednn" if ONEDNN else "blocked"), (np.float64, 64, "blocked"),
    # batch unknown: chosen per the run's shapes where oneDNN might take them
    (np.float32, None, "by-shape" if ONEDNN else "blocked")])
def test_conv2d_backprop_filter_choices(dtype, batch, want):
    tf.reset_default_graph()
    x = tf.placeholder(tf.as_dtype(dtype), (batch, 16, 16, 32))
    g = tf.placeholder(tf.as_dtype(dtype), (batch, 16, 16, 64))
    df = tf.nn.conv2d_backprop_filter(x, [3, 3, 32, 64], g, [1, 1, 1, 1], "SAME")
    assert _chosen(df) == want
    with TABLE.restricted_to():
        assert _chosen(df) == "reference"


def _fused(x_shape, f_shape, dtype=np.float32, activation="Relu", fmt="NHWC"):
    tf.reset_default_graph()
    t = tf.as_dtype(dtype)
    x = tf.placeholder(t, x_shape)
    f = tf.placeholder(t, f_shape)
    b = tf.placeholder(t, f_shape[3:])
    return fused_ops.fused_conv2d(x, f, b, [1, 1, 1, 1], "SAME", activation, fmt)


@pytest.mark.parametrize("x_shape, f_shape, dtype, activation, want", [
    ((1, 8, 8, 1), (3, 3, 1, 32), np.float32, "Relu",
     "numba" if NUMBA else "onednn_small" if ONEDNN else "gather"),
    ((256, 8, 8, 1), (3, 3, 1, 32), np.float64, "", "numba" if NUMBA else "blocked"),
    ((1, 8, 8, 1), (3, 3, 1, 32), np.float32, "Tanh",  # not the loop's activation
     "onednn_small" if ONEDNN else "gather"),
    ((1, 8, 8, 1), (3, 3, 1, 32), np.float64, "Tanh", "gather"),
    ((1, 8, 8, 32), (3, 3, 32, 32), np.float32, "Relu", "onednn_small" if ONEDNN else "gather"),
    ((1, 8, 8, 32), (3, 3, 32, 32), np.float64, "Relu", "gather"),
    (*LARGE, np.float32, "Elu", "onednn" if ONEDNN else "blocked"),
    (*LARGE, np.float64, "Relu", "blocked"),
    ((None, 16, 16, 32), (3, 3, 32, 64), np.float32, "Relu", "by-shape"),
    ((64, 28, 28, 16), (5, 5, 16, 1), np.float32, "Relu", "taps"),
])
def test_fused_conv2d_choices(x_shape, f_shape, dtype, activation, want):
    y = _fused(x_shape, f_shape, dtype, activation)
    assert _chosen(y) == want
    with TABLE.restricted_to():
        assert _chosen(y) == "reference"


def test_fused_conv2d_in_nchw_takes_neither_the_loop_nor_the_bound_primitive():
    assert _chosen(_fused((1, 1, 8, 8), (3, 3, 1, 32), fmt="NCHW")) == "gather"
    assert _chosen(_fused((1, 32, 8, 8), (3, 3, 32, 32), fmt="NCHW")) == "gather"


@pytest.mark.parametrize("dtype, batch, want", [
    (np.float32, 64, "onednn" if ONEDNN else "members"), (np.float64, 64, "members"),
    # batch unknown: chosen per the run's shapes where oneDNN might take them
    (np.float32, None, "by-shape" if ONEDNN else "members")])
def test_filter_bias_and_input_filter_choices(dtype, batch, want):
    tf.reset_default_graph()
    t = tf.as_dtype(dtype)
    x = tf.placeholder(t, (batch, 16, 16, 32))
    g = tf.placeholder(t, (batch, 16, 16, 64))
    y = tf.placeholder(t, (batch, 16, 16, 64))
    f = tf.placeholder(t, (3, 3, 32, 64))
    ops = [fused_ops.conv2d_backprop_filter_bias(x, [3, 3, 32, 64], g, [1, 1, 1, 1], "SAME"),
           fused_ops.conv2d_backprop_filter_bias_relu_mask(x, [3, 3, 32, 64], g, y, [1, 1, 1, 1],
                                                           "SAME")]
    if batch is not None:
        ops.append(fused_ops.conv2d_backprop_input_filter([batch, 16, 16, 32], f, g, x,
                                                          [3, 3, 32, 64], [1, 1, 1, 1], "SAME"))
    for outputs in ops:
        assert _chosen(outputs[0]) == want
        with TABLE.restricted_to():
            assert _chosen(outputs[0]) == "reference"
        with TABLE.restricted_to({"members"}):  # the members' references
            assert _chosen(outputs[0]) == "members"
