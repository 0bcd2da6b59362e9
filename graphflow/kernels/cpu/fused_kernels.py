"""numpy kernels for the fused ops (`FusedElementwise`, `FusedMatMul`).

A FusedElementwise program (format: `graphflow/optimizer_passes/fusion.py`) is compiled once per plan
step into a list of instructions, each a numpy function writing into an `out` buffer. A run then
either evaluates the program on whole arrays (small outputs) or walks the output in chunks of about
`CHUNK_ELEMENTS` elements: each instruction writes into a preallocated chunk-sized register (registers
are reused as soon as a value is dead), values that do not depend on a chunked input are computed once
before the loop, and the last instruction writes straight into the output. The unfused plan instead
allocates one full-size temporary per op and streams every array through memory once per op.

Both fused kernels accept `out=`: the memory plan may hand them a dead input's buffer to write into.
"""

import linecache
import math

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.fused_instructions import _CLAMPS, instruction

# Elements per chunk. numpy's per-call cost is ~1 us, so chunks must stay large enough to amortize it
# while the few live registers (128 KiB each for float32) stay in the L2 cache; measured with
# benchmarks/bench_passes.py and a sweep of 8K..64K (32K-64K best from 64K to 1M elements).
CHUNK_ELEMENTS = 1 << 15
# Below this many output elements the program runs on whole arrays, one numpy call per instruction
# (what the unfused plan does); from here on, in registers (one chunk, or several).
CHUNKED_MIN_ELEMENTS = 4096
# Chunk layouts (one per combination of input shapes) each kernel keeps, oldest dropped first.
_MAX_LAYOUTS = 8


def _broadcast(shapes):
    """numpy broadcasting of shape tuples (fast path: all equal)."""
    big = max(shapes, key=len)
    for s in shapes:
        if s != big and s != ():
            return np.broadcast_shapes(*shapes)
    return big


def _alloc_call(fn, operands, dtype):
    """Call an instruction without an output buffer (whole-array evaluation)."""
    if isinstance(fn, np.ufunc):
        return fn(*operands)
    alloc = getattr(fn, "alloc", None)
    if alloc is not None:
        return alloc(*operands)
    out = np.empty(_broadcast([np.shape(o) for o in operands]), dtype)
    fn(*operands, out=out)
    return out


class _Instr:
    __slots__ = ("id", "op", "refs", "fn", "alias_ok", "dtype", "value", "member")

    def __init__(self, id_, op, refs, fn, alias_ok, dtype, value=None, member=None):
        self.id, self.op, self.refs, self.fn = id_, op, refs, fn
        self.alias_ok, self.dtype, self.value = alias_ok, dtype, value
        self.member = member  # index of the replaced op (attrs "members") it computes


