"""Build-time values of small integer tensors (shapes, begins, axes) for static shape inference.

Ops such as Reshape, Fill, Tile or StridedSlice take their shape-like arguments as tensors, so a
graph can compute them (`tf.reshape(x, [tf.shape(x)[0], -1])`). Shape inference still wants to know
as much as it can: `constant_value` gives the full value when it is known without running the graph,
`shape_vector` gives a partial one (a list with `None` for entries only known at run time).
Evaluation follows a bounded number of producer ops; anything else is "unknown", never a guess.
Which ops `constant_value` can evaluate, and how, is each op's own fact: the `static_value` rule
on its record, defined beside the op (Shape in `shape_ops.py`, integer arithmetic from the
elementwise table's `shape_arithmetic` rows).
"""

import numpy as np

from graphflow.framework.eager_tensor import VALUE_READS, EagerTensor
from graphflow.ops import registry

_MAX_DEPTH = 12


class StaticInputs:
    """What an op's `static_value` rule sees of its inputs: their own build-time values, looked
    up one level deeper (the walk is bounded by `_MAX_DEPTH`)."""

    __slots__ = ("op", "_depth")

    def __init__(self, op, depth):
        self.op = op
        self._depth = depth

    def value(self, index):
        """The build-time value of input `index`, else None."""
        return constant_value(self.op.inputs[index], self._depth + 1)

    def values(self):
        """Every input's build-time value, or None when one of them is unknown."""
        values = [constant_value(t, self._depth + 1) for t in self.op.inputs]
        return None if any(v is None for v in values) else values

    def vector(self, index):
        """Input `index` as a 1-D shape vector (`shape_vector`: None for unknown entries)."""
        return shape_vector(self.op.inputs[index], self._depth + 1)


def constant_value(tensor, _depth=0):
    """The numpy value of `tensor` if it is known at graph-build time, else None: the answer of
    its op's `static_value` rule (`registry.OpDef`), None for an op that has none."""
    if _depth > _MAX_DEPTH:
        return None
    if type(tensor) is EagerTensor:  # eager mode: the value is known
        VALUE_READS[0] += 1
        return tensor._value
    op = tensor.op
    op_def = registry.find(op.type)
    rule = op_def.static_value if op_def is not None else None
    return None if rule is None else rule(op, StaticInputs(op, _depth))


def output_dtype(op):
    """The numpy dtype of the op's (first) output, which a static value takes."""
    return op.outputs[0].dtype.as_numpy_dtype


def scalar_value(tensor, _depth=0):
    """An int for a scalar tensor known at build time (including `tf.shape(x)[i]` when dim i of x
    is static, and integer arithmetic on such values), else None."""
    value = constant_value(tensor, _depth)
    if value is not None:
        value = np.asarray(value)
        return int(value) if value.ndim == 0 else None
    return None


class SymbolicDim:
    """An entry of a shape vector known to equal dimension `index` of `tensor` (whose value is only
    known at run time): `tf.shape(x)[0]`. Lets reshape see that `[tf.shape(x)[0], -1]` keeps x's
    first dimension, so the -1 is static when x's other dimensions are."""

    __slots__ = ("tensor", "index")

    def __init__(self, tensor, index):
        self.tensor = tensor
        self.index = index

    def __repr__(self):
        return f"{self.tensor.name}.shape[{self.index}]"


# symbolic_shape follows this many producers (deeper graphs get the tensor's own dimensions)
_MAX_SHAPE_DEPTH = 200


def symbolic_shape(tensor):
    """tensor's run-time shape as a list of ints and `SymbolicDim`s, each dimension named by its
    source: an elementwise op's output has the broadcast of its inputs' shapes, a Fill's or
    random op's the shape vector it reads (`OpDef.shape_input`, e.g. `tf.shape(x)`), and any
    other unknown dimension is the tensor's own (`SymbolicDim(tensor, i)`). Two tensors whose
    lists are equal (`same_shape`) have equal shapes whenever the graph runs: e.g. dropout's
    `x / keep_prob * floor(keep_prob + random_uniform(tf.shape(x)))` and `x` with x of shape
    [None, 256]. None when the rank is unknown."""
    return _symbolic_shape(tensor, 0, {})


def same_shape(a, b):
    """Tensors `a` and `b` have equal shapes whenever the graph runs (`symbolic_shape`)."""
    sa, sb = symbolic_shape(a), symbolic_shape(b)
    return sa is not None and sb is not None and [_dim_key(d) for d in sa] == [
        _dim_key(d) for d in sb]


def _dim_key(d):
    return d if isinstance(d, int) else (id(d.tensor), d.index)


