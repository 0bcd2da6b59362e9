"""Code generator: an elementwise expression program -> one CUDA kernel source.

Programs have the one format of `graphflow/ops/elementwise_program.py` (numbered values,
`[op, operands, attrs, dtype]` instructions, "Const" scalars): a `FusedElementwise` op's program
attr as the fusion pass built it, or the one-instruction program of a single elementwise op
(`elementwise.single_op_program`). `normalize` checks one with that module's validator (plus the
dtypes CUDA has) and fills in every dtype. The C expression of each op type comes from its row of
the elementwise table (`graphflow/ops/elementwise_spec.py`); the scalar functions those expressions
call (`gf_*`, numpy's corner cases) are in `elementwise.cuh`. Inputs broadcast against each other
with numpy rules; the output has the broadcast shape.

One kernel is generated per (program, layout): each input is either contiguous with the output
("c": read at the linear index), a single element ("s": read once) or broadcast/strided ("b": offset
from the coordinates, computed once per element for all strided inputs). The rank of the (collapsed)
index space is a compile-time constant, and 32-bit index math is used when the size allows. The
kernel is a grid-stride loop; `generate` returns (source text, kernel name, parameter format).

Integer division (the rows flagged `zero_divisor`: FloorDiv, FloorMod) on integer operands reads
its divisor through `gf_divisor`: a zero divisor writes the instruction's number + 1 into the
kernel's last parameter, an int flag (`checked_instructions` lists them), and the launcher raises
TF's "Integer division by zero" naming that instruction. Programs without such an instruction (all
float programs) have no flag and no check.
"""

import hashlib
import math

import numpy as np

from graphflow.kernels.cuda import CTYPES
from graphflow.ops import elementwise_program, elementwise_spec
from graphflow.ops.elementwise_program import ProgramError  # noqa: F401 - part of this module's API

MAX_DIMS = 8

# ---- op type -> C expression (from the elementwise table); {0}, {1}.. are argument variables,
#      {T} the C type of the (value) argument, float attrs by name as literals of that type.
_ROWS = [r for r in elementwise_spec.ROWS if r.c or r.result == "cast"]
UNARY = {r.op: r.c for r in _ROWS if r.arity == 1}
BINARY = {r.op: r.c for r in _ROWS if r.arity == 2}
TERNARY = {r.op: r.c for r in _ROWS if r.arity == 3}
NARY = {r.op for r in _ROWS if r.arity == 0}  # the binary expression folded over the arguments
CONST = elementwise_program.CONST
BOOL_RESULT = {r.op for r in _ROWS if r.result == "bool"}
FLOAT_ONLY = {r.op for r in _ROWS if r.dtypes == "float"}
_TRUEDIV = elementwise_spec.TRUEDIV

SUPPORTED_OPS = frozenset(r.op for r in _ROWS)


def _dtype(name):
    dt = np.dtype(name)
    if dt not in CTYPES:
        raise ProgramError(f"no CUDA type for dtype {dt.name}")
    return dt


def _ctype(dt):
    return CTYPES[np.dtype(dt)]


