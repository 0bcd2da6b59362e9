"""Elementwise expression programs: the one format and its one validator.

A `FusedElementwise` op carries such a program (attr `program`), the CPU fused kernel evaluates it,
and the CUDA code generator turns it into one kernel; a single elementwise op on the GPU is a
one-instruction program. The format (plain JSON):

    {
      "version": 1,
      "inputs": ["float32", "float32"],            # dtype of each input, in input order
      "instructions": [                            # evaluated in order, each defines one value
        [op_type, [operand, ...], attrs, dtype],
        ...
      ],
      "output": 7                                  # the value the program returns
    }

Values are numbered in one sequence: values 0 .. n-1 are the n inputs, value n + j is the result of
instruction j. An operand is such a number and always names an input or an *earlier* instruction;
`output` names an instruction.

An instruction is a 4-element list:
  - op_type: "Const" or an op type of the elementwise table (`ops/elementwise_spec.py`). It means
    exactly what that op means in the graph, with the same operand order: "Sub" [a, b] is a - b;
    "Select" [cond, x, y]; "AddN" takes one or more operands; "Cast" converts to `dtype`.
  - operands: list of value numbers; "Const" has none.
  - attrs: that op type's attrs (e.g. {"alpha": 0.2} for "LeakyRelu", {"DstT": "int32"} for
    "Cast"); for "Const", {"value": number} is a scalar (Python int/float/bool) of type `dtype`.
  - dtype: the result's dtype name ("float32", "int32", "bool", ...). `None` lets `check` fill in
    the op's result dtype; a dtype that contradicts the op's dtype rule is an error.

Shapes follow numpy broadcasting, instruction by instruction; the output shape is the broadcast of
all input shapes, and constants are scalars. Because elementwise ops commute with broadcasting, a
backend may evaluate the whole program once per output element, reading input k at that element's
broadcast index.
"""

import json

import numpy as np

from graphflow.ops.elementwise_spec import FUSIBLE, ROW

VERSION = 1
CONST = "Const"


class ProgramError(ValueError):
    """A malformed program, or one whose dtypes break an op's dtype rule."""


def _dtype_name(d, what):
    try:
        return np.dtype(getattr(d, "as_numpy_dtype", d)).name
    except TypeError:
        raise ProgramError(f"{what}: {d!r} is not a dtype") from None


def _scalar(value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    return float(value)


def check(program, input_dtypes=None, ops=FUSIBLE):
    """Validate `program` (a dict, or its JSON text) and return its canonical copy: every dtype a
    name, every instruction's dtype filled in and checked against its op's dtype rule, declared
    attrs with their defaults, Const values as Python scalars. `input_dtypes` (when given) must be
    the inputs' dtypes; `ops` are the op types allowed besides "Const". Raises ProgramError (a
    ValueError), or TypeError when an input has the wrong dtype."""
    if isinstance(program, str):
        program = json.loads(program)
    if not isinstance(program, dict):
        raise ProgramError(f"program must be a dict, got {type(program).__name__}")
    if program.get("version") != VERSION:
        raise ProgramError(f"unsupported program version {program.get('version')!r}")
    inputs = program.get("inputs")
    instructions = program.get("instructions")
    if not isinstance(inputs, list) or not isinstance(instructions, list) or not instructions:
        raise ProgramError("program needs an 'inputs' list and a non-empty 'instructions' list")
    types = [_dtype_name(d, f"input {k}") for k, d in enumerate(inputs)]
    if input_dtypes is not None:
        if len(input_dtypes) != len(inputs):
            raise ProgramError(f"program expects {len(inputs)} inputs, got {len(input_dtypes)}")
        for k, (want, got) in enumerate(zip(types, input_dtypes)):
            if want != _dtype_name(got, f"input {k}"):
                raise TypeError(f"program input {k} must be {want}, got {_dtype_name(got, '')}")
    out = []
    for j, ins in enumerate(instructions):
        if not (isinstance(ins, (list, tuple)) and len(ins) == 4):
            raise ProgramError(f"instruction {j} must be [op_type, operands, attrs, dtype], got {ins!r}")
        op_type, operands, attrs, dtype = ins
        attrs = {} if attrs is None else attrs
        if not isinstance(attrs, dict):
            raise ProgramError(f"instruction {j}: attrs must be a dict")
        if not isinstance(operands, (list, tuple)):
            raise ProgramError(f"instruction {j}: operands must be a list")
        if op_type == CONST:
            if operands or "value" not in attrs or dtype is None:
                raise ProgramError(f"instruction {j}: Const takes no operands and needs a 'value' "
                                   "attr and a dtype")
            dtype = _dtype_name(dtype, f"instruction {j}")
            out.append([CONST, [], {"value": _scalar(attrs["value"])}, dtype])
            types.append(dtype)
            continue
        if op_type not in ops:
            raise ProgramError(f"instruction {j}: '{op_type}' is not a fusible elementwise op")
        here = len(types)
        for r in operands:
            if not isinstance(r, int) or isinstance(r, bool) or not 0 <= r < here:
                raise ProgramError(f"instruction {j}: operand {r!r} does not name an input or an "
                                   "earlier instruction")
        out.append(_instruction(j, ROW[op_type], list(operands), attrs, dtype, types))
        types.append(out[-1][3])
    output = program.get("output")
    n = len(inputs)
    if not isinstance(output, int) or isinstance(output, bool) or not n <= output < len(types):
        raise ProgramError(f"program output {output!r} must name an instruction")
    return {"version": VERSION, "inputs": types[:n], "instructions": out, "output": output}


def _instruction(j, row, operands, attrs, dtype, types):
    op_type = row.op
    arity = len(operands)
    if (arity < 1) if row.arity == 0 else (arity != row.arity):
        raise ProgramError(f"instruction {j} ({op_type}) has {arity} operands")
    arg_types = [types[r] for r in operands]
    if row.result == "select":
        if arg_types[0] != "bool":
            raise ProgramError(f"instruction {j} (Select): the condition must be bool, got "
                               f"{arg_types[0]}")
        first = arg_types[1]
    else:
        first = arg_types[0]
    allowed = row.allowed
    if allowed is not None and first not in allowed:
        raise ProgramError(f"op type '{op_type}' does not take {first} operands (it takes "
                           f"{', '.join(allowed)})")
    attrs = dict(attrs)
    if row.result == "cast":
        if "DstT" not in attrs:
            if dtype is None:
                raise ProgramError(f"instruction {j} (Cast) needs a 'DstT' attr or a dtype")
            attrs["DstT"] = dtype
        attrs["DstT"] = _dtype_name(attrs["DstT"], f"instruction {j} (Cast)")
    attrs.update(row.attr_values(attrs))
    rule = row.result_dtype(arg_types, attrs)
    if dtype is not None and _dtype_name(dtype, f"instruction {j}") != rule:
        raise ProgramError(f"instruction {j} ({op_type}) of {', '.join(arg_types)} gives {rule}, "
                           f"not {dtype}")
    return [op_type, operands, {k: attrs[k] for k in sorted(attrs)}, rule]


def single_op(op_type, in_dtypes, attrs=None):
    """The one-instruction program of an elementwise op (op type, operand dtypes, attrs)."""
    n = len(in_dtypes)
    ins = [op_type, list(range(n)), dict(attrs or {}), None]
    return {"version": VERSION, "inputs": [_dtype_name(d, "input") for d in in_dtypes],
            "instructions": [ins], "output": n}


def key(program):
    """A canonical text of a (checked) program: equal programs, equal keys."""
    return json.dumps(program, sort_keys=True, separators=(",", ":"))
