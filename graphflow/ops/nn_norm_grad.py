"""Gradient rules for FusedBatchNorm and FusedBatchNormGrad.

FusedBatchNorm: the y gradient goes through the FusedBatchNormGrad op; gradients arriving at the
statistics outputs (batch_mean, batch_variance and the reserve spaces, e.g. from a moving-average
update someone differentiates) are added with ordinary ops, so every output is differentiable. In
inference mode the `mean`/`variance` inputs get their gradients too.

FusedBatchNormGrad (second derivatives): as TF does, the rule rebuilds the backprop computation
from ordinary ops (recomputing the batch statistics from x in training mode, so the reserve inputs
get no gradient) and differentiates that with `gradients`.
"""

from graphflow.ops import math_ops as m
from graphflow.ops import nn_norm_ops as bn
from graphflow.ops import shape_ops
from graphflow.ops.gradients import dense_gradients as gradients
from graphflow.ops.registry import register_gradient


def _used(grad):
    return grad is not None and grad.op.type != "ZerosLike"


def _sum(terms):
    return None if not terms else terms[0] if len(terms) == 1 else m.add_n(terms)


def _count(x, scale):
    """Elements per channel, as a scalar of x's dtype (read at run time)."""
    return m.cast(shape_ops.size(x), x.dtype) / m.cast(shape_ops.size(scale), x.dtype)


@register_gradient("FusedBatchNorm")
def _fused_batch_norm_grad(op, dy, d_mean, d_var, d_reserve_mean, d_reserve_var):
    x, scale, _, mean_in, var_in = op.inputs
    eps, fmt, training = op.attrs["epsilon"], op.attrs["data_format"], op.attrs["is_training"]
    axes = bn.reduction_axes(fmt)
    mean, variance = op.outputs[3], op.outputs[4]
    dy = dy if dy is not None else shape_ops.zeros_like(op.outputs[0])
    dx, d_scale, d_offset = bn.fused_batch_norm_grad(dy, x, scale, mean, variance, eps, fmt,
                                                     training)
    if not training:
        inv = m.rsqrt(var_in + eps)
        g = m.reduce_sum(dy * bn.per_channel(scale, fmt) * (x - bn.per_channel(mean_in, fmt)), axes)
        d_mean_in = [m.negative(m.reduce_sum(dy, axes) * scale * inv)]
        d_var_in = [g * (-0.5) * inv * inv * inv]
        for grad, into in ((d_mean, d_mean_in), (d_reserve_mean, d_mean_in), (d_var, d_var_in),
                           (d_reserve_var, d_var_in)):
            if _used(grad):
                into.append(grad)
        return dx, d_scale, d_offset, _sum(d_mean_in), _sum(d_var_in)
    dx_terms = [dx]
    mean_grads = [g for g in (d_mean, d_reserve_mean) if _used(g)]
    if not mean_grads and not _used(d_var) and not _used(d_reserve_var):
        return dx, d_scale, d_offset, None, None
    n = _count(x, scale)
    if mean_grads:
        dx_terms.append(shape_ops.ones_like(x) * bn.per_channel(_sum(mean_grads) / n, fmt))
    centered = x - bn.per_channel(mean, fmt)
    if _used(d_var):  # the unbiased variance: sum((x - mean)^2) / (n - 1)
        dx_terms.append(centered * bn.per_channel(d_var * 2.0 / (n - 1.0), fmt))
    if _used(d_reserve_var):  # the biased variance: sum((x - mean)^2) / n
        dx_terms.append(centered * bn.per_channel(d_reserve_var * 2.0 / n, fmt))
    return _sum(dx_terms), d_scale, d_offset, None, None


def composed_backprop(dy, x, scale, mean, variance, eps, fmt, training):
    """FusedBatchNormGrad's outputs built from ordinary (differentiable) ops."""
    axes = bn.reduction_axes(fmt)
    if training:
        mean = m.reduce_mean(x, axes)
        variance = m.reduce_mean(m.square(x - bn.per_channel(mean, fmt)), axes)
    inv = m.rsqrt(variance + eps)
    x_hat = (x - bn.per_channel(mean, fmt)) * bn.per_channel(inv, fmt)
    d_offset = m.reduce_sum(dy, axes)
    d_scale = m.reduce_sum(dy * x_hat, axes)
    gain = bn.per_channel(scale * inv, fmt)
    if training:
        n = _count(x, scale)
        dx = (dy - bn.per_channel(d_offset / n, fmt) - x_hat * bn.per_channel(d_scale / n, fmt)) * gain
    else:
        dx = dy * gain
    return dx, d_scale, d_offset


@register_gradient("FusedBatchNormGrad")
def _fused_batch_norm_grad_grad(op, d_dx, d_dscale, d_doffset):
    dy, x, scale, mean, variance = op.inputs
    training = op.attrs["is_training"]
    outs = composed_backprop(dy, x, scale, mean, variance, op.attrs["epsilon"],
                             op.attrs["data_format"], training)
    pairs = [(o, g) for o, g in zip(outs, (d_dx, d_dscale, d_doffset)) if _used(g)]
    wrt = [dy, x, scale] if training else [dy, x, scale, mean, variance]
    if not pairs:
        return None, None, None, None, None
    grads = gradients([o for o, _ in pairs], wrt, grad_ys=[g for _, g in pairs],
                      name="FusedBatchNormGradGrad")
    return tuple(grads) + ((None, None) if training else ())
