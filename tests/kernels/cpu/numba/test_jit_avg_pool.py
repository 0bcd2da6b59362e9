"""graphflow.kernels.cpu.numba.jit_avg_pool: the compiled AvgPool/AvgPoolGrad give the numpy kernels'
bits (avg_pool_kernels.py, the reference; signed zeros included, compared as integers) on every
AvgPool/AvgPoolGrad op case and on random geometries: SAME padding (the divisor is the count of
in-bounds elements), strides, overlapping and cropped windows, float32 and float64, channel counts
1 to 64 on the 2x2 loops, one thread and image blocks on three."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu import TABLE
from graphflow.kernels.cpu.numba import jit_avg_pool, jit_pool
from graphflow.ops import conv_ops
from tests.op_cases import nn_cases, run_build

pytestmark = pytest.mark.skipif(jit_avg_pool.loops() is None or jit_pool.loops() is None,
                                reason="numba is not installed (or GRAPHFLOW_NO_JIT=1)")

AVG_CASES = [c for c in nn_cases.CASES if c.op_type in ("AvgPool", "AvgPoolGrad")]
SPIED = ("avg_pool", "avg_pool_grad")


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _run(build, inputs, jit, monkeypatch, threads=1):
    """Values of `build(*placeholders)`; with `jit` the compiled loops (which must run), else the
    numpy reference (all compiled pools off)."""
    monkeypatch.setattr(jit_pool, "MIN_ELEMENTS", 0)
    calls = []
    for name in SPIED:
        real = getattr(jit_avg_pool, name)
        monkeypatch.setattr(jit_avg_pool, name,
                            lambda *a, real=real, name=name: calls.append(name) or real(*a))
    with TABLE.restricted_to({"numba"} if jit else ()):
        return run_build(build, inputs, threads, optimize=False), calls  # g: not folded


def test_avg_pool_cases_exist():
    assert {c.op_type for c in AVG_CASES} == {"AvgPool", "AvgPoolGrad"}


@pytest.mark.parametrize("case", AVG_CASES, ids=[c.name for c in AVG_CASES])
def test_compiled_avg_pooling_matches_the_reference_on_the_op_cases(case, monkeypatch):
    got, calls = _run(case.build, case.inputs, True, monkeypatch)
    want, none = _run(case.build, case.inputs, False, monkeypatch)
    assert not none
    if "NCHW" not in case.name:  # NCHW: jit_pool_nchw.py's loops (test_jit_pool_nchw.py)
        assert calls
    np.testing.assert_array_equal(_bits(got), _bits(want))


SHAPES = [  # input (NHWC), window, strides, padding
    ((16, 28, 28, 16), (2, 2), (2, 2), "VALID"),  # the 2x2 loops, windows tile the input
    ((5, 11, 9, 5), (2, 2), (2, 2), "VALID"),     # ... a cropped last row and column
    ((5, 11, 9, 5), (2, 2), (1, 1), "VALID"),     # 2x2 forward loop, overlapping gradient
    ((5, 11, 9, 5), (2, 2), (2, 2), "SAME"),      # padded 2x2: the general loops
    ((8, 15, 13, 5), (3, 3), (2, 2), "SAME"),
    ((8, 15, 13, 5), (3, 2), (1, 2), "VALID"),
    ((6, 9, 9, 7), (3, 3), (1, 1), "SAME"),
    ((4, 10, 11, 5), (3, 3), (3, 3), "VALID"),    # 3x3 windows that tile: the write-once gradient
    ((3, 6, 7, 4), (5, 4), (2, 3), "SAME"),       # windows wider than the stride and the padding
]


def _values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = np.round(rng.standard_normal(shape) * 4) / 4  # sums with exact cancellations to zero
    a[rng.random(shape) < 0.2] = -0.0
    return a.astype(dtype)


def _pool_and_grad(x_shape, k, s, padding, dtype):
    def build(xs):
        kw = dict(ksize=[1, *k, 1], strides=[1, *s, 1], padding=padding)
        y = tf.nn.avg_pool(xs, **kw)
        g = tf.constant(_values(y.shape.as_list(), dtype, 3))
        return [y, conv_ops.avg_pool_grad(list(x_shape), g, **kw)]
    return build


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_compiled_avg_pooling_gives_the_reference_bits(shape, dtype, threads, monkeypatch):
    monkeypatch.setattr(jit_pool, "PARALLEL_MIN_ELEMENTS", 1)  # images split over the threads
    x_shape, k, s, padding = shape
    x = _values(x_shape, dtype, 2)
    x[0, :k[0], :k[1], 0] = -0.0  # a window of -0.0: its sum stays -0.0 unless it pads
    build = _pool_and_grad(x_shape, k, s, padding, dtype)
    got, calls = _run(build, [x], True, monkeypatch, threads)
    want, _ = _run(build, [x], False, monkeypatch)
    assert sorted(set(calls)) == list(SPIED)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype == dtype
        np.testing.assert_array_equal(_bits(a), _bits(b))
    if padding == "VALID":
        assert want[0][0, 0, 0, 0] == 0 and np.signbit(want[0][0, 0, 0, 0])


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # the reference's inf - inf
@pytest.mark.parametrize("channels", [1, 3, 8, 17, 64])
@pytest.mark.parametrize("size", [(6, 6), (7, 5)])
def test_two_by_two_loops_with_any_channel_count(channels, size, monkeypatch):
    x_shape = (3, *size, channels)
    x = _values(x_shape, np.float32, 4)
    x[0, 0, 0, 0], x[0, 0, 1, 0] = np.inf, -np.inf  # inf - inf: NaN in both
    x[1, 2, 2, 0] = np.nan
    build = _pool_and_grad(x_shape, (2, 2), (2, 2), "VALID", np.float32)
    got, calls = _run(build, [x], True, monkeypatch)
    want, _ = _run(build, [x], False, monkeypatch)
    assert calls
    assert np.isnan(want[0]).sum() == 2
    for a, b in zip(got, want):
        np.testing.assert_array_equal(_bits(a), _bits(b))


def test_small_inputs_keep_the_numpy_kernel(monkeypatch):
    """Below MIN_ELEMENTS input elements (or in int32) the plan chooses the reference."""
    from graphflow.kernels import KernelNode, SessionState

    def chosen(shape, dtype):
        tf.reset_default_graph()
        y = tf.nn.avg_pool(tf.placeholder(dtype, shape), [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        return TABLE.choose(KernelNode.describing(y.op, SessionState())).name
    assert chosen((1, 4, 4, 2), tf.float32) == "reference"  # 32 elements
    monkeypatch.setattr(jit_pool, "MIN_ELEMENTS", 32)
    assert chosen((1, 4, 4, 2), tf.float32) == "numba"
    assert chosen((1, 4, 4, 2), tf.float64) == "numba"
