"""Neural-network ops (the `tf.nn` family), except convolution and pooling (`conv_ops.py`):
softmax / log_softmax, the cross-entropy losses (softmax, sparse softmax, sigmoid), bias_add,
l2_loss, dropout and small compositions of them (moments, l2_normalize, xw_plus_b)."""

import numbers

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import gradient_ops, math_ops, random_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.math_ops import normalize_axes
from graphflow.ops.registry import (
    FLOATS,
    INTEGERS,
    broadcast_static,
    define,
    make_op,
    make_tensor,
    require_dtype,
    same_dtype,
)


def _class_axis(shape, axis, what="logits"):
    """Non-negative class axis, or None when the rank is unknown; checks rank >= 1 and the range."""
    if shape.ndims is None:
        return None
    if shape.ndims == 0:
        raise ValueError(f"{what} must have rank >= 1, got a scalar")
    return normalize_axes(axis, shape.ndims)[0]


def _drop_axis(shape, axis):
    if axis is None:
        return TensorShape(None)
    return TensorShape([d for i, d in enumerate(shape.dims) if i != axis])


# ---------------------------------------------------------------- softmax, log_softmax
def _softmax_infer(inputs, attrs):
    (x,) = inputs
    require_dtype(x, FLOATS, "logits")
    _class_axis(x.shape, attrs.get("axis", -1))
    return [(x.dtype, x.shape)]


define("Softmax", _softmax_infer, attrs="axis:int", retains_inputs=False,
       onnx={"op": "Softmax", "attrs": {"axis": "axis"}})
define("LogSoftmax", _softmax_infer, attrs="axis:int", retains_inputs=False,
       onnx={"op": "LogSoftmax", "attrs": {"axis": "axis"}})


def _axis_arg(axis, dim):
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    return -1 if axis is None else int(axis)


def softmax(logits, axis=None, name=None, dim=None):
    """`tf.nn.softmax`: exp(logits) / sum(exp(logits), axis), computed stably (default axis -1)."""
    logits = convert_to_tensor(logits)
    return make_tensor("Softmax", (logits,), {"axis": _axis_arg(axis, dim)}, name=name or "Softmax")


def log_softmax(logits, axis=None, name=None, dim=None):
    """`tf.nn.log_softmax`: logits - log(sum(exp(logits), axis)), computed stably."""
    logits = convert_to_tensor(logits)
    return make_tensor("LogSoftmax", (logits,), {"axis": _axis_arg(axis, dim)},
                       name=name or "LogSoftmax")


# ---------------------------------------------------------------- cross entropies
def _softmax_xent_infer(inputs, attrs):
    features, labels = inputs
    dt = same_dtype(inputs, "logits and labels")
    require_dtype(features, FLOATS, "logits")
    try:
        shape = features.shape.merge_with(labels.shape)
    except ValueError:
        raise ValueError(f"logits and labels must have the same shape, got {features.shape} and "
                         f"{labels.shape}") from None
    axis = _class_axis(shape, attrs.get("axis", -1))
    return [(dt, _drop_axis(shape, axis)), (dt, shape)]


define("SoftmaxCrossEntropyWithLogits", _softmax_xent_infer,
       attrs="axis:int labels_stop_gradient:bool", retains_inputs=False, onnx={"converter": "softmax_xent"})


def _sparse_xent_infer(inputs, attrs):
    features, labels = inputs
    require_dtype(features, FLOATS, "logits")
    require_dtype(labels, (dtypes.int32, dtypes.int64), "labels")
    fs, ls = features.shape, labels.shape
    if fs.ndims == 0:
        raise ValueError("logits must have rank >= 1, got a scalar")
    if fs.ndims is not None and ls.ndims is not None and ls.ndims != fs.ndims - 1:
        raise ValueError(f"labels must have rank {fs.ndims - 1} (the rank of logits minus 1), got "
                         f"labels of shape {ls} and logits of shape {fs}")
    if fs.ndims is None and ls.ndims is None:
        return [(features.dtype, TensorShape(None)), (features.dtype, TensorShape(None))]
    if fs.ndims is None:
        fs = TensorShape(list(ls.dims) + [None])
    batch = fs[:-1]
    if ls.ndims is not None:
        try:
            batch = batch.merge_with(ls)
        except ValueError:
            raise ValueError(f"labels of shape {ls} do not match logits of shape {fs} (the labels "
                             "shape must be the logits shape without its last dimension)") from None
    return [(features.dtype, batch), (features.dtype, batch.concatenate(TensorShape([fs[-1]])))]


