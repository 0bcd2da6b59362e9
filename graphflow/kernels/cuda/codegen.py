"""Code generator: an elementwise expression program -> one CUDA kernel source.

Programs arrive in two forms. The fusion pass's `FusedElementwise` ops carry the versioned format
documented in `graphflow/optimizer_passes/fusion.py` (numbered values, `[op, operands, attrs, dtype]`
instructions, "Const" scalars); `from_fusion_program` translates it into the generator's own form,
which single elementwise ops also use (one-node programs):

    {"inputs":  ["float32", "float32"],                 # dtype of each kernel input, in order
     "nodes":   [{"op": "Mul",  "args": ["i0", "i1"]},  # op type of graphflow's registry
                 {"op": "Tanh", "args": ["n0"]},        # "iK" = input K, "nK" = node K
                 {"op": "LeakyRelu", "args": ["n1"], "attrs": {"alpha": 0.1}},
                 {"op": "Add",  "args": ["n2", {"const": 1.0}]}],   # scalar literal of the dtype
     "outputs": ["n3"]}                                 # refs to write, one output array each

A node may give its result dtype as "dtype"; otherwise it is inferred (comparisons -> bool, Cast ->
attrs["DstT"], integer RealDiv -> float, else the dtype of its first argument). Inputs broadcast
against each other with numpy rules; every output has the broadcast shape.

One kernel is generated per (program, layout): each input is either contiguous with the output
("c": read at the linear index), a single element ("s": read once) or broadcast/strided ("b": offset
from the coordinates, computed once per element for all strided inputs). The rank of the (collapsed)
index space is a compile-time constant, and 32-bit index math is used when the size allows. The
kernel is a grid-stride loop; `generate` returns (source text, kernel name, parameter format).
"""

import hashlib
import json
import math

import numpy as np

from graphflow.kernels.cuda import CTYPES

MAX_DIMS = 8

# ---- op type -> C expression; {0}, {1}.. are argument variables, {T} the C type of argument 0,
#      {O} the C type of the result, attrs by name.
UNARY = {
    "Neg": "(-{0})", "Abs": "gf_abs({0})", "Sign": "gf_sign({0})", "Square": "({0} * {0})",
    "Exp": "gf_exp({0})", "Expm1": "gf_expm1({0})", "Log": "gf_log({0})", "Log1p": "gf_log1p({0})",
    "Sqrt": "gf_sqrt({0})", "Rsqrt": "gf_rsqrt({0})", "Reciprocal": "(({T})1 / {0})",
    "Sin": "gf_sin({0})", "Cos": "gf_cos({0})", "Tan": "gf_tan({0})", "Tanh": "gf_tanh({0})",
    "Sigmoid": "gf_sigmoid({0})", "Erf": "gf_erf({0})", "Floor": "gf_floor({0})",
    "Ceil": "gf_ceil({0})", "Round": "gf_round({0})", "Relu": "gf_relu({0})",
    "Relu6": "gf_relu6({0})", "Elu": "gf_elu({0})", "Selu": "gf_selu({0})",
    "Softplus": "gf_softplus({0})", "Softsign": "gf_softsign({0})",
    "LeakyRelu": "gf_leaky_relu({0}, ({T}){alpha})", "LogicalNot": "(!{0})",
    "IsNan": "gf_isnan_({0})", "IsFinite": "gf_isfinite({0})", "Identity": "{0}",
    "StopGradient": "{0}", "ZerosLike": "((void){0}, ({T})0)",
    "OnesLike": "((void){0}, ({T})1)",
    "Cast": None,  # handled by _cast
}
BINARY = {
    "Add": "({0} + {1})", "Sub": "({0} - {1})", "Mul": "({0} * {1})", "RealDiv": None,
    "FloorDiv": "gf_floordiv({0}, {1})", "FloorMod": "gf_floormod({0}, {1})",
    "Pow": "gf_pow({0}, {1})", "Maximum": "gf_maximum({0}, {1})",
    "Minimum": "gf_minimum({0}, {1})", "SquaredDifference": "(({0} - {1}) * ({0} - {1}))",
    "Equal": "({0} == {1})", "NotEqual": "({0} != {1})", "Less": "({0} < {1})",
    "LessEqual": "({0} <= {1})", "Greater": "({0} > {1})", "GreaterEqual": "({0} >= {1})",
    "LogicalAnd": "({0} && {1})", "LogicalOr": "({0} || {1})", "LogicalXor": "({0} != {1})",
    "BiasAdd": "({0} + {1})",
    "SigmoidCrossEntropyWithLogits": "(gf_maximum({0}, ({T})0) - {0} * {1} + gf_log1p(gf_exp(-gf_abs({0}))))",
}
TERNARY = {
    "Select": "({0} ? {1} : {2})",
    "ClipByValue": "gf_minimum(gf_maximum({0}, {1}), {2})",
}
NARY = {"AddN"}
CONST = "Const"  # a scalar literal node: attrs {"value": number}, no arguments
BOOL_RESULT = {"IsNan", "IsFinite", "Equal", "NotEqual", "Less", "LessEqual", "Greater",
               "GreaterEqual", "LogicalAnd", "LogicalOr", "LogicalXor", "LogicalNot"}
