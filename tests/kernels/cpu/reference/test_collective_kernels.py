"""The collective kernels' arithmetic that needs no MPI job: the mean's division, which multiplies
by the reciprocal for real values and power-of-two process counts, must give numpy's division bit
for bit (extreme magnitudes, subnormals, infinities, signed zeros; complex values and other counts
divide). The collectives themselves run under mpirun in tests/interop/distribute."""

import numpy as np
import pytest

from graphflow.kernels.cpu.reference.collective_kernels import _divide, _divide_in_place


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("size", [1, 2, 3, 4, 6, 8, 1024])
def test_mean_division_gives_numpys_bits(dtype, size):
    rng = np.random.default_rng(size)
    x = rng.standard_normal(20000) * 10.0 ** rng.integers(-320, 300, 20000)
    x = np.concatenate([x, [np.inf, -np.inf, 0.0, -0.0, 5e-324, 1e-45, 3e-45, 6e-8]])
    with np.errstate(all="ignore"):
        x = x.astype(dtype)
        if x.dtype.kind == "c":
            x = x + 1j * x[::-1]
        want = np.empty_like(x)
        np.divide(x, size, out=want)
        got = np.empty_like(x)
        _divide(x, size, got)
        in_place = _divide_in_place(x.copy(), size)
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
    assert np.array_equal(in_place.view(np.uint8), want.view(np.uint8))


def test_integer_means_truncate():
    np.testing.assert_array_equal(_divide_in_place(np.array([7, -7, 9], np.int32), 2), [3, -3, 4])


def test_tensors_back_to_back_in_one_buffer_are_sent_unpacked():
    from graphflow.kernels.cpu.reference.collective_kernels import _back_to_back

    buf = np.arange(12, dtype=np.float32)
    a, b, c = buf[2:6].reshape(2, 2), buf[6:7], buf[7:10]
    whole = _back_to_back([a, b, c], np.float32)
    assert whole is not None and np.shares_memory(whole, buf)
    np.testing.assert_array_equal(whole, np.arange(2, 10))
    other = np.arange(12, dtype=np.float32)
    for grads in ([b, a, c],                  # out of order
                  [a, c],                     # a gap
                  [a, other[6:7], c],         # another buffer
                  [a.copy(), b, c],           # an array of its own
                  [buf[0:4:2], buf[4:6]]):    # not contiguous
        assert _back_to_back(grads, np.float32) is None
    assert _back_to_back([a, b], np.float64) is None  # another dtype than the bucket's
