"""How a FusedElementwise program runs in chunks (used by `fused_kernels.py`).

For one combination of input shapes, a `Layout` decides which inputs are cut into chunks along the
(collapsed) leading axes and which are loop-invariant, assigns chunk-sized registers (a register is
reused as soon as its value is dead) and generates a loop function with one straight line per
instruction. The loop takes the chunk start rows to compute as an iterator: the whole range for a
single-thread run, or one iterator shared by the threads of a parallel run, each thread with its own
registers. The compiled program (`numba/fused_program.py`) passes a `group` function that first
turns runs of cheap instructions into compiled steps (`numba/fused_jit_group.py`), each one line of
the loop that may write several registers; the numpy program passes none.
"""

import math

import numpy as np

# Elements per chunk. numpy's per-call cost is ~1 us, so chunks must stay large enough to amortize it
# while the few live registers (128 KiB each for float32) stay in the L2 cache; measured with
# benchmarks/bench_passes.py and a sweep of 8K..64K (32K-64K best from 64K to 1M elements).
CHUNK_ELEMENTS = 1 << 15


def broadcast(shapes):
    """numpy broadcasting of shape tuples (fast path: all equal)."""
    big = max(shapes, key=len)
    for s in shapes:
        if s != big and s != ():
            return np.broadcast_shapes(*shapes)
    return big



