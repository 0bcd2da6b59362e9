"""Import rules for the gradient helper ops TensorFlow's gradient code writes into training graphs
(the graph `tf.train.Optimizer.minimize` leaves in a `.meta` file), built from graphflow's public
ops with TensorFlow's kernels' arithmetic, in the same order of operations:

    ReluGrad(g, x)      = where(x > 0, g, 0)         Relu6Grad(g, x) = where(0 < x < 6, g, 0)
    LeakyReluGrad(g, x) = where(x > 0, g, g * alpha)
    EluGrad(g, y)       = where(y < 0, (y + 1) * g, g)
    SeluGrad(g, y)      = where(y < 0, g * (y + scale * alpha), g * scale)
    SoftplusGrad(g, x)  = g / (exp(-x) + 1)          SoftsignGrad(g, x) = g / (|x| + 1)^2
    TanhGrad(y, dy)     = dy * (1 - y * y)           SigmoidGrad(y, dy) = dy * y * (1 - y)
    SqrtGrad(y, dy)     = 0.5 * dy / y               RsqrtGrad(y, dy)   = -0.5 * (dy * y) * (y * y)
    ReciprocalGrad(y, dy) = InvGrad(y, dy) = -dy * y * y
    ShapeN(x1..xn)      = Shape(x1) .. Shape(xn)
    ConcatOffset(axis, s1..sn): offset i is 0 but along `axis`, where it is s1 + .. + s(i-1)
    FusedBatchNormGradV2/V3 = graphflow's FusedBatchNormGrad (TensorFlow's extra outputs and
        reserve_space_3 are placeholders of its GPU kernels; graphflow has no value for them)

(TensorFlow's BroadcastGradientArgs is a graphflow op of that name, `graphflow/ops/gradient_ops.py`.)
Each rule checks what it reads (dtypes of the pair, constant attrs) and names the node in its
errors; the op standing for the node carries the node's name, helpers sit under it.
"""

import numpy as np

from graphflow.interop.tensorflow.import_core import rule
from graphflow.ops import static_value
from graphflow.ops.registry import make_op

# TensorFlow's SELU constants (nn_ops' SeluGrad kernel)
_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717
_FLOAT_ONLY = frozenset(("EluGrad", "SeluGrad", "SoftplusGrad", "SoftsignGrad", "TanhGrad",
                         "SigmoidGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad", "InvGrad",
                         "LeakyReluGrad"))


def _public():
    import graphflow as tf  # noqa: PLC0415
    return tf


def _pair(ctx, node, inputs):
    if len(inputs) != 2:
        raise ctx.error(node, f"takes 2 inputs, has {len(inputs)}")
    a, b = inputs
    if a.dtype != b.dtype:
        raise ctx.error(node, f"inputs of different dtypes ({a.dtype.name}, {b.dtype.name})")
    if node.op in _FLOAT_ONLY and not a.dtype.is_floating:
        raise ctx.error(node, f"of dtype {a.dtype.name}: graphflow reads it for floating types")
    if not (a.dtype.is_floating or a.dtype.is_integer):
        raise ctx.error(node, f"of dtype {a.dtype.name}: expected a number type")
    return a, b


def _const(tf, value, like):
    return tf.constant(np.asarray(value, like.dtype.as_numpy_dtype))


def _named(ctx, node, value):
    """The node's own op: an Identity carrying its exact name."""
    return make_op("Identity", [value], {}, name=ctx.op_name(node)).outputs[0]


