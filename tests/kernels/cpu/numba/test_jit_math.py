"""The compiled float32 tanh and sigmoid of graphflow/kernels/cpu/numba/jit_math.py: tanh within 1 ulp of
the correctly rounded tanh (2 of numpy's), sigmoid within 2 ulp of the correctly rounded sigmoid
(graphflow's numpy sigmoid within 4), on a sample spread over every binade (the module's claims were checked
once over all 2^32 inputs); symmetric, monotonic, and exact at the edges (NaN payloads, signed zeros,
infinities, denormals, the clamps)."""

import numpy as np
import pytest

from graphflow.kernels.cpu.numba import jit_math
from graphflow.ops.elementwise_spec import _sigmoid as numpy_sigmoid

pytest.importorskip("numba")


def tanh32(x, out=None):
    return jit_math.array_call("Tanh", x, out)


def sigmoid32(x, out=None):
    return jit_math.array_call("Sigmoid", x, out)


def _ordered(a):
    """float32 bits as integers ordered like the values (so that a difference counts ulps)."""
    i = a.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def _ulps(a, b):
    return np.abs(_ordered(a) - _ordered(b))


def _sample():
    # every 997th bit pattern (all exponents, both signs) and values where tanh bends
    bits = np.arange(0, 1 << 32, 997, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    x = x[np.isfinite(x)]
    rng = np.random.default_rng(0)
    dense = rng.uniform(-12, 12, 1 << 20).astype(np.float32)
    near = np.float32(0.625) + np.arange(-2000, 2000, dtype=np.float32) * np.float32(2 ** -23)
    return np.concatenate([x, dense, near, -near])


def _exact_sigmoid(x):
    """The sigmoid in float64 rounded to float32 (correctly rounded up to double rounding)."""
    x = x.astype(np.float64)
    m = np.exp(-np.abs(x))
    return (np.where(x >= 0, 1.0, m) / (1.0 + m)).astype(np.float32)


def test_tanh_within_one_ulp_of_the_correctly_rounded_tanh_and_of_numpys():
    x = _sample()
    got = tanh32(x)
    exact = np.tanh(x.astype(np.float64)).astype(np.float32)
    assert _ulps(got, exact).max() <= 1
    # numpy's is also within 1 ulp of the correctly rounded one, possibly on the other side
    assert _ulps(got, np.tanh(x)).max() <= 2
    # not numpy's bits merely copied: most values agree, some differ by the 1 ulp
    assert 0 < np.count_nonzero(got != np.tanh(x)) < x.size // 2


def test_tanh_odd_and_bounded():
    x = _sample()
    got = tanh32(x)
    assert (tanh32(-x).view(np.uint32) == (-got).view(np.uint32)).all()
    assert (np.abs(got) <= 1).all()
    # monotonic on the positive sorted sample
    pos = np.unique(np.abs(x))
    assert (np.diff(tanh32(pos)) >= 0).all()


def test_tanh_edge_values():
    payloads = np.array([0x7FC00001, 0xFFC12345, 0x7FC00000, 0xFFC00000, 0x7FA00000], np.uint32)
    got = tanh32(payloads.view(np.float32))
    assert (got.view(np.uint32) == payloads | 0x400000).all()  # a NaN comes back as itself, quiet
    f = np.finfo(np.float32)
    x = np.array([0.0, -0.0, np.inf, -np.inf, f.max, -f.max, f.tiny, -f.tiny, f.smallest_subnormal,
                  -f.smallest_subnormal, 7 * f.smallest_subnormal, 1e-20, 9.0, 10.0, 10.5, -30.0],
                 np.float32)
    got = tanh32(x)
    want = np.array([0.0, -0.0, 1, -1, 1, -1, f.tiny, -f.tiny, f.smallest_subnormal,
                     -f.smallest_subnormal, 7 * f.smallest_subnormal, 1e-20,
                     np.tanh(np.float64(9.0)), 1, 1, -1], np.float32)
    assert got.tobytes() == want.tobytes()


def test_sigmoid_within_two_ulp_of_the_correctly_rounded_sigmoid():
    x = _sample()
    got = sigmoid32(x)
    exact = _exact_sigmoid(x)
    assert _ulps(got, exact).max() <= 2
    # the numpy sigmoid (graphflow's Sigmoid kernel: numpy's exp, then the same divisions) is
    # within 4 ulp of the correctly rounded one (all 2^32 inputs checked once), so the two may
    # differ by a few ulp
    assert _ulps(numpy_sigmoid(x), exact).max() <= 4
    assert _ulps(got, numpy_sigmoid(x)).max() <= 5
    assert 0 < np.count_nonzero(got != numpy_sigmoid(x)) < x.size // 10


def test_sigmoid_keeps_its_relative_precision_where_it_is_tiny():
    # (tanh(x/2) + 1)/2, the earlier formula, gave 0 below -17 and was 2e-4 off at -10
    x = np.array([-10.0, -20.0, -50.0, -87.0, -88.0, -100.0, -103.0], np.float32)
    want = _exact_sigmoid(x)
    for got in (sigmoid32(x), numpy_sigmoid(x)):
        assert (got > 0).all()
        assert _ulps(got, want).max() <= 4
    # 1 - sigmoid(x) = sigmoid(-x) to the rounding of the two: symmetric within 2 ulp of 1
    y = _sample()
    y = y[np.abs(y) < 20]
    assert np.abs(sigmoid32(y) + sigmoid32(-y) - 1).max() <= 2 * 2 ** -24 * 2


def test_sigmoid_bounded_and_monotonic_to_an_ulp():
    x = np.unique(_sample())
    got = sigmoid32(x)
    assert ((got >= 0) & (got <= 1)).all()
    # not correctly rounded, so a step back of 1 ulp can happen (the sample has one, numpy's
    # sigmoid two); never more
    steps = np.diff(_ordered(got))
    assert steps.min() >= -1 and np.count_nonzero(steps < 0) <= 3


def test_sigmoid_edge_values():
    f = np.finfo(np.float32)
    x = np.array([np.nan, 0.0, -0.0, np.inf, -np.inf, f.max, -f.max, 18.0, 104.0, -104.0, -105.0,
                  f.smallest_subnormal, -f.tiny], np.float32)
    got = sigmoid32(x)
    want = np.array([np.nan, 0.5, 0.5, 1, 0, 1, 0, 1, 1, 0, 0, 0.5, 0.5], np.float32)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(numpy_sigmoid(x), want, equal_nan=True)
    # denormal results: e^-|x| rounded once (2^-149, the smallest, near x = -103.28)
    assert sigmoid32(np.array([-103.0], np.float32))[0] == _exact_sigmoid(np.array([-103.0]))[0] > 0


@pytest.mark.parametrize("op", ["Tanh", "Sigmoid"])
def test_array_forms(op):
    x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
    want = jit_math.array_call(op, x.reshape(-1)).reshape(4, 6)
    assert jit_math.array_call(op, x).tobytes() == want.tobytes()
    out = np.empty((6, 4), np.float32).T  # a non-contiguous output
    assert jit_math.array_call(op, x, out=out) is out and out.tobytes() == want.tobytes()
    assert jit_math.array_call(op, x[:, ::2]).tobytes() == want[:, ::2].tobytes()


def test_switch(monkeypatch):
    monkeypatch.setenv("GRAPHFLOW_JIT_MATH", "0")
    assert not jit_math.enabled()
    monkeypatch.setenv("GRAPHFLOW_JIT_MATH", "1")
    assert jit_math.enabled()
