"""Math ops: elementwise unary/binary (numpy broadcasting), comparisons, logic, where, cast, clip,
matmul (batched, transposes) and reductions. Each op type is one table row / one `define` call."""

from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops.core_ops import consumer_scope, convert_pair, convert_to_tensor
from graphflow.ops.registry import (
    FLOATS,
    NUMERIC,
    SIGNED,
    broadcast_static,
    define,
    make_tensor,
    require_dtype,
    same_dtype,
)

BOOL = (dtypes.bool_,)

# ---------------------------------------------------------------- elementwise unary
# op type -> (public function name, allowed input dtypes)
UNARY_OPS = {
    "Neg": ("negative", SIGNED),
    "Abs": ("abs", SIGNED),
    "Sign": ("sign", SIGNED),
    "Square": ("square", NUMERIC),
    "Exp": ("exp", FLOATS),
    "Expm1": ("expm1", FLOATS),
    "Log": ("log", FLOATS),
    "Log1p": ("log1p", FLOATS),
    "Sqrt": ("sqrt", FLOATS),
    "Rsqrt": ("rsqrt", FLOATS),
    "Reciprocal": ("reciprocal", FLOATS),
    "Sin": ("sin", FLOATS),
    "Cos": ("cos", FLOATS),
    "Tan": ("tan", FLOATS),
    "Tanh": ("tanh", FLOATS),
    "Sigmoid": ("sigmoid", FLOATS),
    "Erf": ("erf", FLOATS),
    "Floor": ("floor", FLOATS),
    "Ceil": ("ceil", FLOATS),
    "Round": ("round", FLOATS),
    "Relu": ("relu", NUMERIC),
    "Relu6": ("relu6", NUMERIC),
    "Elu": ("elu", FLOATS),
    "Selu": ("selu", FLOATS),
    "Softplus": ("softplus", FLOATS),
    "Softsign": ("softsign", FLOATS),
    "LeakyRelu": ("leaky_relu", FLOATS),
    "LogicalNot": ("logical_not", BOOL),
    "IsNan": ("is_nan", FLOATS),
    "IsFinite": ("is_finite", FLOATS),
}
_BOOL_RESULT = {"IsNan", "IsFinite"}


def _unary_infer(op_type, allowed):
    def infer(inputs, attrs):
        (x,) = inputs
        require_dtype(x, allowed, "input")
        return [(dtypes.bool_ if op_type in _BOOL_RESULT else x.dtype, x.shape)]
    return infer


for _type, (_fn, _allowed) in UNARY_OPS.items():
    define(_type, _unary_infer(_type, _allowed), elementwise=True, inplace_inputs=(0,),
           attrs="alpha:float" if _type == "LeakyRelu" else "")


def _unary(op_type, default_name):
    def op(x, name=None):
        return make_tensor(op_type, (convert_to_tensor(x),), name=name or op_type)
    op.__name__ = op.__qualname__ = default_name
    op.__doc__ = f"Elementwise `{default_name}` (op type '{op_type}')."
    return op


negative = _unary("Neg", "negative")
abs = _unary("Abs", "abs")  # noqa: A001 - TF1 name
sign = _unary("Sign", "sign")
square = _unary("Square", "square")
exp = _unary("Exp", "exp")
expm1 = _unary("Expm1", "expm1")
log = _unary("Log", "log")
log1p = _unary("Log1p", "log1p")
sqrt = _unary("Sqrt", "sqrt")
rsqrt = _unary("Rsqrt", "rsqrt")
reciprocal = _unary("Reciprocal", "reciprocal")
sin = _unary("Sin", "sin")
cos = _unary("Cos", "cos")
tan = _unary("Tan", "tan")
tanh = _unary("Tanh", "tanh")
sigmoid = _unary("Sigmoid", "sigmoid")
erf = _unary("Erf", "erf")
floor = _unary("Floor", "floor")
ceil = _unary("Ceil", "ceil")
round = _unary("Round", "round")  # noqa: A001 - TF1 name
relu = _unary("Relu", "relu")
relu6 = _unary("Relu6", "relu6")
elu = _unary("Elu", "elu")
selu = _unary("Selu", "selu")
softplus = _unary("Softplus", "softplus")
softsign = _unary("Softsign", "softsign")
logical_not = _unary("LogicalNot", "logical_not")
is_nan = _unary("IsNan", "is_nan")
is_finite = _unary("IsFinite", "is_finite")


def leaky_relu(features, alpha=0.2, name=None):
    return make_tensor("LeakyRelu", (convert_to_tensor(features),), {"alpha": float(alpha)},
                       name=name or "LeakyRelu")


