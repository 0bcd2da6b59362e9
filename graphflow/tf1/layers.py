"""`tf.layers`: TF1's functional layers (dense, conv2d, max/average pooling, flatten, dropout).

A layer call opens a variable scope ('dense', 'dense_1', ... made unique among the scopes of the
current variable scope, or its `name`) and creates its variables there with `tf.get_variable`
('dense/kernel', 'dense/bias'; inside `tf.variable_scope("model")`: 'model/dense/kernel'), exactly
as TF1's layers do, so variable sharing has one mechanism: `reuse=True` (or a reusing enclosing
variable scope) returns the variables of an earlier call with the same scope name. Variables are
initialized by graph ops (random initializers draw at initialization time). Layers build ordinary
ops; they hold no state. The initializers live in `graphflow.tf1.init_ops` and are re-exported here.
"""

import numbers

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import GraphKeys, Tensor, get_default_graph
from graphflow.ops import array_ops, conv_ops, math_ops, nn_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor, identity
from graphflow.ops.state_ops import Variable
from graphflow.tf1.init_ops import (  # noqa: F401 - re-exported under tf.layers as before
    Initializer,
    compute_fans,
    constant_initializer,
    glorot_normal_initializer,
    glorot_uniform_initializer,
    ones_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    truncated_normal_initializer,
    variance_scaling_initializer,
    zeros_initializer,
)
from graphflow.tf1.variable_scope import get_variable, variable_scope

_ZEROS = zeros_initializer()  # TF1's default bias initializer (stateless, safe to share)


def _layer_scope(name, default_name, reuse):
    """The variable scope of one layer call, as TF1's layers choose it: the `name` as given; an
    unnamed layer that reuses shares the plain default name ('dense'); otherwise the default name
    made unique ('dense', 'dense_1', ...)."""
    if name is not None:
        return variable_scope(name, reuse=reuse)
    if reuse:
        return variable_scope(default_name, reuse=reuse)
    return variable_scope(None, default_name=default_name)


def _float_input(inputs, layer):
    x = convert_to_tensor(inputs)
    if not x.dtype.is_floating:
        raise TypeError(f"{layer}: inputs must be floating point, got {x.name} of dtype "
                        f"{x.dtype.name}")
    return x


def _no_constraints(layer, *constraints):
    if any(c is not None for c in constraints):
        raise NotImplementedError(f"{layer}: variable constraints are not supported; apply them "
                                  "with tf.assign after the training step")


def _finish(outputs, activation, activity_regularizer):
    if activation is not None:
        outputs = activation(outputs)
    if activity_regularizer is not None:
        graph = get_default_graph()
        with graph.name_scope("ActivityRegularizer"):
            graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, activity_regularizer(outputs))
    return outputs


# ------------------------------------------------------------------------------ layers
def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=_ZEROS, kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True,
          name=None, reuse=None):
    """`outputs = activation(inputs @ kernel + bias)` over the last axis of `inputs`."""
    _no_constraints("dense", kernel_constraint, bias_constraint)
    x = _float_input(inputs, "dense")
    in_dim = x.shape[-1] if x.shape.ndims else None
    if x.shape.ndims is None or x.shape.ndims < 2 or in_dim is None:
        raise ValueError(f"dense: the last dimension of the inputs must be known and the rank "
                         f">= 2, got {x.name} of shape {x.shape}")
    with _layer_scope(name, "dense", reuse):
        kernel = get_variable("kernel", [in_dim, int(units)], x.dtype, kernel_initializer,
                              kernel_regularizer, trainable)
        if x.shape.ndims == 2:
            outputs = math_ops.matmul(x, kernel)
        else:
            outputs = _dense_nd(x, kernel, int(units))
        if use_bias:
            bias = get_variable("bias", [int(units)], x.dtype, bias_initializer, bias_regularizer,
                                trainable)
            outputs = nn_ops.bias_add(outputs, bias)
        return _finish(outputs, activation, activity_regularizer)


def _dense_nd(x, kernel, units):
    """Apply the kernel to the last axis of a rank > 2 tensor: reshape, matmul, reshape back."""
    dims = x.shape.dims
    flat = shape_ops.reshape(x, [-1, dims[-1]])
    out = math_ops.matmul(flat, kernel)
    if all(d is not None for d in dims[1:-1]):
        return shape_ops.reshape(out, [-1] + list(dims[1:-1]) + [units])
    lead = shape_ops.shape(x)[:-1]
    return shape_ops.reshape(out, shape_ops.concat([lead, [units]], axis=0))


def _pair(value, what):
    if isinstance(value, numbers.Integral):
        return int(value), int(value)
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise ValueError(f"{what} must be an int or a pair of ints, got {value}")
    return value


def _padding(padding):
    p = str(padding).upper()
    if p not in ("VALID", "SAME"):
        raise ValueError(f"padding must be 'valid' or 'same', got {padding!r}")
    return p


