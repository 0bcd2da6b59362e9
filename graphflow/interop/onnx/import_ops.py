"""How each ONNX op becomes graphflow ops: one builder per ONNX op type in `BUILDERS`.

A builder is `fn(ctx, node, inputs) -> list of Tensors` (one per ONNX output); `inputs` holds the
graphflow tensors of the node's inputs (None for an omitted optional input) and `ctx.attrs(node)`
its attributes. Builders use graphflow's public TF1-named constructors, so an imported graph is an
ordinary graphflow graph. ONNX's NCHW layouts map to graphflow's NCHW convolutions and pools;
attributes that older opsets gave as attributes and newer ones as inputs (axes, pads, split) are
read from whichever the model uses.
"""

import numpy as np

import graphflow as tf
from graphflow.ops import static_value

BUILDERS = {}


def op_key(node):
    """A node's `BUILDERS` key: its op type, domain-prefixed outside ai.onnx (a.b.Gradient)."""
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"


def builder(*op_types):
    def register(fn):
        for op_type in op_types:
            BUILDERS[op_type] = fn
        return fn
    return register


def _known(tensor, what):
    value = static_value.constant_value(tensor)
    if value is None:
        raise ValueError(f"{what} must be a constant (an initializer or Constant) to import it")
    return np.asarray(value)


def _ints_from(ctx, node, inputs, index, attr, default=None):
    """An int list given as input `index` (newer opsets) or attribute `attr` (older ones)."""
    if len(inputs) > index and inputs[index] is not None:
        return [int(v) for v in np.atleast_1d(_known(inputs[index], attr))]
    value = ctx.attrs(node).get(attr, default)
    return None if value is None else [int(v) for v in np.atleast_1d(value)]


def _rank(x, what="input"):
    if x.shape.ndims is None:
        raise ValueError(f"the {what} needs a known rank")
    return x.shape.ndims


# ---------------------------------------------------------------- elementwise
_UNARY = {"Abs": tf.abs, "Neg": tf.negative, "Exp": tf.exp, "Log": tf.log, "Sqrt": tf.sqrt,
          "Relu": tf.nn.relu, "Sigmoid": tf.sigmoid, "Tanh": tf.tanh, "Softplus": tf.nn.softplus,
          "Softsign": tf.nn.softsign, "Erf": tf.erf,
          "Sin": tf.sin, "Cos": tf.cos, "Tan": tf.tan, "Floor": tf.floor, "Ceil": tf.ceil,
          "Round": tf.round, "Sign": tf.sign, "Reciprocal": tf.reciprocal, "Not": tf.logical_not,
          "IsNaN": tf.is_nan, "Identity": tf.identity, "Acos": tf.acos, "Asin": tf.asin,
          "Atan": tf.atan, "Acosh": tf.acosh, "Asinh": tf.asinh, "Atanh": tf.atanh,
          "Cosh": tf.cosh, "Sinh": tf.sinh}
_BINARY = {"Add": tf.add, "Sub": tf.subtract, "Mul": tf.multiply, "Pow": tf.pow,
           "Equal": tf.equal, "Greater": tf.greater, "Less": tf.less,
           "GreaterOrEqual": tf.greater_equal, "LessOrEqual": tf.less_equal,
           "And": tf.logical_and, "Or": tf.logical_or, "Xor": tf.logical_xor}


