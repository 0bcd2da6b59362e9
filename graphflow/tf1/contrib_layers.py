"""`tf.contrib.layers`: the TF1 contrib layer functions programs of that era use (`fully_connected`,
`conv2d`, `max_pool2d`, `avg_pool2d`, `flatten`, `batch_norm`, `layer_norm`, `dropout` (keep_prob),
`repeat`, `stack`, `one_hot_encoding`, `softmax`, `linear`), their initializers
(`xavier_initializer`, `variance_scaling_initializer`) and regularizers (`l1_regularizer`,
`l2_regularizer`, summed over a list by `apply_regularization`), with contrib's names and
defaults: variables are '<scope>/weights' and '<scope>/biases' (default scopes 'fully_connected',
'Conv', 'BatchNorm'), the activation defaults to ReLU, and every layer function takes part in
`arg_scope`. More layers: contrib_layers_conv.py, contrib_layers_norm.py.
"""

import functools
import math
import numbers

from graphflow.framework import dtypes
from graphflow.framework.graph import GraphKeys, get_default_graph, name_scope
from graphflow.ops import array_ops, conv_ops, math_ops, nn_ops, random_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor, identity
from graphflow.tf1.arg_scope import add_arg_scope
from graphflow.tf1.init_ops import Initializer, compute_fans, ones_initializer, zeros_initializer
from graphflow.tf1.variable_scope import get_variable, variable_scope


# ------------------------------------------------------------------------------- initializers
class _ContribVarianceScaling(Initializer):
    """contrib's variance scaling: uniform in [-sqrt(3 factor / n), +...] or a truncated normal with
    stddev sqrt(1.3 factor / n), n = fan_in, fan_out or their mean (mode FAN_IN/FAN_OUT/FAN_AVG)."""

    def __init__(self, factor, mode, uniform, seed, dtype):
        super().__init__(dtype)
        if mode not in ("FAN_IN", "FAN_OUT", "FAN_AVG"):
            raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")
        if not self.dtype.is_floating:
            raise TypeError("Cannot create initializer for non-floating point type.")
        self.factor, self.mode, self.uniform, self.seed = float(factor), mode, uniform, seed

    def _build(self, shape, dtype):
        fan_in, fan_out = compute_fans(shape)
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[self.mode]
        if self.uniform:
            limit = math.sqrt(3.0 * self.factor / n)
            return random_ops.random_uniform(shape, -limit, limit, dtype=dtype, seed=self.seed)
        return random_ops.truncated_normal(shape, 0.0, math.sqrt(1.3 * self.factor / n),
                                           dtype=dtype, seed=self.seed)


def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None,
                                 dtype=dtypes.float32):
    """contrib's He initializer by default (factor 2, FAN_IN, truncated normal)."""
    return _ContribVarianceScaling(factor, mode, uniform, seed, dtype)


def xavier_initializer(uniform=True, seed=None, dtype=dtypes.float32):
    """Glorot & Bengio's initializer: variance_scaling_initializer(1.0, 'FAN_AVG', uniform)."""
    return _ContribVarianceScaling(1.0, "FAN_AVG", uniform, seed, dtype)


xavier_initializer_conv2d = xavier_initializer
SLIM_INITIALIZERS = ["xavier_initializer", "xavier_initializer_conv2d",
                     "variance_scaling_initializer"]  # slim.initializers


# ------------------------------------------------------------------------------- regularizers
def _check_scale(scale, what):
    if isinstance(scale, numbers.Integral) and not isinstance(scale, bool):
        raise ValueError(f"scale cannot be an integer: {scale}")
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale}")
        return scale != 0.0
    raise TypeError(f"{what}: scale must be a float, got {scale!r}")


def l2_regularizer(scale, scope=None):
    """`weights -> scale * sum(weights ** 2) / 2` (tf.nn.l2_loss); scale 0 gives no loss."""
    if not _check_scale(scale, "l2_regularizer"):
        return lambda weights: None

    def l2(weights):
        with get_default_graph().name_scope(scope or "l2_regularizer"):
            w = convert_to_tensor(weights)
            return math_ops.multiply(convert_to_tensor(scale, dtype=w.dtype), nn_ops.l2_loss(w),
                                     name="value")
    return l2


