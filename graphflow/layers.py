"""`tf.layers`: TF1's functional layers (dense, conv2d, max/average pooling, flatten, dropout) and
the variable initializers they use (`glorot_uniform_initializer`, `zeros_initializer`, ...).

A layer call opens a name scope ('dense', 'dense_1', ...) and creates its variables inside it
('dense/kernel', 'dense/bias'), initialized by graph ops (random ops draw at initialization time,
so nothing large is stored as a constant). With a `name` and `reuse=True` a call shares the
variables of an earlier call of that name. Layers build ordinary ops; they hold no state.
"""

import math
import numbers

import numpy as np

from graphflow import dtypes
from graphflow.graph import GraphKeys, Tensor, get_default_graph
from graphflow.ops import array_ops, conv_ops, math_ops, nn_ops, random_ops, shape_ops
from graphflow.ops.core_ops import constant, convert_to_tensor, identity
from graphflow.ops.state_ops import Variable


# ------------------------------------------------------------------------------ initializers
class Initializer:
    """An initializer: `init(shape, dtype)` returns a Tensor (graph ops) with the initial value."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtypes.as_dtype(dtype) if dtype is not None else self.dtype
        return self._build(list(shape), dtype)

    def _build(self, shape, dtype):
        raise NotImplementedError


class zeros_initializer(Initializer):  # noqa: N801 - TF1 name
    def _build(self, shape, dtype):
        return shape_ops.zeros(shape, dtype=dtype)


class ones_initializer(Initializer):  # noqa: N801 - TF1 name
    def _build(self, shape, dtype):
        return shape_ops.ones(shape, dtype=dtype)


class constant_initializer(Initializer):  # noqa: N801 - TF1 name
    """A scalar fills the shape; an array must have exactly the shape's number of elements."""

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        super().__init__(dtype)
        self.value = value

    def _build(self, shape, dtype):
        if isinstance(self.value, numbers.Number):
            return shape_ops.fill(shape, convert_to_tensor(self.value, dtype=dtype))
        return constant(np.asarray(self.value), dtype=dtype, shape=shape)


class random_uniform_initializer(Initializer):  # noqa: N801 - TF1 name
    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def _build(self, shape, dtype):
        return random_ops.random_uniform(shape, self.minval, self.maxval, dtype=dtype,
                                         seed=self.seed)


class random_normal_initializer(Initializer):  # noqa: N801 - TF1 name
    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def _build(self, shape, dtype):
        return random_ops.random_normal(shape, self.mean, self.stddev, dtype=dtype, seed=self.seed)


class truncated_normal_initializer(random_normal_initializer):  # noqa: N801 - TF1 name
    def _build(self, shape, dtype):
        return random_ops.truncated_normal(shape, self.mean, self.stddev, dtype=dtype,
                                           seed=self.seed)


_ZEROS = zeros_initializer()  # TF1's default bias initializer (stateless, safe to share)


def compute_fans(shape):
    """(fan_in, fan_out) as TF1 computes them: conv kernels count the receptive field."""
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


class glorot_uniform_initializer(Initializer):  # noqa: N801 - TF1 name
    """Uniform in [-limit, limit] with limit = sqrt(6 / (fan_in + fan_out)) (Xavier/Glorot)."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.seed = seed

    def _build(self, shape, dtype):
        fan_in, fan_out = compute_fans(shape)
        limit = math.sqrt(6.0 / max(1.0, fan_in + fan_out))
        return random_ops.random_uniform(shape, -limit, limit, dtype=dtype, seed=self.seed)


class glorot_normal_initializer(glorot_uniform_initializer):  # noqa: N801 - TF1 name
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out)) (corrected for the truncation)."""

    def _build(self, shape, dtype):
        fan_in, fan_out = compute_fans(shape)
        stddev = math.sqrt(2.0 / max(1.0, fan_in + fan_out)) / 0.87962566103423978
        return random_ops.truncated_normal(shape, 0.0, stddev, dtype=dtype, seed=self.seed)


def _initializer(init):
    """Accept an Initializer instance, an Initializer class, or a plain callable(shape, dtype)."""
    if isinstance(init, type) and issubclass(init, Initializer):
        return init()
    if not callable(init):
        raise TypeError(f"an initializer must be callable(shape, dtype), got {init!r}")
    return init


