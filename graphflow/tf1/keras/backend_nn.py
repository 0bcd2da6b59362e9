"""`tf.keras.backend`'s neural-network functions as Keras 2 defines them over TF1 ops:
activations, the backend cross-entropies, random tensors, convolution and pooling, composed from
graphflow's ops.

The cross-entropies follow Keras 2: on probabilities they clip to [epsilon, 1 - epsilon]
(binary: `-(t * log(p + eps) + (1 - t) * log(1 - p + eps))`, elementwise; categorical: normalised
over `axis` first), except when the probabilities come straight from a softmax/sigmoid (a Keras
activation, or a bare Softmax/Sigmoid op not made by a layer): then the logits before it are used,
which is exact. Random tensors without a seed draw one from numpy's global generator, as Keras
does. Convolution and pooling take `data_format` 'channels_last' (default) or 'channels_first'
(transposed to channels-last around the op, as TF does on CPU).
"""

import numpy as np

from graphflow.framework import dtypes
from graphflow.ops import array_ops, conv3d_ops, conv_ops, math_ops, nn_ops, random_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.keras import activations, backend


def _eps(dtype):
    return convert_to_tensor(backend.epsilon(), dtype=dtype)


# ------------------------------------------------------------------ activations
def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """max(x, 0) (x above `threshold`), capped at `max_value`, `alpha * (x - threshold)` below."""
    x = convert_to_tensor(x)
    if alpha != 0.0:
        if max_value is None and threshold == 0:
            return math_ops.leaky_relu(x, alpha=alpha)
        negative = math_ops.relu(-x + threshold) if threshold != 0 else math_ops.relu(-x)
    clip_max = max_value is not None
    if threshold != 0:
        x = x * math_ops.cast(math_ops.greater(x, threshold), x.dtype)
    elif max_value == 6:
        x, clip_max = math_ops.relu6(x), False
    else:
        x = math_ops.relu(x)
    if clip_max:
        x = math_ops.clip_by_value(x, convert_to_tensor(0.0, dtype=x.dtype),
                                   convert_to_tensor(max_value, dtype=x.dtype))
    if alpha != 0.0:
        x = x - alpha * negative
    return x


def elu(x, alpha=1.0):
    return activations.elu(convert_to_tensor(x), alpha)


def softmax(x, axis=-1):
    return nn_ops.softmax(x, axis=axis)


def sigmoid(x):
    return math_ops.sigmoid(x)


def hard_sigmoid(x):
    return activations.hard_sigmoid(convert_to_tensor(x))


def tanh(x):
    return math_ops.tanh(x)


def softplus(x):
    return math_ops.softplus(x)


def softsign(x):
    return math_ops.softsign(x)


def l2_normalize(x, axis=None):
    return nn_ops.l2_normalize(x, axis=axis)


