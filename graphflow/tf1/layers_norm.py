"""`tf.layers.batch_normalization`: TF1's batch normalization layer.

Variables (in the layer's variable scope, 'batch_normalization', 'batch_normalization_1', ...):
`gamma` (if scale), `beta` (if center), and the non-trainable `moving_mean` / `moving_variance`.
`training` is a Python bool or a scalar bool tensor (a placeholder). With a tensor, as in TF1's
layer: the fused path is a `tf.cond` (only the taken branch runs, forward and backward; its
inference branch returns the moving statistics as the batch's); the moments path computes the
batch statistics and `tf.where` picks them or the moving ones (per-channel vectors). An unfed
`placeholder_with_default` flag is a constant in a plan, so the untaken side is pruned.

When training can be true, the moving averages are updated by ops added to
`tf.GraphKeys.UPDATE_OPS` (TF1's idiom: run them with the train op, e.g. under
`tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS))`):
    moving -= (moving - batch_statistic) * (1 - momentum)
and with a training tensor that is false at run time the factor is 0, so nothing changes.
As in TF1: 4-D inputs normalized over axis 1 or 3 use the fused op (FusedBatchNorm), whose batch
variance for the moving average is the unbiased one (n / (n - 1)); other inputs use nn.moments
(biased variance).
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import GraphKeys, Tensor, get_default_graph
from graphflow.ops import control_flow_ops, gradient_ops, math_ops, nn_norm_ops, nn_ops, shape_ops, state_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.init_ops import ones_initializer, zeros_initializer
from graphflow.tf1.layers import _float_input, _layer_scope, _no_constraints
from graphflow.tf1.variable_scope import get_variable

_ZEROS, _ONES = zeros_initializer(), ones_initializer()  # TF1's defaults (stateless, shareable)


def _training_flag(training):
    """A Python bool, or a scalar bool Tensor."""
    if isinstance(training, (Tensor, state_ops.Variable)):
        training = convert_to_tensor(training)
        if training.dtype != dtypes.bool_ or training.shape.ndims not in (None, 0):
            raise TypeError(f"batch_normalization: training must be a scalar bool, got "
                            f"{training.name} of dtype {training.dtype.name} and shape "
                            f"{training.shape}")
        return training
    if training not in (True, False):
        raise TypeError(f"batch_normalization: training must be a bool or a bool tensor, got "
                        f"{training!r}")
    return bool(training)


def fused_usable(ndims, axis):
    """Whether the fused op takes inputs of rank `ndims` normalized over `axis` (4-D, axis 1 or 3)."""
    return ndims == 4 and axis in (1, 3)


def normalize_fused(x, gamma, beta, mean, variance, epsilon, data_format, training):
    """(outputs, batch_mean, batch_variance) with the fused op; batch_* are None when the batch
    statistics are never used (training is False)."""
    if training is False:
        y, _, _ = nn_norm_ops.fused_batch_norm(x, gamma, beta, mean, variance, epsilon,
                                               data_format, is_training=False)
        return y, None, None
    # The batch statistics only feed the moving averages: as in TF1, where FusedBatchNorm's
    # gradient ignores them, no gradient flows back through them (in a cond, a gradient of zeros
    # would otherwise be computed through them at x's size).
    def train():
        y, batch_mean, batch_variance = nn_norm_ops.fused_batch_norm(
            x, gamma, beta, epsilon=epsilon, data_format=data_format, is_training=True)
        return (y, gradient_ops.stop_gradient(batch_mean),
                gradient_ops.stop_gradient(batch_variance))

    if training is True:
        return train()

    def infer():  # (the moving statistics stand in for the batch's: the update is then a no-op)
        y, _, _ = nn_norm_ops.fused_batch_norm(x, gamma, beta, mean, variance, epsilon,
                                               data_format, is_training=False)
        return y, gradient_ops.stop_gradient(mean.value()), gradient_ops.stop_gradient(
            variance.value())
    return control_flow_ops.cond(training, train, infer)


def _normalize_moments(x, axis, gamma, beta, mean, variance, epsilon, training):
    ndims = x.shape.ndims
    reduce_axes = [i for i in range(ndims) if i != axis]
    broadcast = [1] * ndims
    broadcast[axis] = -1

    def shaped(v):
        return v if v is None or axis == ndims - 1 else shape_ops.reshape(v, broadcast)

    batch_mean = batch_variance = None
    if training is not False:
        batch_mean, batch_variance = nn_ops.moments(x, reduce_axes)
        if training is True:
            mean, variance = batch_mean, batch_variance
        else:
            mean = math_ops.where(training, batch_mean, mean)
            variance = math_ops.where(training, batch_variance, variance)
    y = nn_ops.batch_normalization(x, shaped(mean), shaped(variance), shaped(beta), shaped(gamma),
                                   epsilon)
    return y, batch_mean, batch_variance


def assign_moving_average(variable, value, momentum, training, name):
    """TF1's update: variable -= (variable - value) * decay, decay = 1 - momentum (0 when a
    training tensor is false)."""
    graph = get_default_graph()
    with graph.name_scope(name):
        dtype = variable.dtype
        decay = convert_to_tensor(1.0 - momentum, dtype=dtype, name="decay")
        if training is not True:
            decay = math_ops.where(training, decay, convert_to_tensor(0.0, dtype=dtype))
        delta = (variable.value() - value) * decay
        return state_ops.assign_sub(variable, delta)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=_ZEROS, gamma_initializer=_ONES,
                        moving_mean_initializer=_ZEROS,
                        moving_variance_initializer=_ONES, beta_regularizer=None,
                        gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                        training=False, trainable=True, name=None, reuse=None, renorm=False,
                        renorm_clipping=None, renorm_momentum=0.99, fused=None,
                        virtual_batch_size=None, adjustment=None):
    """`tf.layers.batch_normalization`: gamma * (x - mean) / sqrt(variance + epsilon) + beta over
    every axis but `axis`, with batch statistics when `training` and the moving ones otherwise."""
    _no_constraints("batch_normalization", beta_constraint, gamma_constraint)
    if renorm or virtual_batch_size is not None or adjustment is not None:
        raise NotImplementedError("batch_normalization: renorm, virtual_batch_size and adjustment "
                                  "are not supported")
    x = _float_input(inputs, "batch_normalization")
    ndims = x.shape.ndims
    if ndims is None:
        raise ValueError(f"batch_normalization: the rank of the inputs must be known, got "
                         f"{x.name} of unknown shape")
    if isinstance(axis, (list, tuple)):
        if len(axis) != 1:
            raise NotImplementedError("batch_normalization: only one normalization axis is "
                                      f"supported, got axis={axis}")
        axis = axis[0]
    axis = int(axis)
    if not -ndims <= axis < ndims:
        raise ValueError(f"batch_normalization: axis {axis} is out of range for inputs of rank "
                         f"{ndims}")
    axis %= ndims
    channels = x.shape[axis]
    if channels is None:
        raise ValueError(f"batch_normalization: the dimension of axis {axis} of the inputs must be "
                         f"known, got shape {x.shape}")
    use_fused = fused_usable(ndims, axis) if fused is None else bool(fused)
    if use_fused and not fused_usable(ndims, axis):
        raise ValueError(f"batch_normalization: fused=True needs 4-D inputs normalized over axis 1 "
                         f"or 3, got shape {x.shape} and axis {axis}")
    training = _training_flag(training)
    param_dtype = x.dtype
    with _layer_scope(name, "batch_normalization", reuse):
        gamma = get_variable("gamma", [channels], param_dtype, gamma_initializer,
                             gamma_regularizer, trainable) if scale else None
        beta = get_variable("beta", [channels], param_dtype, beta_initializer, beta_regularizer,
                            trainable) if center else None
        moving_mean = get_variable("moving_mean", [channels], param_dtype,
                                   moving_mean_initializer, trainable=False)
        moving_variance = get_variable("moving_variance", [channels], param_dtype,
                                       moving_variance_initializer, trainable=False)
        if use_fused:
            gamma_t = gamma if gamma is not None else shape_ops.ones([channels], x.dtype)
            beta_t = beta if beta is not None else shape_ops.zeros([channels], x.dtype)
            outputs, batch_mean, batch_variance = normalize_fused(
                x, gamma_t, beta_t, moving_mean, moving_variance, epsilon,
                "NHWC" if axis == 3 else "NCHW", training)
        else:
            outputs, batch_mean, batch_variance = _normalize_moments(
                x, axis, gamma, beta, moving_mean, moving_variance, epsilon, training)
        if training is not False:
            graph = get_default_graph()
            for variable, value, op_name in ((moving_mean, batch_mean, "AssignMovingAvg"),
                                             (moving_variance, batch_variance, "AssignMovingAvg_1")):
                update = assign_moving_average(variable, value, momentum, training, op_name)
                graph.add_to_collection(GraphKeys.UPDATE_OPS, update.op)
        return outputs


__all__ = ["batch_normalization"]
