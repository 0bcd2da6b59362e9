"""Helpers for the optimizer-pass tests: optimize a fetch with chosen passes and inspect the result,
and run the same fetch with and without passes."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.optimizer_passes import optimize


class Optimized:
    """The optimized graph of some fetches: `types()` counts op types, `op(name)` finds one."""

    def __init__(self, fetches, feeds=None, passes=None):
        self.graph, self.report = optimize(fetches, feeds=feeds, passes=passes)

    def ops(self):
        return self.graph.get_operations()

    def types(self):
        counts = {}
        for op in self.ops():
            counts[op.type] = counts.get(op.type, 0) + 1
        return counts

    def count(self, op_type):
        return self.types().get(op_type, 0)

    def op(self, name):
        return self.graph.get_operation_by_name(name)

    @property
    def fetches(self):
        return self.report.fetches


def run_both(fetches, feed_dict=None, passes=None):
    """(unoptimized values, optimized values) of `fetches`."""
    with tf.Session(optimize=False) as sess:
        want = sess.run(fetches, feed_dict)
    with tf.Session(passes=passes) as sess:
        got = sess.run(fetches, feed_dict)
    return want, got


def assert_same(want, got, rtol=1e-12, atol=0.0):
    if isinstance(want, (list, tuple)):
        assert len(want) == len(got)
        for w, g in zip(want, got):
            assert_same(w, g, rtol, atol)
        return
    if want is None:
        assert got is None
        return
    want, got = np.asarray(want), np.asarray(got)
    assert want.dtype == got.dtype and want.shape == got.shape, (want.dtype, want.shape,
                                                                 got.dtype, got.shape)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.fixture
def optimized():
    return Optimized


@pytest.fixture
def both():
    return run_both


@pytest.fixture
def same():
    return assert_same
