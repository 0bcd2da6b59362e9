"""Compiled runs of a FusedElementwise program's cheap instructions, when numba is installed
(optional, like `jit_updates.py`; GRAPHFLOW_NO_JIT=1 switches it off). Used by the compiled program
(`fused_program.py`) through `fused_layout.py`; `fused_jit_group.py` picks the runs. The unfused
kernels of the rows marked `compiled_float32` (float32 Sigmoid) register here too (`kernel_function`).

A chunked run of a program calls one numpy ufunc per instruction and chunk. Transcendental ufuncs
(tanh, exp, ...) are SIMD loops that spend their time computing, and an add or a multiply by a
constant costs a quarter of a tanh (a pass over the chunk in the cache): the arithmetic
instructions together cost more than the transcendental ones. Here each run of consecutive
arithmetic instructions (add, add_n, sub, mul, div, neg, abs, square, maximum/minimum and the clamps
lowered to them, comparisons, select) becomes one numba loop that reads its operands once per
element, keeps the intermediate values in registers and writes only the values the rest of the
program reads. float32 Tanh and Sigmoid join the runs too, as the vectorizable functions of
`jit_math.py` (tanh at most 1 ulp from the correctly rounded value, 2 from numpy's; sigmoid within
2 ulp of it; `GRAPHFLOW_JIT_MATH=0` keeps the numpy functions): the benchmark chain is then one loop
per chunk. The other transcendental instructions (exp, log, float64 tanh and sigmoid, ...) and a
tanh with no arithmetic around it stay numpy calls (numpy's SIMD loops are faster than numba's
scalar libm calls, and they define the bits); a lone float32 sigmoid is one compiled loop (numpy
needs six calls for it, `kernel_function`). A lone arithmetic instruction between two
numpy calls is computed by the nearest earlier run when its operands are ready there (that run
then writes two values).

Bits: each instruction is computed in its own dtype (float32 stays float32: constants are passed as
values of the instruction's dtype, at run time, so LLVM cannot fold them), in the program's order,
without fast-math or fused multiply-add contraction, so a compiled run gives numpy's values exactly
(a float32 tanh or sigmoid: `jit_math.array_call`'s, which a run falling back to numpy calls
uses too):
signed zeros, infinities, denormals, and NaN payloads where one operand is NaN (negation and
absolute value act on the sign bit, see `_UNARY`; maximum/minimum and select follow numpy's own
formulas). Where two *different* NaNs meet in one instruction numpy itself returns one or the other
depending on where the element falls in its loop (vector body or scalar remainder); so does the
compiled loop, and the result is a NaN either way. Only float32/float64 arithmetic with operands of
the result's dtype (and bool conditions) is compiled, on operands that are chunk-sized, scalars, or
rows repeated along the chunk (a bias); anything else keeps its numpy instruction. numba does not
raise or warn on floating-point errors: a call under `np.errstate` asking for errors (raise, call,
log) runs the numpy instructions, and the default (warn) gets no warnings from compiled runs.

A loop is compiled once per process for each distinct run (its generated source and the operands'
dtypes and ranks) when a layout is first built, never per call: a few tenths of a second each, and
about a second once per process to import numba (the benchmark chain's first call took 2.7 s with
its 3 loops on a loaded 2-core machine). Compiled loops release the GIL, so chunks computed by the
intra-op threads run in parallel. A run can also be compiled over a range of blocks of whole arrays
(`Run.ranged_loop`, on first use), which the OpenMP team's threads share (`fused_program.py`).
"""

import os
import threading

import numpy as np

from graphflow.kernels.cpu.numba import jit_cache, jit_math
from graphflow.ops import elementwise_spec

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_BOOL = np.dtype(bool)

# op type -> (expression over operand names a, b, c; result kind: "same" float or "bool")
_BINARY = {"Add": "({a} + {b})", "Sub": "({a} - {b})", "Mul": "({a} * {b})",
           "RealDiv": "({a} / {b})",
           # numpy's SIMD maximum/minimum: x > y (x < y) or x is NaN gives x, else y
           "Maximum": "({a} if ({a} > {b} or {a} != {a}) else {b})",
           "Minimum": "({a} if ({a} < {b} or {a} != {a}) else {b})",
           # numpy: subtract, then square the difference (LLVM computes it once)
           "SquaredDifference": "(({a} - {b}) * ({a} - {b}))"}
