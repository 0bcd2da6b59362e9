"""graphflow.kernels.cpu.onednn.dnnl_conv_grads: the input + filter (+ bias) gradients with shared cores give
exactly the bits of the input gradient and of the filter (+ bias) gradients computed alone, on one and
two threads, at stride 1 and 2, SAME and VALID, with a short last block of images; the fused op's
kernel falls back to the two kernels where oneDNN does not run (float64).
Skipped where the optional oneDNN library (onednn-cpu-gomp) is not installed."""

import numpy as np
import pytest

from graphflow.kernels.cpu.onednn import dnnl, dnnl_conv, dnnl_conv_grads
from graphflow.kernels.cpu.reference.conv_geometry import Geometry
from tests.tooling import required

pytestmark = pytest.mark.skipif(
    dnnl.library() is None and not required("onednn"),
    reason="oneDNN is not installed (onednn-cpu-gomp) or GRAPHFLOW_NO_DNNL=1; CI provides it")


def _operands(n, h, w, c, oc, k, s, padding):
    rng = np.random.default_rng(0)
    geo = Geometry(h, w, k, k, s, s, 1, 1, padding)
    x = rng.standard_normal((n, h, w, c), dtype=np.float32)
    f = rng.standard_normal((k, k, c, oc), dtype=np.float32)
    g = rng.standard_normal((n, geo.oh, geo.ow, oc), dtype=np.float32)
    return x, f, g, geo


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(16, 16, 16, 8, 16, 3, 1, "SAME"),
                                   (13, 15, 12, 8, 16, 3, 2, "VALID"),
                                   (9, 8, 8, 32, 64, 3, 1, "SAME")])
def test_shared_gradients_are_each_ops_own_bits(shape, threads):
    x, f, g, geo = _operands(*shape)
    n, c = x.shape[0], x.shape[3]
    dx, df, db = dnnl_conv_grads.conv2d_backprop_input_filter(g, f, x, geo, threads)
    want_dx = dnnl_conv.conv2d_backprop_input(g, f, geo, n, c, threads)
    want_df, want_db = dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f.shape, threads,
                                                              bias=True)
    assert np.array_equal(dx, want_dx)
    assert np.array_equal(df, want_df) and np.array_equal(db, want_db)
    other = dnnl_conv_grads.conv2d_backprop_input_filter(g, f, x, geo, 3 - threads)
    for got, want in zip(other, (dx, df, db)):  # whatever the thread count
        assert np.array_equal(got, want)
    no_bias = dnnl_conv_grads.conv2d_backprop_input_filter(g, f, x, geo, threads, bias=False)
    want_df_alone = dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f.shape, threads)
    assert len(no_bias) == 2 and np.array_equal(no_bias[0], dx)
    assert np.array_equal(no_bias[1], want_df_alone)


def test_every_block_runs_once_in_order_on_one_thread():
    calls = []
    tasks = [(lambda lo, hi, k=k: calls.append((k, lo, hi)), 2 * k, 2 * k + 2) for k in range(5)]
    dnnl_conv.run_tasks(tasks, 1)
    assert calls == [(k, 2 * k, 2 * k + 2) for k in range(5)]
    calls.clear()
    dnnl_conv.run_tasks(tasks, 2)
    assert sorted(calls) == [(k, 2 * k, 2 * k + 2) for k in range(5)]