# ---------------------------------------------------------------- elementwise binary
# op type -> (allowed dtypes, result: "same" | "bool" | "truediv")
BINARY_OPS = {
    "Add": (NUMERIC, "same"),
    "Sub": (NUMERIC, "same"),
    "Mul": (NUMERIC, "same"),
    "RealDiv": (NUMERIC, "truediv"),
    "FloorDiv": (NUMERIC, "same"),
    "FloorMod": (NUMERIC, "same"),
    "Pow": (NUMERIC, "same"),
    "Maximum": (NUMERIC, "same"),
    "Minimum": (NUMERIC, "same"),
    "SquaredDifference": (NUMERIC, "same"),
    "Equal": (NUMERIC + BOOL, "bool"),
    "NotEqual": (NUMERIC + BOOL, "bool"),
    "Less": (NUMERIC, "bool"),
    "LessEqual": (NUMERIC, "bool"),
    "Greater": (NUMERIC, "bool"),
    "GreaterEqual": (NUMERIC, "bool"),
    "LogicalAnd": (BOOL, "bool"),
    "LogicalOr": (BOOL, "bool"),
    "LogicalXor": (BOOL, "bool"),
}
_TRUEDIV_RESULT = {dtypes.int8: dtypes.float32, dtypes.uint8: dtypes.float32,
                   dtypes.int16: dtypes.float32, dtypes.int32: dtypes.float64,
                   dtypes.int64: dtypes.float64}


def _binary_infer(allowed, result):
    def infer(inputs, attrs):
        x, y = inputs
        dt = same_dtype(inputs)
        require_dtype(x, allowed, "inputs")
        shape = broadcast_static(x.shape, y.shape)
        if result == "bool":
            dt = dtypes.bool_
        elif result == "truediv":
            dt = _TRUEDIV_RESULT.get(dt, dt)
        return [(dt, shape)]
    return infer


# Swapping the inputs changes no output bit (IEEE + and * are commutative; AddN is not listed,
# since a different summation order rounds differently).
_COMMUTATIVE = frozenset(["Add", "Mul", "Maximum", "Minimum", "Equal", "NotEqual", "LogicalAnd",
                          "LogicalOr", "LogicalXor", "SquaredDifference"])
for _type, (_allowed, _result) in BINARY_OPS.items():
    define(_type, _binary_infer(_allowed, _result), elementwise=True,
           inplace_inputs=(0, 1) if _result == "same" else (), commutative=_type in _COMMUTATIVE)


def _binary(op_type, default_name):
    def op(x, y, name=None):
        with consumer_scope(name, op_type, (x, y)) as op_name:
            x, y = convert_pair(x, y)
            return make_tensor(op_type, (x, y), name=op_name)
    op.__name__ = op.__qualname__ = default_name
    op.__doc__ = f"Elementwise `{default_name}` with numpy broadcasting (op type '{op_type}')."
    return op


add = _binary("Add", "add")
subtract = _binary("Sub", "subtract")
sub = subtract
multiply = _binary("Mul", "multiply")
mul = multiply
truediv = _binary("RealDiv", "truediv")
floordiv = _binary("FloorDiv", "floordiv")
floor_div = floordiv
mod = _binary("FloorMod", "mod")
floormod = mod
pow = _binary("Pow", "pow")  # noqa: A001 - TF1 name
maximum = _binary("Maximum", "maximum")
minimum = _binary("Minimum", "minimum")
squared_difference = _binary("SquaredDifference", "squared_difference")
equal = _binary("Equal", "equal")
not_equal = _binary("NotEqual", "not_equal")
less = _binary("Less", "less")
less_equal = _binary("LessEqual", "less_equal")
greater = _binary("Greater", "greater")
greater_equal = _binary("GreaterEqual", "greater_equal")
logical_and = _binary("LogicalAnd", "logical_and")
logical_or = _binary("LogicalOr", "logical_or")
logical_xor = _binary("LogicalXor", "logical_xor")


def divide(x, y, name=None):
    """`tf.divide`: true division (ints give floats)."""
    return truediv(x, y, name=name)


def div(x, y, name=None):
    """TF1 `tf.div`: floor division for integers, true division for floats."""
    with consumer_scope(name, "div", (x, y)) as op_name:
        x, y = convert_pair(x, y)
        if x.dtype.is_integer:
            return floordiv(x, y, name=op_name)
        return truediv(x, y, name=op_name)


def add_n(inputs, name=None):
    """Sum of a list of same-shape tensors (op type 'AddN')."""
    inputs = [convert_to_tensor(t) for t in inputs]
    if len(inputs) == 1:
        return inputs[0]
    return make_tensor("AddN", tuple(inputs), name=name or "AddN")


def _add_n_infer(inputs, attrs):
    if not inputs:
        raise ValueError("AddN needs at least one input")
    dt = same_dtype(inputs)
    shape = inputs[0].shape
    for t in inputs[1:]:
        shape = shape.merge_with(t.shape)
    return [(dt, shape)]


