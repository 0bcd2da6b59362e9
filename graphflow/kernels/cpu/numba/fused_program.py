"""The compiled FusedElementwise program (and FusedElementwiseSum's), registered as implementation
"numba" where numba is installed: the numpy program of `reference/fused_kernels.py` whose chunked
runs turn runs of cheap instructions into compiled loops (`fused_jit_group.py` picks them when a
layout is built for a combination of input shapes, `fused_jit.py` compiles them; same bits as the
numpy instructions), and whose float32 Sigmoid (and the other `compiled_float32` rows) is the
compiled function the unfused kernel uses too (`fused_jit.kernel_function`).

A program that is one such run, of `TEAM_MIN_ELEMENTS` or more, runs instead on the OpenMP team
(`threads/omp_team.py`) while the threading chooser (`onednn/dnnl_matmul.py`) runs products as a
team: its ranged loop over whole arrays, each team thread a share of the blocks, with the same bits.
The team or the intra-op pool's chunks is a choice of the process-wide chooser (timed, it follows
the machine's load for every team-capable kernel at once), so it stays a per-call reading of that
chooser; either way gives the same values.

What each call still checks, because only the call knows it: numpy's error state (a caller's
`np.errstate(...='raise')` gets the numpy instructions, which raise: compiled loops cannot), and a
large input that is not C-contiguous (the compiled loops read contiguous operands; the numpy
instructions read it in place). Both give the same bits as the compiled runs.
"""

import math

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.numba import fused_jit, fused_jit_group
from graphflow.kernels.cpu.reference.fused_instructions import CLAMPS
from graphflow.kernels.cpu.reference.fused_kernels import CHUNK_ELEMENTS, CHUNKED_MIN_ELEMENTS, FusedProgram
from graphflow.kernels.cpu.reference.fused_sum_kernels import fused_sum_kernel
from graphflow.kernels.cpu.threads import omp_team
from graphflow.ops import elementwise_spec

# A program that is one compiled run (`fused_jit.Run.ranged_loop`) runs on the OpenMP team of
# oneDNN's products (`omp_team.py`) from this many output elements on, while the threading chooser
# runs products as a team: its threads spin awake between the convolutions around a batch norm's
# ReLU or a ReLU's gradient, where waking the intra-op pool costs more than a second thread saves.
# Measured right after a team product (a ReLU gradient's select, float32, median us, team / one
# thread): 32K 34.8 / 17.7, 64K 28.3 / 23.6, 128K 36.8 / 42.2, 256K 49.6 / 70.6.
TEAM_MIN_ELEMENTS = 1 << 17


class CompiledFusedProgram(FusedProgram):
    """A FusedProgram whose chunked runs use compiled loops (module docstring)."""

    compiled_functions = staticmethod(fused_jit.kernel_function)

    def __init__(self, *args, **kwargs):
        # numba imported when the kernel is built, not in its first run: the BLAS library it
        # loads (scipy's) is then there when a run first holds BLAS to one thread (`blas.py`)
        fused_jit.enabled()
        super().__init__(*args, **kwargs)

    def _prepare(self, arrays, size, shape):
        if not fused_jit.errstate_allows():
            return arrays, None
        arrays, contiguous = contiguous_for_jit(arrays, size)
        if not contiguous:
            return arrays, None
        if self._computing_steps >= 2:
            arrays = inner_broadcasts_expanded(arrays, shape)
        return arrays, fused_jit_group.group

    def _run_whole_program(self, layout, vals, views, t, size, out_is_input):
        return (layout.whole_run is not None and size >= TEAM_MIN_ELEMENTS
                and omp_team.wanted(self.threads)
                and self._run_on_team(layout, vals, views, t, out_is_input))

    def _run_on_team(self, layout, vals, views, t, out_is_input):
        """Compute a program that is one compiled run on the OpenMP team, each thread its share of
        blocks. False where its ranged loop cannot be had (compiled, or called with these types)
        or the output overlaps an operand other than by being it: the chunked run then computes
        the program as before."""
        run = layout.whole_run
        operands = layout.whole_run_operands(vals, views)
        in_place = None
        if out_is_input:
            address = t.__array_interface__["data"][0]
            in_place = next((k for k, a in enumerate(operands) if a.size == t.size
                             and a.__array_interface__["data"][0] == address), None)
            if in_place is None:
                return False
        loop = run.ranged_loop(in_place)
        if loop is None:
            return False
        try:
            omp_team.run(loop, (run.period, fused_jit.SIGN, *operands, t), run.ranged_blocks(t.size),
                         self.threads)
        except Exception:  # numba could not type the call: never again for this run
            if run.ranged_ran:
                raise
            run.ranged_failed()
            return False
        run.ranged_ran = True
        return True