define("SparseSoftmaxCrossEntropyWithLogits", _sparse_xent_infer, retains_inputs=False,
       onnx={"converter": "sparse_softmax_xent"})


def softmax_cross_entropy_with_logits_op(features, labels, axis=-1, name=None):
    """The raw op: returns (loss, backprop) where backprop = softmax(features) - labels."""
    op = make_op("SoftmaxCrossEntropyWithLogits", (features, labels), {"axis": int(axis)},
                 name=name or "SoftmaxCrossEntropyWithLogits")
    return op.outputs[0], op.outputs[1]


def sparse_softmax_cross_entropy_with_logits_op(features, labels, name=None):
    """The raw op: returns (loss, backprop) where backprop = softmax(features) - one_hot(labels)."""
    op = make_op("SparseSoftmaxCrossEntropyWithLogits", (features, labels),
                 name=name or "SparseSoftmaxCrossEntropyWithLogits")
    return op.outputs[0], op.outputs[1]


def _broadcast_xent_inputs(logits, labels):
    """TF1 broadcasts logits and labels against each other (labels [batch, 1] or [1, classes]
    with logits [batch, classes]): static shapes are compared only where both are known, and
    shapes that merge go to the op as they are (unknown dims are checked when it runs)."""
    try:
        logits.shape.merge_with(labels.shape)
        return logits, labels
    except ValueError:
        pass
    try:
        broadcast_static(logits.shape, labels.shape)
    except ValueError:
        raise ValueError(f"logits and labels must be broadcast-compatible, got {logits.shape} "
                         f"and {labels.shape}") from None
    return (math_ops.add(logits, shape_ops.zeros_like(labels)),
            math_ops.add(labels, shape_ops.zeros_like(logits)))


def _check_sentinel(sentinel, fn_name):
    if sentinel is not None:
        raise ValueError(f"Only call `{fn_name}` with named arguments (labels=..., logits=..., ...)")


def softmax_cross_entropy_with_logits_v2(_sentinel=None, labels=None, logits=None, axis=None,
                                         name=None, dim=None):
    """`tf.nn.softmax_cross_entropy_with_logits_v2`: -sum(labels * log_softmax(logits), axis).

    `labels` are probabilities (each row a distribution); gradients flow into both arguments."""
    _check_sentinel(_sentinel, "softmax_cross_entropy_with_logits_v2")
    if labels is None or logits is None:
        raise ValueError("softmax_cross_entropy_with_logits needs both labels= and logits=")
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, dtype=logits.dtype)
    logits, labels = _broadcast_xent_inputs(logits, labels)
    loss, _ = softmax_cross_entropy_with_logits_op(logits, labels, _axis_arg(axis, dim),
                                                   name=name or "softmax_cross_entropy_with_logits")
    return loss


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1, name=None,
                                      axis=None):
    """`tf.nn.softmax_cross_entropy_with_logits` (TF1): like the _v2 version, but no gradient flows
    into `labels` (TF1 wraps them in stop_gradient)."""
    _check_sentinel(_sentinel, "softmax_cross_entropy_with_logits")
    if labels is None or logits is None:
        raise ValueError("softmax_cross_entropy_with_logits needs both labels= and logits=")
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, dtype=logits.dtype)
    logits, labels = _broadcast_xent_inputs(logits, labels)
    axis = _axis_arg(axis, None if dim == -1 else dim)
    op = make_op("SoftmaxCrossEntropyWithLogits", (logits, labels),
                 {"axis": axis, "labels_stop_gradient": True},
                 name=name or "softmax_cross_entropy_with_logits")
    return op.outputs[0]


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """`tf.nn.sparse_softmax_cross_entropy_with_logits`: integer class `labels` (rank of logits - 1);
    a label outside [0, num_classes) is an error when the op runs."""
    _check_sentinel(_sentinel, "sparse_softmax_cross_entropy_with_logits")
    if labels is None or logits is None:
        raise ValueError("sparse_softmax_cross_entropy_with_logits needs both labels= and logits=")
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels)
    loss, _ = sparse_softmax_cross_entropy_with_logits_op(
        logits, labels, name=name or "SparseSoftmaxCrossEntropyWithLogits")
    return loss