def _data_format(data_format):
    if data_format == "channels_last":
        return "NHWC"
    if data_format == "channels_first":
        return "NCHW"
    raise ValueError(f"data_format must be 'channels_last' or 'channels_first', got {data_format!r}")


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=_ZEROS, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """2-D convolution layer: kernel [kh, kw, in_channels, filters] (+ bias, activation)."""
    _no_constraints("conv2d", kernel_constraint, bias_constraint)
    x = _float_input(inputs, "conv2d")
    fmt = _data_format(data_format)
    if x.shape.ndims != 4:
        raise ValueError(f"conv2d: inputs must have rank 4, got {x.name} of shape {x.shape}")
    in_channels = x.shape[3] if fmt == "NHWC" else x.shape[1]
    if in_channels is None:
        raise ValueError(f"conv2d: the channel dimension of the inputs must be known, got "
                         f"{x.name} of shape {x.shape}")
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(strides, "strides")
    dh, dw = _pair(dilation_rate, "dilation_rate")
    with _layer_scope(name, "conv2d", reuse):
        kernel = get_variable("kernel", [kh, kw, in_channels, int(filters)], x.dtype,
                              kernel_initializer, kernel_regularizer, trainable)
        four = (lambda a, b: [1, a, b, 1]) if fmt == "NHWC" else (lambda a, b: [1, 1, a, b])
        outputs = conv_ops.conv2d(x, kernel, strides=four(sh, sw), padding=_padding(padding),
                                  data_format=fmt, dilations=four(dh, dw))
        if use_bias:
            bias = get_variable("bias", [int(filters)], x.dtype, bias_initializer,
                                bias_regularizer, trainable)
            outputs = nn_ops.bias_add(outputs, bias, data_format=fmt)
        return _finish(outputs, activation, activity_regularizer)


def _pooling(pool, default_name, inputs, pool_size, strides, padding, data_format, name):
    x = convert_to_tensor(inputs)
    fmt = _data_format(data_format)
    ph, pw = _pair(pool_size, "pool_size")
    sh, sw = _pair(strides, "strides")
    four = (lambda a, b: [1, a, b, 1]) if fmt == "NHWC" else (lambda a, b: [1, 1, a, b])
    with get_default_graph().name_scope(name or default_name):
        return pool(x, ksize=four(ph, pw), strides=four(sh, sw), padding=_padding(padding),
                    data_format=fmt)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """Max pooling over `pool_size` windows moved by `strides`."""
    return _pooling(conv_ops.max_pool, "max_pooling2d", inputs, pool_size, strides, padding,
                    data_format, name)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                      name=None):
    """Average pooling over `pool_size` windows moved by `strides`."""
    return _pooling(conv_ops.avg_pool, "average_pooling2d", inputs, pool_size, strides, padding,
                    data_format, name)


def flatten(inputs, name=None, data_format="channels_last"):
    """[batch, d1, d2, ...] -> [batch, d1 * d2 * ...] (channels_first inputs are made
    channels-last first, as TF1 does, so a following dense layer sees the same order)."""
    x = convert_to_tensor(inputs)
    if x.shape.ndims is None or x.shape.ndims < 1:
        raise ValueError(f"flatten: inputs need a known rank >= 1, got {x.name} of shape {x.shape}")
    with get_default_graph().name_scope(name or "flatten"):
        if data_format == "channels_first" and x.shape.ndims > 2:
            x = array_ops.transpose(x, [0] + list(range(2, x.shape.ndims)) + [1])
        rest = x.shape.dims[1:]
        if all(d is not None for d in rest):
            return shape_ops.reshape(x, [-1, int(np.prod(rest, dtype=np.int64))])
        return shape_ops.reshape(x, shape_ops.stack([shape_ops.shape(x)[0], -1]))


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Drop each element with probability `rate` (scaling the rest by 1 / (1 - rate)) when
    `training` is true; otherwise pass `inputs` through. `training` may be a Python bool or a
    boolean scalar Tensor (e.g. a `placeholder_with_default(False, [])`), chosen at run time."""
    graph = get_default_graph()
    with graph.name_scope(name or "dropout") as scope:
        x = _float_input(inputs, "dropout")
        if isinstance(training, (Tensor, Variable)):
            training = convert_to_tensor(training)
            if training.dtype != dtypes.bool_ or training.shape.ndims not in (None, 0):
                raise TypeError(f"dropout: training must be a scalar bool, got {training.name} "
                                f"of dtype {training.dtype.name} and shape {training.shape}")
            dropped = nn_ops.dropout(x, rate=rate, noise_shape=noise_shape, seed=seed)
            return math_ops.where(training, dropped, x, name=scope)
        if training:
            return nn_ops.dropout(x, rate=rate, noise_shape=noise_shape, seed=seed)
        return identity(x, name=scope)


from graphflow.tf1.layers_norm import batch_normalization  # noqa: E402 - uses the helpers above

__all__ = ["dense", "batch_normalization",
           "conv2d", "max_pooling2d", "average_pooling2d", "flatten", "dropout",
           "zeros_initializer", "ones_initializer", "constant_initializer",
           "random_uniform_initializer", "random_normal_initializer",
           "truncated_normal_initializer", "variance_scaling_initializer",
           "glorot_uniform_initializer", "glorot_normal_initializer", "compute_fans"]


# The convolutions of layers_conv and the layer classes are part of `tf.layers` too.
from graphflow.tf1.layer_classes import (  # noqa: E402
    AveragePooling2D,
    AveragePooling3D,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Dense,
    Dropout,
    Flatten,
    Layer,
    MaxPooling2D,
    MaxPooling3D,
    SeparableConv2D,
)
from graphflow.tf1.layers_conv import (  # noqa: E402
    average_pooling1d,
    average_pooling3d,
    conv1d,
    conv2d_transpose,
    conv3d,
    max_pooling1d,
    max_pooling3d,
    separable_conv2d,
)

__all__ += ["conv1d", "conv2d_transpose", "conv3d", "separable_conv2d", "max_pooling1d",
            "average_pooling1d", "max_pooling3d", "average_pooling3d", "Layer", "Dense", "Conv2D",
            "Conv2DTranspose", "Conv3D", "SeparableConv2D", "Flatten", "Dropout", "MaxPooling2D",
            "AveragePooling2D", "MaxPooling3D", "AveragePooling3D"]