FLOAT_ONLY = {"Exp", "Expm1", "Log", "Log1p", "Sqrt", "Rsqrt", "Reciprocal", "Sin", "Cos", "Tan",
              "Tanh", "Sigmoid", "Erf", "Floor", "Ceil", "Round", "Elu", "Selu", "Softplus",
              "Softsign", "LeakyRelu", "IsNan", "IsFinite", "SigmoidCrossEntropyWithLogits"}
_TRUEDIV = {"int8": "float32", "uint8": "float32", "int16": "float32", "int32": "float64",
            "int64": "float64"}

SUPPORTED_OPS = frozenset(UNARY) | frozenset(BINARY) | frozenset(TERNARY) | NARY
FUSION_PROGRAM_VERSION = 1


class ProgramError(ValueError):
    """A program the generator cannot turn into a kernel (unknown op, bad reference, dtype)."""


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
    """Validate a program and fill in every node's dtype; returns a canonical copy."""
    if isinstance(program, str):
        program = json.loads(program)
    inputs = [_dtype(d).name for d in program["inputs"]]
    types = {f"i{k}": d for k, d in enumerate(inputs)}
    nodes = []
    for j, node in enumerate(program["nodes"]):
        op = node["op"]
        if op == CONST:
            dtype = _dtype(node["dtype"]).name
            entry = {"op": op, "args": [], "dtype": dtype,
                     "attrs": {"value": _scalar(node["attrs"]["value"])}}
            types[f"n{j}"] = dtype
            nodes.append(entry)
            continue
        if op not in SUPPORTED_OPS:
            raise ProgramError(f"op type '{op}' has no elementwise CUDA expression")
        args = []
        for a in node["args"]:
            if isinstance(a, dict):
                args.append({"const": a["const"]})
            elif a in types:
                args.append(a)
            else:
                raise ProgramError(f"node {j} ({op}) refers to unknown value '{a}'")
        arg_types = [types[a] if not isinstance(a, dict) else None for a in args]
        known = [t for t in arg_types if t is not None]
        if not known:
            raise ProgramError(f"node {j} ({op}) has only constant arguments")
        first = known[0] if op != "Select" else (arg_types[1] or arg_types[2])
        dtype = node.get("dtype")
        if dtype is None:
            if op in BOOL_RESULT:
                dtype = "bool"
            elif op == "Cast":
                dtype = np.dtype(node["attrs"]["DstT"]).name
            elif op == "RealDiv":
                dtype = _TRUEDIV.get(first, first)
            else:
                dtype = first
        dtype = _dtype(dtype).name
        if op in FLOAT_ONLY and np.dtype(first).kind != "f":
            raise ProgramError(f"op type '{op}' needs a float argument, got {first}")
        if op in NARY and len(args) < 1 or op in UNARY and len(args) != 1 or \
                op in BINARY and len(args) != 2 or op in TERNARY and len(args) != 3:
            raise ProgramError(f"node {j} ({op}) has {len(args)} arguments")
        entry = {"op": op, "args": args, "dtype": dtype}
        if node.get("attrs"):
            entry["attrs"] = {k: node["attrs"][k] for k in sorted(node["attrs"])}
        types[f"n{j}"] = dtype
        nodes.append(entry)
    outputs = list(program["outputs"])
    for ref in outputs:
        if ref not in types:
            raise ProgramError(f"output refers to unknown value '{ref}'")
    return {"inputs": inputs, "nodes": nodes, "outputs": outputs}


