"""numpy reference of `FusedElementwise` (and the program `FusedElementwiseSum` runs).

A FusedElementwise program (format: `graphflow/optimizer_passes/fusion.py`) is compiled once per plan
step into a list of instructions, each a numpy function writing into an `out` buffer. A run then
either evaluates the program on whole arrays (small outputs) or walks the output in chunks of about
`CHUNK_ELEMENTS` elements (`fused_layout.py`): each instruction writes into a preallocated chunk-sized
register (registers are reused as soon as a value is dead), values that do not depend on a chunked
input are computed once before the loop, and the last instruction writes straight into the output.
The unfused plan instead allocates one full-size temporary per op and streams every array through
memory once per op.

Outputs of `PARALLEL_MIN_ELEMENTS` or more, of programs whose output elements times computing
instructions reach `PARALLEL_MIN_WORK`, are computed by up to `threads` threads at once (the
session's intra-op thread count, see `graphflow.framework.config`): the calling thread and workers of
the process's intra-op pool (`intra_op.py`) take chunks of `PARALLEL_CHUNK_ELEMENTS` from one shared
sequence, each thread with its own registers. The result is the same bits as a single-thread run's:
each instruction is elementwise and numpy computes an element the same way wherever a call on a
chunk starts (the whole-array, chunked and threaded runs of every instruction type are checked
against the op's own kernel, bit for bit).

With numba, the plan chooses the compiled program instead (`numba/fused_program.py`, a subclass of
`FusedProgram` through its hooks `_prepare` and `_run_whole_program`): runs of cheap instructions
become compiled loops, and a program that is one such run may run on the OpenMP team.

Both fused kernels accept `out=`: the memory plan may hand them a dead input's buffer to write into.
"""

import math

import numpy as np

from graphflow.framework import config
from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference.fused_instructions import CLAMPS, instruction
from graphflow.kernels.cpu.reference.fused_layout import CHUNK_ELEMENTS, Layout, broadcast  # noqa: F401
from graphflow.kernels.cpu.threads import intra_op
from graphflow.ops import registry

# Below this many output elements the program runs on whole arrays, one numpy call per instruction
# (what the unfused plan does); from here on, in registers (one chunk, or several).
CHUNKED_MIN_ELEMENTS = 4096
# Chunk elements of a run on several threads. Between two numpy calls a thread needs the GIL, and a
# thread that finds it taken sleeps until it is handed over, which takes longer than a numpy call on a
# 32K-element chunk: twice the single-thread chunk makes every call run long enough for the handover
# to stay rare (measured with 16K..256K: 48K-128K best on 2 cores, 16K-32K often slower than 1 thread).
PARALLEL_CHUNK_ELEMENTS = 1 << 16
# From this many output elements on (three parallel chunks), chunks are computed by several threads
# when the session allows more than one: below it, waking the workers and the GIL handovers cost
# about what they save (measured on 2 cores: even at ~130K elements, gains from ~190K).
PARALLEL_MIN_ELEMENTS = 3 * PARALLEL_CHUNK_ELEMENTS
# ... and only when the output's elements times the program's computing instructions reach this
# (about 0.4 ms on one thread): handing chunks to a woken pool worker costs 0.1-0.2 ms on a 2-core
# machine, so a cheap program is faster alone. Measured (one thread / two, ms): ReLU of 1M float32
# 0.32 / 0.39, tanh 1M 0.34 / 0.37, exp 1M 0.44 / 0.42 (1M work each: alone), add + ReLU 1M
# 0.47 / 0.42, the benchmark's tanh/sigmoid chain 512K 0.44 / 0.37 and 1M 0.93 / 0.61, ReLU 4M
# 1.22 / 0.86 (2M work and more: threads). (This replaced timing each program's first serial
# calls, which gave the same choices on these programs and a plan whose threads do not depend on
# the load of its first calls.)
PARALLEL_MIN_WORK = 3 << 19
# Chunk layouts (one per combination of input shapes) each kernel keeps, oldest dropped first.
_MAX_LAYOUTS = 8


