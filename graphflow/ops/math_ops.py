"""Math ops: elementwise unary/binary (numpy broadcasting), comparisons, logic, where, cast, clip,
matmul (batched, transposes) and reductions. Each op type is one table row / one `define` call."""

import inspect

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import elementwise_spec
from graphflow.ops.core_ops import consumer_scope, convert_pair, convert_to_tensor, static_int
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
from graphflow.ops.static_value import constant_value, output_dtype

BOOL = (dtypes.bool_,)
_DTYPE_SETS = {"float": FLOATS, "signed": SIGNED, "numeric": NUMERIC, "numeric|bool": NUMERIC + BOOL,
               "numeric|bool|string": NUMERIC + BOOL + (dtypes.string,), "bool": BOOL}

# ---------------------------------------------------------------- elementwise unary and binary
# One OpDef and one public function per row of the elementwise table (ops/elementwise_spec.py);
# rows marked `custom` (AddN, Select, Cast, ClipByValue, ...) are written out by hand below or in
# their own op family.
_ROWS = [r for r in elementwise_spec.ROWS if not r.custom]
# op type -> (public function name, allowed input dtypes)
UNARY_OPS = {r.op: (r.fn, _DTYPE_SETS[r.dtypes]) for r in _ROWS if r.arity == 1}
# op type -> (allowed dtypes, result: "same" | "bool" | "truediv")
BINARY_OPS = {r.op: (_DTYPE_SETS[r.dtypes], r.result) for r in _ROWS if r.arity == 2}


def _elementwise_infer(row):
    allowed = _DTYPE_SETS[row.dtypes]

    def infer(inputs, attrs):
        if len(inputs) == 1:
            (x,) = inputs
            require_dtype(x, allowed, "input")
            shape = x.shape
        else:
            x, y = inputs
            same_dtype(inputs)
            require_dtype(x, allowed, "inputs")
            shape = broadcast_static(x.shape, y.shape)
        dt = dtypes.as_dtype(row.result_dtype([t.dtype.name for t in inputs]))
        return [(dt, shape)]
    return infer


def _inplace_inputs(row):
    if row.arity == 1:
        return (0,)
    return (0, 1) if row.result == "same" else ()


def _integer_arithmetic_value(row):
    """The `static_value` rule of a `shape_arithmetic` row: its numpy function on integer
    operands known at build time (`tf.shape(x)[0] * 2`, `n - 1`); unknown (None) where a
    divisor is zero, which the run reports."""
    fn = getattr(np, row.numpy)

    def rule(op, inputs):
        if not op.outputs[0].dtype.is_integer:
            return None
        values = inputs.values()
        if values is None or (row.zero_divisor and not np.all(values[1])):
            return None
        return np.asarray(fn(*values)).astype(output_dtype(op))
    return rule


for _row in _ROWS:
    define(_row.op, _elementwise_infer(_row), elementwise=True, inplace_inputs=_inplace_inputs(_row),
           attrs=" ".join(f"{a.name}:{a.type}" for a in _row.attrs), commutative=_row.commutative,
           onnx=_row.onnx,
           static_value=_integer_arithmetic_value(_row) if _row.shape_arithmetic else None)