def _scalar(value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    return float(value)


def from_fusion_program(program):
    """The generator's form of a FusedElementwise `program` attr (fusion pass format, version 1)."""
    if isinstance(program, str):
        program = json.loads(program)
    if program.get("version") != FUSION_PROGRAM_VERSION:
        raise ProgramError(f"unsupported fused program version {program.get('version')!r}")
    n = len(program["inputs"])

    def ref(k):
        if not isinstance(k, int) or k < 0:
            raise ProgramError(f"bad operand {k!r}")
        return f"i{k}" if k < n else f"n{k - n}"
    nodes = []
    for op_type, operands, attrs, dtype in program["instructions"]:
        node = {"op": op_type, "args": [ref(k) for k in operands], "dtype": dtype}
        if attrs:
            node["attrs"] = dict(attrs)
        nodes.append(node)
    if program["output"] < n:
        raise ProgramError("the program output must name an instruction")
    return {"inputs": list(program["inputs"]), "nodes": nodes, "outputs": [ref(program["output"])]}


def program_key(program):
    return json.dumps(program, sort_keys=True, separators=(",", ":"))


def output_dtypes(program):
    types = {f"i{k}": d for k, d in enumerate(program["inputs"])}
    for j, node in enumerate(program["nodes"]):
        types[f"n{j}"] = node["dtype"]
    return [np.dtype(types[r]) for r in program["outputs"]]


def _cast(value, src, dst):
    if dst == "bool":
        return f"({value} != ({_ctype(src)})0)"
    return f"(({_ctype(dst)}){value})"


def _expression(node, arg_vars, arg_dtypes):
    op = node["op"]
    dtype = node["dtype"]
    if op == CONST:
        return literal(node["attrs"]["value"], dtype)
    if op == "Cast":
        return _cast(arg_vars[0], arg_dtypes[0], dtype)
    if op == "RealDiv":
        if np.dtype(arg_dtypes[0]).kind == "f":
            return f"({arg_vars[0]} / {arg_vars[1]})"
        o = _ctype(dtype)
        return f"(({o}){arg_vars[0]} / ({o}){arg_vars[1]})"
    if op in NARY:
        return "(" + " + ".join(arg_vars) + ")"
    template = UNARY.get(op) or BINARY.get(op) or TERNARY.get(op)
    attrs = dict(node.get("attrs", {}))
    if op == "LeakyRelu":
        attrs["alpha"] = literal(attrs.get("alpha", 0.2), arg_dtypes[0])
    t_index = 1 if op == "Select" else 0
    return template.format(*arg_vars, T=_ctype(arg_dtypes[t_index]), O=_ctype(dtype), **attrs)


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
    (followed by its gf_strides when its layout is 'b'), then one pointer per output."""
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
    out_types = [str(d) for d in output_dtypes(program)]
    for k, dt in enumerate(out_types):
        params.append(f"{_ctype(dt)} *__restrict__ out{k}")
        fmt.append("P")
    body = []
    pre = []
    strided = [k for k, lay in enumerate(layouts) if lay == "b"]
    used = {a for node in program["nodes"] for a in node["args"] if isinstance(a, str)}
    used |= set(program["outputs"])
    for k, (dt, layout) in enumerate(zip(in_types, layouts)):
        if layout == "s" and f"i{k}" in used:
            pre.append(f"    const {_ctype(dt)} i{k} = in{k}[0];")
    strided = [k for k in strided if f"i{k}" in used]
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
        if f"i{k}" not in used:
            continue
        if layout == "c":
            body.append(f"        const {_ctype(dt)} i{k} = in{k}[i];")
        elif layout == "b":
            body.append(f"        const {_ctype(dt)} i{k} = in{k}[o{k}];")
    types = {f"i{k}": d for k, d in enumerate(in_types)}
    for j, node in enumerate(program["nodes"]):
        if node["op"] == CONST:
            body.append(f"        const {_ctype(node['dtype'])} n{j} = "
                        f"{literal(node['attrs']['value'], node['dtype'])};")
            types[f"n{j}"] = node["dtype"]
            continue
        arg_vars, arg_dtypes = [], []
        for a in node["args"]:
            if isinstance(a, dict):
                arg_vars.append(None)
                arg_dtypes.append(None)
            else:
                arg_vars.append(a)
                arg_dtypes.append(types[a])
        ref_dt = next(d for d in arg_dtypes if d is not None)
        if node["op"] == "Select":
            ref_dt = arg_dtypes[1] or arg_dtypes[2]
        for pos, a in enumerate(node["args"]):
            if isinstance(a, dict):
                lit_dt = "bool" if (node["op"] == "Select" and pos == 0) else ref_dt
                arg_vars[pos] = literal(a["const"], lit_dt)
                arg_dtypes[pos] = lit_dt
        expr = _expression(node, arg_vars, arg_dtypes)
        body.append(f"        const {_ctype(node['dtype'])} n{j} = {expr};")
        types[f"n{j}"] = node["dtype"]
    for k, ref in enumerate(program["outputs"]):
        body.append(f"        out{k}[i] = {ref};")
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