def l1_regularizer(scale, scope=None):
    """`weights -> scale * sum(|weights|)`; scale 0 gives no loss."""
    if not _check_scale(scale, "l1_regularizer"):
        return lambda weights: None

    def l1(weights):
        with get_default_graph().name_scope(scope or "l1_regularizer"):
            w = convert_to_tensor(weights)
            return math_ops.multiply(convert_to_tensor(scale, dtype=w.dtype),
                                     math_ops.reduce_sum(math_ops.abs(w)), name="value")
    return l1


def apply_regularization(regularizer, weights_list=None):
    """The sum of `regularizer` over `weights_list` (default: the WEIGHTS collection), added to
    REGULARIZATION_LOSSES and returned."""
    graph = get_default_graph()
    weights_list = weights_list or graph.get_collection(GraphKeys.WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize.")
    with graph.name_scope("get_regularization_penalty") as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [p if p is not None else convert_to_tensor(0.0) for p in penalties]
        for p in penalties:
            if p.shape.ndims != 0:
                raise ValueError(f"regularizer must return a scalar Tensor instead of a Tensor "
                                 f"with rank {p.shape.ndims}.")
        total = math_ops.add_n(penalties, name=scope)
        graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, total)
        return total


# ------------------------------------------------------------------------------- layers
_ZEROS = zeros_initializer()  # contrib's default; biases_initializer=None leaves the biases out


def _model_variable(name, shape, dtype, initializer, regularizer, trainable, collections):
    var = get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                       regularizer=regularizer, trainable=trainable)
    graph = get_default_graph()
    extra = [GraphKeys.MODEL_VARIABLES] + list(collections or [])
    for key in extra:
        if var not in graph.get_collection(key):
            graph.add_to_collection(key, var)
    return var


def _collect(outputs, outputs_collections):
    for key in outputs_collections or []:
        get_default_graph().add_to_collection(key, outputs)
    return outputs


def _finish(x, normalizer_fn, normalizer_params, biases_initializer, biases_regularizer,
            num_outputs, activation_fn, variables_collections, trainable, data_format="NHWC"):
    if normalizer_fn is not None:
        x = normalizer_fn(x, **(normalizer_params or {}))
    elif biases_initializer is not None:
        biases = _model_variable("biases", [num_outputs], x.dtype, biases_initializer,
                                 biases_regularizer, trainable, variables_collections)
        x = nn_ops.bias_add(x, biases, data_format=data_format)
    if activation_fn is not None:
        x = activation_fn(x)
    return x


@add_arg_scope
def fully_connected(inputs, num_outputs, activation_fn=math_ops.relu, normalizer_fn=None,
                    normalizer_params=None, weights_initializer=None, weights_regularizer=None,
                    biases_initializer=_ZEROS, biases_regularizer=None, reuse=None,
                    variables_collections=None, outputs_collections=None, trainable=True,
                    scope=None):
    """`activation_fn(inputs @ weights + biases)` over the last axis (weights xavier-initialized,
    biases zero); with `normalizer_fn` the biases are left out, as in contrib."""
    x = convert_to_tensor(inputs)
    if x.shape.ndims is None or x.shape.ndims < 2 or x.shape.dims[-1] is None:
        raise ValueError(f"fully_connected: {x.name} needs rank >= 2 and a known last dimension, "
                         f"got shape {x.shape}")
    weights_initializer = weights_initializer or xavier_initializer()
    with variable_scope(scope, default_name="fully_connected", values=[x], reuse=reuse):
        in_size = x.shape.dims[-1]
        weights = _model_variable("weights", [in_size, num_outputs], x.dtype, weights_initializer,
                                  weights_regularizer, trainable, variables_collections)
        if x.shape.ndims > 2:
            out = math_ops.matmul(shape_ops.reshape(x, [-1, in_size]), weights)
            out_shape = shape_ops.concat([shape_ops.shape(x)[:-1], [num_outputs]], 0)
            out = shape_ops.reshape(out, out_shape)
        else:
            out = math_ops.matmul(x, weights)
        out = _finish(out, normalizer_fn, normalizer_params, biases_initializer,
                      biases_regularizer, num_outputs, activation_fn, variables_collections,
                      trainable)
        return _collect(out, outputs_collections)