def _unary(row):
    op_type, default_name = row.op, row.fn

    def op(x, name=None):
        return make_tensor(op_type, (convert_to_tensor(x),), name=name or op_type)
    if row.attrs:  # attrs follow the operand, with their defaults: leaky_relu(features, alpha=0.2)
        params = [inspect.Parameter("features", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        params += [inspect.Parameter(a.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                     default=a.default) for a in row.attrs]
        params.append(inspect.Parameter("name", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None))
        signature = inspect.Signature(params)
        casts = {a.name: _ATTR_CASTS[a.type] for a in row.attrs}

        def op(*args, **kwargs):  # noqa: F811 - the attr-taking form
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            values = dict(bound.arguments)
            x, name = values.pop("features"), values.pop("name")
            attrs = {k: casts[k](v) for k, v in values.items()}
            return make_tensor(op_type, (convert_to_tensor(x),), attrs, name=name or op_type)
        op.__signature__ = signature
    op.__name__ = op.__qualname__ = default_name
    op.__doc__ = f"Elementwise `{default_name}` (op type '{op_type}')."
    return op


_ATTR_CASTS = {"float": float, "int": int, "bool": bool}


def _binary(row):
    op_type, default_name = row.op, row.fn

    def op(x, y, name=None):
        if isinstance(x, Tensor) and isinstance(y, Tensor):
            # both already tensors: no constant is made, so no scope and no conversion (the
            # eager hot path: `a + b` costs the op's own dispatch only)
            return make_tensor(op_type, (x, y), name=name or op_type)
        with consumer_scope(name, op_type, (x, y)) as op_name:
            x, y = convert_pair(x, y)
            return make_tensor(op_type, (x, y), name=op_name)
    op.__name__ = op.__qualname__ = default_name
    op.__doc__ = f"Elementwise `{default_name}` with numpy broadcasting (op type '{op_type}')."
    return op


# The public functions, one per row: negative, abs, ..., relu, ..., add, subtract, ..., logical_xor.
ELEMENTWISE_FUNCTIONS = {r.fn: (_unary(r) if r.arity == 1 else _binary(r)) for r in _ROWS}
# The ones TF1 exports as tf.nn.<name> (relu, sigmoid, tanh, leaky_relu, ...).
NN_FUNCTIONS = sorted(r.fn for r in _ROWS if "nn" in r.public)
# The ones TF1 exports as tf.math.<name> only (xlogy, erfinv, bessel_i0e, ...).
MATH_FUNCTIONS = sorted(r.fn for r in _ROWS if "math" in r.public and "tf" not in r.public)
globals().update(ELEMENTWISE_FUNCTIONS)
# (this module's own code reaches them through the dict: linters cannot see the names above)
_truediv, _floordiv = ELEMENTWISE_FUNCTIONS["truediv"], ELEMENTWISE_FUNCTIONS["floordiv"]
sub = ELEMENTWISE_FUNCTIONS["subtract"]
mul = ELEMENTWISE_FUNCTIONS["multiply"]
floor_div = _floordiv
floormod = ELEMENTWISE_FUNCTIONS["mod"]


def divide(x, y, name=None):
    """`tf.divide`: true division (ints give floats)."""
    return _truediv(x, y, name=name)


def div(x, y, name=None):
    """TF1 `tf.div`: floor division for integers, true division for floats."""
    with consumer_scope(name, "div", (x, y)) as op_name:
        x, y = convert_pair(x, y)
        if x.dtype.is_integer:
            return _floordiv(x, y, name=op_name)
        return _truediv(x, y, name=op_name)


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


define("AddN", _add_n_infer, elementwise=True, inplace_inputs=(0,), onnx="Sum")


# ---------------------------------------------------------------- select, cast, clip
def _select_infer(inputs, attrs):
    cond, x, y = inputs
    require_dtype(cond, BOOL, "condition")
    dt = same_dtype([x, y], "x and y")
    return [(dt, broadcast_static(broadcast_static(cond.shape, x.shape), y.shape))]


define("Select", _select_infer, elementwise=True, onnx="Where")


def _where_indices_infer(inputs, attrs):
    (cond,) = inputs
    return [(dtypes.int64, TensorShape([None, cond.shape.ndims]))]


define("Where", _where_indices_infer, value_dependent_shape=True, onnx={"converter": "where_indices"})


def where(condition, x=None, y=None, name=None):
    """TF1's `tf.where(cond, x, y)` (Select): `cond` of x's shape picks elementwise, a scalar picks
    x or y whole, and a vector of x's first dimension picks rows; the result has x's shape, also
    when cond's rank is unknown (a condition of any other lower rank broadcasts as numpy does).
    `tf.where(cond)` gives the indices of the true elements."""
    condition = convert_to_tensor(condition, dtype=dtypes.bool_)
    if x is None and y is None:
        return make_tensor("Where", (condition,), name=name or "Where")
    if x is None or y is None:
        raise ValueError("tf.where needs both x and y, or neither")
    with consumer_scope(name, "Select", (x, y)) as op_name:
        x, y = convert_pair(x, y)
        data = broadcast_static(x.shape, y.shape)
        c_rank, x_rank = condition.shape.ndims, data.ndims
        # TF1's vector condition picks rows; a condition of another lower rank broadcasts as
        # numpy does (TF1 refuses it; graphflow's own builders, e.g. a 2-D band mask over a
        # batch of matrices, rely on it)
        if c_rank is None or (c_rank == 1 and (x_rank is None or x_rank > 1)):
            condition = _leading(condition, x, c_rank, x_rank)
        out = make_tensor("Select", (condition, x, y), name=op_name)
        if c_rank is None or (x_rank is not None and c_rank <= x_rank):
            out.set_shape(data)
        return out


def _leading(condition, x, c_rank, x_rank):
    """`condition` with size-1 axes appended up to x's rank, so that broadcasting lines it up
    with x's leading axes (TF1's vector condition picks rows)."""
    from graphflow.ops import shape_ops
    if c_rank is not None and x_rank is not None:
        return shape_ops.reshape(condition, shape_ops.concat(
            [shape_ops.shape(condition), np.ones(x_rank - c_rank, np.int32)], 0))
    c_rank_t = shape_ops.rank(condition)
    ones = shape_ops.fill(shape_ops.reshape(shape_ops.rank(x) - c_rank_t, [1]), np.int32(1))
    return shape_ops.reshape(condition, shape_ops.concat([shape_ops.shape(condition), ones], 0))


def where_v2(condition, x=None, y=None, name=None):
    """`tf.where_v2` (TF2's tf.where): like `where` but cond, x and y broadcast as numpy does."""
    condition = convert_to_tensor(condition, dtype=dtypes.bool_)
    if x is None and y is None:
        return make_tensor("Where", (condition,), name=name or "Where")
    if x is None or y is None:
        raise ValueError("tf.where needs both x and y, or neither")
    with consumer_scope(name, "SelectV2", (x, y)) as op_name:
        x, y = convert_pair(x, y)
        return make_tensor("Select", (condition, x, y), name=op_name)


def _cast_infer(inputs, attrs):
    return [(dtypes.as_dtype(attrs["DstT"]), inputs[0].shape)]


def _cast_value(op, inputs):
    value = inputs.value(0)
    return None if value is None else np.asarray(value).astype(output_dtype(op))


define("Cast", _cast_infer, elementwise=True, attrs="DstT:dtype", static_value=_cast_value,
       onnx={"converter": "cast"})


def cast(x, dtype, name=None):
    x = convert_to_tensor(x)
    dtype = dtypes.as_dtype(dtype)
    return make_tensor("Cast", (x,), {"DstT": dtype.name}, name=name or "Cast")


def to_float(x, name="ToFloat"):
    return cast(x, dtypes.float32, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, dtypes.int64, name=name)


def to_double(x, name="ToDouble"):
    return cast(x, dtypes.float64, name=name)


def saturate_cast(value, dtype, name=None):
    """Cast to `dtype`, first clipping values to its range (so 300.0 to uint8 gives 255, not
    the wrapped value a plain cast would give)."""
    x = convert_to_tensor(value)
    dtype = dtypes.as_dtype(dtype)
    src, dst = np.dtype(x.dtype.as_numpy_dtype), np.dtype(dtype.as_numpy_dtype)
    if src.kind in "iuf" and dst.kind in "iuf":
        dst_info = np.iinfo(dst) if dst.kind in "iu" else np.finfo(dst)
        src_info = np.iinfo(src) if src.kind in "iu" else np.finfo(src)
        low = src.type(max(dst_info.min, src_info.min))
        high = src.type(min(dst_info.max, src_info.max))
        if src.kind == "f" and dst.kind in "iu":  # the float nearest an int bound may lie beyond it
            if float(high) > float(dst_info.max):
                high = np.nextafter(high, src.type(0))
            if float(low) < float(dst_info.min):
                low = np.nextafter(low, src.type(0))
        if low > src_info.min or high < src_info.max:
            x = clip_by_value(x, convert_to_tensor(low, dtype=x.dtype),
                              convert_to_tensor(high, dtype=x.dtype))
    return cast(x, dtype, name=name or "saturate_cast")


def _clip_infer(inputs, attrs):
    t, lo, hi = inputs
    dt = same_dtype(inputs)
    require_dtype(t, NUMERIC, "t")
    return [(dt, broadcast_static(t.shape, broadcast_static(lo.shape, hi.shape)))]


define("ClipByValue", _clip_infer, elementwise=True, inplace_inputs=(0,), onnx="Clip")


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


define("MatMul", _matmul_infer, attrs="transpose_a:bool transpose_b:bool", fresh_output=True,
       onnx={"converter": "matmul"})


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
        x = inputs[0]
        require_dtype(x, allowed, "input")
        dt = result_dtype or x.dtype
        ndims = x.shape.ndims
        keep = attrs.get("keepdims", False)
        if len(inputs) == 2:  # axes given as a tensor, known at run time only
            _check_axes_input(inputs[1])
            if keep and ndims is not None:
                return [(dt, TensorShape([None] * ndims))]
            return [(dt, TensorShape(None))]
        axes = normalize_axes(attrs["axis"], ndims)
        if ndims is None or axes is None:
            return [(dt, TensorShape(None))]
        dims = []
        for i, d in enumerate(x.shape.dims):
            if i in axes:
                if keep:
                    dims.append(1)
            else:
                dims.append(d)
        return [(dt, TensorShape(dims))]
    return infer


def _check_axes_input(axes):
    if not axes.dtype.is_integer or (axes.shape.ndims is not None and axes.shape.ndims > 1):
        raise TypeError(f"reduction axes must be an integer scalar or vector, got {axes.dtype.name} "
                        f"of shape {axes.shape}")


# All -> ReduceMin over 0/1, Any -> ReduceMax over 0/1
_REDUCTION_ONNX = {"Sum": {"converter": "reduction", "op": "ReduceSum"},
                   "Mean": {"converter": "reduction", "op": "ReduceMean"},
                   "Max": {"converter": "reduction", "op": "ReduceMax"},
                   "Min": {"converter": "reduction", "op": "ReduceMin"},
                   "Prod": {"converter": "reduction", "op": "ReduceProd"},
                   "All": {"converter": "bool_reduction", "op": "ReduceMin"},
                   "Any": {"converter": "bool_reduction", "op": "ReduceMax"}}
REDUCTIONS = {"Sum": NUMERIC, "Mean": NUMERIC, "Max": NUMERIC, "Min": NUMERIC, "Prod": NUMERIC,
              "All": BOOL, "Any": BOOL}
for _type, _allowed in REDUCTIONS.items():
    define(_type, _reduce_infer(_allowed), attrs="axis:none|int|list(int) keepdims:bool",
           retains_inputs=False, onnx=_REDUCTION_ONNX[_type])


def _axis_attr(axis):
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return [int(a) for a in axis]
    return int(axis)


def _static_or_tensor_axis(axis):
    """(attr value, axes tensor or None): a Python axis, or a tensor whose value is known when the
    graph is built (`tf.range(1, tf.rank(x))` for x of known rank), is the op's `axis` attr; any
    other tensor is an input whose value is read at run time, as TF1's `reduction_indices` is."""
    if isinstance(axis, Tensor) or (isinstance(axis, (list, tuple))
                                    and any(isinstance(a, Tensor) for a in axis)):
        tensor = convert_to_tensor(axis)
        if tensor.graph.eager:  # eager: the axes stay an input, read as a fed one is
            return None, tensor
        value = constant_value(tensor)
        if value is None:
            return None, tensor
        value = np.asarray(value)
        return (int(value) if value.ndim == 0 else [int(a) for a in value.ravel()]), None
    return _axis_attr(axis), None


def _reduction(op_type, default_name):
    def op(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
           keep_dims=None):
        x = convert_to_tensor(input_tensor)
        if axis is None:
            axis = reduction_indices
        keep = bool(keepdims if keepdims is not None else (keep_dims or False))
        static, tensor = _static_or_tensor_axis(axis)
        attrs = {"axis": static, "keepdims": keep}
        inputs = (x,) if tensor is None else (x, tensor)
        return make_tensor(op_type, inputs, attrs, name=name or op_type)
    op.__name__ = op.__qualname__ = default_name
    op.__doc__ = (f"`tf.{default_name}` over `axis` (None = all; a Python int or list, or an "
                  f"integer tensor read at run time), optionally keeping reduced dims.")
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


define("ArgMax", _arg_infer, attrs="axis:int output_type:dtype", retains_inputs=False,
       onnx={"converter": "arg"})
define("ArgMin", _arg_infer, attrs="axis:int output_type:dtype", retains_inputs=False,
       onnx={"converter": "arg"})


def _arg(op_type):
    def op(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):
        if axis is None:
            axis = 0 if dimension is None else dimension
        x = convert_to_tensor(input)
        attrs = {"axis": static_int(axis, f"the axis of {op_type}"),
                 "output_type": dtypes.as_dtype(output_type).name}
        return make_tensor(op_type, (x,), attrs, name=name or op_type)
    return op


argmax = _arg("ArgMax")
argmin = _arg("ArgMin")


def count_nonzero(input_tensor, axis=None, keepdims=False, dtype=dtypes.int64, name=None):
    x = convert_to_tensor(input_tensor)
    zero = convert_to_tensor(0 if not x.dtype.is_bool else False, dtype=x.dtype)
    nz = cast(ELEMENTWISE_FUNCTIONS["not_equal"](x, zero), dtype)
    return reduce_sum(nz, axis=axis, keepdims=keepdims, name=name)



__all__ = [r.fn for r in _ROWS if "tf" in r.public] + [
    "floor_div", "floormod", "where", "where_v2", "reduce_sum", "reduce_mean", "reduce_max",
    "reduce_min", "reduce_prod", "reduce_all", "reduce_any", "argmax", "argmin", "divide", "div",
    "add_n", "cast", "to_float", "to_int32", "to_int64", "to_double",
    "saturate_cast", "clip_by_value", "matmul", "count_nonzero",
]