# ------------------------------------------------------------------ cross-entropies
def _logits_before(output, kind, op_type):
    """The logits a softmax/sigmoid made `output` from, else None."""
    from graphflow.tf1.keras.base_layer import history
    found = activations.logits_of(output, kind)
    if found is not None:
        return found
    if output.op.type == op_type and history(output) is None:
        return output.op.inputs[0]
    return None


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    rank = output.shape.ndims
    last = axis in (-1, rank - 1) if rank is not None else axis == -1
    if not from_logits and last:
        logits = _logits_before(output, "softmax", "Softmax")
        if logits is not None:
            output, from_logits = logits, True
    if from_logits:
        return nn_ops.softmax_cross_entropy_with_logits_v2(labels=target, logits=output,
                                                           axis=axis)
    output = output / math_ops.reduce_sum(output, axis, True)
    output = math_ops.clip_by_value(output, _eps(output.dtype), 1.0 - _eps(output.dtype))
    return -math_ops.reduce_sum(math_ops.cast(target, output.dtype) * math_ops.log(output), axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    rank = output.shape.ndims
    if rank is None:
        raise ValueError("tf.keras.backend.sparse_categorical_crossentropy needs an output of "
                         "known rank")
    axis = axis % rank
    if not from_logits:
        logits = _logits_before(output, "softmax", "Softmax") if axis == rank - 1 else None
        if logits is None:
            output = math_ops.log(math_ops.clip_by_value(output, _eps(output.dtype),
                                                         1.0 - _eps(output.dtype)))
        else:
            output = logits
    if axis != rank - 1:
        perm = [i for i in range(rank) if i != axis] + [axis]
        output = array_ops.transpose(output, perm=perm)
    target = math_ops.cast(target, dtypes.int64)
    target_rank = target.shape.ndims
    reshaped = target_rank is not None and target_rank != rank - 1 or rank > 2
    if reshaped:
        dynamic = shape_ops.shape(output)
        target = shape_ops.reshape(target, [-1])
        output = shape_ops.reshape(output, [-1, output.shape.as_list()[-1] or dynamic[-1]])
    losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)
    if reshaped and rank >= 3:
        return shape_ops.reshape(losses, dynamic[:-1])
    return losses


def binary_crossentropy(target, output, from_logits=False):
    """Elementwise (no mean over the last axis: that is `tf.keras.losses`' version)."""
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    target = math_ops.cast(target, output.dtype)
    if not from_logits:
        logits = _logits_before(output, "sigmoid", "Sigmoid")
        if logits is not None:
            output, from_logits = logits, True
    if from_logits:
        return nn_ops.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    eps = _eps(output.dtype)
    p = math_ops.clip_by_value(output, eps, 1.0 - eps)
    bce = target * math_ops.log(p + eps) + (1.0 - target) * math_ops.log(1.0 - p + eps)
    return -bce


# ------------------------------------------------------------------ random tensors
def _seed(seed):
    return int(np.random.randint(10e6)) if seed is None else seed


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):  # noqa: A002
    return random_ops.random_normal(shape, mean, stddev, dtype or backend.floatx(), _seed(seed))


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):  # noqa: A002
    return random_ops.random_uniform(shape, minval, maxval, dtype or backend.floatx(),
                                     _seed(seed))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):  # noqa: A002
    return random_ops.truncated_normal(shape, mean, stddev, dtype or backend.floatx(),
                                       _seed(seed))


def random_binomial(shape, p=0.0, dtype=None, seed=None):  # noqa: A002
    """1 with probability `p`, else 0."""
    dtype = dtype or backend.floatx()
    draw = random_uniform(shape, dtype=dtype, seed=seed)
    return math_ops.where(draw <= p, shape_ops.ones(shape, dtype), shape_ops.zeros(shape, dtype))


random_bernoulli = random_binomial


def dropout(x, level, noise_shape=None, seed=None):
    return nn_ops.dropout(x, rate=level, noise_shape=noise_shape, seed=_seed(seed))


# ------------------------------------------------------------------ convolution and pooling
def _is_first(data_format, what):
    data_format = data_format or "channels_last"
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"tf.keras.backend.{what}: unknown data_format {data_format!r}")
    return data_format == "channels_first"


def _tf_padding(padding, what):
    if padding not in ("same", "valid"):
        raise ValueError(f"tf.keras.backend.{what}: unknown padding {padding!r} (expected "
                         "'same' or 'valid')")
    return padding.upper()


def _to_last(x, first, rank):
    return array_ops.transpose(x, [0] + list(range(2, rank)) + [1]) if first else x


def _to_first(x, first, rank):
    return array_ops.transpose(x, [0, rank - 1] + list(range(1, rank - 1))) if first else x


