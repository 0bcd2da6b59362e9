"""graphflow.kernels.cpu.reference.pool_records: MaxPool outputs are remembered (for their gradient to
recall the argmaxes) only once a kernel that recalls has been built; an entry answers for its own
output and input shape only, asks its MaxPool to record, and leaves with the output."""

import gc

import numpy as np
import pytest

from graphflow.kernels.cpu.reference import pool_records


def test_recall_answers_for_the_remembered_output_only(monkeypatch):
    monkeypatch.setattr(pool_records, "_outputs", {})
    recorder = pool_records.Recorder()
    out, arg = np.zeros((1, 2, 2, 3)), np.zeros((1, 2, 2, 3), np.int32)
    pool_records.remember(out, (1, 4, 4, 3), arg, recorder)
    assert not recorder.wanted
    assert pool_records.recall(out.copy(), (1, 4, 4, 3)) is None  # another array
    assert pool_records.recall(out, (1, 4, 5, 3)) is None  # another input shape
    assert not recorder.wanted
    assert pool_records.recall(out, (1, 4, 4, 3)) is arg
    assert recorder.wanted  # the MaxPool records argmaxes from its next run on
    del out
    gc.collect()
    assert not pool_records._outputs  # the entry left with its output


def test_max_pool_remembers_nothing_until_a_recalling_kernel_is_built(monkeypatch):
    from graphflow.kernels.cpu.numba import jit_pool
    from graphflow.kernels.cpu.reference import conv_geometry
    if jit_pool.loops() is None:
        pytest.skip("numba is not installed (or GRAPHFLOW_NO_JIT=1): no loop records anything")
    monkeypatch.setattr(pool_records, "recalling", False)
    monkeypatch.setattr(pool_records, "_outputs", {})
    x = np.random.default_rng(0).standard_normal((2, 32, 32, 4)).astype(np.float32)
    geo = conv_geometry.Geometry(32, 32, 2, 2, 2, 2, 1, 1, "VALID")
    y = jit_pool.max_pool(x, geo, 1, pool_records.Recorder())
    assert not pool_records._outputs
    pool_records.recalling_kernel_built()
    assert pool_records.recalling
    y = jit_pool.max_pool(x, geo, 1, pool_records.Recorder())
    assert pool_records.recall(y, x.shape) is None  # remembered, no argmaxes asked for yet
    assert len(pool_records._outputs) == 1