define("AddN", _add_n_infer, elementwise=True, inplace_inputs=(0,))


# ---------------------------------------------------------------- select, cast, clip
def _select_infer(inputs, attrs):
    cond, x, y = inputs
    require_dtype(cond, BOOL, "condition")
    dt = same_dtype([x, y], "x and y")
    return [(dt, broadcast_static(broadcast_static(cond.shape, x.shape), y.shape))]


define("Select", _select_infer, elementwise=True)


def _where_indices_infer(inputs, attrs):
    (cond,) = inputs
    return [(dtypes.int64, TensorShape([None, cond.shape.ndims]))]


define("Where", _where_indices_infer, value_dependent_shape=True)


def where(condition, x=None, y=None, name=None):
    """`tf.where(cond, x, y)` picks elementwise (broadcasting); `tf.where(cond)` gives indices."""
    condition = convert_to_tensor(condition, dtype=dtypes.bool_)
    if x is None and y is None:
        return make_tensor("Where", (condition,), name=name or "Where")
    if x is None or y is None:
        raise ValueError("tf.where needs both x and y, or neither")
    with consumer_scope(name, "Select", (x, y)) as op_name:
        x, y = convert_pair(x, y)
        return make_tensor("Select", (condition, x, y), name=op_name)


where_v2 = where


def _cast_infer(inputs, attrs):
    return [(dtypes.as_dtype(attrs["DstT"]), inputs[0].shape)]


define("Cast", _cast_infer, elementwise=True, attrs="DstT:dtype")


def cast(x, dtype, name=None):
    x = convert_to_tensor(x)
    dtype = dtypes.as_dtype(dtype)
    return make_tensor("Cast", (x,), {"DstT": dtype.name}, name=name or "Cast")


def to_float(x, name="ToFloat"):
    return cast(x, dtypes.float32, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, dtypes.int32, name=name)


def _clip_infer(inputs, attrs):
    t, lo, hi = inputs
    dt = same_dtype(inputs)
    require_dtype(t, NUMERIC, "t")
    return [(dt, broadcast_static(t.shape, broadcast_static(lo.shape, hi.shape)))]


define("ClipByValue", _clip_infer, elementwise=True, inplace_inputs=(0,))


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    t = convert_to_tensor(t)
    lo = convert_to_tensor(clip_value_min, dtype=t.dtype)
    hi = convert_to_tensor(clip_value_max, dtype=t.dtype)
    return make_tensor("ClipByValue", (t, lo, hi), name=name or "ClipByValue")


# ---------------------------------------------------------------- matmul
def _matmul_infer(inputs, attrs):
    a, b = inputs
    dt = same_dtype(inputs, "matmul operands")
    require_dtype(a, NUMERIC, "matmul operands")
    ra, rb = a.shape.ndims, b.shape.ndims
    if ra is not None and ra < 2 or rb is not None and rb < 2:
        raise ValueError(f"matmul needs inputs of rank >= 2, got shapes {a.shape} and {b.shape}")
    if ra is None or rb is None:
        return [(dt, TensorShape(None))]
    m, ka = (a.shape[-1], a.shape[-2]) if attrs.get("transpose_a") else (a.shape[-2], a.shape[-1])
    kb, n = (b.shape[-1], b.shape[-2]) if attrs.get("transpose_b") else (b.shape[-2], b.shape[-1])
    if ka is not None and kb is not None and ka != kb:
        raise ValueError(f"matmul inner dimensions differ: {a.shape} x {b.shape} "
                         f"(transpose_a={bool(attrs.get('transpose_a'))}, "
                         f"transpose_b={bool(attrs.get('transpose_b'))})")
    batch = broadcast_static(a.shape[:-2], b.shape[:-2])
    return [(dt, batch.concatenate(TensorShape([m, n])))]


define("MatMul", _matmul_infer, attrs="transpose_a:bool transpose_b:bool", fresh_output=True)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """`tf.matmul`: matrix product, batched over leading dims (broadcast), optional transposes."""
    attrs = {"transpose_a": bool(transpose_a or adjoint_a),
             "transpose_b": bool(transpose_b or adjoint_b)}
    with consumer_scope(name, "MatMul", (a, b)) as op_name:
        a, b = convert_pair(a, b)
        return make_tensor("MatMul", (a, b), attrs, name=op_name)


# ---------------------------------------------------------------- reductions
def normalize_axes(axis, ndims):
    """axis (None | int | list) -> sorted tuple of non-negative axes, or None when rank unknown."""
    if axis is None:
        return None if ndims is None else tuple(range(ndims))
    axes = [axis] if isinstance(axis, int) else list(axis)
    if ndims is None:
        if any(a < 0 for a in axes):
            return None
        return tuple(sorted(set(axes)))
    out = []
    for a in axes:
        if not -ndims <= a < max(ndims, 1):
            raise ValueError(f"axis {a} is out of range for a tensor of rank {ndims}")
        out.append(a % ndims if ndims else 0)
    return tuple(sorted(set(out)))