class FusedProgram:
    """A compiled FusedElementwise program: `program(*inputs, out=None)` evaluates it."""

    accepts_out = True
    checks_out_shape = True  # an `out` of the wrong shape or dtype is ignored, not an error

    def __init__(self, program, in_dtypes, name="FusedElementwise", provenance=None):
        self.name = name
        self.provenance = provenance or {}
        member = 0
        n_in = len(program["inputs"])
        self.num_inputs = n_in
        value_dtypes = [np.dtype(d) for d in in_dtypes]
        self.instrs = []
        self._extra = []  # values added by lowering, numbered after the program's own
        for j, (op_type, refs, attrs, dtype) in enumerate(program["instructions"]):
            dt = np.dtype(dtype)
            vid = n_in + j
            if op_type == "Const":
                ins = _Instr(vid, op_type, (), None, True, dt, np.asarray(attrs["value"], dtype=dt))
            elif op_type in _CLAMPS:
                ins = self._lower_clamp(vid, op_type, refs[0], dt, n_in + len(program["instructions"]))
            else:
                fn, alias_ok = instruction(op_type, attrs, [value_dtypes[r] for r in refs], dt)
                ins = _Instr(vid, op_type, tuple(refs), fn, alias_ok, dt)
            if op_type != "Const":
                ins.member = member
                member += 1
            value_dtypes.append(dt)
            self.instrs.append(ins)
        self._dtypes = value_dtypes + [ins.dtype for ins in self._extra]
        self.num_values = len(self._dtypes)
        self.output = program["output"]
        self.out_dtype = value_dtypes[self.output]
        self._layouts = {}
        last = {}
        for i, ins in enumerate(self.instrs):
            for r in ins.refs:
                last[r] = i
        self._dead_after = [[] for _ in self.instrs]
        for v, i in last.items():
            if v != self.output and v >= n_in:
                self._dead_after[i].append(v)

    def value_dtype(self, value_id):
        return self._dtypes[value_id]

    def _lower_clamp(self, vid, op_type, x, dtype, first_extra):
        """Relu(x) -> Maximum(x, 0) and Relu6(x) -> Minimum(Maximum(x, 0), 6) with the bounds as
        constants, so that chunked runs compare against constant registers (see `_allocate`)."""
        ids = []
        for bound in _CLAMPS[op_type]:
            cid = first_extra + len(self._extra)
            const = _Instr(cid, "Const", (), None, True, dtype, np.asarray(bound, dtype=dtype))
            self._extra.append(const)
            self.instrs.append(const)
            ids.append(cid)
        if len(ids) == 1:
            return _Instr(vid, "Maximum", (x, ids[0]), np.maximum, True, dtype)
        mid = first_extra + len(self._extra)
        inner = _Instr(mid, "Maximum", (x, ids[0]), np.maximum, True, dtype)
        self._extra.append(inner)
        self.instrs.append(inner)
        return _Instr(vid, "Minimum", (mid, ids[1]), np.minimum, True, dtype)

    # ---------------------------------------------------------------- running
    def __call__(self, *inputs, out=None):
        arrays = [x if type(x) is np.ndarray else np.asarray(x) for x in inputs]
        try:
            return self._evaluate(arrays, out)
        except Exception as exc:
            raise self._diagnose(arrays, exc) from exc

    def _diagnose(self, arrays, exc):
        """The error of the first instruction that fails on whole arrays, naming the user's op it
        replaced; `exc` itself when whole-array evaluation does not fail."""
        vals = arrays + [None] * (self.num_values - len(arrays))
        for ins in self.instrs:
            if ins.fn is None:
                vals[ins.id] = ins.value
                continue
            try:
                vals[ins.id] = _alloc_call(ins.fn, [vals[r] for r in ins.refs], ins.dtype)
            except Exception as failed:
                return member_error(failed, self.provenance, ins.member)
        return exc

    def _evaluate(self, arrays, out):
        shape = arrays[0].shape
        for a in arrays[1:]:
            if a.shape != shape:
                shape = np.broadcast_shapes(*(a.shape for a in arrays))
                break
        out_is_input = False
        if out is not None:
            if out.shape != shape or out.dtype != self.out_dtype:
                out = None  # a planner hint that does not fit: allocate instead
            else:
                out_is_input = any(np.may_share_memory(out, a) for a in arrays)
        if math.prod(shape) >= CHUNKED_MIN_ELEMENTS:
            result = self._run_chunked(arrays, shape, out, out_is_input)
            if result is not None:
                return result
        return self._run_whole(arrays, shape, out, out_is_input)

    def _run_whole(self, arrays, shape, out, out_is_input):
        vals = arrays + [None] * (self.num_values - len(arrays))
        for ins, dead in zip(self.instrs, self._dead_after):
            if ins.fn is None:
                vals[ins.id] = ins.value
                continue
            operands = [vals[r] for r in ins.refs]
            if (ins.id == self.output and out is not None and (ins.alias_ok or not out_is_input)
                    and _broadcast([np.shape(o) for o in operands]) == shape):
                ins.fn(*operands, out=out)
                return out
            vals[ins.id] = _alloc_call(ins.fn, operands, ins.dtype)
            for d in dead:  # drop values after their last use, as the unfused plan does
                vals[d] = None
        result = np.asarray(vals[self.output])
        if result.shape != shape or result.dtype != self.out_dtype:
            result = np.array(np.broadcast_to(result, shape), dtype=self.out_dtype)
        if out is not None:
            np.copyto(out, result)
            return out
        return result

    def _run_chunked(self, arrays, shape, out, out_is_input):
        key = (tuple(a.shape for a in arrays), out_is_input)
        layout = self._layouts.get(key)
        if layout is None:
            layout = _Layout(self, [a.shape for a in arrays], shape, out_is_input)
            if len(self._layouts) >= _MAX_LAYOUTS:
                try:  # (other threads running this plan may be evicting too)
                    self._layouts.pop(next(iter(self._layouts)))
                except (KeyError, RuntimeError, StopIteration):
                    pass
            self._layouts[key] = layout
        if layout.loop is None:
            return None
        vals = [None] * self.num_values
        for i, s in layout.unchunked:
            vals[i] = arrays[i].reshape(s)
        for ins in layout.hoisted:
            vals[ins.id] = ins.value if ins.fn is None else _alloc_call(
                ins.fn, [vals[r] for r in ins.refs], ins.dtype)
        views = [arrays[i].reshape(s) for i, s in layout.chunked]
        registers = [np.empty(s, dt) for s, dt in layout.registers]
        constants = [np.full(s, np.asarray(vals[v]).reshape(()), dt) for v, s, dt in layout.constants]
        target = out if out is not None and out.flags.c_contiguous else np.empty(shape, self.out_dtype)
        layout.loop(vals, views, registers, constants, target.reshape(layout.target_shape))
        if out is not None and target is not out:
            np.copyto(out, target)
            return out
        return target


