"""Which instructions of a chunked FusedElementwise program become compiled runs (`fused_jit.Run`),
used by `fused_layout.py` when numba is installed: each run of consecutive compilable instructions
whose intermediate values only the run reads becomes one compiled loop, and a lone cheap
instruction joins the nearest earlier run that can compute it (else it stays a numpy call, as fast
as a loop of one). `fused_jit.py` says what is compilable and how a run is compiled.
"""

import math

import numpy as np

from graphflow.kernels.cpu.numba.fused_jit import Run, compilable
from graphflow.ops import elementwise_spec


def group(program, steps, chunk_shape, fixed_shape, full):
    """`steps` with each run of consecutive compilable instructions whose intermediate values only
    the run reads replaced by one `Run`; a lone cheap instruction joins an earlier run when it can
    (`_attach_lone_instructions`), or stays a numpy call (as fast as a loop of one)."""
    rest = full[1:]
    period = math.prod(rest) if rest else 0

    def kind(v):
        if v in chunk_shape:
            return "full" if chunk_shape[v] == full else None
        shape = fixed_shape[v]
        if math.prod(shape) == 1:
            return "scalar"
        if rest and period > 0 and math.prod(shape) == period and \
                np.broadcast_shapes(shape, rest) == rest:
            return "periodic"
        return None

    def ndims(v):
        return len(chunk_shape[v] if v in chunk_shape else fixed_shape[v])

    kinds = {}
    ok = []
    for ins in steps:
        good = chunk_shape.get(ins.id) == full and compilable(ins, program.value_dtype, kind)
        ok.append(good)
        if good:
            for r in ins.refs:
                kinds[r] = kind(r)
    items, si = [], 0  # numpy steps, and lists of instructions to compile together
    while si < len(steps):
        if not ok[si]:
            items.append(steps[si])
            si += 1
            continue
        end = si
        while end < len(steps) and ok[end]:
            end += 1
        items.extend(_segments(program, steps, si, end))
        si = end
    extras = _attach_lone_instructions(program, items)
    out = []
    for item in items:
        if not isinstance(item, list):
            out.append(item)
        elif len(item) == 1 and not extras.get(id(item)) and not _worth_alone(item[0].op):
            out.append(item[0])  # one ufunc call is as fast
        else:
            more = extras.get(id(item), [])
            refs = {r for i in item + more for r in i.refs}
            periodic = any(kinds.get(r) == "periodic" for r in refs)
            out.append(Run(item, more, kinds, period if periodic else 0, program.value_dtype,
                           ndims))
    return out


# Instructions compiled even alone: numpy needs several calls for them (and for the table's rows
# marked `compiled_float32`, float32 Sigmoid).
_WORTH_ALONE = ("Select", "SquaredDifference")


def _worth_alone(op):
    row = elementwise_spec.ROW.get(op)
    return op in _WORTH_ALONE or (row is not None and row.compiled_float32)


def _attach_lone_instructions(program, items):
    """Move each lone cheap instruction (a run of one, which would stay a numpy call) into the
    nearest earlier run when everything it reads is computed by then (the steps in between compute
    none of its operands): that run then writes its value too, reading shared operands once. Returns
    {id(run): [moved instructions]} and removes the moved ones from `items`."""
    extras = {}
    k = 0
    while k < len(items):
        item = items[k]
        if (isinstance(item, list) and len(item) == 1 and not _worth_alone(item[0].op)
                and item[0].id != program.output):
            lone = item[0]
            needs = set(lone.refs)
            for j in range(k - 1, -1, -1):
                before = items[j]
                defined = ({i.id for i in before} if isinstance(before, list) else {before.id})
                if isinstance(before, list) and (len(before) > 1 or extras.get(id(before))):
                    extras.setdefault(id(before), []).append(lone)
                    del items[k]
                    k -= 1
                    break
                if needs & defined:
                    break
        k += 1
    return extras


def _segments(program, steps, si, end):
    """The compilable steps[si:end] as lists of instructions to compile together: a run writes its
    last value only, so the steps are cut after every value read after its own run (by a later
    run, a later step, or as the program's output)."""
    run_ids = [steps[k].id for k in range(si, end)]
    position = {v: k for k, v in enumerate(run_ids)}
    cuts = {position[program.output]} if program.output in position else set()
    for later in steps[end:]:
        cuts.update(position[r] for r in later.refs if r in position)
    cuts.add(len(run_ids) - 1)
    while True:
        segment_of, seg = {}, 0
        for k in range(len(run_ids)):
            segment_of[k] = seg
            if k in cuts:
                seg += 1
        more = {position[r] for k in range(len(run_ids)) for r in steps[si + k].refs
                if r in position and segment_of[position[r]] != segment_of[k]} - cuts
        if not more:
            break
        cuts |= more
    out, segment = [], []
    for k in range(len(run_ids)):
        segment.append(steps[si + k])
        if k in cuts:
            out.append(segment)
            segment = []
    return out