class Layout:
    """How one FusedProgram runs in chunks for one combination of input shapes: which inputs are cut
    into chunks, which values are loop-invariant, the registers, and a generated loop function
    `loop(vals, views, registers, constants, target, starts)` with one straight line per
    instruction, computing the chunks that begin at the rows `starts` yields (`chunk_starts()`)."""

    def __init__(self, program, in_shapes, shape, out_is_input, chunk_elements=None, group=None):
        self.loop = None
        self._spare = []  # register sets of finished runs (`borrow_registers`)
        chunk_elements = chunk_elements or CHUNK_ELEMENTS
        rank = len(shape)
        aligned = [(1,) * (rank - len(s)) + tuple(s) for s in in_shapes]
        k = _collapse_depth(shape, aligned)
        lead, rest = math.prod(shape[:k]), tuple(shape[k:])
        rows = min(lead, max(1, chunk_elements // max(1, math.prod(rest))))
        self.lead, self.rows = lead, rows
        self.num_chunks = -(-lead // rows) if lead else 0
        self.target_shape = (lead,) + rest
        full = (rows,) + rest
        self.chunked, self.unchunked = [], []
        chunk_shape, fixed_shape = {}, {}
        names = {}
        for i, s in enumerate(aligned):
            if s[:k] == shape[:k]:
                self.chunked.append((i, (lead,) + s[k:]))
                chunk_shape[i] = (rows,) + s[k:]
                names[i] = f"i{i}"
            else:
                self.unchunked.append((i, s[k:]))
                fixed_shape[i] = s[k:]
                names[i] = f"h{i}"
        self.hoisted, steps = [], []
        for ins in program.instrs:
            if ins.fn is None:
                self.hoisted.append(ins)
                fixed_shape[ins.id] = ins.value.shape
                names[ins.id] = f"h{ins.id}"
            elif any(r in chunk_shape for r in ins.refs):
                chunk_shape[ins.id] = broadcast(
                    [chunk_shape[r] if r in chunk_shape else fixed_shape[r] for r in ins.refs])
                steps.append(ins)
            else:  # loop-invariant: computed once per call
                self.hoisted.append(ins)
                fixed_shape[ins.id] = broadcast([fixed_shape[r] for r in ins.refs])
                names[ins.id] = f"h{ins.id}"
        if group is not None:  # runs of cheap instructions as compiled steps (`fused_jit_group.py`)
            steps = group(program, steps, chunk_shape, fixed_shape, full)
        # compiled steps (each with a `ranged_loop`: `fused_jit.Run`)
        self.runs = [s for s in steps if hasattr(s, "ranged_loop")]
        # the program as one compiled run over whole arrays (`whole_run_operands`): one step that
        # writes the output alone, full-size
        self.whole_run = None
        if (len(steps) == 1 and hasattr(steps[0], "ranged_loop") and steps[0].id == program.output
                and not steps[0].extra_ids and chunk_shape[program.output] == full):
            self.whole_run = steps[0]
            view_at = {i: k for k, (i, _) in enumerate(self.chunked)}
            self._whole_refs = [(r, view_at.get(r)) for r in steps[0].refs]  # (value, view or None)
        self.registers, self.constants = [], []
        lines, fns = self._schedule(program, steps, chunk_shape, fixed_shape, names, full,
                                    out_is_input)
        self._generate(program, lines, fns, names, steps, lead, rows)

    def _schedule(self, program, steps, chunk_shape, fixed_shape, names, full, out_is_input):
        """Assign registers (reused once a value is dead) and emit one call per step."""
        last_use = {}
        for si, ins in enumerate(steps):
            for r in ins.refs:
                last_use[r] = si
        free, owner, lines, fns = {}, {}, [], []
        writes_target = False
        for si, ins in enumerate(steps):
            shape = chunk_shape[ins.id]
            args = [names[r] for r in ins.refs]
            if ins.op in ("Maximum", "Minimum"):
                # numpy's maximum/minimum against a scalar is several times slower than against an
                # array of the same values: scalar operands get a constant chunk-shaped register
                for pos, r in enumerate(ins.refs):
                    if r not in chunk_shape and math.prod(fixed_shape[r]) == 1:
                        args[pos] = f"k{len(self.constants)}"
                        self.constants.append((r, shape, program.value_dtype(r)))
            dying = [r for r in dict.fromkeys(ins.refs)
                     if last_use.get(r) == si and r in owner and r != program.output]
            if ins.alias_ok:
                _release(dying, owner, free)
            if ins.id == program.output and shape == full and (ins.alias_ok or not out_is_input):
                dst = "t[c0:c1]"
                writes_target = True
            else:
                pool = free.get((ins.dtype, shape))
                reg = pool.pop() if pool else len(self.registers)
                if reg == len(self.registers):
                    self.registers.append((shape, ins.dtype))
                owner[ins.id] = (ins.dtype, shape, reg)
                dst = f"r{reg}"
                names[ins.id] = dst
            extra = []
            for v in getattr(ins, "extra_ids", ()):  # more values a compiled run writes
                dtype = program.value_dtype(v)
                pool = free.get((dtype, shape))
                reg = pool.pop() if pool else len(self.registers)
                if reg == len(self.registers):
                    self.registers.append((shape, dtype))
                owner[v] = (dtype, shape, reg)
                names[v] = f"r{reg}"
                extra.append(names[v])
            if not ins.alias_ok:
                _release(dying, owner, free)
            for v in [ins.id] + list(getattr(ins, "extra_ids", ())):
                if v not in last_use and v in owner and v != program.output:
                    _release([v], owner, free)
            more = f", extra=({', '.join(extra)},)" if extra else ""
            lines.append(f"f{si}({', '.join(args)}, out={dst}{more})")
            fns.append(ins.fn)
        if not writes_target:  # the result broadcasts over the chunk, or must not alias an input
            lines.append(f"copyto(t[c0:c1], {names[program.output]})")
        return lines, fns

    def _generate(self, program, lines, fns, names, steps, lead, rows):
        used = {n for n in names.values() if n.startswith("h")}
        src = ["def loop(vals, views, registers, constants, t, starts):"]
        if fns:
            src.append(f"    {', '.join(f'f{i}' for i in range(len(fns)))}, = fns")
        if self.chunked:
            src.append(f"    {', '.join(f'x{i}' for i, _ in self.chunked)}, = views")
        if self.registers:
            src.append(f"    {', '.join(f'r{i}' for i in range(len(self.registers)))}, = registers")
        if self.constants:
            src.append(f"    {', '.join(f'k{i}' for i in range(len(self.constants)))}, = constants")
        for n in sorted(used):
            src.append(f"    {n} = vals[{n[1:]}]")
        src.append("    for c0 in starts:")
        src.append(f"        c1 = c0 + {rows}")
        if lead % rows:
            src.append(f"        if c1 > {lead}:")
            src.append(f"            c1 = {lead}")
            for name in [f"r{i}" for i in range(len(self.registers))] + [
                    f"k{i}" for i in range(len(self.constants))]:
                src.append(f"            {name} = {name}[:c1 - c0]")
        for i, _ in self.chunked:
            src.append(f"        i{i} = x{i}[c0:c1]")
        src.extend(f"        {line}" for line in lines)
        namespace = {"fns": tuple(fns), "copyto": np.copyto}
        exec(compile("\n".join(src) + "\n", f"<fused {program.name}>", "exec"), namespace)
        self.source = "\n".join(src)
        self.loop = namespace["loop"]

    def whole_run_operands(self, vals, views):
        """The whole run's operands: chunked inputs whole (`views`, in `chunked` order), the other
        values from `vals` as arrays of at least one axis (the ranged loop's scalars)."""
        return [np.atleast_1d(vals[r]) if k is None else views[k] for r, k in self._whole_refs]

    def chunk_starts(self):
        """The first row of every chunk, in order."""
        return range(0, self.lead, self.rows)

    def new_registers(self):
        return [np.empty(s, dt) for s, dt in self.registers]

    def borrow_registers(self):
        """A set of registers for one run on one thread: one a finished run gave back, or new
        (runs on several threads at once each get their own; list pop and append are atomic)."""
        try:
            return self._spare.pop()
        except IndexError:
            return self.new_registers()

    def return_registers(self, registers):
        """Keep `registers` (every value in them dead) for the next run; at most two sets."""
        if len(self._spare) < 2:
            self._spare.append(registers)


def _release(value_ids, owner, free):
    for v in value_ids:
        dtype, shape, reg = owner.pop(v)
        free.setdefault((dtype, shape), []).append(reg)


def _collapse_depth(shape, aligned):
    """The largest k such that every input is either full-size or size 1 on each of the first k
    axes: those axes then collapse into one that is cut into chunks."""
    state = [0] * len(aligned)  # 0: undecided, 1: full, 2: broadcast (size 1)
    for axis, n in enumerate(shape):
        if n == 1:
            continue
        for i, s in enumerate(aligned):
            want = 1 if s[axis] == n else 2
            if state[i] == 0:
                state[i] = want
            elif state[i] != want:
                return axis
    return len(shape)