def _elementwise(tf, kind, a, b, attrs):
    zero = _const(tf, 0, a)
    one = _const(tf, 1, a)
    if kind == "ReluGrad":
        return tf.where(tf.greater(b, zero), a, tf.zeros_like(a))
    if kind == "Relu6Grad":
        keep = tf.logical_and(tf.greater(b, zero), tf.less(b, _const(tf, 6, a)))
        return tf.where(keep, a, tf.zeros_like(a))
    if kind == "LeakyReluGrad":
        alpha = _const(tf, attrs["alpha"], a)
        return tf.where(tf.greater(b, zero), a, a * alpha)
    if kind == "EluGrad":
        return tf.where(tf.less(b, zero), (b + one) * a, a)
    if kind == "SeluGrad":
        scale = _const(tf, _SELU_SCALE, a)
        scale_alpha = _const(tf, np.asarray(_SELU_SCALE, a.dtype.as_numpy_dtype)
                             * np.asarray(_SELU_ALPHA, a.dtype.as_numpy_dtype), a)
        return tf.where(tf.less(b, zero), a * (b + scale_alpha), a * scale)
    if kind == "SoftplusGrad":
        return a / (tf.exp(-b) + one)
    if kind == "SoftsignGrad":
        return a / tf.square(tf.abs(b) + one)
    # (y, dy) forms
    y, dy = a, b
    if kind == "TanhGrad":
        return dy * (one - y * y)
    if kind == "SigmoidGrad":
        return dy * y * (one - y)
    if kind == "SqrtGrad":
        return _const(tf, 0.5, y) * dy / y
    if kind == "RsqrtGrad":
        return _const(tf, -0.5, y) * (dy * y) * (y * y)
    return -dy * y * y  # ReciprocalGrad, InvGrad


@rule("tf_activation_grad")
def _activation_grad(ctx, node, inputs, record):
    attrs = ctx.attrs(node)
    a, b = _pair(ctx, node, inputs)
    tf = _public()
    with ctx.graph.name_scope(ctx.op_name(node)):
        value = _elementwise(tf, node.op, a, b, attrs)
    return [_named(ctx, node, value)]


@rule("tf_shape_n")
def _shape_n(ctx, node, inputs, record):
    attrs = ctx.attrs(node)
    if len(inputs) != attrs["N"]:
        raise ctx.error(node, f"has {len(inputs)} inputs, attr N = {attrs['N']}")
    tf = _public()
    out_type = tf.as_dtype(attrs["out_type"])
    with ctx.graph.name_scope(ctx.op_name(node)):
        shapes = [tf.shape(x, out_type=out_type) for x in inputs]
    return make_op("IdentityN", shapes, {}, name=ctx.op_name(node)).outputs


@rule("tf_concat_offset")
def _concat_offset(ctx, node, inputs, record):
    attrs = ctx.attrs(node)
    if len(inputs) != attrs["N"] + 1 or attrs["N"] < 2:
        raise ctx.error(node, f"has {len(inputs)} inputs, attr N = {attrs['N']}")
    axis = static_value.constant_value(inputs[0])
    if axis is None or np.asarray(axis).shape != ():
        raise ctx.error(node, "concat_dim must be a constant scalar")
    shapes = inputs[1:]
    dtype = shapes[0].dtype
    for s in shapes:
        if s.dtype != dtype or not dtype.is_integer or s.shape.ndims not in (None, 1):
            raise ctx.error(node, f"shape input {s.name} is not a 1-D integer vector of "
                                  f"{dtype.name}")
    tf = _public()
    with ctx.graph.name_scope(ctx.op_name(node)):
        rank = tf.size(shapes[0], out_type=dtype)
        axis_t = _const(tf, int(axis), shapes[0])
        axis_t = tf.where(tf.less(axis_t, _const(tf, 0, shapes[0])), axis_t + rank, axis_t)
        mask = tf.cast(tf.equal(tf.range(rank), axis_t), dtype)
        offsets = [tf.zeros_like(shapes[0])]
        for s in shapes[:-1]:
            offsets.append(offsets[-1] + s * mask)
    return make_op("IdentityN", offsets, {}, name=ctx.op_name(node)).outputs


@rule("tf_fused_batch_norm_grad")
def _fused_batch_norm_grad(ctx, node, inputs, record):
    attrs = ctx.attrs(node)
    if len(inputs) < 5:
        raise ctx.error(node, f"has {len(inputs)} inputs, TensorFlow's {node.op} takes more")
    dy, x, scale, mean, variance = inputs[:5]
    for t in (dy, scale, mean, variance):
        if t.dtype != x.dtype:
            raise ctx.error(node, f"input {t.name} of dtype {t.dtype.name}: graphflow reads "
                                  f"the op with every input of x's dtype {x.dtype.name}")
    gf = {"epsilon": float(attrs["epsilon"]), "data_format": attrs["data_format"],
          "is_training": bool(attrs["is_training"])}
    op = make_op("FusedBatchNormGrad", [dy, x, scale, mean, variance], gf,
                 name=ctx.op_name(node))
    return list(op.outputs) + [None, None]