def _sigmoid_xent_infer(inputs, attrs):
    logits, labels = inputs
    dt = same_dtype(inputs, "logits and labels")
    require_dtype(logits, FLOATS, "logits")
    try:
        shape = logits.shape.merge_with(labels.shape)
    except ValueError:
        raise ValueError(f"logits and labels must have the same shape, got {logits.shape} and "
                         f"{labels.shape}") from None
    return [(dt, shape)]


define("SigmoidCrossEntropyWithLogits", _sigmoid_xent_infer, elementwise=True,
       onnx={"converter": "sigmoid_xent"})


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """`tf.nn.sigmoid_cross_entropy_with_logits`: elementwise
    max(x, 0) - x * z + log(1 + exp(-|x|)) for logits x and labels z (stable for any x)."""
    _check_sentinel(_sentinel, "sigmoid_cross_entropy_with_logits")
    if labels is None or logits is None:
        raise ValueError("sigmoid_cross_entropy_with_logits needs both labels= and logits=")
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, dtype=logits.dtype)
    return make_tensor("SigmoidCrossEntropyWithLogits", (logits, labels),
                       name=name or "logistic_loss")


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None,
                                       targets=None):
    """`tf.nn.weighted_cross_entropy_with_logits`: sigmoid cross-entropy with the positive term
    weighted by `pos_weight`: (1 - z) * x + (1 + (q - 1) * z) * (log1p(exp(-|x|)) + relu(-x))."""
    labels = targets if labels is None else labels
    if labels is None or logits is None or pos_weight is None:
        raise ValueError("weighted_cross_entropy_with_logits needs labels, logits and pos_weight")
    with name_scope(name, "logistic_loss", [logits, labels]):
        x = convert_to_tensor(logits)
        z = convert_to_tensor(labels, dtype=x.dtype)
        q = convert_to_tensor(pos_weight, dtype=x.dtype)
        log_weight = 1.0 + (q - 1.0) * z
        soft = math_ops.log1p(math_ops.exp(-math_ops.abs(x))) + math_ops.relu(-x)
        return (1.0 - z) * x + log_weight * soft


# ---------------------------------------------------------------- bias_add, l2_loss
def _channel_axis(data_format, ndims):
    if data_format in (None, "NHWC", "NWC", "NDHWC", "N...C"):
        return ndims - 1
    if data_format in ("NCHW", "NCW", "NCDHW", "NC..."):
        return 1
    raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")


def _bias_add_infer(inputs, attrs):
    value, bias = inputs
    dt = same_dtype(inputs, "value and bias")
    require_dtype(value, FLOATS + INTEGERS, "value")
    if bias.shape.ndims is not None and bias.shape.ndims != 1:
        raise ValueError(f"bias must be 1-D, got shape {bias.shape}")
    shape = value.shape
    if shape.ndims is None:
        return [(dt, shape)]
    if shape.ndims < 2:
        raise ValueError(f"value must have rank >= 2, got shape {shape}")
    c = _channel_axis(attrs.get("data_format"), shape.ndims)
    channels = TensorShape([shape[c]])
    try:
        channels = channels.merge_with(bias.shape)
    except ValueError:
        raise ValueError(f"bias of shape {bias.shape} does not match the channel dimension of value "
                         f"{shape} (data_format={attrs.get('data_format', 'NHWC')})") from None
    dims = list(shape.dims)
    dims[c] = channels[0]
    return [(dt, TensorShape(dims))]


define("BiasAdd", _bias_add_infer, inplace_inputs=(0,), attrs="data_format:none|string",
       fresh_output=True, onnx={"converter": "bias_add"})