class _Layout:
    """How one FusedProgram runs in chunks for one combination of input shapes: which inputs are cut
    into chunks, which values are loop-invariant, the registers, and a generated loop function
    `loop(vals, views, registers, constants, target)` with one straight line per instruction."""

    def __init__(self, program, in_shapes, shape, out_is_input):
        self.loop = None
        rank = len(shape)
        aligned = [(1,) * (rank - len(s)) + tuple(s) for s in in_shapes]
        k = _collapse_depth(shape, aligned)
        lead, rest = math.prod(shape[:k]), tuple(shape[k:])
        rows = min(lead, max(1, CHUNK_ELEMENTS // max(1, math.prod(rest))))
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
                chunk_shape[ins.id] = _broadcast(
                    [chunk_shape[r] if r in chunk_shape else fixed_shape[r] for r in ins.refs])
                steps.append(ins)
            else:  # loop-invariant: computed once per call
                self.hoisted.append(ins)
                fixed_shape[ins.id] = _broadcast([fixed_shape[r] for r in ins.refs])
                names[ins.id] = f"h{ins.id}"
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
            if not ins.alias_ok:
                _release(dying, owner, free)
            if ins.id not in last_use and ins.id in owner and ins.id != program.output:
                _release([ins.id], owner, free)
            lines.append(f"f{si}({', '.join(args)}, out={dst})")
            fns.append(ins.fn)
        if not writes_target:  # the result broadcasts over the chunk, or must not alias an input
            lines.append(f"copyto(t[c0:c1], {names[program.output]})")
        return lines, fns

    def _generate(self, program, lines, fns, names, steps, lead, rows):
        used = {n for n in names.values() if n.startswith("h")}
        src = ["def loop(vals, views, registers, constants, t):"]
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
        src.append(f"    for c0 in range(0, {lead}, {rows}):")
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


def member_error(exc, provenance, index):
    """`exc` with the replaced user op that failed named first: "in 'add' (Add) created at f:3: ..."
    (same exception type), or `exc` itself when that cannot be built."""
    names = provenance.get("members") or []
    if index is None or index >= len(names):
        return exc
    source = (provenance.get("member_sources") or [""] * len(names))[index]
    where = ""
    if source:
        filename, _, lineno = source.rpartition(":")
        text = linecache.getline(filename, int(lineno)).strip() if lineno.isdigit() else ""
        where = f" created at {source}" + (f": {text}" if text else "")
    kind = (provenance.get("member_types") or ["?"] * len(names))[index]
    try:
        return type(exc)(f"in '{names[index]}' ({kind}){where}: {exc}")
    except Exception:
        return exc


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


@cpu_kernel("FusedElementwise")
def _fused_elementwise(node):
    return FusedProgram(node.attrs["program"], node.in_dtypes, node.name, node.attrs)


@cpu_kernel("FusedMatMul")
def _fused_matmul(node):
    ta = node.attrs.get("transpose_a", False)
    tb = node.attrs.get("transpose_b", False)
    activation = node.attrs.get("activation", "")
    dtype = node.out_dtypes[0]
    act, act_alias_ok = (None, True)
    if activation:
        act, act_alias_ok = instruction(activation, node.attrs.get("activation_attrs", {}),
                                        [dtype], dtype)

    def fused_matmul(a, b, bias):
        stage = 0  # the member being computed: matmul, bias, activation
        try:
            if ta:
                a = np.swapaxes(a, -1, -2)
            if tb:
                b = np.swapaxes(b, -1, -2)
            out = np.matmul(a, b)
            stage = 1
            if np.broadcast_shapes(out.shape, np.shape(bias)) != out.shape:
                raise ValueError(f"bias of shape {np.shape(bias)} does not match the matmul result "
                                 f"of shape {out.shape}")
            np.add(out, bias, out=out)
            if act is None:
                return out
            stage = 2
            if act_alias_ok:
                act(out, out=out)
                return out
            result = np.empty_like(out)
            act(out, out=result)
            return result
        except Exception as exc:
            raise member_error(exc, node.attrs, stage) from exc
    return fused_matmul
