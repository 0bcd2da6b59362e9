"""Arithmetic simplification: small declarative rewrite rules.

Each rule is a function of one op returning None when it does not apply, an existing Tensor that
computes the same values (consumers are rewired to it), or a `New(op_type, inputs, attrs)` op to
build in its place. The comment above each rule shows its algebra. Rules respect broadcasting and
dtypes: `x * ones` is `x` only when the ones cannot make the result bigger than `x` (and the result
has `x`'s dtype); rules never fire on ops with control inputs or outputs, so no ordering is lost.

The driver visits ops once in schedule order, so a rewrite's result is already simplified when its
consumers are visited (`--(--x)` collapses in one walk). `x * 2 -> x + x` is deliberately absent:
both are one numpy pass over the data, and measurement showed no gain.
"""

import numpy as np

from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import registry
from graphflow.optimizer_passes.rewrite import Editor, move_output, replace_uses
from graphflow.optimizer_passes.stats import PassStats, Timer

NAME = "arithmetic"


class New:
    """A replacement op to build: `New("LogSoftmax", [x], {"axis": -1})`."""

    __slots__ = ("op_type", "inputs", "attrs")

    def __init__(self, op_type, inputs, attrs=None):
        self.op_type = op_type
        self.inputs = list(inputs)
        self.attrs = dict(attrs or {})


class Zero:
    """An input of a `New` op: a scalar 0 of the replaced op's dtype, built as a Const."""


# ------------------------------------------------------------------------------ helpers
def const_value(t):
    """The numpy value of `t` when a Const produces it, else None."""
    return registry.constant_value_of(t)


def is_all(t, number):
    value = const_value(t)
    return value is not None and value.size > 0 and bool(np.all(value == number))


def broadcast_keeps(x, other):
    """True when broadcasting `x` against `other` can never change x's shape (or rank)."""
    xd, od = x.shape.dims, other.shape.dims
    if xd is None or od is None or len(od) > len(xd):
        return False
    for a, b in zip(xd[len(xd) - len(od):], od):
        if b == 1:
            continue
        if a is None or b is None or a != b:
            return False
    return True


def same_as(op, x):
    """`x` may stand for op's output: same dtype, and broadcasting with the other operand(s)
    leaves x's shape as it is."""
    out = op.outputs[0]
    if x.dtype != out.dtype:
        return False
    return all(broadcast_keeps(x, t) for t in op.inputs if t is not x)


def _neutral_operand(op, number, positions):
    """The operand at one of `positions` when the other operand is a constant equal to `number`."""
    a, b = op.inputs
    for pos in positions:
        x, c = (a, b) if pos == 0 else (b, a)
        if is_all(c, number) and same_as(op, x):
            return x
    return None


# ------------------------------------------------------------------------------ rules
# x * 1 -> x,  1 * x -> x
def mul_by_one(op):
    return _neutral_operand(op, 1, (0, 1))


# x + 0 -> x,  0 + x -> x   (exact except that -0.0 + 0.0 is +0.0: the sign of a zero may differ)
def add_zero(op):
    return _neutral_operand(op, 0, (0, 1))


# x - 0 -> x
def sub_zero(op):
    return _neutral_operand(op, 0, (0,))


# x / 1 -> x   (only where the quotient keeps x's dtype: integer division gives floats)
def div_by_one(op):
    return _neutral_operand(op, 1, (0,))


# x ** 1 -> x
def pow_one(op):
    return _neutral_operand(op, 1, (0,))


# -(-x) -> x
def double_negation(op):
    inner = op.inputs[0]
    if inner.op.type == op.type and not _fenced(inner.op):
        return inner.op.inputs[0]
    return None


# identity(x) -> x, stop_gradient(x) -> x (gradients are built already), and an unfed
# placeholder_with_default(x) -> x (fed tensors are Placeholders in a plan's graph)
def identity(op):
    x = op.inputs[0]
    out = op.outputs[0]
    if x.dtype == out.dtype and x.shape.is_compatible_with(out.shape):
        return x
    return None


# cast(x, dtype(x)) -> x
def cast_to_same(op):
    x = op.inputs[0]
    return x if x.dtype == op.outputs[0].dtype else None


# reshape(x, shape(x)) -> x   (static shapes, fully known and equal)
def reshape_to_same(op):
    x = op.inputs[0]
    out = op.outputs[0]
    if x.shape.is_fully_defined() and x.shape == out.shape:
        return x
    return None


# transpose(transpose(x, p), q) -> transpose(x, p o q), or x when p o q is the identity
def transpose_of_transpose(op):
    inner = op.inputs[0]
    if inner.op.type != op.type or _fenced(inner.op):
        return None
    p, q = _perm(inner.op), _perm(op)
    if p is None or q is None or len(p) != len(q):
        return None
    composed = [p[i] for i in q]
    x = inner.op.inputs[0]
    if composed == list(range(len(composed))):
        return x
    return New(op.type, [x], {"perm": composed})


