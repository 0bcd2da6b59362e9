"""graphflow.kernels.cpu.numba.jit_pool_tiled: MaxPool's one-byte argmax records of 2x2 windows at stride
2 give the int32 positions' results (forward, gradient, ReLU-masked gradient), bit for bit, with
odd sizes, ties, NaN and -inf; the numpy reference comparison of both records is in
test_jit_pool.py (test_two_by_two_loops_keep_the_reference_rules)."""

import numpy as np
import pytest

from graphflow.kernels.cpu.numba import jit_pool
from graphflow.kernels.cpu.reference import pool_records
from graphflow.kernels.cpu.reference.conv_geometry import Geometry

pytestmark = pytest.mark.skipif(jit_pool.loops() is None,
                                reason="numba is not installed (or GRAPHFLOW_NO_JIT=1)")


def make_input(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = np.maximum(np.round(rng.standard_normal(shape), 0), 0).astype(dtype)  # many ties
    x[0, :2, :2, :] = -np.inf
    if shape[0] > 1:
        x[1, 0, 1, ::2] = np.nan  # a later tap: NaN wins the max, the gradient skips it
    return x


def pool_and_grads(x, threads, codes, monkeypatch):
    """(y without records, y with records, the record's dtype, dx, the masked dx) of a 2x2,
    stride-2 pool of x."""
    monkeypatch.setattr(jit_pool, "TAP_CODES", codes)
    monkeypatch.setattr(pool_records, "recalling", True)
    geo = Geometry(x.shape[1], x.shape[2], 2, 2, 2, 2, 1, 1, "VALID")
    recorder = pool_records.Recorder()
    recorder.wanted = True
    plain = jit_pool.max_pool(x, geo, threads)
    y = jit_pool.max_pool(x, geo, threads, recorder)
    arg = pool_records.recall(y, x.shape)
    g = np.random.default_rng(1).standard_normal(y.shape).astype(x.dtype)
    dx = jit_pool.max_pool_grad_from_argmax(x.shape, g, arg, threads)
    masked = jit_pool.tiled_grad_relu_mask(x.shape, g, np.nan_to_num(y), arg, threads)
    return plain, y, arg[0].dtype, dx, masked


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 8, 8, 1), (3, 7, 9, 3), (2, 5, 5, 17), (4, 6, 4, 64)],
                         ids=str)
def test_tap_codes_give_the_positions_results(shape, dtype, monkeypatch):
    x = make_input(shape, dtype)
    coded = pool_and_grads(x, 1, True, monkeypatch)
    positions = pool_and_grads(x, 1, False, monkeypatch)
    assert coded[2] == np.uint8 and positions[2] == np.int32
    for got, want in zip(coded[:2] + coded[3:], positions[:2] + positions[3:]):
        np.testing.assert_array_equal(got, want)
    assert np.isnan(coded[1]).any() and (coded[3] != 0).any()


