"""graphflow.kernels.cpu.numba.conv_dy_pass: a block of dy's bias sums (float64, rounded once) and its
ReLU mask in one compiled pass: the mask numpy's `where(y > 0, dy, 0)` bit for bit (a NaN in y
masks), the sums within one float32 rounding of the exact ones, the same bits masked in the pass or
before it, for row counts that are and are not a multiple of the rows added at once."""

import numpy as np
import pytest

from graphflow.kernels.cpu.numba import conv_dy_pass

pytestmark = pytest.mark.skipif(conv_dy_pass.block_pass() is None, reason="needs numba")


@pytest.mark.parametrize("rows, channels", [(8192, 32), (1027, 16), (3, 5), (1, 64), (0, 8)])
def test_sums_and_mask_match_numpy(rows, channels):
    rng = np.random.default_rng(rows)
    dy = rng.standard_normal((rows, channels)).astype(np.float32)
    y = rng.standard_normal((rows, channels)).astype(np.float32)
    if rows:
        y[0, 0] = np.nan
    block_pass = conv_dy_pass.block_pass()
    masked = np.full_like(dy, 7.0)
    sums = np.full(channels, 7.0, np.float32)
    block_pass(dy, y, masked, sums, True)
    want = np.where(y > 0, dy, np.float32(0))
    assert masked.tobytes() == want.tobytes()
    exact = want.astype(np.float64).sum(axis=0)
    np.testing.assert_allclose(sums, exact, rtol=0, atol=1e-6 * (1 + np.abs(want).sum(axis=0)).max())
    plain = np.full(channels, 7.0, np.float32)
    block_pass(want, want, want[:0], plain, False)  # masked before: the same sums, bit for bit
    assert plain.tobytes() == sums.tobytes()


def test_sums_of_same_signed_values_stay_accurate():
    """Float64 sums: 8192 rows of positive values, where a float32 running sum drifts by ~1e-5."""
    dy = np.random.default_rng(0).random((8192, 32), dtype=np.float32)
    sums = np.empty(32, np.float32)
    conv_dy_pass.block_pass()(dy, dy, dy[:0], sums, False)
    exact = dy.astype(np.float64).sum(axis=0)
    np.testing.assert_allclose(sums, exact, rtol=1e-7)
