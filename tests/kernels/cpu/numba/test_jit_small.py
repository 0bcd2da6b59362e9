"""graphflow.kernels.cpu.numba.jit_small: the compiled softmax and few-row product give the numpy
kernels' values (the reference) to rounding, with NaN, infinities and large logits, over the last
axis of 1-D to 3-D inputs; the Softmax and FusedMatMul kernels take them only where they apply
(last axis, contiguous; a few rows, no activation or Relu), and the Softmax and FusedMatMul op
cases still match."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import KernelNode, SessionState
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.numba import jit_small
from graphflow.ops import fused_ops
from tests.op_cases import fused_cases, nn_cases

pytestmark = pytest.mark.skipif(jit_small.loops() is None,
                                reason="numba is not installed (or GRAPHFLOW_NO_JIT=1)")


def _numpy_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(10,), (1, 10), (7, 33), (2, 3, 5)])
def test_softmax_matches_numpy(shape, dtype):
    x = (np.random.default_rng(0).standard_normal(shape) * 30).astype(dtype)
    got = jit_small.softmax(x)
    assert got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_allclose(got, _numpy_softmax(x), rtol=1e-6 if dtype == np.float32 else 1e-14,
                               atol=1e-7)


def test_softmax_special_values_as_numpy():
    x = np.array([[0, np.nan, 1], [-np.inf, 0, 1], [np.inf, 0, 1], [-np.inf] * 3,
                  [1e30, -1e30, 0]], np.float32)
    with np.errstate(invalid="ignore"):
        want = _numpy_softmax(x)
    np.testing.assert_array_equal(np.isnan(jit_small.softmax(x)), np.isnan(want))
    np.testing.assert_allclose(jit_small.softmax(x), want, rtol=1e-6)


def test_softmax_applies_to_the_last_contiguous_axis_only():
    x = np.ones((3, 4), np.float32)
    assert jit_small.softmax_applies(x, -1) and jit_small.softmax_applies(x, 1)
    assert not jit_small.softmax_applies(x, 0)
    assert not jit_small.softmax_applies(x.T, -1)
    assert not jit_small.softmax_applies(x.astype(np.int32), -1)


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("m, k, n", [(1, 256, 128), (1, 128, 10), (2, 7, 3), (1, 1, 1), (2, 9, 5)])
def test_dense_matches_the_product_with_bias_and_relu(m, k, n, relu):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    bias = rng.standard_normal(n, dtype=np.float32)
    assert jit_small.dense_applies(a, b, bias)
    want = a @ b + bias
    if relu:
        want = np.maximum(want, 0)
    np.testing.assert_allclose(jit_small.dense(a, b, bias, relu), want, rtol=1e-5, atol=1e-5)


def test_dense_applies_to_few_rows_of_one_dtype():
    a, b, bias = np.ones((1, 4), np.float32), np.ones((4, 3), np.float32), np.ones(3, np.float32)
    assert jit_small.dense_applies(a, b, bias)
    assert not jit_small.dense_applies(np.ones((jit_small.MAX_ROWS + 1, 4), np.float32), b, bias)
    assert not jit_small.dense_applies(a, b.astype(np.float64), bias)
    assert not jit_small.dense_applies(a, b, np.ones((1, 3), np.float32))
    assert not jit_small.dense_applies(a, b, np.ones(6, np.float32)[::2])
    assert not jit_small.dense_applies(a, np.ones((4, 3), np.float32, order="F"), bias)


def _run(build, inputs):
    tf.reset_default_graph()
    xs = [tf.placeholder(tf.as_dtype(x.dtype), x.shape) for x in inputs]
    with tf.Session() as sess:
        return sess.run(build(*xs), dict(zip(xs, inputs)))


CASES = [c for c in nn_cases.CASES + fused_cases.CASES if c.op_type in ("Softmax", "FusedMatMul")]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_op_cases_match_with_the_loops_and_without(case, monkeypatch):
    got = _run(case.build, case.inputs)
    with cpu_kernels.TABLE.restricted_to():  # the numpy references
        want = _run(case.build, case.inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("activation, taken", [("Relu", True), ("", True), ("Tanh", False)])
def test_fused_matmul_takes_the_loop_for_relu_or_no_activation(activation, taken, monkeypatch):
    rng = np.random.default_rng(4)
    inputs = [rng.standard_normal((1, 20), dtype=np.float32),
              rng.standard_normal((20, 6), dtype=np.float32), rng.standard_normal(6, dtype=np.float32)]
    calls = []
    real = jit_small.dense
    monkeypatch.setattr(jit_small, "dense", lambda *a: calls.append(1) or real(*a))
    build = lambda a, b, c: fused_ops.fused_matmul(a, b, c, activation)  # noqa: E731
    got = _run(build, inputs)
    assert bool(calls) == taken
    with cpu_kernels.TABLE.restricted_to():
        np.testing.assert_allclose(got, _run(build, inputs), rtol=1e-5, atol=1e-6)


def test_dense_with_infinite_bias_as_numpy():
    a, b = np.ones((1, 3), np.float32), np.ones((3, 2), np.float32)
    bias = np.array([np.inf, -np.inf], np.float32)
    np.testing.assert_array_equal(jit_small.dense(a, b, bias, True), np.maximum(a @ b + bias, 0))


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("shape", [(64, 32), (1, 4, 4, 64), (5,)])
def test_add_bias_in_place_matches_numpy(shape, relu):
    rng = np.random.default_rng(5)
    out = rng.standard_normal(shape, dtype=np.float32)
    bias = rng.standard_normal(shape[-1:], dtype=np.float32)
    want = out + bias
    if relu:
        want = np.maximum(want, 0)
    assert jit_small.add_bias_applies(out, bias)
    got = jit_small.add_bias(out, bias, relu)
    assert got is out
    np.testing.assert_array_equal(got, want)  # one add and one comparison: numpy's bits
    assert not jit_small.add_bias_applies(out.astype(np.float64), bias)


def _choice(t):
    return cpu_kernels.TABLE.choose(KernelNode.describing(t.op, SessionState())).name


def test_the_plan_chooses_the_loops_where_they_apply():
    x = tf.placeholder(tf.float32, [2, 10])
    assert _choice(tf.nn.softmax(x)) == "numba"
    assert _choice(tf.nn.softmax(tf.placeholder(tf.float64, [None, 10]))) == "numba"
    assert _choice(tf.nn.softmax(x, axis=0)) == "reference"
    assert _choice(tf.nn.softmax(tf.placeholder(tf.float16, [2, 10]))) == "reference"
    assert _choice(tf.nn.softmax(tf.placeholder(tf.float32, [2, None]))) == "by-shape"
    a, b = tf.placeholder(tf.float32, [1, 20]), tf.placeholder(tf.float32, [20, 6])
    bias = tf.placeholder(tf.float32, [6])
    assert _choice(fused_ops.fused_matmul(a, b, bias, "Relu")) == "numba"
    assert _choice(fused_ops.fused_matmul(a, b, bias, "")) == "numba"
    assert _choice(fused_ops.fused_matmul(a, b, bias, "Tanh")) == "reference"
    assert _choice(fused_ops.fused_matmul(a, tf.transpose(b), bias, transpose_b=True)) != "numba"
    big = tf.placeholder(tf.float32, [jit_small.MAX_ROWS + 1, 20])
    assert _choice(fused_ops.fused_matmul(big, b, bias)) != "numba"
    unknown = tf.placeholder(tf.float32, [None, 20])
    assert _choice(fused_ops.fused_matmul(unknown, b, bias)) != "numba"
    with cpu_kernels.TABLE.restricted_to():
        assert _choice(tf.nn.softmax(x)) == "reference"
        assert _choice(fused_ops.fused_matmul(a, b, bias, "Relu")) == "reference"


def test_the_kernels_copy_views_the_loops_cannot_read():
    xv = np.random.default_rng(5).standard_normal((6, 20)).astype(np.float32)
    x = tf.placeholder(tf.float32, [3, 10])
    node = KernelNode.describing(tf.nn.softmax(x).op, SessionState())
    impl = next(i for i in cpu_kernels.TABLE.implementations("Softmax") if i.name == "numba")
    view = xv[::2, ::2]
    np.testing.assert_allclose(impl.build(node)(view),
                               cpu_kernels.reference_builder("Softmax")(node)(view), rtol=1e-6)