linear = functools.partial(fully_connected, activation_fn=None)


def _pair(value, what):
    if isinstance(value, numbers.Integral):
        return [int(value), int(value)]
    value = [int(v) for v in value]
    if len(value) != 2:
        raise ValueError(f"{what} must be an int or a pair of ints, got {value}")
    return value


@add_arg_scope
def conv2d(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None, rate=1,
           activation_fn=math_ops.relu, normalizer_fn=None, normalizer_params=None,
           weights_initializer=None, weights_regularizer=None, biases_initializer=_ZEROS,
           biases_regularizer=None, reuse=None, variables_collections=None,
           outputs_collections=None, trainable=True, scope=None):
    """2-D convolution: weights [kh, kw, in, num_outputs] in scope 'Conv' (NHWC, or NCHW with
    `data_format`), then biases or `normalizer_fn`, then `activation_fn` (ReLU)."""
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be NHWC or NCHW, got {data_format}")
    x = convert_to_tensor(inputs)
    if x.shape.ndims != 4:
        raise ValueError(f"conv2d: inputs must be 4-D, got {x.name} of shape {x.shape}")
    channels = x.shape.dims[3 if data_format == "NHWC" else 1]
    if channels is None:
        raise ValueError(f"conv2d: the channel dimension of {x.name} must be known")
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride, "stride")
    rh, rw = _pair(rate, "rate")
    weights_initializer = weights_initializer or xavier_initializer()
    with variable_scope(scope, default_name="Conv", values=[x], reuse=reuse):
        weights = _model_variable("weights", [kh, kw, channels, num_outputs], x.dtype,
                                  weights_initializer, weights_regularizer, trainable,
                                  variables_collections)
        strides = [1, sh, sw, 1] if data_format == "NHWC" else [1, 1, sh, sw]
        dilations = [1, rh, rw, 1] if data_format == "NHWC" else [1, 1, rh, rw]
        out = conv_ops.conv2d(x, weights, strides=strides, padding=padding.upper(),
                              data_format=data_format, dilations=dilations)
        out = _finish(out, normalizer_fn, normalizer_params, biases_initializer,
                      biases_regularizer, num_outputs, activation_fn, variables_collections,
                      trainable, data_format)
        return _collect(out, outputs_collections)


def _pool(pool_fn, default_scope, inputs, kernel_size, stride, padding, data_format,
          outputs_collections, scope):
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be NHWC or NCHW, got {data_format}")
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride, "stride")
    ksize = [1, kh, kw, 1] if data_format == "NHWC" else [1, 1, kh, kw]
    strides = [1, sh, sw, 1] if data_format == "NHWC" else [1, 1, sh, sw]
    with get_default_graph().name_scope(scope or default_scope):
        out = pool_fn(convert_to_tensor(inputs), ksize, strides, padding.upper(),
                      data_format=data_format)
        return _collect(out, outputs_collections)


@add_arg_scope
def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    """Max pooling over kernel_size windows moved by `stride` (contrib defaults: 2, VALID)."""
    return _pool(conv_ops.max_pool, "MaxPool2D", inputs, kernel_size, stride, padding,
                 data_format, outputs_collections, scope)


@add_arg_scope
def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    """Average pooling over kernel_size windows moved by `stride` (contrib defaults: 2, VALID)."""
    return _pool(conv_ops.avg_pool, "AvgPool2D", inputs, kernel_size, stride, padding,
                 data_format, outputs_collections, scope)


