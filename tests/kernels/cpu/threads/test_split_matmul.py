"""graphflow.kernels.cpu.threads.split_matmul: the plan chooses the split products for 2-D products
that cut into blocks on a session of several threads (and for products of unknown shape), not on
one thread, not for batched products; their values are the reference's (allclose: BLAS may sum
blocks in another order), FusedMatMul's bias and activation included."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import KernelNode, SessionState
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.threads import blas
from graphflow.ops import fused_ops

pytestmark = pytest.mark.skipif(not blas.owns_blas_threads(),
                                reason="graphflow leaves BLAS alone: no split products")


def _node(t, threads):
    state = SessionState()
    state.intra_op_threads = threads
    return KernelNode.describing(t.op, state)


def _choice(t, threads=2):
    return cpu_kernels.TABLE.choose(_node(t, threads)).name


def test_the_plan_chooses_split_products_on_several_threads():
    a = tf.placeholder(tf.float64, [256, 512])
    w = tf.placeholder(tf.float64, [512, 256])
    x = tf.placeholder(tf.float64, [None, 512])
    assert _choice(tf.matmul(a, w)) == "blas_split"
    assert _choice(tf.matmul(a, w), threads=1) == "reference"
    # unknown rows: chosen per the run's shapes where oneDNN could take them
    onednn = cpu_kernels.TABLE.feature("onednn")
    assert _choice(tf.matmul(x, w)) == ("by-shape" if onednn else "blas_split")
    assert _choice(tf.matmul(a[:8], w[:, :8])) == "reference"  # too small to cut
    batched = tf.placeholder(tf.float64, [4, 256, 512])
    assert _choice(tf.matmul(batched, tf.stack([w] * 4))) == "reference"
    assert _choice(fused_ops.fused_matmul(a, w, tf.placeholder(tf.float64, [256]))) == "blas_split"
    with cpu_kernels.TABLE.restricted_to():
        assert _choice(tf.matmul(a, w)) == "reference"
    meta = type("Meta", (), {})()
    rng = np.random.default_rng(0)
    feeds = {a: rng.standard_normal((256, 512)), w: rng.standard_normal((512, 256))}
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=2)) as sess:
        got = sess.run(tf.matmul(a, w), feeds, run_metadata=meta)
    assert [c[3] for c in meta.plan.kernel_choices() if c[1] == "MatMul"] == ["blas_split"]
    np.testing.assert_allclose(got, feeds[a] @ feeds[w], rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("activation", ["", "Relu", "Sigmoid"])
@pytest.mark.parametrize("ta", [False, True])
def test_split_products_match_the_reference(activation, ta):
    rng = np.random.default_rng(1)
    av = rng.standard_normal((300, 256) if ta else (256, 300), dtype=np.float32)
    bv = rng.standard_normal((300, 200), dtype=np.float32)
    cv = rng.standard_normal(200, dtype=np.float32)
    a, b, c = (tf.placeholder(tf.float32, v.shape) for v in (av, bv, cv))
    for t, inputs in ((tf.matmul(a, b, transpose_a=ta), (av, bv)),
                      (fused_ops.fused_matmul(a, b, c, activation, ta), (av, bv, cv))):
        node = _node(t, 2)
        impl = next(i for i in cpu_kernels.TABLE.implementations(node.type) if i.name == "blas_split")
        assert impl.applies(node)
        want = cpu_kernels.reference_builder(node.type)(node)(*inputs)
        np.testing.assert_allclose(impl.build(node)(*inputs), want, rtol=1e-5, atol=1e-5)
