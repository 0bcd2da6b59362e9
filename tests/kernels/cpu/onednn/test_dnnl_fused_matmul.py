"""graphflow.kernels.cpu.onednn.dnnl_fused_matmul: the plan chooses oneDNN for 2-D float32 MatMul and
FusedMatMul products of known shape and at least MIN_MACS multiply-adds (not float64, not an unknown
batch dim, not under `TABLE.restricted_to()`), and those implementations give the reference's
values (transposes, bias, exact and numpy-applied activations).
Skipped where the optional oneDNN library is not installed."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import KernelNode, SessionState
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.onednn import dnnl
from graphflow.ops import fused_ops
from tests.tooling import required

pytestmark = pytest.mark.skipif(
    dnnl.library() is None and not required("onednn"),
    reason="oneDNN is not installed (onednn-cpu-gomp) or GRAPHFLOW_NO_DNNL=1; CI provides it")


def _node(t, threads=1):
    state = SessionState()
    state.intra_op_threads = threads
    return KernelNode.describing(t.op, state)


def _impl(op_type, name):
    return next(i for i in cpu_kernels.TABLE.implementations(op_type) if i.name == name)


def test_the_plan_chooses_onednn_for_large_float32_products():
    a = tf.placeholder(tf.float32, [64, 1000])
    w = tf.placeholder(tf.float32, [1000, 100])
    x = tf.placeholder(tf.float32, [None, 1000])
    bias = tf.placeholder(tf.float32, [100])
    y = tf.matmul(a, w)
    meta = type("Meta", (), {})()
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)) as sess:
        sess.run(y, {a: np.ones((64, 1000), np.float32), w: np.ones((1000, 100), np.float32)},
                 run_metadata=meta)
    assert [c[3] for c in meta.plan.kernel_choices() if c[1] == "MatMul"] == ["onednn"]
    choose = cpu_kernels.TABLE.choose
    assert choose(_node(fused_ops.fused_matmul(a, w, bias, "Relu"))).name == "onednn"
    assert choose(_node(tf.matmul(w, a, transpose_a=True, transpose_b=True))).name == "onednn"
    assert choose(_node(tf.matmul(x, w))).name != "onednn"  # the batch dim is unknown
    assert choose(_node(tf.matmul(a[:2], w[:, :2]))).name == "reference"  # too small
    a64 = tf.placeholder(tf.float64, [64, 1000])
    assert choose(_node(tf.matmul(a64, tf.cast(w, tf.float64)))).name == "reference"
    with cpu_kernels.TABLE.restricted_to():
        assert choose(_node(y)).name == "reference"
    bias2d = tf.placeholder(tf.float32, [64, 100])  # a bias per element: not the primitive's
    assert choose(_node(fused_ops.fused_matmul(a, w, bias2d))).name != "onednn"


def test_a_vector_times_a_matrix_keeps_numpys_matrix_vector_product():
    """Batch-1 inference's dense layer: oneDNN would pack the whole weight for one row."""
    choose = cpu_kernels.TABLE.choose
    w = tf.placeholder(tf.float32, [3136, 1024])
    row, rows = tf.placeholder(tf.float32, [1, 3136]), tf.placeholder(tf.float32, [2, 3136])
    assert choose(_node(tf.matmul(row, w))).name != "onednn"
    assert choose(_node(tf.matmul(w, row, transpose_a=True, transpose_b=True))).name != "onednn"
    assert choose(_node(tf.matmul(rows, w))).name == "onednn"
    x = tf.placeholder(tf.float32, [None, 3136])  # chosen per batch size at the first call
    y = tf.matmul(x, w)
    weights = np.ones((3136, 1024), np.float32)
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)) as sess:
        for batch, onednn in ((1, False), (8, True)):
            meta = type("Meta", (), {})()
            sess.run(y, {x: np.ones((batch, 3136), np.float32), w: weights}, run_metadata=meta)
            (chosen,) = [c[3] for c in meta.plan.kernel_choices() if c[1] == "MatMul"]
            assert (chosen == "onednn") == onednn, (batch, chosen)


@pytest.mark.parametrize("ta, tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("activation", ["", "Relu", "Relu6", "Tanh"])
def test_onednn_products_match_the_reference(ta, tb, activation):
    rng = np.random.default_rng(3)
    m, k, n = 96, 130, 120
    av = rng.standard_normal((k, m) if ta else (m, k), dtype=np.float32)
    bv = rng.standard_normal((n, k) if tb else (k, n), dtype=np.float32)
    cv = rng.standard_normal(n, dtype=np.float32)
    a, b, c = (tf.placeholder(tf.float32, v.shape) for v in (av, bv, cv))
    for t, inputs in ((tf.matmul(a, b, transpose_a=ta, transpose_b=tb), (av, bv)),
                      (fused_ops.fused_matmul(a, b, c, activation, ta, tb), (av, bv, cv))):
        node = _node(t, threads=2)
        assert cpu_kernels.TABLE.choose(node).name == "onednn"
        got = _impl(node.type, "onednn").build(node)(*inputs)
        want = cpu_kernels.reference_builder(node.type)(node)(*inputs)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-4)