def _bias_add_grad_infer(inputs, attrs):
    (g,) = inputs
    require_dtype(g, FLOATS + INTEGERS, "out_backprop")
    if g.shape.ndims is None:
        return [(g.dtype, TensorShape([None]))]
    if g.shape.ndims < 2:
        raise ValueError(f"out_backprop must have rank >= 2, got shape {g.shape}")
    return [(g.dtype, TensorShape([g.shape[_channel_axis(attrs.get("data_format"), g.shape.ndims)]]))]


define("BiasAddGrad", _bias_add_grad_infer, attrs="data_format:none|string", retains_inputs=False,
       onnx={"converter": "bias_add_grad"})


def bias_add(value, bias, data_format=None, name=None):
    """`tf.nn.bias_add`: adds the 1-D `bias` along the channel axis (last for NHWC, 1 for NCHW)."""
    value = convert_to_tensor(value)
    bias = convert_to_tensor(bias, dtype=value.dtype)
    return make_tensor("BiasAdd", (value, bias), {"data_format": data_format or "NHWC"},
                       name=name or "BiasAdd")


def bias_add_grad(out_backprop, data_format="NHWC", name=None):
    """The bias gradient of BiasAdd: `out_backprop` summed over every axis but the channel axis."""
    return make_tensor("BiasAddGrad", (convert_to_tensor(out_backprop),),
                       {"data_format": data_format or "NHWC"}, name=name or "BiasAddGrad")


def _l2_loss_infer(inputs, attrs):
    (t,) = inputs
    require_dtype(t, FLOATS, "t")
    return [(t.dtype, TensorShape([]))]


define("L2Loss", _l2_loss_infer, retains_inputs=False, onnx={"converter": "l2_loss"})


def l2_loss(t, name=None):
    """`tf.nn.l2_loss`: sum(t ** 2) / 2."""
    return make_tensor("L2Loss", (convert_to_tensor(t),), name=name or "L2Loss")


def xw_plus_b(x, weights, biases, name=None):
    """`tf.nn.xw_plus_b`: matmul(x, weights) + biases."""
    with name_scope(name, "xw_plus_b", [x, weights, biases]):
        return bias_add(math_ops.matmul(x, weights), biases)


def relu_layer(x, weights, biases, name=None):
    """`tf.nn.relu_layer`: relu(matmul(x, weights) + biases)."""
    with name_scope(name, "relu_layer", [x, weights, biases]) as scope:
        return math_ops.relu(bias_add(math_ops.matmul(x, weights), biases), name=scope)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """`tf.nn.l2_normalize`: x / sqrt(max(sum(x ** 2, axis), epsilon))."""
    axis = dim if axis is None else axis
    with name_scope(name, "l2_normalize", [x]):
        x = convert_to_tensor(x)
        square_sum = math_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        return x * math_ops.rsqrt(math_ops.maximum(square_sum,
                                                   convert_to_tensor(epsilon, dtype=x.dtype)))


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """`tf.nn.moments`: (mean, variance) of `x` over `axes`, built as TF builds it: the mean once
    (kept dims, squeezed after), the variance around `stop_gradient(mean)` (the gradient through
    that mean is zero in exact arithmetic, so no op computes it), float16 input summed in float32."""
    keep = bool(keepdims if keepdims is not None else (keep_dims or False))
    with name_scope(name, "moments", [x]):
        x = convert_to_tensor(x)
        axes = [int(a) for a in axes] if isinstance(axes, (list, tuple)) else int(axes)
        y = math_ops.cast(x, dtypes.float32) if x.dtype == dtypes.float16 else x
        mean = math_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        variance = math_ops.reduce_mean(
            math_ops.squared_difference(y, gradient_ops.stop_gradient(mean)), axes,
            keepdims=True, name="variance")
        if not keep:
            squeeze_axes = axes if isinstance(axes, list) else [axes]
            mean = shape_ops.squeeze(mean, squeeze_axes)
            variance = shape_ops.squeeze(variance, squeeze_axes)
        if x.dtype == dtypes.float16:
            return math_ops.cast(mean, dtypes.float16), math_ops.cast(variance, dtypes.float16)
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """`tf.nn.batch_normalization`: scale * (x - mean) / sqrt(variance + epsilon) + offset
    (offset and scale may be None)."""
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x)
        inv = math_ops.rsqrt(convert_to_tensor(variance, dtype=x.dtype) + variance_epsilon)
        if scale is not None:
            inv = inv * convert_to_tensor(scale, dtype=x.dtype)
        shift = -convert_to_tensor(mean, dtype=x.dtype) * inv
        if offset is not None:
            shift = shift + convert_to_tensor(offset, dtype=x.dtype)
        return x * inv + shift


