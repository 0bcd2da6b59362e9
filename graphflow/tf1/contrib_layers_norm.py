"""`tf.contrib.layers.instance_norm` and `group_norm`: per-example normalizations with contrib's
names and defaults (scopes 'InstanceNorm' and 'GroupNorm', variables 'beta' (zeros) and 'gamma'
(ones) of one value per channel, epsilon 1e-6), composed of moments and elementwise ops as in TF,
so their gradients are those of the parts.
"""

from graphflow.ops import math_ops, nn_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.arg_scope import add_arg_scope
from graphflow.tf1.contrib_layers import _collect, _model_variable
from graphflow.tf1.init_ops import ones_initializer, zeros_initializer
from graphflow.tf1.nn_statistics import normalize_moments, sufficient_statistics
from graphflow.tf1.variable_scope import variable_scope


def _params(params_shape, dtype, center, scale, param_initializers, trainable, collections):
    inits = param_initializers or {}
    beta = gamma = None
    if center:
        beta = _model_variable("beta", params_shape, dtype, inits.get("beta", zeros_initializer()),
                               None, trainable, collections)
    if scale:
        gamma = _model_variable("gamma", params_shape, dtype,
                                inits.get("gamma", ones_initializer()), None, trainable,
                                collections)
    return beta, gamma


@add_arg_scope
def instance_norm(inputs, center=True, scale=True, epsilon=1e-6, activation_fn=None,
                  param_initializers=None, reuse=None, variables_collections=None,
                  outputs_collections=None, trainable=True, data_format="NHWC", scope=None):
    """Each example's channels normalized over the spatial axes (all but batch and channels),
    then scaled by 'gamma' and shifted by 'beta' (one per channel)."""
    x = convert_to_tensor(inputs)
    rank = x.shape.ndims
    if rank is None:
        raise ValueError(f"Inputs {x.name} has undefined rank.")
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    with variable_scope(scope, default_name="InstanceNorm", values=[x], reuse=reuse):
        axis = 1 if data_format == "NCHW" else rank - 1
        channels = x.shape.dims[axis]
        if channels is None:
            raise ValueError(f"Inputs {x.name} has undefined channels dimension {x.shape}.")
        moments_axes = [a for a in range(1, rank) if a != axis]
        beta, gamma = _params([channels], x.dtype, center, scale, param_initializers, trainable,
                              variables_collections)
        if data_format == "NCHW":
            broadcast = [1, channels] + [1] * (rank - 2)
            beta = None if beta is None else shape_ops.reshape(beta, broadcast)
            gamma = None if gamma is None else shape_ops.reshape(gamma, broadcast)
        mean, variance = nn_ops.moments(x, moments_axes, keep_dims=True)
        out = nn_ops.batch_normalization(x, mean, variance, offset=beta, scale=gamma,
                                         variance_epsilon=epsilon, name="instancenorm")
        if activation_fn is not None:
            out = activation_fn(out)
        return _collect(out, outputs_collections)


@add_arg_scope
def group_norm(inputs, groups=32, channels_axis=-1, reduction_axes=(-3, -2), center=True,
               scale=True, epsilon=1e-6, activation_fn=None, param_initializers=None, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True, scope=None,
               mean_close_to_zero=False):
    """Group normalization (Wu & He): the channels split into `groups` groups, each example
    normalized over each group and `reduction_axes` (by default height and width of NHWC), then
    scaled and shifted by per-channel 'gamma' and 'beta'."""
    x = convert_to_tensor(inputs)
    rank = x.shape.ndims
    if rank is None:
        raise ValueError(f"Inputs {x.name} has undefined rank.")
    if channels_axis > rank - 1:
        raise ValueError("Axis is out of bounds.")
    channels_axis = channels_axis + rank if channels_axis < 0 else channels_axis
    channels = x.shape.dims[channels_axis]
    if channels is None:
        raise ValueError(f"Inputs {x.name} has undefined channel dimension: {channels_axis}.")
    reduction_axes = [a + rank if a < 0 else a for a in reduction_axes]
    for a in reduction_axes:
        if a > rank:
            raise ValueError("Axis is out of bounds.")
        if x.shape.dims[a] is None:
            raise ValueError(f"Inputs {x.name} has undefined dimensions {a}.")
        if a == channels_axis:
            raise ValueError("reduction_axis must be mutually exclusive with channels_axis")
    if groups > channels:
        raise ValueError(f"Invalid groups {groups} for {channels} channels.")
    if channels % groups != 0:
        raise ValueError(f"{channels} channels is not commensurate with {groups} groups.")
    dynamic = shape_ops.shape(x)
    dims = [d if d is not None else dynamic[i] for i, d in enumerate(x.shape.dims)]
    before, after = dims[:channels_axis], dims[channels_axis + 1:]
    broadcast = [1] * len(before) + [groups, channels // groups] + [1] * len(after)
    grouped = shape_ops.reshape(x, shape_ops.stack(before + [groups, channels // groups] + after)
                                if any(d is None for d in x.shape.dims) else
                                before + [groups, channels // groups] + after)
    moments_axes = [channels_axis + 1] + [a + 1 if a > channels_axis else a
                                          for a in reduction_axes]
    with variable_scope(scope, default_name="GroupNorm", values=[x], reuse=reuse):
        beta, gamma = _params([channels], x.dtype, center, scale, param_initializers, trainable,
                              variables_collections)
        if mean_close_to_zero:
            counts, mean_ss, variance_ss, _ = sufficient_statistics(
                grouped, moments_axes, keep_dims=True)
            mean, variance = normalize_moments(counts, mean_ss, variance_ss, None)
        else:
            mean, variance = nn_ops.moments(grouped, moments_axes, keep_dims=True)
        gain = math_ops.rsqrt(variance + epsilon)
        offset = -mean * gain
        if gamma is not None:
            gamma = shape_ops.reshape(gamma, broadcast)
            gain = gain * gamma
            offset = offset * gamma
        if beta is not None:
            offset = offset + shape_ops.reshape(beta, broadcast)
        out = shape_ops.reshape(grouped * gain + offset,
                                shape_ops.stack(dims) if any(d is None for d in x.shape.dims)
                                else dims)
        if activation_fn is not None:
            out = activation_fn(out)
        return _collect(out, outputs_collections)


__all__ = ["instance_norm", "group_norm"]
