"""The plan's choice among the pooling implementations (`jit_pool_kernels.py`: "numba",
`dnnl_pool.py`: "onednn", `pool_kernels.py`: "reference") for representative nodes: the path
today's routing took for static shapes, the reference under `TABLE.restricted_to()`."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import KernelNode, SessionState
from graphflow.kernels.cpu import TABLE
from graphflow.ops import conv_ops

NUMBA = TABLE.feature("numba")
ONEDNN = TABLE.feature("onednn")
needs_numba = pytest.mark.skipif(not NUMBA, reason="numba is not installed (or GRAPHFLOW_NO_JIT=1)")


def _pools(shape, dtype, fmt="NHWC", k=2, s=2):
    tf.reset_default_graph()
    x = tf.placeholder(dtype, shape)
    kw = dict(ksize=[1, k, k, 1], strides=[1, s, s, 1], padding="VALID", data_format=fmt)
    if fmt == "NCHW":
        kw.update(ksize=[1, 1, k, k], strides=[1, 1, s, s])
    y = tf.nn.max_pool(x, **kw)
    a = tf.nn.avg_pool(x, **kw)
    g = tf.placeholder(dtype, y.shape)
    return {"MaxPool": y.op, "AvgPool": a.op,
            "MaxPoolGrad": conv_ops.max_pool_grad(x, y, g, **kw).op,
            "AvgPoolGrad": tf.gradients(tf.reduce_sum(a), [x])[0].op}


def _chosen(op):
    return TABLE.choose(KernelNode.describing(op, SessionState())).name


@needs_numba
def test_compiled_loops_for_float_pools_of_static_size():
    ops = _pools((8, 16, 16, 8), tf.float32)
    assert _chosen(ops["MaxPool"]) == "numba"
    assert _chosen(ops["AvgPool"]) == "numba"
    assert _chosen(ops["AvgPoolGrad"]) == "numba"
    assert _chosen(ops["MaxPoolGrad"]) == "numba"  # NHWC: the forward pass's recorded argmaxes
    ops = _pools((8, 16, 16, 8), tf.float64)
    assert {_chosen(op) for op in ops.values()} == {"numba"}


@needs_numba
def test_unknown_batch_and_small_inputs():
    ops = _pools((None, 16, 16, 8), tf.float32)  # one image has MIN_ELEMENTS elements or more
    assert _chosen(ops["MaxPool"]) == "numba" and _chosen(ops["AvgPool"]) == "numba"
    ops = _pools((None, 4, 4, 2), tf.float32)  # small images: the batch decides, per run's shapes
    assert _chosen(ops["MaxPool"]) == "by-shape" and _chosen(ops["AvgPool"]) == "by-shape"
    ops = _pools((1, 4, 4, 2), tf.float64)  # 32 elements: not worth a compile
    assert {_chosen(op) for op in ops.values()} == {"reference"}
    ops = _pools((None, None, None, 8), tf.float32)
    assert {_chosen(op) for op in ops.values()} == {"by-shape"}


@pytest.mark.skipif(not (NUMBA and ONEDNN), reason="needs numba and oneDNN")
def test_onednn_for_float32_nchw_max_pool_grad_except_planes_covered_in_pairs():
    ops = _pools((4, 8, 15, 13), tf.float32, "NCHW", k=3, s=2)
    assert _chosen(ops["MaxPoolGrad"]) == "onednn"
    assert _chosen(ops["MaxPool"]) == "numba"
    ops = _pools((4, 8, 16, 16), tf.float32, "NCHW")  # 2x2 stride 2 covering the planes
    assert _chosen(ops["MaxPoolGrad"]) == "numba"
    ops = _pools((4, 8, 15, 13), tf.float64, "NCHW", k=3, s=2)
    assert _chosen(ops["MaxPoolGrad"]) == "numba"  # float64: never oneDNN
    ops = _pools((1, 2, 4, 4), tf.float32, "NHWC")  # too small for the loops: oneDNN
    assert _chosen(ops["MaxPoolGrad"]) == "onednn"
    with TABLE.restricted_to({"onednn"}):  # the loops excluded: oneDNN takes NHWC too
        assert _chosen(_pools((8, 16, 16, 8), tf.float32)["MaxPoolGrad"]) == "onednn"
    ops = _pools((None, 8, 15, 13), tf.float32, "NCHW", k=3, s=2)  # unknown batch: per shapes
    assert _chosen(ops["MaxPoolGrad"]) == "by-shape"


def test_restricted_to_the_reference():
    with TABLE.restricted_to():
        ops = _pools((8, 16, 16, 8), tf.float32)
        assert {_chosen(op) for op in ops.values()} == {"reference"}


@needs_numba
def test_the_plan_records_its_choices():
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, (4, 16, 16, 8))
    y = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    dx = tf.gradients(tf.reduce_sum(y * y), [x])[0]
    with tf.Session() as sess:
        sess.run(dx, {x: np.ones((4, 16, 16, 8), np.float32)})
        choices = {t: name for plan in sess._compiled_plans()
                   for _, t, _, name in plan.kernel_choices()}
    assert choices["MaxPool"] == "numba"
    assert choices.get("MaxPoolGrad", choices.get("FusedMaxPoolGradReluMask")) == "numba"
