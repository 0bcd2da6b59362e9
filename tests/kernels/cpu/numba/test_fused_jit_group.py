"""graphflow.kernels.cpu.numba.fused_jit_group: which instructions of a chunked program become compiled
runs, read off the layouts a FusedProgram builds (their values are checked bit for bit against the
numpy instructions in tests/kernels/cpu/numba/test_fused_jit.py), and when the whole program is one run that
the OpenMP team may compute over whole arrays (`_Layout.whole_run`)."""

import numpy as np
import pytest

from graphflow.kernels.cpu.numba import fused_jit, fused_jit_group, fused_program
from graphflow.kernels.cpu.reference import fused_kernels

N = 3 * fused_kernels.CHUNK_ELEMENTS + 7


def _layout(instructions, dtypes=("float32",)):
    if not fused_jit.enabled():
        pytest.skip("numba is not installed (or GRAPHFLOW_NO_JIT=1): numpy only")
    program = {"version": 1, "inputs": list(dtypes), "instructions": instructions,
               "output": len(dtypes) + len(instructions) - 1}
    f = fused_program.CompiledFusedProgram(program, [np.dtype(d) for d in dtypes], threads=1)
    f(*[np.ones(N, d) for d in dtypes])
    (layout,) = f._layouts.values()
    return layout


def _steps(layout):
    return [step.op for step in layout.runs]


def test_a_numpy_call_cuts_the_runs_and_no_whole_run():
    # exp(x * 2 + 1) * x: the arithmetic before the Exp (a numpy call) is one run; the Mul after
    # it reads the Exp, cannot join that run, and alone stays a numpy call
    layout = _layout([["Const", [], {"value": 2.0}, "float64"], ["Mul", [0, 1], {}, "float64"],
                      ["Add", [2, 0], {}, "float64"], ["Exp", [3], {}, "float64"],
                      ["Mul", [4, 0], {}, "float64"]], ("float64",))
    assert _steps(layout) == ["Mul+Add"]
    assert layout.whole_run is None


def test_a_program_of_arithmetic_alone_is_one_whole_run():
    # relu((x - m) * g + b) with m, g, b per channel: one run writing the output
    layout = _layout([["Sub", [0, 1], {}, "float32"], ["Mul", [4, 2], {}, "float32"],
                      ["Add", [5, 3], {}, "float32"], ["Relu", [6], {}, "float32"]],
                     ("float32",) * 4)
    assert _steps(layout) == ["Sub+Mul+Add+Maximum"]
    assert layout.whole_run is layout.runs[0]


def test_a_lone_cheap_instruction_is_left_a_numpy_call():
    # exp(exp(x) + 1): a run of one Add between numpy calls stays numpy's (as fast)
    layout = _layout([["Exp", [0], {}, "float32"], ["Const", [], {"value": 1.0}, "float32"],
                      ["Add", [1, 2], {}, "float32"], ["Exp", [3], {}, "float32"]])
    assert _steps(layout) == []
    assert layout.whole_run is None
    assert not fused_jit_group._worth_alone("Add") and fused_jit_group._worth_alone("Select")