def conv1d(x, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    first = _is_first(data_format, "conv1d")
    x = _to_last(convert_to_tensor(x), first, 3)
    if padding == "causal":
        width = (int(kernel.shape[0]) - 1) * dilation_rate
        x, padding = _pad_left(x, width), "valid"
    out = conv_ops.conv1d(x, kernel, stride=strides, padding=_tf_padding(padding, "conv1d"),
                          dilations=dilation_rate)
    return _to_first(out, first, 3)


def _pad_left(x, width):
    return array_ops.pad(x, [[0, 0], [width, 0], [0, 0]])


def conv2d(x, kernel, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1)):
    first = _is_first(data_format, "conv2d")
    x = _to_last(convert_to_tensor(x), first, 4)
    out = conv_ops.conv2d(x, kernel, [1, *strides, 1], _tf_padding(padding, "conv2d"),
                          dilations=[1, *dilation_rate, 1])
    return _to_first(out, first, 4)


def conv3d(x, kernel, strides=(1, 1, 1), padding="valid", data_format=None,
           dilation_rate=(1, 1, 1)):
    first = _is_first(data_format, "conv3d")
    x = _to_last(convert_to_tensor(x), first, 5)
    out = conv3d_ops.conv3d(x, kernel, [1, *strides, 1], _tf_padding(padding, "conv3d"),
                            dilations=[1, *dilation_rate, 1])
    return _to_first(out, first, 5)


def pool2d(x, pool_size, strides=(1, 1), padding="valid", data_format=None, pool_mode="max"):
    first = _is_first(data_format, "pool2d")
    if pool_mode not in ("max", "avg"):
        raise ValueError(f"tf.keras.backend.pool2d: invalid pool_mode {pool_mode!r}")
    pool = conv_ops.max_pool if pool_mode == "max" else conv_ops.avg_pool
    x = _to_last(convert_to_tensor(x), first, 4)
    out = pool(x, [1, *pool_size, 1], [1, *strides, 1], _tf_padding(padding, "pool2d"))
    return _to_first(out, first, 4)


def pool3d(x, pool_size, strides=(1, 1, 1), padding="valid", data_format=None, pool_mode="max"):
    first = _is_first(data_format, "pool3d")
    if pool_mode not in ("max", "avg"):
        raise ValueError(f"tf.keras.backend.pool3d: invalid pool_mode {pool_mode!r}")
    pool = conv3d_ops.max_pool3d if pool_mode == "max" else conv3d_ops.avg_pool3d
    x = _to_last(convert_to_tensor(x), first, 5)
    out = pool(x, [1, *pool_size, 1], [1, *strides, 1], _tf_padding(padding, "pool3d"))
    return _to_first(out, first, 5)


def bias_add(x, bias, data_format=None):
    """Adds a 1-D bias on the channel axis (or a bias of x's shape without the batch axis)."""
    x, bias = convert_to_tensor(x), convert_to_tensor(bias)
    first = _is_first(data_format, "bias_add")
    if bias.shape.ndims == 1:
        if first and x.shape.ndims > 2:
            return x + shape_ops.reshape(bias, [1, -1] + [1] * (x.shape.ndims - 2))
        return nn_ops.bias_add(x, bias)
    if bias.shape.ndims != x.shape.ndims - 1:
        raise ValueError(f"tf.keras.backend.bias_add: unexpected bias dimensions "
                         f"{bias.shape.ndims}, expected 1 or {x.shape.ndims - 1}")
    return x + shape_ops.expand_dims(bias, 0)


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):  # noqa: A002
    return nn_ops.batch_normalization(x, mean, var, beta, gamma, epsilon)


__all__ = ["relu", "elu", "softmax", "sigmoid", "hard_sigmoid", "tanh", "softplus", "softsign",
           "l2_normalize", "categorical_crossentropy", "sparse_categorical_crossentropy",
           "binary_crossentropy", "random_normal", "random_uniform", "truncated_normal",
           "random_binomial", "random_bernoulli", "dropout", "conv1d", "conv2d", "conv3d",
           "pool2d", "pool3d", "bias_add", "batch_normalization"]
