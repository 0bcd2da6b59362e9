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
from graphflow.ops import registry, static_value
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


# NHWC <-> NCHW axis orders: transpose(x, TO_NCHW) of an NHWC x is its NCHW form
TO_NCHW = [0, 3, 1, 2]
TO_NHWC = [0, 2, 3, 1]


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


# op_nchw(transpose(x, TO_NCHW)) -> transpose(op_nhwc(x), TO_NCHW)   (ops with `layout_attrs`)
# The NCHW kernel is exactly this (transpose in, NHWC kernel, transpose out), so the values are
# the same bit for bit; the transposes now meet their inverses (an imported ONNX model's
# NHWC -> NCHW -> NHWC round trips around each convolution and pool) and cancel by the rule above.
def nchw_of_transpose(op):
    attrs = op.attrs
    layout = registry.lookup(op.type).layout_attrs
    if layout is None or attrs.get("data_format") != "NCHW":
        return None
    inner = op.inputs[0]
    if not _is_transpose(inner.op, TO_NCHW):
        return None
    nhwc = dict(attrs, data_format="NHWC")
    for name in layout:
        if attrs.get(name) is not None:
            nhwc[name] = [attrs[name][i] for i in TO_NHWC]
    inner_new = New(op.type, [inner.op.inputs[0], *op.inputs[1:]], nhwc)
    return New(inner.op.type, [inner_new], {"perm": TO_NCHW})


# ops that permute their input's axes by their `perm` attr
_TRANSPOSES = {"Transpose": True}


def _is_transpose(op, perm):
    """`op` is an unfenced transpose by `perm`."""
    return (bool(_TRANSPOSES.get(op.type)) and not _fenced(op)
            and op.attrs.get("perm") is not None and list(op.attrs["perm"]) == perm)


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


# sum_to_shape(g, shape) with g's shape and `shape` known when the plan is built
#   -> g                                              (same shape)
#   -> sum(sum(g, leading axes), stretched axes, keepdims)   (what the gradient builds when the
#                                                     shapes are static: a plan made for a fed
#                                                     [None, ...] placeholder's shape has them)
def static_sum_to_shape(op):
    g = op.inputs[0]
    target = const_value(op.inputs[1])
    if target is None or not g.shape.is_fully_defined() or target.ndim != 1:
        return None
    gd, ld = g.shape.as_list(), [int(d) for d in target]
    if gd == ld:
        return g if g.dtype == op.outputs[0].dtype else None
    lead = len(gd) - len(ld)
    if lead < 0 or any(d not in (1, e) for d, e in zip(ld, gd[lead:])):
        return None  # not a broadcast of `shape`: the kernel reports it
    stretched = [i for i, (d, e) in enumerate(zip(ld, gd[lead:])) if d == 1 and e != 1]
    out = g
    if lead:
        out = New("Sum", [out], {"axis": list(range(lead)), "keepdims": False})
    if stretched:
        out = New("Sum", [out], {"axis": stretched, "keepdims": True})
    return out


# ops whose output is all ones of their input's shape and dtype
_ONES_OF_INPUT = {"OnesLike": True}


# add_n(a, zeros_like(b), c) -> add_n(a, c),  add_n(a, zeros_like(b)) -> a   (AddN's operands all
# have the result's shape; exact except that -0.0 + 0.0 is +0.0, as in x + 0 -> x). A cond's
# gradient gives its untaken branch's inputs zeros_like gradients, summed with the taken one's.
def add_n_of_zeros(op):
    kept = [t for t in op.inputs if not (_ZEROS_OF_INPUT.get(t.op.type) and not _fenced(t.op))]
    if len(kept) == len(op.inputs) or not kept:
        return None
    if len(kept) == 1:
        return kept[0] if same_as(op, kept[0]) else None
    return New(op.type, kept)


# ones_like(x) * y -> broadcast_to(y, shape(x)),  y * ones_like(x) -> the same   (1 * y is y bit
# for bit; only where the product has x's shape: fusion then reads y unbroadcast, and no array of
# ones is made)
def mul_by_ones_like(op):
    a, b = op.inputs
    for ones, y in ((a, b), (b, a)):
        if (_ONES_OF_INPUT.get(ones.op.type) and not _fenced(ones.op) and same_as(op, ones)
                and y.dtype == op.outputs[0].dtype):
            shape = New("Shape", [ones.op.inputs[0]], {"out_type": "int32"})
            return New("BroadcastTo", [y, shape])
    return None


# where(True, a, b) -> a,  where(False, a, b) -> b   (a condition known when the plan is built: a
# constant, or an unfed placeholder_with_default's default, e.g. tf.layers' `training` flag; only
# when the picked operand already has the result's shape and dtype, statically or because its
# unknown dims are provably the result's: `static_value.same_shape`, e.g. dropout's operands)
def select_constant_condition(op):
    c, a, b = op.inputs
    value = const_value(c)
    if value is None or value.size == 0:
        return None
    if value.all():
        picked = a
    elif not value.any():
        picked = b
    else:
        return None
    if same_as(op, picked):
        return picked
    out = op.outputs[0]  # unknown dims: the same when they provably come from the same source
    return picked if picked.dtype == out.dtype and static_value.same_shape(out, picked) else None


