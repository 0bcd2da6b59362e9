"""graphflow.kernels.cpu.numba.batch_norm_kernels: the "numba" implementations of FusedBatchNorm,
FusedBatchNormGrad, FusedBatchNormGradReluMask and FusedBatchNormStats give the reference's values
(the elementwise outputs its bits where the statistics are given), raise its errors, and the plan
chooses them for float32/float64 inputs of a static size of at least MIN_ELEMENTS only."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import KernelNode, SessionState
from graphflow.kernels.cpu import TABLE
from graphflow.kernels.cpu.numba import batch_norm_kernels, jit_updates
from graphflow.ops import nn_norm_ops

pytestmark = pytest.mark.skipif(jit_updates.loops() is None,
                                reason="numba is not installed (or GRAPHFLOW_NO_JIT=1)")

EPS = 1e-3
OPS = ("FusedBatchNorm", "FusedBatchNormGrad", "FusedBatchNormGradReluMask", "FusedBatchNormStats")


def _impl(op_type, name):
    return next(i for i in TABLE.implementations(op_type) if i.name == name)


def _vectors(c, dtype, rng):
    return [rng.uniform(0.5, 2, c).astype(dtype), rng.standard_normal(c).astype(dtype)]


def _graph_ops(shape, fmt, dtype, training, batch_known=True):
    """The four ops on placeholders of `shape` (its batch dim unknown unless `batch_known`) and the
    arrays to feed them: {op type: (Operation, [input arrays])}."""
    rng = np.random.default_rng(0)
    c = shape[1] if fmt == "NCHW" else shape[3]
    x = (rng.standard_normal(shape) * 2 + 1).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    scale, offset = _vectors(c, dtype, rng)
    mean, variance = rng.standard_normal(c).astype(dtype), rng.uniform(0.5, 2, c).astype(dtype)
    y_mean, y_gain, y_offset = (rng.standard_normal(c).astype(dtype) for _ in range(3))
    tf.reset_default_graph()
    dt = tf.as_dtype(dtype)
    static = (shape[0] if batch_known else None,) + tuple(shape[1:])
    xp, dyp = tf.placeholder(dt, static), tf.placeholder(dt, static)
    vec = [tf.placeholder(dt, [c]) for _ in range(7)]
    sp, op_, mp, vp, ymp, ygp, yop = vec
    stats = (mp, vp) if not training else (None, None)
    fwd = nn_norm_ops.fused_batch_norm(xp, sp, op_, *stats, epsilon=EPS, data_format=fmt,
                                       is_training=training)[0].op
    grad = nn_norm_ops.fused_batch_norm_grad(dyp, xp, sp, mp, vp, EPS, fmt, training)[0].op
    masked = nn_norm_ops.fused_batch_norm_grad_relu_mask(dyp, xp, sp, mp, vp, ymp, ygp, yop, EPS,
                                                         fmt, training)[0].op
    st = nn_norm_ops.fused_batch_norm_stats(xp, fmt)[0].op
    empty = np.empty(0, dtype)
    fwd_inputs = [x, scale, offset] + ([mean, variance] if not training else [empty, empty])
    return {"FusedBatchNorm": (fwd, fwd_inputs),
            "FusedBatchNormGrad": (grad, [dy, x, scale, mean, variance]),
            "FusedBatchNormGradReluMask": (masked, [dy, x, scale, mean, variance, y_mean, y_gain,
                                                    y_offset]),
            "FusedBatchNormStats": (st, [x])}


def _node(op, threads=1):
    state = SessionState()
    state.intra_op_threads = threads
    return KernelNode.describing(op, state)


CASES = [(s, f, d) for s in [(3, 5, 7, 11), (2, 8, 8, 33)] for f in ("NHWC", "NCHW")
         for d in (np.float32, np.float64)]
IDS = [f"{'x'.join(map(str, s))}-{f}-{np.dtype(d).name}" for s, f, d in CASES]


@pytest.mark.parametrize("training", [True, False], ids=["training", "inference"])
@pytest.mark.parametrize("shape,fmt,dtype", CASES, ids=IDS)
@pytest.mark.parametrize("op_type", OPS)
def test_the_loops_give_the_reference_values(op_type, shape, fmt, dtype, training):
    op, inputs = _graph_ops(shape, fmt, dtype, training)[op_type]
    node = _node(op, threads=2)
    assert TABLE.choose(node).name == "numba"
    got = _impl(op_type, "numba").build(node)(*inputs)
    want = _impl(op_type, "reference").build(node)(*inputs)
    rtol = 5e-5 if dtype == np.float32 else 1e-12
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * float(np.max(np.abs(w))))
    if op_type == "FusedBatchNorm" and not training:  # the reference's formula in its order
        assert [g.tobytes() for g in got] == [w.tobytes() for w in want]
    if op_type in ("FusedBatchNormGrad", "FusedBatchNormGradReluMask") and not training:
        assert got[0].tobytes() == want[0].tobytes()  # dx = dy * gain


@pytest.mark.parametrize("name", ["numba", "reference"])
def test_errors_are_the_references(name):
    ops = _graph_ops((3, 5, 7, 11), "NHWC", np.float32, True)
    op, (dy, x, scale, mean, variance) = ops["FusedBatchNormGrad"]
    run = _impl("FusedBatchNormGrad", name).build(_node(op))
    with pytest.raises(ValueError, match="reserve_space_1 of shape"):
        run(dy, x, scale, scale[:3], scale)
    with pytest.raises(ValueError, match="y_backprop of shape"):
        run(dy[:1], x, scale, scale, scale)
    op, (x, scale, offset, empty, _) = ops["FusedBatchNorm"]
    with pytest.raises(ValueError, match="offset of shape"):
        _impl("FusedBatchNorm", name).build(_node(op))(x, scale, offset[:2], empty, empty)
    op, inputs = ops["FusedBatchNormGradReluMask"]
    with pytest.raises(ValueError, match="y_gain of shape"):
        _impl("FusedBatchNormGradReluMask", name).build(_node(op))(*inputs[:6], inputs[6][:2],
                                                                  inputs[7])


def _choices(shape, dtype, batch_known=True):
    """{op type: implementation} as the plan chooses them for a training graph of `shape`."""
    ops = _graph_ops(shape, "NHWC", dtype, True, batch_known)
    return {t: TABLE.choose(_node(op)).name for t, (op, _) in ops.items()}


def test_the_choice():
    numba = dict.fromkeys(OPS, "numba")
    reference = dict.fromkeys(OPS, "reference")
    assert _choices((2, 8, 8, 16), np.float32) == numba                    # 2048 elements
    assert _choices((2, 8, 8, 16), np.float64) == numba
    assert _choices((2, 4, 4, 1), np.float32) == reference                 # 32 < MIN_ELEMENTS
    assert _choices((2, 8, 8, 16), np.float16) == reference                # float16: numpy
    # batch unknown: chosen per input shapes when the node runs (the loops for these)
    assert _choices((2, 8, 8, 16), np.float32, batch_known=False) == dict.fromkeys(OPS, "by-shape")
    with TABLE.restricted_to():
        assert _choices((2, 8, 8, 16), np.float32) == reference
    with TABLE.restricted_to({"numba"}):
        assert _choices((2, 8, 8, 16), np.float32) == numba


def test_static_shape_merges_x_and_dy():
    assert batch_norm_kernels.static_shape((None, 4, 4, 8), (2, 4, 4, None)) == (2, 4, 4, 8)
    assert batch_norm_kernels.static_shape((None, 4, 4, 8), None) is None
    assert batch_norm_kernels.static_shape((2, 4, 4, 8), (3, 4, 4, 8)) is None
    assert batch_norm_kernels.static_shape((2, 4, 4)) is None


def test_a_sessions_plan_names_the_choice():
    """A plan's kernel choices, one per op: an unknown batch dim fed at run time gets a plan made
    for the fed shape, so the loops run it; `restricted_to()` plans run the reference."""
    x = tf.placeholder(tf.float32, [None, 8, 8, 16])
    small = tf.placeholder(tf.float32, [2, 4, 4, 1])
    y = nn_norm_ops.fused_batch_norm(x, np.ones(16, np.float32), np.zeros(16, np.float32))[0]
    z = nn_norm_ops.fused_batch_norm(small, np.ones(1, np.float32), np.zeros(1, np.float32))[0]
    feed = {x: np.ones((2, 8, 8, 16), np.float32), small: np.ones((2, 4, 4, 1), np.float32)}

    def choices(sess):
        sess.run([y, z], feed)
        plan = sess._compiled_plans()[-1]
        return {name: impl for name, t, _, impl in plan.kernel_choices() if t == "FusedBatchNorm"}
    with tf.Session(passes=[]) as sess:  # (no pass splits the batch norms)
        assert choices(sess) == {y.op.name: "numba", z.op.name: "reference"}
    with TABLE.restricted_to(), tf.Session(passes=[]) as sess:
        assert choices(sess) == {y.op.name: "reference", z.op.name: "reference"}