_ORDERED = {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Max", "Min"}
_WRAPPING = {"Add", "Sub", "Mul", "Sum"}
_INT64_MIN = np.iinfo(np.int64).min


def _unsigned_through_int64(build):
    """ONNX's uint16/32/64 arithmetic and comparisons, which graphflow's numeric ops (as TF1's)
    do not take, computed on int64 values and cast back: uint16/32 widen exactly; uint64 wraps
    into int64, which keeps sums, differences and products exact modulo 2**64, and is shifted by
    -2**63 for comparisons, max and min (an order-keeping map); uint64 division and remainder
    by `_uint64_divmod`."""
    def wrapped(ctx, node, inputs):
        dtype = inputs[0].dtype if inputs and inputs[0] is not None else None
        if dtype not in (tf.uint16, tf.uint32, tf.uint64):
            return build(ctx, node, inputs)
        shifted = dtype == tf.uint64 and node.op_type in _ORDERED
        if dtype == tf.uint64 and node.op_type in ("Div", "Mod"):
            quotient, remainder = _uint64_divmod(*inputs)
            return [quotient if node.op_type == "Div" else remainder]
        if dtype == tf.uint64 and not shifted and node.op_type not in _WRAPPING:
            raise ValueError(f"{node.op_type} of uint64 is not supported")
        offset = tf.constant(_INT64_MIN, tf.int64)
        wide = [tf.cast(t, tf.int64) for t in inputs]
        results = build(ctx, node, [w + offset for w in wide] if shifted else wide)
        return [r if r.dtype == tf.bool else tf.cast(r + offset if shifted else r, dtype)
                for r in results]
    return wrapped


def _uint64_divmod(a, b):
    """Unsigned 64-bit quotient and remainder from int64 ops on the wrapped values: a divisor of
    2**63 or more goes into a at most once; a smaller one divides a // 2 (which fits int64), the
    doubled quotient is then off by at most one."""
    low = tf.constant(_INT64_MIN, tf.int64)
    a, b = tf.cast(a, tf.int64), tf.cast(b, tf.int64)

    def at_least(x, y):  # unsigned x >= y
        return (x + low) >= (y + low)

    big = b < 0
    small_b = tf.where(big, tf.ones_like(b), b)
    half = tf.floordiv(a, 2) + tf.where(a < 0, tf.fill(tf.shape(a), low), tf.zeros_like(a))
    q = tf.floordiv(half, small_b) * 2
    q = q + tf.cast(at_least(a - q * small_b, small_b), tf.int64)
    q = tf.where(big, tf.cast(at_least(a, b), tf.int64), q)
    return tf.cast(q, tf.uint64), tf.cast(a - q * b, tf.uint64)


@builder(*_UNARY)
def _unary(ctx, node, inputs):
    return [_UNARY[node.op_type](inputs[0])]


@builder(*_BINARY)
@_unsigned_through_int64
def _binary(ctx, node, inputs):
    a, b = inputs
    attrs = ctx.attrs(node)
    if ctx.opset < 7 and attrs.get("broadcast") and "axis" in attrs:  # legacy: b aligned at axis
        trailing = _rank(a) - attrs["axis"] % _rank(a) - _rank(b)
        if trailing > 0:
            b = tf.reshape(b, tf.concat([tf.shape(b), [1] * trailing], axis=0))
    if node.op_type == "Pow" and b.dtype != a.dtype:
        b = tf.cast(b, a.dtype)
    return [_BINARY[node.op_type](a, b)]


@builder("Div")
@_unsigned_through_int64
def _div(ctx, node, inputs):  # integers truncate toward zero in ONNX
    a, b = inputs
    if a.dtype.is_floating:
        return [tf.divide(a, b)]
    q = tf.floordiv(a, b)
    inexact = tf.logical_and(tf.not_equal(tf.floormod(a, b), 0),
                             tf.not_equal(tf.less(a, 0), tf.less(b, 0)))
    return [q + tf.cast(inexact, a.dtype)]


@builder("Mod")
@_unsigned_through_int64
def _mod(ctx, node, inputs):
    a, b = inputs
    if ctx.attrs(node).get("fmod", 0):  # C fmod: the sign of the dividend
        return [a - tf.cast(tf.cast(a / b, tf.int64), a.dtype) * b if a.dtype.is_floating
                else a - _div(ctx, node, inputs)[0] * b]
    return [tf.floormod(a, b)]


@builder("Sum", "Max", "Min", "Mean")
@_unsigned_through_int64
def _variadic(ctx, node, inputs):
    fold = {"Sum": tf.add, "Mean": tf.add, "Max": tf.maximum, "Min": tf.minimum}[node.op_type]
    out = inputs[0]
    for x in inputs[1:]:
        out = fold(out, x)
    return [out / float(len(inputs)) if node.op_type == "Mean" else out]


@builder("LeakyRelu")
def _leaky_relu(ctx, node, inputs):
    return [tf.nn.leaky_relu(inputs[0], alpha=ctx.attrs(node).get("alpha", 0.01))]


@builder("Elu")
def _elu(ctx, node, inputs):
    alpha = ctx.attrs(node).get("alpha", 1.0)
    y = tf.nn.elu(inputs[0])
    return [y if alpha == 1.0 else tf.where(inputs[0] > 0, y, y * alpha)]


@builder("Selu")
def _selu(ctx, node, inputs):  # gamma * (x if x > 0 else alpha * (exp(x) - 1))
    a = ctx.attrs(node)
    x = inputs[0]
    alpha, gamma = a.get("alpha", 1.67326319217681884765625), a.get("gamma", 1.05070102214813232421875)
    return [gamma * tf.where(x > 0, x, alpha * (tf.exp(x) - 1.0))]


@builder("HardSigmoid")
def _hard_sigmoid(ctx, node, inputs):  # max(0, min(1, alpha * x + beta))
    a = ctx.attrs(node)
    return [tf.clip_by_value(a.get("alpha", 0.2) * inputs[0] + a.get("beta", 0.5), 0.0, 1.0)]


@builder("PRelu")
def _prelu(ctx, node, inputs):  # max(0, x) + slope * min(0, x)
    x, slope = inputs
    if ctx.opset < 7 and slope.shape.ndims == 1 and _rank(x) > 2:  # legacy: one slope per channel
        slope = tf.reshape(slope, [-1] + [1] * (_rank(x) - 2))
    return [tf.maximum(x, 0.0) + slope * tf.minimum(x, 0.0)]


@builder("Shrink")
def _shrink(ctx, node, inputs):  # x + bias below -lambd, x - bias above lambd, 0 between
    a = ctx.attrs(node)
    x = inputs[0]
    lambd, bias = a.get("lambd", 0.5), a.get("bias", 0.0)
    zero = tf.zeros_like(x)
    return [tf.where(x < -lambd, x + tf.cast(bias, x.dtype),
                     tf.where(x > lambd, x - tf.cast(bias, x.dtype), zero))]


@builder("Clip")
def _clip(ctx, node, inputs):
    x = inputs[0]
    a = ctx.attrs(node)
    lo = inputs[1] if len(inputs) > 1 and inputs[1] is not None else a.get("min")
    hi = inputs[2] if len(inputs) > 2 and inputs[2] is not None else a.get("max")
    if lo is not None:
        x = tf.maximum(x, tf.cast(lo, x.dtype))
    if hi is not None:
        x = tf.minimum(x, tf.cast(hi, x.dtype))
    return [x]


@builder("Where")
def _where(ctx, node, inputs):
    cond, x, y = inputs  # ONNX broadcasts all three; graphflow's Select wants one shape
    shape = tf.shape(tf.cast(cond, tf.float32) + tf.cast(x, tf.float32) + tf.cast(y, tf.float32))
    return [tf.where(tf.broadcast_to(cond, shape), tf.broadcast_to(x, shape), tf.broadcast_to(y, shape))]


@builder("Cast")
def _cast(ctx, node, inputs):
    to = ctx.onnx.helper.tensor_dtype_to_np_dtype(ctx.attrs(node)["to"])
    return [tf.cast(inputs[0], tf.as_dtype(to))]


@builder("CastLike")
def _cast_like(ctx, node, inputs):
    return [tf.cast(inputs[0], inputs[1].dtype)]


@builder("IsInf")
def _is_inf(ctx, node, inputs):
    a = ctx.attrs(node)
    x = inputs[0]
    pos = tf.equal(x, np.inf) if a.get("detect_positive", 1) else tf.zeros_like(x, dtype=tf.bool)
    neg = tf.equal(x, -np.inf) if a.get("detect_negative", 1) else tf.zeros_like(x, dtype=tf.bool)
    return [tf.logical_or(pos, neg)]


@builder("ThresholdedRelu")
def _thresholded_relu(ctx, node, inputs):  # x where x > alpha, else 0
    x = inputs[0]
    return [tf.where(x > ctx.attrs(node).get("alpha", 1.0), x, tf.zeros_like(x))]


@builder("Celu")
def _celu(ctx, node, inputs):  # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    x = inputs[0]
    alpha = ctx.attrs(node).get("alpha", 1.0)
    return [tf.maximum(x, 0.0) + tf.minimum(0.0, alpha * (tf.exp(x / alpha) - 1.0))]


@builder("Softmax", "LogSoftmax")
def _softmax(ctx, node, inputs):
    x = inputs[0]
    fn = tf.nn.softmax if node.op_type == "Softmax" else tf.nn.log_softmax
    axis = ctx.attrs(node).get("axis", -1 if ctx.opset >= 13 else 1)
    if ctx.opset >= 13:
        return [fn(x, axis=axis)]
    rank = _rank(x)  # before opset 13: softmax of the 2-D [prod(:axis), prod(axis:)] view
    axis = axis % rank
    shape = tf.shape(x)
    flat = tf.reshape(x, tf.stack([tf.reduce_prod(shape[:axis]), -1]))
    return [tf.reshape(fn(flat, axis=-1), shape)]


# ---------------------------------------------------------------- constants and shapes
@builder("Constant")
def _constant(ctx, node, inputs):
    a = ctx.attrs(node)
    if "value" in a:
        return [tf.constant(ctx.onnx.numpy_helper.to_array(a["value"]))]
    for key, dtype in (("value_float", np.float32), ("value_floats", np.float32),
                       ("value_int", np.int64), ("value_ints", np.int64)):
        if key in a:
            return [tf.constant(np.asarray(a[key], dtype=dtype))]
    raise ValueError(f"Constant with attributes {sorted(a)} is not supported")


@builder("ConstantOfShape")
def _constant_of_shape(ctx, node, inputs):
    value = ctx.attrs(node).get("value")
    array = ctx.onnx.numpy_helper.to_array(value) if value is not None else np.zeros(1, np.float32)
    # the shape stays int64: a dim above 2**31 is kept (or fails allocating), never wrapped
    return [tf.fill(tf.cast(inputs[0], tf.int64), tf.constant(array.reshape(()), dtype=array.dtype))]


@builder("Shape")
def _shape(ctx, node, inputs):
    shape = tf.shape(inputs[0], out_type=tf.int64)
    attrs = ctx.attrs(node)
    if "start" not in attrs and "end" not in attrs:
        return [shape]
    rank = _rank(inputs[0])  # opset 15: dims start:end, negatives counted from the end, clamped
    start, end = (min(max(v + rank if v < 0 else v, 0), rank)
                  for v in (attrs.get("start", 0), attrs.get("end", rank)))
    return [shape[start:max(start, end)]]


@builder("Size")
def _size(ctx, node, inputs):
    return [tf.size(inputs[0], out_type=tf.int64)]


@builder("Reshape")
def _reshape(ctx, node, inputs):
    x = inputs[0]
    if len(inputs) > 1 and static_value.constant_value(inputs[1]) is None:  # computed shape
        shape = tf.cast(inputs[1], tf.int64)
        count = inputs[1].shape.as_list()[0] if inputs[1].shape.ndims == 1 else None
        if not ctx.attrs(node).get("allowzero", 0) and count is not None:
            dims = tf.shape(x, out_type=tf.int64)  # a 0 entry copies the input's dim at its place
            if _rank(x) < count:
                dims = tf.concat([dims, tf.ones([count - _rank(x)], tf.int64)], axis=0)
            shape = tf.where(tf.equal(shape, 0), dims[:count], shape)
        return [tf.reshape(x, shape)]
    shape = _ints_from(ctx, node, inputs, 1, "shape")
    if not ctx.attrs(node).get("allowzero", 0) and 0 in shape:  # 0 copies the input's dim
        dims = x.shape.as_list() if x.shape.ndims is not None else []
        shape = [(dims[i] if i < len(dims) and dims[i] is not None else tf.shape(x)[i]) if s == 0
                 else s for i, s in enumerate(shape)]
        if any(not isinstance(s, int) for s in shape):
            shape = tf.stack([tf.cast(s, tf.int64) for s in shape])
    return [tf.reshape(x, shape)]


@builder("Flatten")
def _flatten(ctx, node, inputs):
    x = inputs[0]
    axis = ctx.attrs(node).get("axis", 1)
    axis = axis + _rank(x) if axis < 0 else axis  # ONNX's axis is in [-rank, rank]
    dims = x.shape.as_list()
    lead = dims[:axis]
    if axis == 0:
        return [tf.reshape(x, [1, -1])]
    if None not in lead:
        return [tf.reshape(x, [int(np.prod(lead)), -1])]
    return [tf.reshape(x, tf.stack([tf.reduce_prod(tf.shape(x)[:axis]), -1]))]


@builder("Transpose")
def _transpose(ctx, node, inputs):
    return [tf.transpose(inputs[0], ctx.attrs(node).get("perm"))]


@builder("Concat")
def _concat(ctx, node, inputs):
    return [tf.concat([x for x in inputs if x is not None], axis=ctx.attrs(node)["axis"])]


@builder("Expand")
def _expand(ctx, node, inputs):  # two-way broadcast of the input and the shape
    x = inputs[0]
    shape = tf.cast(inputs[1], tf.int64)  # (int64: a dim above 2**31 is never wrapped)
    return [x * tf.ones(shape, dtype=x.dtype) if x.dtype != tf.bool
            else tf.logical_and(x, tf.fill(shape, True))]


@builder("Tile")
def _tile(ctx, node, inputs):
    return [tf.tile(inputs[0], tf.cast(inputs[1], tf.int64))]


@builder("Gather")
def _gather(ctx, node, inputs):
    params, indices = inputs
    axis = ctx.attrs(node).get("axis", 0)
    size = params.shape.as_list()[axis] if params.shape.ndims else None
    if size is not None:  # negative indices count from the end in ONNX
        indices = tf.where(indices < 0, indices + tf.cast(size, indices.dtype), indices)
    return [tf.gather(params, indices, axis=axis)]


@builder("Range")
def _range(ctx, node, inputs):
    return [tf.range(*inputs)]


@builder("Dropout")
def _dropout(ctx, node, inputs):
    """Inference (no training_mode input, or a constant false one): the identity and a mask of
    ones. Training mode (opset 12+, possibly fed at run time): each element is kept with
    probability 1 - ratio and scaled by 1 / (1 - ratio), as tf.nn.dropout does; the mask says
    which were kept. The random draws are graphflow's (the `seed` attribute seeds them), so they
    are not the numbers another runtime draws."""
    x = inputs[0]
    training = inputs[2] if len(inputs) > 2 else None
    known = None if training is None else static_value.constant_value(training)
    if training is None or (known is not None and not np.asarray(known).any()):
        return [tf.identity(x), tf.ones_like(x, dtype=tf.bool)]
    a = ctx.attrs(node)
    ratio = (tf.cast(tf.reshape(inputs[1], []), tf.float32) if len(inputs) > 1
             and inputs[1] is not None else tf.constant(a.get("ratio", 0.5), tf.float32))
    draws = tf.random_uniform(tf.shape(x), seed=a.get("seed"))
    keep = draws >= ratio
    dropped = tf.where(keep, x * tf.cast(1.0 / (1.0 - ratio), x.dtype), tf.zeros_like(x))
    if known is not None:
        return [dropped, keep]
    training = tf.reshape(tf.cast(training, tf.bool), [])
    return [tf.where(training, dropped, x), tf.logical_or(keep, tf.logical_not(training))]


# ---------------------------------------------------------------- matrices
@builder("MatMul")
def _matmul(ctx, node, inputs):
    a, b = inputs
    if a.shape.ndims == 1 and b.shape.ndims == 1:  # a dot product
        return [tf.reduce_sum(a * b)]
    if b.shape.ndims == 1:
        return [tf.squeeze(tf.matmul(a, tf.expand_dims(b, -1)), [-1])]
    if a.shape.ndims == 1:
        return [tf.squeeze(tf.matmul(tf.expand_dims(a, 0), b), [-2])]
    return [tf.matmul(a, b)]


@builder("Gemm")
def _gemm(ctx, node, inputs):  # alpha * A' @ B' + beta * C
    a = ctx.attrs(node)
    y = tf.matmul(inputs[0], inputs[1], transpose_a=bool(a.get("transA", 0)),
                  transpose_b=bool(a.get("transB", 0)))
    alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
    if alpha != 1.0:
        y = y * alpha
    if len(inputs) > 2 and inputs[2] is not None:
        y = y + (inputs[2] * beta if beta != 1.0 else inputs[2])
    return [y]