# unary ops f with sum(f(x)) == f(sum(x)) exactly: negation (it commutes with rounding)
_COMMUTES_WITH_SUM = {"Neg": True}


# sum(-x, axes) -> -sum(x, axes)   (bit for bit; only when the Sum is the negation's one reader).
# The gradient of y in x - y (or squared_difference(x, y)) with y broadcast is -g summed over the
# broadcast axes: the negation then runs on the reduced tensor, not on every element of g.
def sum_of_negation(op):
    inner = op.inputs[0]
    if (not _COMMUTES_WITH_SUM.get(inner.op.type) or _fenced(inner.op)
            or inner._consumers != [op]):
        return None
    return New(inner.op.type, [New(op.type, [inner.op.inputs[0], *op.inputs[1:]], dict(op.attrs))],
               dict(inner.op.attrs))


RULES = {
    "Mul": (mul_by_one, mul_by_ones_like),
    "AddN": (add_n_of_zeros,),
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
    "Select": (select_constant_condition, select_zeros_like),
    "Sum": (sum_of_negation,),
    "SumToShape": (static_sum_to_shape,),
}


_RULES_OF = {}


def rules_for(op_type):
    """The rules of `op_type`: its RULES entry, and `nchw_of_transpose` when its OpDef declares
    `layout_attrs`."""
    rules = _RULES_OF.get(op_type)
    if rules is None:
        op_def = registry.find(op_type)
        rules = RULES.get(op_type, ())
        if op_def is not None and op_def.layout_attrs is not None:
            rules += (nchw_of_transpose,)
        if op_def is not None:
            _RULES_OF[op_type] = rules
    return rules


def _fenced(op):
    """Ops with control edges are left alone: removing them would drop an ordering."""
    return bool(op.control_inputs or op._control_outputs)


# ------------------------------------------------------------------------------ driver
def run(graph, preserve):
    stats = PassStats(NAME)
    with Timer(stats, graph):
        fired = _rewrite(graph, preserve, rules_for)
        stats.rewrites = sum(fired.values())
        stats.details["rules"] = fired
    return stats


def pick_selects(graph, preserve, conditions):
    """Apply `select_constant_condition` alone, to the Selects whose condition is one of the
    constant tensors `conditions` (a graph input fixed to its value, e.g. a `training` flag):
    each is replaced by the operand it picks. Returns the number replaced."""
    def rules_of(op_type):
        return tuple(r for r in RULES.get(op_type, ()) if r is select_constant_condition)
    fired = _rewrite(graph, preserve, rules_of, lambda op: op.inputs[0] in conditions)
    return sum(fired.values())


def _rewrite(graph, preserve, rules_of, applies=None):
    """Visit the ops once in schedule order, applying the first rule that fires to each
    (`applies(op)`: only to the ops it accepts); returns {rule name: times fired}."""
    editor = Editor(graph, preserve)
    fired = {}
    for op in graph.get_operations():
        rules = rules_of(op.type)
        if not rules or len(op.outputs) != 1 or _fenced(op):
            continue
        if applies is not None and not applies(op):
            continue
        for rule in rules:
            result = rule(op)
            if result is None:
                continue
            if _apply(editor, op, result, preserve):
                fired[rule.__name__] = fired.get(rule.__name__, 0) + 1
                break
    editor.commit()
    return fired


def _apply(editor, op, result, preserve):
    out = op.outputs[0]
    if isinstance(result, New):
        built = _build(editor, op, result, _named(result, op.type), out)
        if built is None:
            return False
        move_output(out, built)
        return True
    if out in preserve:  # a fetched tensor keeps its producer; its readers can still move
        if not out._consumers:
            return False
    replace_uses(out, result)
    return True


def _named(new, op_type):
    """The New that takes the replaced op's name: the first (depth first) of the replaced op's
    type, so that a profile still shows `Conv2D_1` as the convolution; else the outermost."""
    stack = [new]
    while stack:
        n = stack.pop()
        if n.op_type == op_type:
            return n
        stack.extend(t for t in reversed(n.inputs) if isinstance(t, New))
    return new


def _build(editor, op, new, named, out=None):
    """The op for `new` in op's place, its New inputs built first: None when shape inference
    rejects one, or when the outermost's output (`out` given) would not match `out`. An op built
    before a rejection has no reader and is swept at commit."""
    inputs = []
    for t in new.inputs:
        if t is Zero:
            dtype = op.outputs[0].dtype
            t = editor.add_op("Const", [], {"value": np.zeros((), dtype.as_numpy_dtype)},
                              [(dtype, TensorShape([]))], anchor=op, name=f"{op.name}/zero",
                              source=op.source, device=op.device).outputs[0]
        elif isinstance(t, New):
            inner = _build(editor, op, t, named)
            if inner is None:
                return None
            t = inner.outputs[0]
        inputs.append(t)
    op_def = registry.lookup(new.op_type)
    try:
        ((dtype, shape),) = op_def.infer(inputs, new.attrs)
    except (ValueError, TypeError):
        return None
    if out is not None:
        if dtype != out.dtype or not shape.is_compatible_with(out.shape):
            return None
        shape = out.shape.merge_with(shape)
    name = op.name if new is named else f"{op.name}/{new.op_type}"
    return editor.add_op(new.op_type, inputs, new.attrs, [(dtype, shape)], anchor=op, name=name,
                         source=op.source, device=op.device)