def literal(value, dtype):
    """An exact C literal of `value` in `dtype` (hex floats; inf/nan by bit pattern)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return "true" if bool(value) else "false"
    if dt.kind in "iu":
        v = int(value)
        if dt == np.int64:
            return f"{v}LL" if v != -2**63 else "(-9223372036854775807LL - 1)"
        return f"(({_ctype(dt)}){v})"
    v = float(np.asarray(value, dt))
    if math.isnan(v):
        return "__int_as_float(0x7fc00000)" if dt == np.float32 else \
            "__longlong_as_double(0x7ff8000000000000LL)"
    if math.isinf(v):
        bits = "__int_as_float(0x7f800000)" if dt == np.float32 else \
            "__longlong_as_double(0x7ff0000000000000LL)"
        return bits if v > 0 else f"(-{bits})"
    text = v.hex()
    return f"{text}f" if dt == np.float32 else text


def normalize(program):
    """Validate a program (`elementwise_program.check`, with the op types that have a C expression
    and the dtypes CUDA has) and fill in every dtype; returns the canonical copy."""
    checked = elementwise_program.check(program, ops=SUPPORTED_OPS)
    for dt in checked["inputs"] + [ins[3] for ins in checked["instructions"]]:
        _dtype(dt)
    return checked


def program_key(program):
    return elementwise_program.key(program)


def output_dtypes(program):
    return [np.dtype(_value_dtypes(program)[program["output"]])]


def _value_dtypes(program):
    return list(program["inputs"]) + [ins[3] for ins in program["instructions"]]


def _var(program, k):
    """The C variable of value `k`: iK for input K, nJ for instruction J."""
    n = len(program["inputs"])
    return f"i{k}" if k < n else f"n{k - n}"


def _cast(value, src, dst):
    if dst == "bool":
        return f"({value} != ({_ctype(src)})0)"
    return f"(({_ctype(dst)}){value})"


def checked_instructions(program):
    """Indices of the (normalized) program's instructions whose zero divisor raises: integer
    FloorDiv / FloorMod (`elementwise_spec.Elementwise.zero_divisor`)."""
    types = _value_dtypes(program)
    return [j for j, (op, operands, _, _) in enumerate(program["instructions"])
            if op != CONST and elementwise_spec.ROW[op].checks_divisor([types[r] for r in operands])]


def _expression(op, attrs, dtype, arg_vars, arg_dtypes, check=None):
    row = elementwise_spec.ROW[op]
    if check is not None:  # a zero divisor raises the flag (and is read as 1)
        arg_vars = [arg_vars[0], f"gf_divisor({arg_vars[1]}, gf_err, {check + 1})"] + arg_vars[2:]
    if row.result == "cast":
        return _cast(arg_vars[0], arg_dtypes[0], dtype)
    if row.result == "truediv" and np.dtype(arg_dtypes[0]).kind != "f":
        o = _ctype(dtype)  # integers are divided in the result's float type
        arg_vars = [f"(({o}){v})" for v in arg_vars]
    if op in NARY:
        expr = arg_vars[0]
        for v in arg_vars[1:]:
            expr = row.c.format(expr, v)
        return expr
    t_dtype = arg_dtypes[1] if row.result == "select" else arg_dtypes[0]
    values = {a.name: literal(v, t_dtype) if a.is_float else v
              for a, v in zip(row.attrs, row.attr_values(attrs).values())}
    return row.c.format(*arg_vars, T=_ctype(t_dtype), O=_ctype(dtype), **values)


HEADER = '#include "common.cuh"\n#include "elementwise.cuh"\n'


def generate(program, layouts, ndim, index32=True):
    """Self-contained CUDA source for `program` (normalized) with input `layouts` ('c'|'s'|'b'
    each) over an index space of rank `ndim`: (source, kernel name, PyCUDA parameter format)."""
    from graphflow.kernels.cuda import sources
    kernel, name, fmt = generate_kernel(program, layouts, ndim, index32)
    return sources.expand(HEADER + kernel), name, fmt


def generate_kernel(program, layouts, ndim, index32=True):
    """The kernel function alone (it needs `HEADER` before it); several may share one header.

    Kernel parameters, all 8-byte aligned: n (int64), shape (gf_shape), then per input a pointer
    (followed by its gf_strides when its layout is 'b'), then the output's pointer, then (programs
    with `checked_instructions`) the pointer to the int flag a zero divisor sets."""
    if len(layouts) != len(program["inputs"]):
        raise ProgramError("one layout per input is needed")
    if not 0 <= ndim <= MAX_DIMS:
        raise ProgramError(f"rank {ndim} exceeds the {MAX_DIMS} dims the kernels index")
    key = program_key(program) + "|" + "".join(layouts) + f"|{ndim}|{int(index32)}"
    name = "gf_ew_" + hashlib.sha1(key.encode()).hexdigest()[:16]
    idx = "unsigned int" if index32 else "long long"
    params = ["const long long n", "const gf_shape shape"]
    fmt = ["q", "72s"]
    in_types = program["inputs"]
    for k, (dt, layout) in enumerate(zip(in_types, layouts)):
        params.append(f"const {_ctype(dt)} *__restrict__ in{k}")
        fmt.append("P")
        if layout == "b":
            params.append(f"const gf_strides st{k}")
            fmt.append("64s")
    out_dtype = output_dtypes(program)[0]
    params.append(f"{_ctype(out_dtype)} *__restrict__ out0")
    fmt.append("P")
    checked = set(checked_instructions(program))
    if checked:
        params.append("int *__restrict__ gf_err")
        fmt.append("P")
    body = []
    pre = []
    strided = [k for k, lay in enumerate(layouts) if lay == "b"]
    used = {r for ins in program["instructions"] for r in ins[1]} | {program["output"]}
    for k, (dt, layout) in enumerate(zip(in_types, layouts)):
        if layout == "s" and k in used:
            pre.append(f"    const {_ctype(dt)} i{k} = in{k}[0];")
    strided = [k for k in strided if k in used]
    if strided:
        body.append(f"        {idx} r = ({idx})i;")
        for k in strided:
            body.append(f"        {idx} o{k} = 0;")
        body.append("#pragma unroll")
        body.append(f"        for (int d = {ndim - 1}; d >= 0; --d) {{")
        body.append(f"            const {idx} dim = ({idx})shape.dims[d];")
        body.append(f"            const {idx} q = r / dim;")
        body.append(f"            const {idx} c = r - q * dim;")
        for k in strided:
            body.append(f"            o{k} += c * ({idx})st{k}.s[d];")
        body.append("            r = q;")
        body.append("        }")
    for k, (dt, layout) in enumerate(zip(in_types, layouts)):
        if k not in used:
            continue
        if layout == "c":
            body.append(f"        const {_ctype(dt)} i{k} = in{k}[i];")
        elif layout == "b":
            body.append(f"        const {_ctype(dt)} i{k} = in{k}[o{k}];")
    types = _value_dtypes(program)
    for j, (op, operands, attrs, dtype) in enumerate(program["instructions"]):
        if op == CONST:
            expr = literal(attrs["value"], dtype)
        else:
            expr = _expression(op, attrs, dtype, [_var(program, r) for r in operands],
                               [types[r] for r in operands], j if j in checked else None)
        body.append(f"        const {_ctype(dtype)} n{j} = {expr};")
    body.append(f"        out0[i] = {_var(program, program['output'])};")
    source = "\n".join([
        f"// program: {program_key(program)}",
        f"// layouts: {''.join(layouts) or '-'}, rank {ndim}, {'32' if index32 else '64'}-bit index",
        f'extern "C" __global__ void {name}(',
        "    " + ",\n    ".join(params) + ") {",
        *pre,
        f"    for ({idx} i = ({idx})blockIdx.x * blockDim.x + threadIdx.x; i < ({idx})n;",
        f"         i += ({idx})gridDim.x * blockDim.x) {{",
        *body,
        "    }",
        "}",
        "",
    ])
    return source, name, "".join(fmt)


# ---------------------------------------------------------------- host-side layout planning
def broadcast_strides(shape, out_shape):
    """Element strides of a contiguous array of `shape` read over `out_shape` (0 where broadcast)."""
    shape = tuple(shape)
    pad = len(out_shape) - len(shape)
    if pad < 0:
        raise ValueError(f"shape {shape} does not broadcast to {out_shape}")
    full = (1,) * pad + shape
    strides = [0] * len(out_shape)
    step = 1
    for d in range(len(out_shape) - 1, -1, -1):
        if full[d] == out_shape[d] and full[d] != 1:
            strides[d] = step
        elif full[d] != 1:
            raise ValueError(f"shape {shape} does not broadcast to {out_shape}")
        step *= full[d]
    return strides


def collapse(out_shape, strides_list):
    """Merge adjacent dims that every operand walks contiguously and drop size-1 dims.
    Returns (shape, [strides per operand]) of the smallest equivalent rank."""
    dims = [d for d in range(len(out_shape)) if out_shape[d] != 1]
    shape = [out_shape[d] for d in dims]
    strides = [[s[d] for d in dims] for s in strides_list]
    k = len(shape) - 1
    while k > 0:
        if all(st[k - 1] == st[k] * shape[k] for st in strides):
            shape[k - 1] *= shape[k]
            for st in strides:
                st[k - 1] = st[k]
                del st[k]
            del shape[k]
        k -= 1
    return shape, strides


def plan_layout(in_shapes, out_shape):
    """(layouts, collapsed shape, strides of the 'b' inputs) for inputs of `in_shapes`."""
    out_shape = tuple(int(d) for d in out_shape)
    layouts = []
    strided = []
    for shape in in_shapes:
        shape = tuple(int(d) for d in shape)
        size = int(np.prod(shape)) if shape else 1
        if size == 1:
            layouts.append("s")
        elif (1,) * (len(out_shape) - len(shape)) + shape == out_shape or \
                (shape == out_shape):
            layouts.append("c")
        else:
            layouts.append("b")
            strided.append(broadcast_strides(shape, out_shape))
    if not strided:
        return layouts, [], []
    shape, strides = collapse(out_shape, strided)
    return layouts, shape, strides


def pack_shape(shape):
    buf = np.zeros(1 + MAX_DIMS, np.int64)
    buf[0] = len(shape)
    buf[1:1 + len(shape)] = shape
    return buf.tobytes()


def pack_strides(strides):
    buf = np.zeros(MAX_DIMS, np.int64)
    buf[:len(strides)] = strides
    return buf.tobytes()


def reference_offsets(n, shape, strides):
    """numpy model of the generated index math: the offset each strided input reads for every
    linear index 0..n-1 (used by tests to check layouts and collapsing without a device)."""
    i = np.arange(n, dtype=np.int64)
    off = np.zeros(n, np.int64)
    for d in range(len(shape) - 1, -1, -1):
        c = i % shape[d]
        i = i // shape[d]
        off += c * strides[d]
    return off