# ---------------------------------------------------------------- dropout
def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """`tf.nn.dropout` (TF1): keeps each element with probability `keep_prob` and scales the kept
    ones by 1 / keep_prob (or pass `rate` = 1 - keep_prob). The mask comes from a random op, so it
    is redrawn at every run and never constant-folded."""
    if (keep_prob is None) == (rate is None):
        raise ValueError("dropout needs exactly one of keep_prob and rate")
    with name_scope(name, "dropout", [x]):
        x = convert_to_tensor(x)
        if not x.dtype.is_floating:
            raise ValueError(f"dropout needs a floating point tensor, got {x.name} of dtype "
                             f"{x.dtype.name}")
        if keep_prob is None:
            if isinstance(rate, numbers.Real) and not 0 <= rate < 1:
                raise ValueError(f"rate must be a scalar in [0, 1), got {rate}")
            keep_prob = 1 - rate if isinstance(rate, numbers.Real) else 1.0 - convert_to_tensor(
                rate, dtype=x.dtype)
        if isinstance(keep_prob, numbers.Real):
            if not 0 < keep_prob <= 1:
                raise ValueError(f"keep_prob must be a scalar in (0, 1], got {keep_prob}")
            if keep_prob == 1:
                return x
        keep_prob = convert_to_tensor(keep_prob, dtype=x.dtype, name="keep_prob")
        if noise_shape is None:
            noise_shape = _shape_of(x)
        uniform = random_ops.random_uniform(noise_shape, seed=seed, dtype=x.dtype)
        binary = math_ops.floor(keep_prob + uniform)
        out = math_ops.truediv(x, keep_prob) * binary
        out.set_shape(x.shape)  # TF1's: a keep_prob of unknown shape leaves x's shape
        return out


def _shape_of(x):
    """A shape for the dropout mask: the static shape when fully known, else tf.shape(x)."""
    if x.shape.is_fully_defined():
        return list(x.shape.dims)
    return shape_ops.shape(x)


def swish(features, name=None):
    """`tf.nn.swish`: features * sigmoid(features)."""
    with name_scope(name, "swish", [features]):
        x = convert_to_tensor(features, name="features")
        return math_ops.multiply(x, math_ops.sigmoid(x))


def crelu(features, name=None, axis=-1):
    """`tf.nn.crelu`: relu(concat([features, -features], axis)) (twice the depth)."""
    with name_scope(name, "CRelu", [features]):
        x = convert_to_tensor(features, name="features")
        both = shape_ops.concat([x, math_ops.negative(x)], axis)
        return math_ops.relu(both)


def zero_fraction(value, name=None):
    """`tf.nn.zero_fraction`: the fraction of zeros in `value` (a float32 scalar)."""
    with name_scope(name, "zero_fraction", [value]):
        value = convert_to_tensor(value, name="value")
        zero = convert_to_tensor(0, dtype=value.dtype)
        return math_ops.reduce_mean(math_ops.cast(math_ops.equal(value, zero), dtypes.float32))


__all__ = [
    "swish", "crelu", "zero_fraction",
    "softmax", "log_softmax", "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2", "sparse_softmax_cross_entropy_with_logits",
    "sigmoid_cross_entropy_with_logits", "weighted_cross_entropy_with_logits", "bias_add",
    "l2_loss", "xw_plus_b", "relu_layer", "l2_normalize", "moments", "dropout", "batch_normalization",
]