def _symbolic_shape(tensor, depth, memo):
    known = memo.get(tensor)
    if known is not None:
        return known
    dims = tensor.shape.dims
    if dims is None:
        return None
    own = [d if d is not None else SymbolicDim(tensor, i) for i, d in enumerate(dims)]
    derived = None
    if None in dims and depth < _MAX_SHAPE_DEPTH:
        op_def = registry.find(tensor.op.type)
        if op_def is not None and op_def.elementwise and len(tensor.op.outputs) == 1:
            derived = _broadcast([_symbolic_shape(t, depth + 1, memo) for t in tensor.op.inputs])
        elif op_def is not None and op_def.shape_input is not None:
            vector = shape_vector(tensor.op.inputs[op_def.shape_input], symbolic=True)
            derived = None if vector is None else [
                _source_dim(d, depth, memo) for d in vector]
    result = own
    if derived is not None and len(derived) == len(own):
        result = [o if isinstance(o, int) else (d if d is not None else o)
                  for o, d in zip(own, derived)]
        if any(isinstance(o, int) and d != o for o, d in zip(own, derived) if d is not None
               and isinstance(d, int)):
            result = own  # (contradicts the static shape: a run would fail; claim nothing)
    memo[tensor] = result
    return result


def _source_dim(d, depth, memo):
    """An entry of a symbolic shape vector named by its source (None when unknown)."""
    if isinstance(d, SymbolicDim):
        source = _symbolic_shape(d.tensor, depth + 1, memo)
        return None if source is None or d.index >= len(source) else source[d.index]
    return d


def _broadcast(shapes):
    """The broadcast of symbolic shapes, right-aligned; None entries where it is not known."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(rank):
        entries = [s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0]
        sizes = {d for d in entries if isinstance(d, int) and d != 1}
        names = {_dim_key(d): d for d in entries if not isinstance(d, int)}
        if len(sizes) == 1:
            out.append(sizes.pop())  # (a named dimension beside it is 1 or the same size)
        elif sizes:
            out.append(None)
        elif len(names) == 1:
            out.append(next(iter(names.values())))
        elif names:
            out.append(None)
        else:
            out.append(1)
    return out


def _symbolic_scalar(tensor, depth):
    """scalar_value, or the SymbolicDim a scalar `tf.shape(x)[i]` stands for, else None."""
    value = scalar_value(tensor, depth)
    if value is not None:
        return value
    op = tensor.op
    if op.type == "Identity":
        return _symbolic_scalar(op.inputs[0], depth + 1)
    if op.type == "StridedSlice" and op.attrs.get("shrink_axis_mask") == 1:
        spec = simple_slice_spec(op)
        vector = None if spec is None else shape_vector(op.inputs[0], depth + 1, symbolic=True)
        if vector is not None and -len(vector) <= spec[0] < len(vector):
            return vector[spec[0]]
    return None


def shape_vector(tensor, _depth=0, symbolic=False):
    """A 1-D int tensor's entries as a list (ints, `None` for entries unknown at build time), or
    None when even its length is unknown. Understands Const, Shape, Pack/stack, ConcatV2, 1-D
    slices of those and integer arithmetic. With `symbolic`, unknown entries that are dimensions
    of some tensor (`tf.shape(x)[0]`) are `SymbolicDim`s instead of None."""
    if _depth > _MAX_DEPTH:
        return None
    value = constant_value(tensor, _depth)
    if value is not None:
        value = np.asarray(value)
        return [int(v) for v in value.reshape(-1)] if value.ndim == 1 else None
    op = tensor.op
    kind = op.type
    if kind == "Shape":
        x = op.inputs[0]
        dims = x.shape.dims
        if dims is None:
            return None
        return [SymbolicDim(x, i) if d is None and symbolic else d for i, d in enumerate(dims)]
    if kind == "Identity":
        return shape_vector(op.inputs[0], _depth + 1, symbolic)
    if kind == "Pack" and op.attrs.get("axis") == 0:
        if all(t.shape.ndims == 0 for t in op.inputs):
            if symbolic:
                return [_symbolic_scalar(t, _depth + 1) for t in op.inputs]
            return [scalar_value(t, _depth + 1) for t in op.inputs]
    elif kind == "ConcatV2" and op.attrs.get("axis") in (0, -1):
        out = []
        for t in op.inputs:
            part = shape_vector(t, _depth + 1, symbolic)
            if part is None:
                return _unknown_entries(tensor)
            out.extend(part)
        return out
    elif kind == "StridedSlice" and op.attrs.get("shrink_axis_mask") == 0:
        vector = shape_vector(op.inputs[0], _depth + 1, symbolic)
        spec = simple_slice_spec(op)
        if vector is not None and spec is not None:
            return vector[slice(*spec)]
    return _unknown_entries(tensor)


def _unknown_entries(tensor):
    dims = tensor.shape.dims
    if dims is None or len(dims) != 1 or dims[0] is None:
        return None
    return [None] * dims[0]


def simple_slice_spec(op):
    """(begin, end, stride) of a 1-D StridedSlice with constant arguments and no ellipsis/new
    axis; begin/end are None where masked (so Python slicing gives numpy's answer)."""
    attrs = op.attrs
    if attrs.get("ellipsis_mask") or attrs.get("new_axis_mask"):
        return None
    values = [constant_value(t) for t in op.inputs[1:4]]
    if any(v is None or np.asarray(v).shape != (1,) for v in values):
        return None
    begin, end, stride = (int(np.asarray(v)[0]) for v in values)
    if attrs.get("shrink_axis_mask") == 1:
        return (begin, begin + 1 if begin != -1 else None, 1)
    begin = None if attrs.get("begin_mask", 0) & 1 else begin
    end = None if attrs.get("end_mask", 0) & 1 else end
    return (begin, end, stride)