# ------------------------------------------------------------------------------ variables
class _LayerScope:
    """Name scope + variable creation (or reuse) for one layer call."""

    def __init__(self, name, default_name, reuse):
        self.graph = get_default_graph()
        self.reuse = bool(reuse)
        if self.reuse and name is None:
            raise ValueError(f"reuse=True needs the name of the {default_name} layer to reuse")
        self.name = name or default_name
        self.explicit = name is not None
        prefix = self.graph.get_name_scope()
        self.existing_prefix = f"{prefix}/{self.name}" if prefix else self.name
        self._ctx = None
        self.var_prefix = None

    def __enter__(self):
        self._ctx = self.graph.name_scope(self.name)
        scope = self._ctx.__enter__()
        self.var_prefix = self.existing_prefix if self.reuse else scope[:-1]
        return self

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)

    def variable(self, name, shape, dtype, initializer, trainable, regularizer=None):
        full = f"{self.var_prefix}/{name}"
        existing = _find_variable(self.graph, full)
        if self.explicit and not self.reuse and existing is None:
            # a named layer's variables are 'name/kernel': a second call needs reuse=True
            full = f"{self.existing_prefix}/{name}"
            existing = _find_variable(self.graph, full)
        if self.reuse:
            if existing is None:
                raise ValueError(f"Variable {full} does not exist: reuse=True shares the "
                                 "variables of an earlier layer call with the same name.")
            if not existing.shape.is_compatible_with(shape) or existing.dtype != dtype:
                raise ValueError(f"Trying to share variable {full}, but specified shape {shape} "
                                 f"and dtype {dtype.name} and found shape {existing.shape} and "
                                 f"dtype {existing.dtype.name}.")
            return existing
        if existing is not None:
            raise ValueError(f"Variable {full} already exists, disallowed. Did you mean to set "
                             "reuse=True?")
        init = _initializer(initializer)

        def initial_value():
            with self.graph.name_scope("Initializer"):
                return init(shape, dtype=dtype)

        with self.graph.control_dependencies(None):
            var = Variable(initial_value, trainable=trainable, name=name, dtype=dtype)
        if regularizer is not None:
            with self.graph.name_scope(f"{name}/Regularizer"):
                penalty = regularizer(var.value())
            if penalty is not None:
                self.graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, penalty)
        return var


def _find_variable(graph, op_name):
    for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
        if v.op.name == op_name:
            return v
    return None


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


def _finish(scope, outputs, activation, activity_regularizer):
    if activation is not None:
        outputs = activation(outputs)
    if activity_regularizer is not None:
        with scope.graph.name_scope("ActivityRegularizer"):
            scope.graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES,
                                          activity_regularizer(outputs))
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
    with _LayerScope(name, "dense", reuse) as scope:
        kernel = scope.variable("kernel", [in_dim, int(units)], x.dtype,
                                kernel_initializer or glorot_uniform_initializer(), trainable,
                                kernel_regularizer)
        if x.shape.ndims == 2:
            outputs = math_ops.matmul(x, kernel)
        else:
            outputs = _dense_nd(x, kernel, int(units))
        if use_bias:
            bias = scope.variable("bias", [int(units)], x.dtype, bias_initializer, trainable,
                                  bias_regularizer)
            outputs = nn_ops.bias_add(outputs, bias)
        return _finish(scope, outputs, activation, activity_regularizer)


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
    with _LayerScope(name, "conv2d", reuse) as scope:
        kernel = scope.variable("kernel", [kh, kw, in_channels, int(filters)], x.dtype,
                                kernel_initializer or glorot_uniform_initializer(), trainable,
                                kernel_regularizer)
        four = (lambda a, b: [1, a, b, 1]) if fmt == "NHWC" else (lambda a, b: [1, 1, a, b])
        outputs = conv_ops.conv2d(x, kernel, strides=four(sh, sw), padding=_padding(padding),
                                  data_format=fmt, dilations=four(dh, dw))
        if use_bias:
            bias = scope.variable("bias", [int(filters)], x.dtype, bias_initializer, trainable,
                                  bias_regularizer)
            outputs = nn_ops.bias_add(outputs, bias, data_format=fmt)
        return _finish(scope, outputs, activation, activity_regularizer)


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


__all__ = ["dense", "conv2d", "max_pooling2d", "average_pooling2d", "flatten", "dropout",
           "zeros_initializer", "ones_initializer", "constant_initializer",
           "random_uniform_initializer", "random_normal_initializer",
           "truncated_normal_initializer", "glorot_uniform_initializer",
           "glorot_normal_initializer", "compute_fans"]