@add_arg_scope
def flatten(inputs, outputs_collections=None, scope=None):
    """[batch, d1, d2, ...] -> [batch, d1 * d2 * ...] in name scope 'Flatten'."""
    x = convert_to_tensor(inputs)
    if x.shape.ndims is None or x.shape.ndims < 2:
        raise ValueError(f"flatten: inputs must have rank >= 2, got {x.name} of shape {x.shape}")
    with get_default_graph().name_scope(scope or "Flatten"):
        dims = x.shape.dims[1:]
        inner = -1 if any(d is None for d in dims) else int(math.prod(dims))
        return _collect(shape_ops.reshape(x, [-1, inner]), outputs_collections)


@add_arg_scope
def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None,
               param_initializers=None, param_regularizers=None,
               updates_collections=GraphKeys.UPDATE_OPS, is_training=True, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               batch_weights=None, fused=None, data_format="NHWC", zero_debias_moving_mean=False,
               scope=None, renorm=False, renorm_clipping=None, renorm_decay=0.99,
               adjustment=None):
    """contrib's batch norm over tf.layers.batch_normalization (scope 'BatchNorm': beta, gamma,
    moving_mean, moving_variance). The moving-average updates go to `updates_collections`
    (UPDATE_OPS: run them with the train op, as TF1 asks); with None they run with the output."""
    from graphflow.tf1.layers import batch_normalization
    if batch_weights is not None or zero_debias_moving_mean or renorm or adjustment is not None:
        raise NotImplementedError("batch_norm: batch_weights, zero_debias_moving_mean, renorm and "
                                  "adjustment are not available in graphflow")
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be NHWC or NCHW, got {data_format}")
    inits = param_initializers or {}
    regs = param_regularizers or {}
    graph = get_default_graph()
    before = list(graph.get_collection(GraphKeys.UPDATE_OPS))
    kwargs = {k: v for k, v in (("beta_initializer", inits.get("beta")),
                                 ("gamma_initializer", inits.get("gamma")),
                                 ("moving_mean_initializer", inits.get("moving_mean")),
                                 ("moving_variance_initializer", inits.get("moving_variance")))
              if v is not None}
    with variable_scope(scope, default_name="BatchNorm", values=[inputs], reuse=reuse) as vs:
        out = batch_normalization(inputs, axis=-1 if data_format == "NHWC" else 1, momentum=decay,
                                  epsilon=epsilon, center=center, scale=scale,
                                  beta_regularizer=regs.get("beta"),
                                  gamma_regularizer=regs.get("gamma"), training=is_training,
                                  trainable=trainable, name=vs, reuse=reuse, **kwargs)
        updates = [op for op in graph.get_collection(GraphKeys.UPDATE_OPS) if op not in before]
        if updates_collections is None and updates:
            ref = graph.get_collection_ref(GraphKeys.UPDATE_OPS)
            ref[:] = [op for op in ref if op not in updates]
            with graph.control_dependencies(updates):
                out = identity(out)
        elif updates_collections not in (None, GraphKeys.UPDATE_OPS):
            ref = graph.get_collection_ref(GraphKeys.UPDATE_OPS)
            ref[:] = [op for op in ref if op not in updates]
            for op in updates:
                graph.add_to_collections(updates_collections, op)
        if activation_fn is not None:
            out = activation_fn(out)
        return _collect(out, outputs_collections)