# transpose(x, identity permutation) -> x
def transpose_identity(op):
    p = _perm(op)
    if p is not None and p == list(range(len(p))):
        return op.inputs[0]
    return None


def _perm(op):
    perm = op.attrs.get("perm")
    if perm is None:  # reverse the dimensions: needs a known rank
        rank = op.inputs[0].shape.ndims
        return None if rank is None else list(range(rank))[::-1]
    return list(perm)


# log(f(x)) -> g(x) for the f whose logarithm is an op of its own (same attrs)
_LOG_OF = {"Softmax": "LogSoftmax"}


# log(softmax(x)) -> log_softmax(x)   (one op, and finite where softmax underflows to 0)
def log_of_softmax(op):
    inner = op.inputs[0]
    log_type = _LOG_OF.get(inner.op.type)
    if log_type is None or _fenced(inner.op) or log_type not in registry.registered_types():
        return None
    return New(log_type, [inner.op.inputs[0]], dict(inner.op.attrs))


# ops whose output is all zeros of their input's shape and dtype
_ZEROS_OF_INPUT = {"ZerosLike": True}


def _zeros_like(t, other):
    """True when `t` is zeros_like(other): zeros of exactly other's shape and dtype."""
    return bool(_ZEROS_OF_INPUT.get(t.op.type)) and t.op.inputs[0] is other and not _fenced(t.op)


# where(c, a, zeros_like(a)) -> where(c, a, 0),  where(c, zeros_like(b), b) -> where(c, 0, b)
# (the result already has a's shape, so the scalar zero broadcasts to what the array held: the
# ReLU gradient then neither fills nor reads an array of zeros, and fusion folds the constant)
def select_zeros_like(op):
    c, a, b = op.inputs
    if _zeros_like(b, a):
        return New(op.type, [c, a, Zero])
    if _zeros_like(a, b):
        return New(op.type, [c, Zero, b])
    return None


RULES = {
    "Mul": (mul_by_one,),
    "Add": (add_zero,),
    "Sub": (sub_zero,),
    "RealDiv": (div_by_one,),
    "Pow": (pow_one,),
    "Neg": (double_negation,),
    "Identity": (identity,),
    "StopGradient": (identity,),
    "PlaceholderWithDefault": (identity,),
    "Cast": (cast_to_same,),
    "Reshape": (reshape_to_same,),
    "Transpose": (transpose_identity, transpose_of_transpose),
    "Log": (log_of_softmax,),
    "Select": (select_zeros_like,),
}


def _fenced(op):
    """Ops with control edges are left alone: removing them would drop an ordering."""
    return bool(op.control_inputs or op._control_outputs)


# ------------------------------------------------------------------------------ driver
def run(graph, preserve):
    stats = PassStats(NAME)
    with Timer(stats, graph):
        editor = Editor(graph, preserve)
        fired = {}
        for op in graph.get_operations():
            rules = RULES.get(op.type)
            if not rules or len(op.outputs) != 1 or _fenced(op):
                continue
            for rule in rules:
                result = rule(op)
                if result is None:
                    continue
                if _apply(editor, op, result, preserve):
                    fired[rule.__name__] = fired.get(rule.__name__, 0) + 1
                    break
        editor.commit()
        stats.rewrites = sum(fired.values())
        stats.details["rules"] = fired
    return stats


def _apply(editor, op, result, preserve):
    out = op.outputs[0]
    if isinstance(result, New):
        if any(t is Zero for t in result.inputs):
            zero = editor.add_op("Const", [], {"value": np.zeros((), out.dtype.as_numpy_dtype)},
                                 [(out.dtype, TensorShape([]))], anchor=op,
                                 name=f"{op.name}/zero", source=op.source, device=op.device)
            result.inputs = [zero.outputs[0] if t is Zero else t for t in result.inputs]
        op_def = registry.lookup(result.op_type)
        try:
            ((dtype, shape),) = op_def.infer(result.inputs, result.attrs)
        except (ValueError, TypeError):
            return False
        if dtype != out.dtype or not shape.is_compatible_with(out.shape):
            return False
        new = editor.add_op(result.op_type, result.inputs, result.attrs,
                            [(dtype, out.shape.merge_with(shape))], anchor=op, name=op.name,
                            source=op.source, device=op.device)
        move_output(out, new)
        return True
    if out in preserve:  # a fetched tensor keeps its producer; its readers can still move
        if not out._consumers:
            return False
    replace_uses(out, result)
    return True
