"""numpy kernels for the fused ops (`FusedElementwise`, `FusedMatMul`).

A FusedElementwise program (format: `graphflow/optimizer_passes/fusion.py`) is compiled once per plan
step into a list of instructions, each a numpy function writing into an `out` buffer. A run then
either evaluates the program on whole arrays (small outputs) or walks the output in chunks of about
`CHUNK_ELEMENTS` elements (`fused_layout.py`): each instruction writes into a preallocated chunk-sized
register (registers are reused as soon as a value is dead), values that do not depend on a chunked
input are computed once before the loop, and the last instruction writes straight into the output.
The unfused plan instead allocates one full-size temporary per op and streams every array through
memory once per op.

Outputs of `PARALLEL_MIN_ELEMENTS` or more, of programs that take one thread at least
`PARALLEL_MIN_SECONDS` (timed on their first calls), are computed by up to `threads` threads at once (the
session's intra-op thread count, see `graphflow.framework.config`): the calling thread and workers of the
process's intra-op pool (`intra_op.py`) take chunks of `PARALLEL_CHUNK_ELEMENTS` from one shared
sequence, each thread with its own registers. The result is the same bits as a single-thread run's:
each instruction is elementwise and numpy computes an element the same way wherever a call on a
chunk starts (the whole-array, chunked and threaded runs of every instruction type are checked
against the op's own kernel, bit for bit).

With numba installed, runs of the cheap arithmetic instructions of a chunked program are compiled
loops (`fused_jit.py`, same bits as the numpy instructions); `GRAPHFLOW_NO_JIT=1` keeps numpy only.
A program that is one such run, of `TEAM_MIN_ELEMENTS` or more, runs instead on the OpenMP team
(`omp_team.py`) while the threading chooser runs products as a team: its ranged loop over whole
arrays, each team thread a share of the blocks, with the same bits.

Both fused kernels accept `out=`: the memory plan may hand them a dead input's buffer to write into.
"""

import math
import time

import numpy as np

from graphflow.framework import config
from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.numba import fused_jit, jit_small
from graphflow.kernels.cpu.onednn import dnnl, dnnl_matmul
from graphflow.kernels.cpu.reference.fused_instructions import _CLAMPS, instruction
from graphflow.kernels.cpu.reference.fused_layout import CHUNK_ELEMENTS, _broadcast, _Layout  # noqa: F401
from graphflow.kernels.cpu.threads import blas, intra_op, omp_team
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
# ... and only when one thread alone takes at least this long for the program (the best of its
# first SERIAL_TRIALS calls for those input shapes, which run on the calling thread): handing
# chunks to a woken pool worker costs 0.1-0.2 ms on this 2-core machine, so a cheap program is
# faster alone up to about 0.4 ms (measured, one thread / two, ms: ReLU of 1M float32 0.32 / 0.39,
# tanh 1M 0.34 / 0.37, exp 1M 0.44 / 0.42, add + ReLU 1M 0.47 / 0.42, the benchmark's
# tanh/sigmoid chain 512K 0.44 / 0.37 and 1M 0.93 / 0.61, ReLU 4M 1.22 / 0.86).
PARALLEL_MIN_SECONDS = 4e-4
SERIAL_TRIALS = 3
# A program that is one compiled run (`fused_jit.Run.ranged_loop`) runs on the OpenMP team of
# oneDNN's products (`omp_team.py`) from this many output elements on, while the threading chooser
# runs products as a team: its threads spin awake between the convolutions around a batch norm's
# ReLU or a ReLU's gradient, where waking the intra-op pool costs more than a second thread saves.
# Measured right after a team product (a ReLU gradient's select, float32, median us, team / one
# thread): 32K 34.8 / 17.7, 64K 28.3 / 23.6, 128K 36.8 / 42.2, 256K 49.6 / 70.6.
TEAM_MIN_ELEMENTS = 1 << 17
# Chunk layouts (one per combination of input shapes) each kernel keeps, oldest dropped first.
_MAX_LAYOUTS = 8


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
        self._jit = fused_jit.enabled()
        for j, (op_type, refs, attrs, dtype) in enumerate(program["instructions"]):
            dt = np.dtype(dtype)
            vid = n_in + j
            constant = registry.lookup(op_type).constant
            lowered = len(self._extra)
            if constant:
                ins = _Instr(vid, op_type, (), None, True, dt, np.asarray(attrs["value"], dtype=dt))
            elif op_type in _CLAMPS:
                ins = self._lower_clamp(vid, op_type, refs[0], dt, n_in + len(program["instructions"]))
            else:
                fn, alias_ok = instruction(op_type, attrs, [value_dtypes[r] for r in refs], dt)
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
        # input shapes -> (serial calls timed, best seconds) until decided, then True (threads
        # pay) or False (`PARALLEL_MIN_SECONDS`)
        self._threads_pay = {}
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

    def _time_serial_run(self, shapes, trials, seconds):
        """Record a serial run's time for these input shapes; decide after SERIAL_TRIALS."""
        count, best = trials
        count, best = count + 1, min(best, seconds)
        self._threads_pay[shapes] = (best >= PARALLEL_MIN_SECONDS if count >= SERIAL_TRIALS
                                     else (count, best))

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
        size = math.prod(shape)
        threads = self.threads if size >= PARALLEL_MIN_ELEMENTS else 1
        parallel = threads > 1 and not intra_op.in_worker()
        jit = self._jit and fused_jit.errstate_allows()
        if jit:
            arrays, jit = _contiguous_for_jit(arrays, size)
        if jit and self._computing_steps >= 2:
            arrays = _inner_broadcasts_expanded(arrays, shape)
        timing = None
        if parallel and PARALLEL_MIN_SECONDS > 0:  # (0: threads whenever the size allows)
            shapes = tuple([a.shape for a in arrays])
            pays = self._threads_pay.get(shapes, (0, math.inf))
            if pays is False:
                parallel = False
            elif pays is not True:
                parallel, timing = False, (shapes, pays)
        key = (tuple([a.shape for a in arrays]), out_is_input, parallel, jit)
        layout = self._layouts.get(key)
        if layout is None:
            layout = _Layout(self, [a.shape for a in arrays], shape, out_is_input,
                             PARALLEL_CHUNK_ELEMENTS if parallel else
                             self.chunk_elements or CHUNK_ELEMENTS, jit)
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
        on_team = (layout.whole_run is not None and size >= TEAM_MIN_ELEMENTS
                   and omp_team.wanted(self.threads)
                   and self._run_on_team(layout, vals, views, t, out is not None and out_is_input))
        if not on_team:
            self._run_chunks(layout, vals, views, constants, t,
                             min(threads, layout.num_chunks) if parallel else 1, timing)
        if out is not None and target is not out:
            np.copyto(out, target)
            return out
        return target

    def _run_chunks(self, layout, vals, views, constants, t, threads, timing):
        """The layout's loop over every chunk: on `threads` threads, or on this one (timed for the
        threads' decision while `timing`)."""
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
        start = time.perf_counter() if timing else 0.0
        layout.loop(vals, views, registers, constants, t, layout.chunk_starts())
        if timing:
            self._time_serial_run(*timing, time.perf_counter() - start)
        layout.return_registers(registers)

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