def _alloc_call(fn, operands, dtype):
    """Call an instruction without an output buffer (whole-array evaluation)."""
    if isinstance(fn, np.ufunc):
        return fn(*operands)
    alloc = getattr(fn, "alloc", None)
    if alloc is not None:
        return alloc(*operands)
    out = np.empty(broadcast([np.shape(o) for o in operands]), dtype)
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
    # compiled(op_type, dtype) -> a compiled function standing in for an instruction's numpy one,
    # or None (`fused_instructions.instruction`); the numpy program has none
    compiled_functions = None

    def __init__(self, program, in_dtypes, name="FusedElementwise", provenance=None, threads=None,
                 chunk_elements=None):
        self.name = name
        # most threads one call uses (None: the process default, `config.default_intra_op_threads`)
        self.threads = config.default_intra_op_threads() if threads is None else max(1, int(threads))
        self.provenance = provenance or {}
        # one thread's chunk (None: CHUNK_ELEMENTS; FusedElementwiseSum's blocks run as one chunk)
        self.chunk_elements = chunk_elements
        member = 0
        n_in = len(program["inputs"])
        self.num_inputs = n_in
        value_dtypes = [np.dtype(d) for d in in_dtypes]
        self.instrs = []
        self._extra = []  # values added by lowering, numbered after the program's own
        for j, (op_type, refs, attrs, dtype) in enumerate(program["instructions"]):
            dt = np.dtype(dtype)
            vid = n_in + j
            constant = registry.lookup(op_type).constant
            lowered = len(self._extra)
            if constant:
                ins = _Instr(vid, op_type, (), None, True, dt, np.asarray(attrs["value"], dtype=dt))
            elif op_type in CLAMPS:
                ins = self._lower_clamp(vid, op_type, refs[0], dt, n_in + len(program["instructions"]))
            else:
                fn, alias_ok = instruction(op_type, attrs, [value_dtypes[r] for r in refs], dt,
                                           self.compiled_functions)
                ins = _Instr(vid, op_type, tuple(refs), fn, alias_ok, dt)
            if not constant:
                for part in [ins] + self._extra[lowered:]:  # (errors in lowered steps name it too)
                    part.member = member
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
        # instructions that compute (not constants): with one, an input broadcast along inner axes
        # is read by one numpy call, faster than copied for a compiled run
        self._computing_steps = sum(ins.fn is not None for ins in self.instrs)
        self._whole = None  # the generated whole-array function (`_whole_function`), on first use

    def value_dtype(self, value_id):
        return self._dtypes[value_id]

    def _lower_clamp(self, vid, op_type, x, dtype, first_extra):
        """Relu(x) -> Maximum(x, 0) and Relu6(x) -> Minimum(Maximum(x, 0), 6) with the bounds as
        constants, so that chunked runs compare against constant registers (see `_allocate`)."""
        ids = []
        for bound in CLAMPS[op_type]:
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
        run = self._whole
        if run is None:
            run = self._whole = self._whole_function()
        result = run(arrays, out, out_is_input, shape)
        if result is out and out is not None:
            return out
        result = np.asarray(result)
        if result.shape != shape or result.dtype != self.out_dtype:
            result = np.array(np.broadcast_to(result, shape), dtype=self.out_dtype)
        if out is not None:
            np.copyto(out, result)
            return out
        return result

    def _whole_function(self):
        """The program on whole arrays as one generated straight-line function
        `run(arrays, out, out_is_input, shape)`: one numpy call per instruction, each value
        dropped after its last use (as the unfused plan does), the output instruction writing
        into `out` where it fits. Generated once per program, so that a run of thousands of small
        instructions (a long chain of ops on small arrays) costs their numpy calls and little else."""
        names = {"np": np, "broadcast": broadcast, "shape_of": np.shape}
        lines = [f"    {', '.join(f'v{i}' for i in range(self.num_inputs))}, = arrays"
                 if self.num_inputs else "    pass"]
        for ins, dead in zip(self.instrs, self._dead_after):
            v = f"v{ins.id}"
            if ins.fn is None:
                names[f"c{ins.id}"] = ins.value
                lines.append(f"    {v} = c{ins.id}")
                continue
            args = ", ".join(f"v{r}" for r in ins.refs)
            names[f"f{ins.id}"] = ins.fn
            if ins.id == self.output:
                aliasing = "" if ins.alias_ok else " and not out_is_input"
                shapes = ", ".join(f"shape_of(v{r})" for r in ins.refs)
                lines += [f"    if out is not None{aliasing} and broadcast([{shapes}]) == shape:",
                          f"        f{ins.id}({args}, out=out)",
                          "        return out"]
            if isinstance(ins.fn, np.ufunc):
                lines.append(f"    {v} = f{ins.id}({args})")
            elif getattr(ins.fn, "alloc", None) is not None:
                names[f"a{ins.id}"] = ins.fn.alloc
                lines.append(f"    {v} = a{ins.id}({args})")
            else:
                names[f"d{ins.id}"] = ins.dtype
                shapes = ", ".join(f"shape_of(v{r})" for r in ins.refs)
                lines += [f"    {v} = np.empty(broadcast([{shapes}]), d{ins.id})",
                          f"    f{ins.id}({args}, out={v})"]
            if dead:
                lines.append(f"    del {', '.join(f'v{d}' for d in dead)}")
        lines.append(f"    return v{self.output}")
        source = "def run(arrays, out, out_is_input, shape):\n" + "\n".join(lines) + "\n"
        exec(compile(source, f"<graphflow fused program {self.name}>", "exec"), names)
        return names["run"]

    def threads_for(self, size):
        """Threads a chunked run of `size` output elements uses at most (`PARALLEL_MIN_ELEMENTS`,
        `PARALLEL_MIN_WORK`): a static rule on the size and the program."""
        if size >= PARALLEL_MIN_ELEMENTS and size * self._computing_steps >= PARALLEL_MIN_WORK:
            return self.threads
        return 1

    def _prepare(self, arrays, size, shape):
        """(arrays, group) for a chunked run: the arrays as the layout takes them and the function
        grouping the steps into compiled runs (`Layout`'s `group`), None for numpy calls only."""
        return arrays, None

    def _run_whole_program(self, layout, vals, views, t, size, out_is_input):
        """Compute the whole program some other way than the layout's chunks (the compiled
        program's team run); True when done. The numpy program has no other way."""
        return False

    def _run_chunked(self, arrays, shape, out, out_is_input):
        size = math.prod(shape)
        threads = self.threads_for(size)
        parallel = threads > 1 and not intra_op.in_worker()
        arrays, group = self._prepare(arrays, size, shape)
        key = (tuple([a.shape for a in arrays]), out_is_input, parallel, group is not None)
        layout = self._layouts.get(key)
        if layout is None:
            layout = Layout(self, [a.shape for a in arrays], shape, out_is_input,
                             PARALLEL_CHUNK_ELEMENTS if parallel else
                             self.chunk_elements or CHUNK_ELEMENTS, group)
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
        for ins in layout.hoisted:  # (arrays, numpy scalars made 0-d: compiled runs take arrays)
            vals[ins.id] = ins.value if ins.fn is None else np.asarray(_alloc_call(
                ins.fn, [vals[r] for r in ins.refs], ins.dtype))
        views = [arrays[i].reshape(s) for i, s in layout.chunked]
        constants = [np.full(s, np.asarray(vals[v]).reshape(()), dt) for v, s, dt in layout.constants]
        target = out if out is not None and out.flags.c_contiguous else np.empty(shape, self.out_dtype)
        t = target.reshape(layout.target_shape)
        if not self._run_whole_program(layout, vals, views, t, size,
                                       out is not None and out_is_input):
            self._run_chunks(layout, vals, views, constants, t,
                             min(threads, layout.num_chunks) if parallel else 1)
        if out is not None and target is not out:
            np.copyto(out, target)
            return out
        return target

    def _run_chunks(self, layout, vals, views, constants, t, threads):
        """The layout's loop over every chunk: on `threads` threads, or on this one."""
        if threads > 1:
            # every thread takes chunks from one sequence until none is left, in its own registers
            # (the constant registers are only read: shared)
            starts = intra_op.shared_iter(layout.chunk_starts())
            loop = layout.loop

            def work():
                loop(vals, views, layout.new_registers(), constants, t, starts)
            intra_op.POOL.run_shared(work, threads)
            return
        registers = layout.borrow_registers()
        layout.loop(vals, views, registers, constants, t, layout.chunk_starts())
        layout.return_registers(registers)


def member_error(exc, provenance, index):
    """`exc` with the replaced user op that failed named first: "in 'add' (Add) created at f:3: ..."
    (same exception type), or `exc` itself when that cannot be built."""
    names = provenance.get("members") or []
    if index is None or index >= len(names):
        return exc
    source = (provenance.get("member_sources") or [""] * len(names))[index]
    where = ""
    if source:  # plain 'file:line' text: the named file is never opened (attrs may come from a file)
        where = f" created at {source}"
    kind = (provenance.get("member_types") or ["?"] * len(names))[index]
    try:
        return type(exc)(f"in '{names[index]}' ({kind}){where}: {exc}")
    except Exception:
        return exc


@cpu_kernel("FusedElementwise")
def _fused_elementwise(node):
    threads = getattr(node.state, "intra_op_threads", None)  # the session's, when it set one
    return FusedProgram(node.attrs["program"], node.in_dtypes, node.name, node.attrs, threads)
