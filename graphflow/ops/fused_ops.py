"""Fused op records: the ops the fusion pass (`graphflow.optimizer_passes.fusion`) puts into a plan's
private graph in place of several user ops. Users never build them, but they are ordinary ops: one
`OpDef` each plus a kernel per device, and they have cases in the op harness.

- `FusedElementwise`: a group of elementwise ops evaluated as one op. Its `program` attr is a small
  JSON-able expression program; the exact format is specified in the fusion pass's docstring
  (`graphflow/optimizer_passes/fusion.py`), and `validate_program` below enforces it.
- `FusedMatMul`: `activation(matmul(a, b) + bias)` (TF's `_FusedMatMul` remapping).

Both carry their provenance in attrs: `members` (names of the ops they replaced, in schedule order),
`member_types` and `member_sources` ('file:line: code' of the user code that built each member).
"""

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops.math_ops import BINARY_OPS, UNARY_OPS, _matmul_infer
from graphflow.ops.registry import broadcast_static, define, make_tensor, no_gradient, same_dtype

PROGRAM_VERSION = 1

# Op types a FusedElementwise program may contain, besides the "Const" pseudo-instruction. Every one
# is an elementwise op of the graph with the same meaning and attrs; each device's fused kernel
# implements all of them (tests/op_cases/fused_cases.py checks the CPU kernel does).
ELEMENTWISE_INSTRUCTIONS = frozenset(UNARY_OPS) | frozenset(BINARY_OPS) | frozenset(
    ["AddN", "Select", "Cast", "ClipByValue"])

# Activations FusedMatMul can apply to its result ("" = none).
MATMUL_ACTIVATIONS = ("", "Relu", "Relu6", "Tanh", "Sigmoid", "Elu", "Selu", "Softplus", "LeakyRelu")


def validate_program(program, input_dtypes=None):
    """Check a FusedElementwise program's structure; returns the output's DType. Raises ValueError."""
    if not isinstance(program, dict):
        raise ValueError(f"program must be a dict, got {type(program).__name__}")
    if program.get("version") != PROGRAM_VERSION:
        raise ValueError(f"unsupported program version {program.get('version')!r}")
    inputs = program.get("inputs")
    instructions = program.get("instructions")
    if not isinstance(inputs, list) or not isinstance(instructions, list) or not instructions:
        raise ValueError("program needs an 'inputs' list and a non-empty 'instructions' list")
    value_dtypes = [dtypes.as_dtype(d) for d in inputs]
    if input_dtypes is not None:
        if len(input_dtypes) != len(inputs):
            raise ValueError(f"program expects {len(inputs)} inputs, got {len(input_dtypes)}")
        for i, (want, got) in enumerate(zip(value_dtypes, input_dtypes)):
            if want != got:
                raise TypeError(f"program input {i} must be {want.name}, got {got.name}")
    for j, ins in enumerate(instructions):
        if not (isinstance(ins, list) and len(ins) == 4):
            raise ValueError(f"instruction {j} must be [op_type, operands, attrs, dtype], got {ins!r}")
        op_type, operands, attrs, dtype = ins
        if op_type != "Const" and op_type not in ELEMENTWISE_INSTRUCTIONS:
            raise ValueError(f"instruction {j}: '{op_type}' is not a fusible elementwise op")
        if not isinstance(attrs, dict):
            raise ValueError(f"instruction {j}: attrs must be a dict")
        if op_type == "Const" and (operands or "value" not in attrs):
            raise ValueError(f"instruction {j}: Const takes no operands and needs a 'value' attr")
        here = len(inputs) + j
        for ref in operands:
            if not isinstance(ref, int) or not 0 <= ref < here:
                raise ValueError(f"instruction {j}: operand {ref!r} does not name an input or an "
                                 "earlier instruction")
        value_dtypes.append(dtypes.as_dtype(dtype))
    out = program.get("output")
    if not isinstance(out, int) or not len(inputs) <= out < len(value_dtypes):
        raise ValueError(f"program output {out!r} must name an instruction")
    return value_dtypes[out]


def _fused_elementwise_infer(inputs, attrs):
    out_dtype = validate_program(attrs["program"], [t.dtype for t in inputs])
    shape = TensorShape([])
    for t in inputs:
        shape = broadcast_static(shape, t.shape)
    return [(out_dtype, shape)]


def _fused_matmul_infer(inputs, attrs):
    a, b, bias = inputs
    same_dtype(inputs, "FusedMatMul operands")
    ((dt, shape),) = _matmul_infer([a, b], attrs)
    if broadcast_static(shape, bias.shape) != shape and shape.dims is not None:
        raise ValueError(f"bias of shape {bias.shape} would change the matmul result shape {shape}")
    if attrs.get("activation", "") not in MATMUL_ACTIVATIONS:
        raise ValueError(f"unsupported activation {attrs.get('activation')!r}; use one of "
                         f"{MATMUL_ACTIVATIONS}")
    return [(dt, shape)]


_PROVENANCE = " members:list(string) member_types:list(string) member_sources:list(string)"
define("FusedElementwise", _fused_elementwise_infer, elementwise=True,
       attrs="program:dict" + _PROVENANCE, inplace_any_input=True, fresh_output=True)
define("FusedMatMul", _fused_matmul_infer,
       attrs="transpose_a:bool transpose_b:bool activation:string activation_attrs:dict"
       + _PROVENANCE, fresh_output=True)
no_gradient("FusedElementwise", "FusedMatMul")  # built on plan copies, after gradients exist


def _provenance(members):
    members = list(members or [])
    return {"members": [m.name for m in members], "member_types": [m.type for m in members],
            "member_sources": [_where(m) for m in members]}


def _where(op):
    """'file:line: code' of a member (the code text travels in the attr, so an error about a fused
    op never has to open a file, whether the graph was built here or loaded)."""
    return "" if op.source is None else str(op.source)


def fused_elementwise(inputs, program, members=(), name=None):
    """A FusedElementwise op evaluating `program` over `inputs`; `members` are the replaced ops."""
    attrs = {"program": program, **_provenance(members)}
    return make_tensor("FusedElementwise", tuple(inputs), attrs, name=name or "FusedElementwise")


def fused_matmul(a, b, bias, activation="", transpose_a=False, transpose_b=False,
                 activation_attrs=None, members=(), name=None):
    """`activation(matmul(a, b) + bias)` as one op."""
    attrs = {"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b),
             "activation": activation, "activation_attrs": dict(activation_attrs or {}),
             **_provenance(members)}
    return make_tensor("FusedMatMul", (a, b, bias), attrs, name=name or "FusedMatMul")


# ---------------------------------------------------------------- what the fusion pass may absorb
def is_instruction(op):
    """`op` has a FusedElementwise instruction (its type is in ELEMENTWISE_INSTRUCTIONS)."""
    return op.type in ELEMENTWISE_INSTRUCTIONS


def is_matmul(op):
    """`op` is the product FusedMatMul computes (MatMul)."""
    return op.type == "MatMul"


def is_bias_add(op):
    """`op` adds a per-channel bias (BiasAdd; FusedMatMul takes it when channels are last)."""
    return op.type == "BiasAdd"


def is_add(op):
    """`op` is a plain two-input Add (FusedMatMul takes it when the bias does not grow the product)."""
    return op.type == "Add" and len(op.inputs) == 2


def is_matmul_activation(op):
    """`op` is an activation FusedMatMul applies after the bias (`MATMUL_ACTIVATIONS`)."""
    return bool(op.type) and op.type in MATMUL_ACTIVATIONS
