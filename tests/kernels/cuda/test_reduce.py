"""graphflow.kernels.cuda.reduce: ArgMax / ArgMin on the device skip NaN as TF's CPU kernels do
(the CPU reference `math_kernels.tf_arg`), in both layouts (a block per long row, a thread per
column); on a CUDA device when there is one, else on the CPU emulation (tests/cuda_emulator.py)."""

import numpy as np
import pytest

from graphflow.kernels import cuda as cuda_table
from graphflow.kernels.cpu.reference.math_kernels import tf_arg
from tests import cuda_emulator

GPU_OK, GPU_REASON = cuda_table.availability()


@pytest.fixture
def rt(monkeypatch):
    if GPU_OK:
        return cuda_table.runtime()
    if cuda_emulator.CXX is None:
        pytest.skip(f"no CUDA device ({GPU_REASON}) and no C++ compiler to emulate one")
    runtime = cuda_emulator.EmulatedRuntime()
    monkeypatch.setattr(cuda_table, "_runtime", runtime)
    return runtime


def _rows_with_nan(shape, seed):
    rng = np.random.RandomState(seed)
    x = np.round(rng.randn(*shape) * 2).astype(np.float32)  # ties
    x[rng.rand(*shape) < 0.3] = np.nan
    x[0] = np.nan                                  # a row of NaN: index 0
    x[1, :2] = [np.nan, -np.inf]                   # TF: argmax([nan, -inf, ...]) skips -inf too
    x[1, 2:] = -np.inf
    x[2, :3] = [np.nan, np.finfo(np.float32).min, np.inf]
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("length", [5, 200])  # a thread per output / a block per row
def test_argmax_and_argmin_on_the_device_skip_nan_as_tf(rt, dtype, length):
    from graphflow.kernels.cuda.launch import SUFFIX
    x = _rows_with_nan((6, length), 1).astype(dtype)
    t = SUFFIX[np.dtype(dtype)]
    dx = rt.to_device(x)  # (held: the launches get its address)
    for direction, is_max in (("max", True), ("min", False)):
        # rows: [outer=6, R=length] reduced over R
        out = rt.empty((6,), np.int64)
        if length > 32:
            fn = rt.kernel("reduce.cu", f"gf_arg_rows_{direction}_{t}_i64", "PPqq")
            fn.prepared_call((6, 1, 1), (256, 1, 1), int(dx.gpudata),
                             int(out.gpudata), np.int64(6), np.int64(length))
        else:
            fn = rt.kernel("reduce.cu", f"gf_arg_cols_{direction}_{t}_i64", "PPqqq")
            fn.prepared_call((1, 1, 1), (256, 1, 1), int(dx.gpudata),
                             int(out.gpudata), np.int64(6), np.int64(length), np.int64(1))
        np.testing.assert_array_equal(rt.to_host(out), tf_arg(x, 1, is_max), err_msg=direction)
        # columns: [outer=1, R=6, inner=length] reduced over R
        out = rt.empty((length,), np.int64)
        fn = rt.kernel("reduce.cu", f"gf_arg_cols_{direction}_{t}_i64", "PPqqq")
        fn.prepared_call((1, 1, 1), (256, 1, 1), int(dx.gpudata), int(out.gpudata),
                         np.int64(1), np.int64(6), np.int64(length))
        np.testing.assert_array_equal(rt.to_host(out), tf_arg(x, 0, is_max), err_msg=direction)