# Negation and absolute value change only the sign bit, NaNs included, as numpy's do. LLVM's fneg
# and fabs would too, but LLVM rewrites them together with the arithmetic around them (fneg(x) + c
# into c - x, fabs(x) * fabs(x) into x * x), which is the same number except for a NaN's sign bit:
# the loops flip or clear the bit with a mask they get as an argument, which LLVM cannot see into.
_UNARY = {"Neg": "flipsign({a}, sign)", "Abs": "clearsign({a}, sign)", "Square": "({a} * {a})"}
SIGN = -(1 << 63)  # the int64 sign bit, the loops' `sign` argument
# Transcendental instructions compiled for float32 only, through the vectorizable functions of
# `jit_math.py` (numba's own would be libm's scalar calls): op type -> expression
_FLOAT32_CALLS = {op: f"{name}({{a}})" for op, name in jit_math.CALLS.items()}
_F32 = np.dtype(np.float32)
_COMPARE = {"Greater": ">", "GreaterEqual": ">=", "Less": "<", "LessEqual": "<=", "Equal": "==",
            "NotEqual": "!="}

# The blocks of a ranged loop (`Run.ranged_loop`): whole rows of the periodic operands (or rows of
# this many elements where there are none) making up about this many elements, 16 KB of float32
# (a team thread's share is then even to within one block).
RANGED_BLOCK_ELEMENTS = 1 << 12
# A loop runs over segments of this many elements (whole rows of the periodic operands, which are
# repeated to a segment's length once per call): a per-channel operand of an NHWC tensor has a row
# of C elements, and a loop over rows of 16 spent its time starting rows (a batch norm's affine +
# ReLU over [64, 32, 32, 16] float32: 250 us against 88 for a copy).
SEGMENT_ELEMENTS = 1 << 10

_lock = threading.Lock()
_numba = None  # None: not tried yet; False: unavailable or switched off; else numba's njit
_compiled = {}  # (source, operand (dtype, ndim)s, output (dtype, ndim)s) -> compiled loop


def enabled():
    """True when numba is installed and GRAPHFLOW_NO_JIT is not set."""
    global _numba
    if _numba is None:
        with _lock:
            if _numba is None:
                if os.environ.get("GRAPHFLOW_NO_JIT", "").strip() not in ("", "0"):
                    _numba = False
                else:
                    try:
                        from numba import njit
                        _numba = njit
                    except ImportError:
                        _numba = False
    return _numba is not False


def kernel_function(op_type, dtype):
    """`fn(x, out=None)`: the compiled float32 function of `op_type` standing in for the
    elementwise table's numpy function (the op's CPU kernel, and a fused program's instruction
    where it runs numpy calls) for rows marked `compiled_float32`: numpy needs several calls for
    them (the sigmoid six, 1.1 ns per element against 0.31 compiled, one thread in the cache), and
    the op then gives the same bits fused or not (not Tanh: numpy's tanh alone is faster than the
    compiled one, 0.23 / 0.37). None where the numpy function stays (another op or dtype, no
    numba, GRAPHFLOW_NO_JIT=1 or GRAPHFLOW_JIT_MATH=0)."""
    row = elementwise_spec.ROW.get(op_type)
    if row is None or not row.compiled_float32 or np.dtype(dtype) != _F32 or not enabled() \
            or not jit_math.enabled():
        return None
    return lambda x, out=None: jit_math.array_call(op_type, x, out)


try:  # numpy 2's error state: one object per np.errstate / np.seterr setting, in a context variable
    from numpy._core._ufunc_config import _extobj_contextvar as _ERRSTATE
except ImportError:  # older numpy: read np.geterr() every call
    _ERRSTATE = None
_errstate_seen = (None, False)  # (the error state object last asked about, its answer)


def errstate_allows():
    """True when numpy's error handling asks for no exception or callback (compiled loops do not
    detect floating-point errors). The answer is kept for the error state object it was given for
    (the object is held, so a new setting is never mistaken for it)."""
    global _errstate_seen
    state = None if _ERRSTATE is None else _ERRSTATE.get()
    seen, allows = _errstate_seen
    if state is None or state is not seen:
        allows = all(v in ("ignore", "warn", "print") for v in np.geterr().values())
        if state is not None:
            _errstate_seen = (state, allows)
    return allows


def compilable(ins, dtype_of, operand_kind):
    """True when instruction `ins` (its `op`, `refs`, `dtype`) can be part of a compiled run;
    `dtype_of(v)` is value v's dtype and `operand_kind(v)` one of "full", "scalar", "periodic" or
    None (another broadcast: not compiled)."""
    dt = ins.dtype
    op, refs = ins.op, ins.refs
    kinds = [operand_kind(r) for r in refs]
    if None in kinds:
        return False
    types = [dtype_of(r) for r in refs]
    if op in _BINARY or op in _UNARY or op == "AddN":
        return dt in FLOATS and all(t == dt for t in types)
    if op in _COMPARE:
        return dt == _BOOL and types[0] in FLOATS and all(t == types[0] for t in types)
    if op == "Select":
        return dt in FLOATS and types[0] == _BOOL and types[1] == dt and types[2] == dt
    if op in _FLOAT32_CALLS:
        return dt == _F32 and types[0] == dt and jit_math.enabled()
    return False