def _reduce_infer(allowed, result_dtype=None):
    def infer(inputs, attrs):
        (x,) = inputs
        require_dtype(x, allowed, "input")
        dt = result_dtype or x.dtype
        ndims = x.shape.ndims
        axes = normalize_axes(attrs["axis"], ndims)
        if ndims is None or axes is None:
            return [(dt, TensorShape(None))]
        keep = attrs.get("keepdims", False)
        dims = []
        for i, d in enumerate(x.shape.dims):
            if i in axes:
                if keep:
                    dims.append(1)
            else:
                dims.append(d)
        return [(dt, TensorShape(dims))]
    return infer


REDUCTIONS = {"Sum": NUMERIC, "Mean": NUMERIC, "Max": NUMERIC, "Min": NUMERIC, "Prod": NUMERIC,
              "All": BOOL, "Any": BOOL}
for _type, _allowed in REDUCTIONS.items():
    define(_type, _reduce_infer(_allowed), attrs="axis:none|int|list(int) keepdims:bool",
           retains_inputs=False)


def _axis_attr(axis):
    if axis is None:
        return None
    if isinstance(axis, Tensor):
        raise TypeError("graphflow reductions need a static axis (a Python int or list of ints)")
    if isinstance(axis, (list, tuple)):
        return [int(a) for a in axis]
    return int(axis)


def _reduction(op_type, default_name):
    def op(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
           keep_dims=None):
        x = convert_to_tensor(input_tensor)
        if axis is None:
            axis = reduction_indices
        keep = bool(keepdims if keepdims is not None else (keep_dims or False))
        attrs = {"axis": _axis_attr(axis), "keepdims": keep}
        return make_tensor(op_type, (x,), attrs, name=name or op_type)
    op.__name__ = op.__qualname__ = default_name
    op.__doc__ = f"`tf.{default_name}` over `axis` (None = all), optionally keeping reduced dims."
    return op


reduce_sum = _reduction("Sum", "reduce_sum")
reduce_mean = _reduction("Mean", "reduce_mean")
reduce_max = _reduction("Max", "reduce_max")
reduce_min = _reduction("Min", "reduce_min")
reduce_prod = _reduction("Prod", "reduce_prod")
reduce_all = _reduction("All", "reduce_all")
reduce_any = _reduction("Any", "reduce_any")


def _arg_infer(inputs, attrs):
    (x,) = inputs
    require_dtype(x, NUMERIC, "input")
    out_dt = dtypes.as_dtype(attrs["output_type"])
    if x.shape.ndims is None:
        return [(out_dt, TensorShape(None))]
    axis = normalize_axes(attrs["axis"], x.shape.ndims)[0]
    dims = [d for i, d in enumerate(x.shape.dims) if i != axis]
    return [(out_dt, TensorShape(dims))]


define("ArgMax", _arg_infer, attrs="axis:int output_type:dtype", retains_inputs=False)
define("ArgMin", _arg_infer, attrs="axis:int output_type:dtype", retains_inputs=False)


def _arg(op_type):
    def op(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):
        if axis is None:
            axis = 0 if dimension is None else dimension
        x = convert_to_tensor(input)
        attrs = {"axis": int(axis), "output_type": dtypes.as_dtype(output_type).name}
        return make_tensor(op_type, (x,), attrs, name=name or op_type)
    return op


argmax = _arg("ArgMax")
argmin = _arg("ArgMin")


def count_nonzero(input_tensor, axis=None, keepdims=False, dtype=dtypes.int64, name=None):
    x = convert_to_tensor(input_tensor)
    zero = convert_to_tensor(0 if not x.dtype.is_bool else False, dtype=x.dtype)
    nz = cast(not_equal(x, zero), dtype)
    return reduce_sum(nz, axis=axis, keepdims=keepdims, name=name)



__all__ = [
    "negative", "abs", "sign", "square", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt",
    "reciprocal", "sin", "cos", "tan", "tanh", "sigmoid", "erf", "floor", "ceil", "round",
    "logical_not", "is_nan", "is_finite", "add", "subtract", "multiply", "truediv", "floordiv",
    "floor_div", "mod", "floormod", "pow", "maximum", "minimum", "squared_difference", "equal",
    "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
    "logical_xor", "where", "where_v2", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
    "reduce_prod", "reduce_all", "reduce_any", "argmax", "argmin", "divide", "div", "add_n",
    "cast", "to_float", "to_int32", "clip_by_value", "matmul", "count_nonzero",
]