def _contiguous_for_jit(arrays, size):
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


def _inner_broadcasts_expanded(arrays, shape):
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


class FusedActivation:
    """The activation of a fused op (FusedMatMul, FusedConv2D): as oneDNN post-ops where those
    compute graphflow's values exactly (`dnnl.activation_post_ops`), else as graphflow's numpy
    instruction applied to the op's result (`finish`)."""

    __slots__ = ("post_ops", "act", "alias_ok", "exact_post_ops", "relu_or_none")

    def __init__(self, activation, attrs, dtype):
        attrs = attrs or {}
        self.act, self.alias_ok = (None, True)
        if activation:
            self.act, self.alias_ok = instruction(activation, attrs, [dtype], dtype)
        exact = dnnl.activation_post_ops(activation, attrs)
        self.exact_post_ops = exact is not None
        self.post_ops = exact if exact is not None else ()  # what a primitive is asked to apply
        # None: no activation; True: a Relu (max(x, 0), as its exact post-op says), which the
        # compiled loops apply themselves; False: another one
        self.relu_or_none = None if self.act is None else exact == dnnl.RELU_POST_OPS

    def finish(self, out, by_primitive):
        """`out` activated: as it is when a primitive applied the post-ops (`by_primitive`) and
        they were the whole activation, else through the numpy instruction (in place if it may)."""
        if self.act is None or (by_primitive and self.exact_post_ops):
            return out
        if self.alias_ok:
            self.act(out, out=out)
            return out
        result = np.empty_like(out)
        self.act(out, out=result)
        return result


@cpu_kernel("FusedMatMul")
def _fused_matmul(node):
    ta = node.attrs.get("transpose_a", False)
    tb = node.attrs.get("transpose_b", False)
    activation = FusedActivation(node.attrs.get("activation", ""),
                                 node.attrs.get("activation_attrs"), node.out_dtypes[0])
    threads = blas.session_threads(node)
    fitting = set()  # (result shape, bias shape) pairs that broadcast to the result
    loop_activation = activation.relu_or_none is not False
    relu = activation.relu_or_none is True
    small = {}  # operand shapes, strides and dtypes -> whether the compiled loop runs them

    def fused_matmul(a, b, bias):
        stage = 0  # the member being computed: matmul, bias, activation
        try:
            if ta:
                a = np.swapaxes(a, -1, -2)
            if tb:
                b = np.swapaxes(b, -1, -2)
            if loop_activation and type(bias) is np.ndarray:  # a few rows (batch 1): one loop
                key = (a.shape, a.strides, a.dtype, b.shape, b.strides, b.dtype, bias.shape,
                       bias.dtype)
                use = small.get(key)
                if use is None:
                    if len(small) >= 16:
                        small.clear()
                    use = small[key] = jit_small.dense_applies(a, b, bias)
                if use:
                    return jit_small.dense(a, b, bias, relu)
            out = dnnl_matmul.matmul(a, b, threads, bias, activation.post_ops)
            by_primitive = out is not None  # oneDNN added the bias (and applied the post-ops)
            if not by_primitive:
                out = blas.matmul(a, b, threads)
                stage = 1
                shapes = (out.shape, np.shape(bias))
                if shapes not in fitting:  # checked once per pair of shapes
                    if np.broadcast_shapes(*shapes) != out.shape:
                        raise ValueError(f"bias of shape {shapes[1]} does not match the matmul "
                                         f"result of shape {out.shape}")
                    if len(fitting) >= 16:
                        fitting.clear()
                    fitting.add(shapes)
                np.add(out, bias, out=out)
            stage = 2
            return activation.finish(out, by_primitive)
        except Exception as exc:
            raise member_error(exc, node.attrs, stage) from exc
    return fused_matmul
