"""`tf.nn`'s statistics helpers that TF1 composes in Python from reductions:
`sufficient_statistics`, `normalize_moments`, `weighted_moments`, and `log_poisson_loss`."""

import math

from graphflow.framework.graph import name_scope
from graphflow.ops import array_ops, math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """(count, sum of (x - shift), sum of squares of (x - shift), shift) over `axes`; the
    count is a scalar of x's dtype."""
    keep = bool(keepdims if keepdims is not None else (keep_dims or False))
    with name_scope(name, "sufficient_statistics"):
        x = convert_to_tensor(x)
        axes = [int(a) for a in axes]
        if x.shape.is_fully_defined():
            count = 1
            for a in axes:
                count *= x.shape.dims[a]
            counts = convert_to_tensor(float(count), dtype=x.dtype)
        else:
            dims = array_ops.gather(shape_ops.shape(x), axes)
            counts = math_ops.cast(math_ops.reduce_prod(dims), x.dtype, name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, dtype=x.dtype)
            centered = x - shift
        else:
            centered = x
        m_ss = math_ops.reduce_sum(centered, axes, keepdims=keep, name="mean_ss")
        v_ss = math_ops.reduce_sum(math_ops.square(centered), axes, keepdims=keep, name="var_ss")
        return counts, m_ss, v_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """(mean, variance) from `sufficient_statistics`' sums."""
    with name_scope(name, "normalize"):
        divisor = math_ops.reciprocal(counts, name="divisor")
        shifted_mean = mean_ss * divisor
        mean = shifted_mean + shift if shift is not None else shifted_mean
        variance = variance_ss * divisor - math_ops.square(shifted_mean)
        return mean, variance


def weighted_moments(x, axes, frequency_weights, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of `x` over `axes` with each element counted `frequency_weights` times
    (broadcast against x)."""
    keep = bool(keepdims if keepdims is not None else (keep_dims or False))
    with name_scope(name, "weighted_moments"):
        x = convert_to_tensor(x)
        weights = convert_to_tensor(frequency_weights, dtype=x.dtype)
        weighted_sum = math_ops.reduce_sum(weights * x, axes, keepdims=True)
        total_weight = math_ops.reduce_sum(weights + 0.0 * x, axes, keepdims=True)
        mean = weighted_sum / total_weight
        variance = (math_ops.reduce_sum(weights * math_ops.squared_difference(x, mean), axes,
                                        keepdims=True) / total_weight)
        if not keep:
            mean = math_ops.reduce_sum(mean, axes)  # drop the kept size-1 axes
            variance = math_ops.reduce_sum(variance, axes)
        return mean, variance


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(log_input) - log_input * targets, plus Stirling's approximation of log(targets!)
    for targets > 1 when `compute_full_loss`."""
    with name_scope(name, "log_poisson_loss"):
        log_input = convert_to_tensor(log_input)
        targets = convert_to_tensor(targets, dtype=log_input.dtype)
        result = math_ops.exp(log_input) - log_input * targets
        if compute_full_loss:
            safe = math_ops.maximum(targets, 1.0)
            stirling = (targets * math_ops.log(safe) - targets
                        + 0.5 * math_ops.log(2.0 * math.pi * safe))
            result += math_ops.where(targets > 1.0, stirling, 0.0 * targets)
        return result


__all__ = ["sufficient_statistics", "normalize_moments", "weighted_moments", "log_poisson_loss"]
