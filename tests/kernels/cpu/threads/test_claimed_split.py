"""graphflow.kernels.cpu.threads.claimed_split: pools and tiled gradients split over 2-4 threads with
claimed units give one thread's bits for any image count and unit size; the claiming loop's two
ends each stop where the other has taken, and a late end computes nothing."""

import numpy as np
import pytest

from graphflow.kernels.cpu.numba import jit_pool
from graphflow.kernels.cpu.reference import pool_records
from graphflow.kernels.cpu.threads import claimed_split
from tests.kernels.cpu.numba.test_jit_pool_tiled import make_input, pool_and_grads

pytestmark = pytest.mark.skipif(jit_pool.loops() is None,
                                reason="numba is not installed (or GRAPHFLOW_NO_JIT=1)")


@pytest.mark.parametrize("codes", [True, False])
@pytest.mark.parametrize("threads", [2, 3, 4])
@pytest.mark.parametrize("claim_elements", [1, 100, 1 << 15])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 9, 33])
def test_claimed_split_gives_one_threads_bits(n, claim_elements, threads, codes, monkeypatch):
    x = make_input((n, 7, 6, 5), np.float32, seed=n)
    want = pool_and_grads(x, 1, codes, monkeypatch)
    monkeypatch.setattr(jit_pool, "PARALLEL_MIN_ELEMENTS", 1)  # images split over the threads
    monkeypatch.setattr(claimed_split, "CLAIM_ELEMENTS", claim_elements)
    got = pool_and_grads(x, threads, codes, monkeypatch)
    for g, w in zip(got[:2] + got[3:], want[:2] + want[3:]):
        np.testing.assert_array_equal(g, w)


def test_claiming_ends_stop_at_the_units_the_other_end_took():
    x = make_input((6, 4, 4, 3), np.float32)
    n, h, w, c = x.shape
    want = np.empty((n, 2, 2, c), np.float32)
    jit_pool.loops()["max_pool_2x2"](x.reshape(-1), want.reshape(-1), n, h, w, c, 2, 2, 2, 2, 0, n)
    run = claimed_split._driver(jit_pool.loops()["max_pool_2x2"])

    def fresh():
        out = np.full(want.shape, -7.0, np.float32)
        return out, (x.reshape(-1), out.reshape(-1), n, h, w, c, 2, 2, 2, 2)

    # the front end already took unit 0 (images 0-1): the back end takes units 2 and 1, stops
    out, args = fresh()
    claims = np.array([1, 3], np.int64)
    run(args, claims, False, 2, n)
    assert (out[:2] == -7).all() and np.array_equal(out[2:], want[2:])
    assert list(claims) == [1, 1]
    # a late end finds everything taken and writes nothing
    out, args = fresh()
    claims = np.array([0, 3], np.int64)
    run(args, claims, True, 2, n)  # the front end alone computes every unit
    np.testing.assert_array_equal(out, want)
    out[:] = -7
    run(args, claims, False, 2, n)
    assert (out == -7).all()
    # the last unit may be short (n not a multiple of the step)
    out, args = fresh()
    run(args, np.array([0, 2], np.int64), False, 4, n)
    np.testing.assert_array_equal(out, want)


def test_two_by_two_pools_split_from_their_own_threshold(monkeypatch):
    """2x2 pools take the claimed split from CLAIMED_MIN_ELEMENTS on, below the block split's
    PARALLEL_MIN_ELEMENTS; below it (or on one thread) they run on the calling thread, and the
    inference runner is kept only where no split would run."""
    from graphflow.kernels.cpu.reference.conv_geometry import Geometry
    monkeypatch.setattr(jit_pool, "PARALLEL_MIN_ELEMENTS", 1 << 30)
    monkeypatch.setattr(jit_pool, "CLAIMED_MIN_ELEMENTS", 6 * 8 * 8 * 4)
    runs = []
    real = claimed_split.run
    monkeypatch.setattr(claimed_split, "run", lambda *a: runs.append(a[2]) or real(*a))
    geo = Geometry(8, 8, 2, 2, 2, 2, 1, 1, "VALID")
    for n, threads, split in ((6, 2, True), (5, 2, False), (6, 1, False)):
        x = make_input((n, 8, 8, 4), np.float32)
        runs.clear()
        got = jit_pool.max_pool(x, geo, threads)
        assert runs == ([n] if split else [])
        np.testing.assert_array_equal(got, jit_pool.max_pool(x, geo, 1))
        monkeypatch.setattr(pool_records, "recalling", False)  # no gradient kernel built yet
        assert (jit_pool.runner(x, geo, threads) is None) == split
