"""The compiled float32 tanh of graphflow/kernels/cpu/jit_math.py: within 1 ulp of the correctly
rounded tanh (2 of numpy's) on a sample spread over every binade (the module's claim was checked
once over all 2^32 inputs), odd, and exact at the edges (NaN payloads, signed zeros, infinities,
denormals, the clamp)."""

import numpy as np
import pytest

from graphflow.kernels.cpu import jit_math

pytest.importorskip("numba")


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


def test_within_one_ulp_of_the_correctly_rounded_tanh_and_of_numpys():
    x = _sample()
    got = jit_math.tanh32(x)
    exact = np.tanh(x.astype(np.float64)).astype(np.float32)
    assert _ulps(got, exact).max() <= 1
    # numpy's is also within 1 ulp of the correctly rounded one, possibly on the other side
    assert _ulps(got, np.tanh(x)).max() <= 2
    # not numpy's bits merely copied: most values agree, some differ by the 1 ulp
    assert 0 < np.count_nonzero(got != np.tanh(x)) < x.size // 2


def test_odd_and_bounded():
    x = _sample()
    got = jit_math.tanh32(x)
    assert (jit_math.tanh32(-x).view(np.uint32) == (-got).view(np.uint32)).all()
    assert (np.abs(got) <= 1).all()
    # monotonic on the positive sorted sample
    pos = np.unique(np.abs(x))
    assert (np.diff(jit_math.tanh32(pos)) >= 0).all()


def test_edge_values():
    payloads = np.array([0x7FC00001, 0xFFC12345, 0x7FC00000, 0xFFC00000, 0x7FA00000], np.uint32)
    got = jit_math.tanh32(payloads.view(np.float32))
    assert (got.view(np.uint32) == payloads | 0x400000).all()  # a NaN comes back as itself, quiet
    f = np.finfo(np.float32)
    x = np.array([0.0, -0.0, np.inf, -np.inf, f.max, -f.max, f.tiny, -f.tiny, f.smallest_subnormal,
                  -f.smallest_subnormal, 7 * f.smallest_subnormal, 1e-20, 9.0, 10.0, 10.5, -30.0],
                 np.float32)
    got = jit_math.tanh32(x)
    want = np.array([0.0, -0.0, 1, -1, 1, -1, f.tiny, -f.tiny, f.smallest_subnormal,
                     -f.smallest_subnormal, 7 * f.smallest_subnormal, 1e-20,
                     np.tanh(np.float64(9.0)), 1, 1, -1], np.float32)
    assert got.tobytes() == want.tobytes()


def test_array_forms():
    x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
    want = jit_math.tanh32(x.reshape(-1)).reshape(4, 6)
    assert jit_math.tanh32(x).tobytes() == want.tobytes()
    out = np.empty((6, 4), np.float32).T  # a non-contiguous output
    assert jit_math.tanh32(x, out=out) is out and out.tobytes() == want.tobytes()
    assert jit_math.tanh32(x[:, ::2]).tobytes() == want[:, ::2].tobytes()


def test_switch(monkeypatch):
    monkeypatch.setenv("GRAPHFLOW_JIT_TANH", "0")
    assert not jit_math.tanh_enabled()
    monkeypatch.setenv("GRAPHFLOW_JIT_TANH", "1")
    assert jit_math.tanh_enabled()
