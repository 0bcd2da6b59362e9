"""graphflow.kernels.cuda.elementwise: integer division by zero on the device raises TF's error
(the generated kernel's flag), naming the user's op of a fused program; float programs have no
flag. On a CUDA device when there is one, else on the CPU emulation (tests/cuda_emulator.py)."""

import numpy as np
import pytest

from graphflow.framework.errors import CheckFailedError
from graphflow.kernels import cuda as cuda_table
from graphflow.kernels.cuda import codegen, elementwise
from tests import cuda_emulator

GPU_OK, GPU_REASON = cuda_table.availability()

def _emulated_or_device_runtime(monkeypatch):
    if GPU_OK:
        return cuda_table.runtime()
    if cuda_emulator.CXX is None:
        pytest.skip(f"no CUDA device ({GPU_REASON}) and no C++ compiler to emulate one")
    rt = cuda_emulator.EmulatedRuntime()
    monkeypatch.setattr(cuda_table, "_runtime", rt)
    return rt


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_division_by_zero_raises_on_the_device_naming_the_fused_op(dtype, monkeypatch):
    rt = _emulated_or_device_runtime(monkeypatch)
    x = rt.to_device(np.array([7, -7, 9, 5], dtype))
    for op_type, fn in (("FloorDiv", np.floor_divide), ("FloorMod", np.mod)):
        k = elementwise.kernel_for(elementwise.single_op_program(op_type, [dtype] * 2, dtype, {}))
        assert k.checked == [0]
        good = np.array([2, 3, -4, 1], dtype)
        np.testing.assert_array_equal(rt.to_host(k(x, rt.to_device(good))[0]),
                                      fn(np.array([7, -7, 9, 5], dtype), good))
        with pytest.raises(CheckFailedError, match="^Integer division by zero$"):
            k(x, rt.to_device(np.array([2, 0, 1, 1], dtype)))
    # a fused program: the divisor y * 2 is computed inside; the error names the user's op
    program = {"version": 1, "inputs": [dtype, dtype], "output": 5,
               "instructions": [["Const", [], {"value": 2}, dtype], ["Mul", [1, 2], {}, dtype],
                                ["FloorDiv", [0, 3], {}, dtype], ["FloorMod", [4, 3], {}, dtype]]}
    k = elementwise.kernel_for(program)
    assert k.checked == [2, 3]
    provenance = {"members": ["mul", "my_div", "my_mod"],
                  "member_types": ["Mul", "FloorDiv", "FloorMod"],
                  "member_sources": ["", "prog.py:7", ""]}
    with pytest.raises(CheckFailedError, match=r"in 'my_(div|mod)' \(Floor(Div|Mod)\)"):
        k(x, rt.to_device(np.array([1, 1, 0, 1], dtype)), provenance=provenance)
    # float programs carry no flag and no check
    fp = elementwise.single_op_program("FloorDiv", ["float32"] * 2, "float32", {})
    assert elementwise.kernel_for(fp).checked == []
    assert "gf_err" not in codegen.generate(codegen.normalize(fp), ["c", "c"], 1)[0]