def compiled_op_types():
    """The op types a compiled run may contain (`compilable` says for which operands)."""
    return set(_BINARY) | set(_UNARY) | {"AddN", "Select"} | set(_COMPARE) | set(_FLOAT32_CALLS)


def expression(ins, names):
    """The numba expression of instruction `ins` over the operand variable names."""
    op = ins.op
    args = [names[r] for r in ins.refs]
    if op in _BINARY:
        return _BINARY[op].format(a=args[0], b=args[1])
    if op in _UNARY:
        return _UNARY[op].format(a=args[0])
    if op == "AddN":  # left to right, each sum rounded, as `elementwise_spec._add_n`
        total = args[0]
        for a in args[1:]:
            total = f"({total} + {a})"
        return total
    if op in _COMPARE:
        return f"({args[0]} {_COMPARE[op]} {args[1]})"
    if op == "Select":
        return f"({args[1]} if {args[0]} else {args[2]})"
    if op in _FLOAT32_CALLS:
        return _FLOAT32_CALLS[op].format(a=args[0])
    raise KeyError(op)


class Run:
    """Compiled instructions as one step of a chunked program: `fn(*operands, out, extra=())` with
    the step's operands (`refs`: the values it reads that it does not compute) writes the value
    `id` into `out` and the values `extra_ids` into the `extra` buffers (chunk-shaped). To the
    scheduler it is one instruction (that may define more values)."""

    alias_ok = False  # out never shares memory with an operand: the loop stays vectorized

    def __init__(self, instrs, extras, kinds, period, dtype_of, ndims):
        last = instrs[-1]
        self.id, self.dtype, self.member = last.id, last.dtype, last.member
        self.extra_ids = tuple(i.id for i in extras)
        instrs = list(instrs) + list(extras)
        self.op = "+".join(i.op for i in instrs)
        self.instrs = instrs
        inside = {i.id for i in instrs}
        self.refs = tuple(dict.fromkeys(r for i in instrs for r in i.refs if r not in inside))
        self.kinds = [kinds[r] for r in self.refs]
        self.period = period
        outputs = (self.id,) + self.extra_ids
        self._ranged = {}  # in_place -> the ranged loop, compiled on first use (False: none to be had)
        self.ranged_ran = False  # whether it has run (a failure after that is not a typing one)
        self.fn = self._build([dtype_of(r) for r in self.refs], [ndims(r) for r in self.refs],
                              [(dtype_of(v), ndims(v)) for v in outputs])
        self.value = None

    def _build(self, arg_dtypes, ndims, out_types):
        self._types = (tuple(zip(arg_dtypes, ndims)), tuple(out_types))
        self.source = self._source(ndims, ranged=False)
        loop = _compile(self.source, tuple(zip(arg_dtypes, ndims)), tuple(out_types))
        period = self.period
        numpy_run = self.numpy_run

        def fn(*operands, out, extra=()):
            try:
                loop(period, SIGN, *operands, out, *extra)
            except TypeError:  # operands the loop was not compiled for (a view of another layout)
                numpy_run(*operands, out=out, extra=extra)
        return fn

    def _source(self, ndims, ranged, in_place=None):
        """The loop's source. Whole (`ranged` False): `run(period, sign, operands..., outs...)`
        over every row of `period` elements (period 0: one row of all). Ranged: the same with two
        more arguments `r0, r1`, the rows to compute, rows of `period` elements or (period 0) of
        blocks of whole rows (`ranged_blocks`); `in_place`: the output is the operand at this
        position (the same array) and is written through it: LLVM does not vectorize a loop whose
        output may overlap an operand it reads through another array, even with the same data
        pointer (2.5x slower)."""
        names, params, head, body, load = {}, [], [], [], []
        for k, (r, kind, nd) in enumerate(zip(self.refs, self.kinds, ndims)):
            p = f"a{k}"
            params.append(p)
            if kind == "scalar":  # (ranged: at least 1-d, a parallel caller passes 0-d as scalars)
                index = ", ".join(["0"] * nd) or "()"
                head.append(f"    s{k} = {p}.reshape({p}.size)[0]" if ranged else f"    s{k} = {p}[{index}]")
                names[r] = f"s{k}"
            elif kind == "periodic":  # repeated to the segment's length (see `_source`)
                head += [f"    {p}_ = np.empty(span, {p}.dtype)", f"    {p}_1 = {p}.reshape({p}.size)",
                         "    for t in range(span):", f"        {p}_[t] = {p}_1[t % period]"]
                load.append(f"            v{r} = {p}_[j]")
                names[r] = f"v{r}"
            else:
                head.append(f"    {p}_ = {p}.reshape({p}.size)")
                body.append(f"        {p}r = {p}_[lo:lo + n]")
                load.append(f"            v{r} = {p}r[j]")
                names[r] = f"v{r}"
        for ins in self.instrs:
            load.append(f"            v{ins.id} = {expression(ins, names)}")
            names[ins.id] = f"v{ins.id}"
        outputs = (self.id,) + self.extra_ids
        outs = [f"out{k}" for k in range(len(outputs))]
        if ranged:  # blocks of whole rows; a ranged run writes one output
            start = [f"def run(period, sign, {', '.join(params + outs)}, r0, r1):",
                     "    size = out0.size", f"    p = period if period else {RANGED_BLOCK_ELEMENTS}",
                     f"    step = p * max(1, {RANGED_BLOCK_ELEMENTS} // p)",
                     f"    span = p * max(1, {SEGMENT_ELEMENTS} // p)", *head,
                     f"    out0_ = {'out0' if in_place is None else f'a{in_place}'}.reshape(size)",
                     "    for block in range(r0, r1):", "      first = block * step",
                     "      end = min(size, first + step)", "      for lo in range(first, end, span):",
                     "        n = min(span, end - lo)"]
            src = [*start, *body,
                   f"        out0r = {'out0_[lo:lo + n]' if in_place is None else f'a{in_place}r'}",
                   "        for j in range(n):", *load, f"            out0r[j] = v{outputs[0]}"]
            return "\n".join(src) + "\n"
        src = [f"def run(period, sign, {', '.join(params + outs)}):",
               "    size = out0.size",
               f"    span = period * max(1, min(size, {SEGMENT_ELEMENTS}) // period) if period else size",
               *head, *(f"    {o}_ = {o}.reshape(size)" for o in outs),
               "    for lo in range(0, size if span else 0, max(span, 1)):",
               "        n = min(span, size - lo)", *body,
               *(f"        {o}r = {o}_[lo:lo + n]" for o in outs),
               "        for j in range(n):", *load,
               *(f"            {o}r[j] = v{v}" for o, v in zip(outs, outputs))]
        return "\n".join(src) + "\n"

    def ranged_loop(self, in_place=None):
        """The run compiled over a range of rows (`_source`, ranged): `loop(period, sign,
        operands..., out, r0, r1)`, the operands and output whole arrays, for a team of threads
        each computing its own rows (`fused_program.py`); `in_place`: the position of the operand
        that is the output (the same array). Compiled on first use (for the types of its first
        call); None where it cannot be had."""
        if self._ranged is False:
            return None
        loop = self._ranged.get(in_place)
        if loop is None:
            operands, outputs = self._types
            loop = self._ranged[in_place] = _compile(
                self._source([nd for _, nd in operands], True, in_place), operands, outputs,
                typed=False)
        return loop

    def ranged_failed(self):
        """The ranged loop could not be called: the chunked runs compute the run from now on."""
        self._ranged = False

    def ranged_blocks(self, size):
        """How many blocks `ranged_loop` cuts `size` output elements into."""
        row = self.period or RANGED_BLOCK_ELEMENTS
        return -(-size // (row * max(1, RANGED_BLOCK_ELEMENTS // row)))

    def numpy_run(self, *operands, out, extra=()):
        """The run's instructions as numpy calls (what the program computes without numba)."""
        vals = dict(zip(self.refs, operands))
        for ins in self.instrs:
            if ins.op in _FLOAT32_CALLS:  # the compiled function, not numpy's: the same bits
                vals[ins.id] = jit_math.array_call(ins.op, vals[ins.refs[0]])
                continue
            vals[ins.id] = _alloc(ins, [vals[r] for r in ins.refs])
        for buffer, v in zip((out,) + tuple(extra), (self.id,) + self.extra_ids):
            np.copyto(buffer, vals[v])


def _alloc(ins, operands):
    """Instruction `ins` on `operands` into a new chunk-sized array."""
    out = np.empty(np.broadcast_shapes(*(np.shape(o) for o in operands)), ins.dtype)
    ins.fn(*operands, out=out)
    return out


def _compile(source, operands, outputs, typed=True):
    """The loop `source` defines, compiled for C-contiguous arrays of these (dtype, ndim) (cached);
    `typed` False: compiled for the types of its first call instead (a call from another compiled
    function, which passes read-only and writable arrays as they come)."""
    key = (source, operands, outputs)
    loop = _compiled.get(key)
    if loop is None:
        with _lock:
            loop = _compiled.get(key)
            if loop is None:
                from numba import from_dtype, types
                namespace = dict(zip(("flipsign", "clearsign"), _sign_functions()), np=np)
                if any(f"{name}(" in source for name in jit_math.CALLS.values()):
                    namespace.update(jit_math.functions())
                namespace = jit_cache.load_source(source, namespace, "fused", (jit_math, __file__))
                # operands read-only (variables' buffers are), the outputs writable
                signature = types.void(
                    types.intp, types.int64,
                    *(types.Array(from_dtype(d), nd, "C", readonly=True) for d, nd in operands),
                    *(types.Array(from_dtype(d), nd, "C") for d, nd in outputs))
                loop = jit_cache.njit(*([signature] if typed else []), nogil=True, cache=True,
                                      fastmath=False, error_model="numpy",
                                      boundscheck=False)(namespace["run"])
                _compiled[key] = loop
    return loop


_sign_intrinsics = None


def _sign_functions():
    """numba functions (x, sign) -> x with its sign bit flipped, cleared: `sign` is the int64 sign
    bit, shifted down for float32."""
    global _sign_intrinsics
    if _sign_intrinsics is None:
        from llvmlite import ir
        from numba import njit
        from numba.core import types
        from numba.extending import intrinsic

        def bitwise(flip):
            @intrinsic
            def apply(typingctx, x, sign):
                if not isinstance(x, types.Float) or not isinstance(sign, types.Integer):
                    return None

                def codegen(context, builder, signature, args):
                    value, mask = args
                    width = x.bitwidth
                    ity = ir.IntType(width)
                    mask = builder.trunc(builder.lshr(mask, ir.Constant(mask.type, 64 - width)), ity)
                    bits = builder.bitcast(value, ity)
                    bits = builder.xor(bits, mask) if flip else builder.and_(bits, builder.not_(mask))
                    return builder.bitcast(bits, value.type)
                return x(x, sign), codegen

            @njit(inline="always")
            def fn(x, sign):
                return apply(x, sign)
            return fn
        _sign_intrinsics = (bitwise(True), bitwise(False))
    return _sign_intrinsics


def usable_kernel_function():
    """`kernel_function` where the plan may choose the compiled elementwise kernels (numba present
    and allowed: `TABLE.restricted_to`), so that a fused activation (FusedMatMul's, FusedConv2D's)
    gives the unfused op's bits; else None (the numpy instructions)."""
    from graphflow.kernels.cpu import TABLE

    impls = [i for i in TABLE.implementations("Sigmoid") if i.name == "numba"]
    return kernel_function if impls and TABLE.usable(impls[0]) else None


def _compiled_row_applies(node):
    return np.dtype(node.in_dtypes[0]) == _F32 and jit_math.enabled()


def _register_compiled_rows():
    """The unfused kernel of each elementwise row marked `compiled_float32` on float32 inputs: the
    compiled function (`kernel_function`), so that the op gives the same bits fused or not."""
    from graphflow.kernels.cpu import cpu_kernel

    for row in elementwise_spec.ROWS:
        if row.compiled_float32 and row.numpy is not None:
            def build(node, op=row.op):
                return lambda x: jit_math.array_call(op, x)
            cpu_kernel(row.op, name="numba", preference=20, requires=("numba",),
                       applies=_compiled_row_applies)(build)


_register_compiled_rows()


def _compiled_activation_applies(node):
    row = elementwise_spec.ROW.get(node.attrs.get("activation", ""))
    return (row is not None and row.compiled_float32
            and np.dtype(node.out_dtypes[0]) == _F32 and jit_math.enabled())


def _register_compiled_activation():
    """FusedMatMul with a `compiled_float32` activation (float32 Sigmoid) where no faster product
    applies: numpy's product and bias, then the compiled function the unfused op uses (same bits
    fused or not). oneDNN's and the split products apply it themselves (`usable_kernel_function`)."""
    from graphflow.kernels.cpu import cpu_kernel
    from graphflow.kernels.cpu.reference.fused_matmul_kernels import product_then_bias

    @cpu_kernel("FusedMatMul", name="numba_activation", preference=5, requires=("numba",),
                applies=_compiled_activation_applies)
    def fused_matmul_compiled_activation(node):
        return product_then_bias(node, np.matmul, kernel_function)


_register_compiled_activation()