@add_arg_scope
def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """contrib's layer normalization: each example normalized over axes begin_norm_axis.. (by
    default all but the batch axis) with epsilon 1e-12, then scaled by 'gamma' and shifted by
    'beta' of shape inputs.shape[begin_params_axis:] (scope 'LayerNorm')."""
    x = convert_to_tensor(inputs)
    rank = x.shape.ndims
    if rank is None:
        raise ValueError(f"Inputs {x.name} have undefined rank.")
    norm_axis = begin_norm_axis % rank if begin_norm_axis < 0 else begin_norm_axis
    params_axis = begin_params_axis % rank if begin_params_axis < 0 else begin_params_axis
    if not 0 <= norm_axis < rank or not 0 <= params_axis < rank:
        raise ValueError(f"begin_norm_axis ({begin_norm_axis}) and begin_params_axis "
                         f"({begin_params_axis}) must be < rank(inputs) ({rank})")
    params_shape = x.shape.dims[params_axis:]
    if any(d is None for d in params_shape):
        raise ValueError(f"Inputs {x.name}: shape[{begin_params_axis}:] is not fully defined: "
                         f"{x.shape}")
    with variable_scope(scope, default_name="LayerNorm", values=[x], reuse=reuse):
        beta = gamma = None
        if center:
            beta = _model_variable("beta", params_shape, x.dtype, zeros_initializer(), None,
                                   trainable, variables_collections)
        if scale:
            gamma = _model_variable("gamma", params_shape, x.dtype, ones_initializer(), None,
                                    trainable, variables_collections)
        mean, variance = nn_ops.moments(x, list(range(norm_axis, rank)), keep_dims=True)
        out = nn_ops.batch_normalization(x, mean, variance, offset=beta, scale=gamma,
                                         variance_epsilon=1e-12)
        if activation_fn is not None:
            out = activation_fn(out)
        return _collect(out, outputs_collections)


# ------------------------------------------------------------------------------- small layers
@add_arg_scope
def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True, outputs_collections=None,
            scope=None, seed=None):
    """Dropout that keeps each element with probability `keep_prob` while training and is the
    identity otherwise (`is_training` a Python bool or a boolean tensor)."""
    with name_scope(scope, "Dropout"):
        x = convert_to_tensor(inputs)
        if is_training is True:
            out = nn_ops.dropout(x, keep_prob=keep_prob, noise_shape=noise_shape, seed=seed)
        elif is_training is False:
            out = x
        else:
            from graphflow.ops.control_flow_ops import cond
            out = cond(is_training,
                       lambda: nn_ops.dropout(x, keep_prob=keep_prob, noise_shape=noise_shape,
                                              seed=seed),
                       lambda: x)
        return _collect(out, outputs_collections)


def repeat(inputs, repetitions, layer, *args, **kwargs):
    """Apply `layer` `repetitions` times, scopes '<scope>/<scope>_1', '_2', ..."""
    scope = kwargs.pop("scope", None)
    name = scope or getattr(layer, "__name__", "repeat")
    with variable_scope(scope, default_name="Repeat"):
        outputs = inputs
        for i in range(repetitions):
            kwargs["scope"] = f"{name}_{i + 1}"
            outputs = layer(outputs, *args, **kwargs)
        return outputs


def stack(inputs, layer, stack_args, **kwargs):
    """Apply `layer` once per element of `stack_args` (a tuple of positional args, or one arg),
    scopes '<scope>/<scope>_1', '_2', ..."""
    scope = kwargs.pop("scope", None)
    name = scope or getattr(layer, "__name__", "stack")
    with variable_scope(scope, default_name="Stack"):
        outputs = inputs
        for i, args in enumerate(stack_args):
            kwargs["scope"] = f"{name}_{i + 1}"
            args = args if isinstance(args, (list, tuple)) else (args,)
            outputs = layer(outputs, *args, **kwargs)
        return outputs


def one_hot_encoding(labels, num_classes, on_value=1.0, off_value=0.0, outputs_collections=None,
                     scope=None):
    with name_scope(scope, "OneHotEncoding"):
        return _collect(array_ops.one_hot(labels, num_classes, on_value=on_value,
                                          off_value=off_value), outputs_collections)


def softmax(logits, scope=None):
    """Softmax over the last axis of a tensor of any rank."""
    with name_scope(scope, "softmax"):
        logits = convert_to_tensor(logits)
        return shape_ops.reshape(nn_ops.softmax(logits), shape_ops.shape(logits))


__all__ = ["fully_connected", "conv2d", "max_pool2d", "avg_pool2d", "flatten", "batch_norm",
           "layer_norm",
           "xavier_initializer", "xavier_initializer_conv2d", "variance_scaling_initializer",
           "l1_regularizer", "l2_regularizer", "apply_regularization", "linear", "dropout",
           "repeat", "stack", "one_hot_encoding", "softmax"]