def contiguous_for_jit(arrays, size):
    """(arrays, True) when the compiled runs can take them: C-contiguous, with an input that is not
    (a view from Split or a slice, say) copied when the output fits in one chunk (a copy of one
    chunk costs less than the numpy calls it saves); else (arrays, False)."""
    for k, a in enumerate(arrays):
        if not a.flags.c_contiguous:
            if size > CHUNK_ELEMENTS:
                return arrays, False
            arrays = list(arrays)
            for j in range(k, len(arrays)):
                if not arrays[j].flags.c_contiguous:
                    arrays[j] = np.ascontiguousarray(arrays[j])
            return arrays, True
    return arrays, True


def inner_broadcasts_expanded(arrays, shape):
    """`arrays` with each input that follows the output along its first axis but repeats along
    inner ones ([n, 1, 1, c] against [n, h, w, c]: a global average pool's gradient, per image and
    channel) copied to the output's shape. The compiled runs read full-size operands, scalars and
    rows repeated along the chunk (a bias), not these: with one, the program ran one chunked numpy
    call per instruction. The copy holds the same values, so the same bits (the ReLU mask of such
    a gradient, [64, 8, 8, 64] float32, two threads: 180 -> 67 us)."""
    for k, a in enumerate(arrays):
        if a.ndim == len(shape) and a.shape != shape and a.shape[0] == shape[0] > 1:
            arrays = list(arrays)
            arrays[k] = np.ascontiguousarray(np.broadcast_to(a, shape))
    return arrays


# the table of op types a compiled run may hold (`fused_jit`'s instruction tables and the clamps)
_COMPILED_OPS = dict.fromkeys(set(fused_jit.compiled_op_types()) | set(CLAMPS), True)


def _may_compile(op_type, dtype):
    """Whether an instruction of this type and result dtype can be compiled (a run's member or a
    compiled function): the static part of `fused_jit.compilable`."""
    dtype = np.dtype(dtype)
    row = elementwise_spec.ROW.get(op_type)
    if row is not None and row.compiled_float32 and dtype == np.float32:
        return True
    return op_type in _COMPILED_OPS and (dtype in fused_jit.FLOATS or dtype == np.bool_)


def compiled_program_applies(node):
    """Whether the compiled program runs `node` differently from the numpy one: an instruction it
    may compile, in a program whose output may be chunked (static size unknown, or at least
    CHUNKED_MIN_ELEMENTS), or a compiled function (which also runs on whole arrays)."""
    instructions = node.attrs["program"]["instructions"]
    functions = any(elementwise_spec.ROW.get(op) is not None
                    and elementwise_spec.ROW[op].compiled_float32 and np.dtype(dt) == np.float32
                    for op, _, _, dt in instructions)
    if functions:
        return True
    shape = node.out_shapes[0] if node.out_shapes else None
    if shape is not None and None not in shape and math.prod(shape) < CHUNKED_MIN_ELEMENTS:
        return False
    return any(_may_compile(op, dt) for op, _, _, dt in instructions)


@cpu_kernel("FusedElementwise", name="numba", preference=20, requires=("numba",),
            applies=compiled_program_applies)
def fused_elementwise_compiled(node):
    threads = getattr(node.state, "intra_op_threads", None)  # the session's, when it set one
    return CompiledFusedProgram(node.attrs["program"], node.in_dtypes, node.name, node.attrs,
                                threads)


def _sum_applies(node):
    instructions = node.attrs["program"]["instructions"]
    return any(_may_compile(op, dt) for op, _, _, dt in instructions)


@cpu_kernel("FusedElementwiseSum", name="numba", preference=20, requires=("numba",),
            applies=_sum_applies)
def fused_elementwise_sum_compiled(node):
    return fused_sum_kernel(node, CompiledFusedProgram)
