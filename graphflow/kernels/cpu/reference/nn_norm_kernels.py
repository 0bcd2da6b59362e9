"""numpy reference kernels for FusedBatchNorm, FusedBatchNormGrad, FusedBatchNormGradReluMask and
FusedBatchNormStats (NHWC or NCHW). float16 inputs are computed in float32 and rounded once at the
end, as TF's CPU kernels do.

These are the definition: the compiled loops registered as the "numba" implementations of the same
ops (`kernels/cpu/numba/batch_norm_kernels.py`, chosen when the plan is built for float32/float64
inputs of a static size) are tested against `fused_batch_norm_reference`,
`fused_batch_norm_grad_reference`, `relu_mask_reference` and `batch_statistics_reference`. The
input checks (`check_forward`, `check_grad`, `check_relu_mask`) are shared with them."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


def layout(data_format):
    """(axes reduced over, shape of a per-channel vector broadcast against x)."""
    if data_format == "NCHW":
        return (0, 2, 3), (1, -1, 1, 1)
    return (0, 1, 2), (1, 1, 1, -1)


def work_dtype(dtype):
    return np.float32 if dtype == np.float16 else dtype


def _check_channels(x, axes, *vectors):
    channels = x.shape[({0, 1, 2, 3} - set(axes)).pop()]
    for what, v in vectors:
        if v.shape != (channels,):
            raise ValueError(f"{what} of shape {v.shape} must have one value per channel "
                             f"({channels}) of x {x.shape}")


def check_forward(x, scale, offset, mean, variance, axes, training):
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D, got shape {x.shape}")
    _check_channels(x, axes, ("scale", scale), ("offset", offset))
    if not training:
        _check_channels(x, axes, ("mean", mean), ("variance", variance))


def check_grad(dy, x, scale, saved_mean, saved_variance, axes):
    if x.shape != dy.shape:
        raise ValueError(f"y_backprop of shape {dy.shape} must have the shape of x {x.shape}")
    _check_channels(x, axes, ("scale", scale), ("reserve_space_1", saved_mean),
                    ("reserve_space_2", saved_variance))


def fused_batch_norm_reference(x, scale, offset, mean, variance, epsilon, data_format,
                               is_training):
    """FusedBatchNorm's (y, batch_mean, batch_variance, saved_mean, saved_variance) in numpy."""
    axes, vec = layout(data_format)
    check_forward(x, scale, offset, mean, variance, axes, is_training)
    dt = x.dtype
    work = work_dtype(dt)
    xw = x.astype(work, copy=False)
    if is_training:
        mean, variance, batch_variance = batch_statistics_reference(xw, data_format)
        centered = xw - mean.reshape(vec)
    else:
        mean = mean.astype(work, copy=False)
        variance = variance.astype(work, copy=False)
        centered = xw - mean.reshape(vec)
        batch_variance = variance
    inv = 1.0 / np.sqrt(variance + epsilon)
    y = centered * (inv * scale.astype(work, copy=False)).reshape(vec)
    y += offset.astype(work, copy=False).reshape(vec)
    return (y.astype(dt, copy=False), mean.astype(dt), batch_variance.astype(dt),
            mean.astype(dt), variance.astype(dt))


def batch_statistics_reference(x, data_format):
    """A training FusedBatchNorm's (mean, biased variance, unbiased variance) of float32/float64 x,
    in numpy."""
    axes, vec = layout(data_format)
    mean = x.mean(axis=axes)
    variance = np.mean(np.square(x - mean.reshape(vec)), axis=axes)
    n = x.size // max(mean.size, 1)
    return mean, variance, variance * (n / max(n - 1, 1))


def fused_batch_norm_grad_reference(dy, x, scale, saved_mean, saved_variance, epsilon,
                                    data_format, is_training):
    """FusedBatchNormGrad's (x_backprop, scale_backprop, offset_backprop) in numpy."""
    axes, vec = layout(data_format)
    check_grad(dy, x, scale, saved_mean, saved_variance, axes)
    dt = x.dtype
    work = work_dtype(dt)
    dyw, xw = dy.astype(work, copy=False), x.astype(work, copy=False)
    inv = 1.0 / np.sqrt(saved_variance.astype(work) + epsilon)
    x_hat = (xw - saved_mean.astype(work).reshape(vec)) * inv.reshape(vec)
    d_offset = dyw.sum(axis=axes)
    d_scale = np.sum(dyw * x_hat, axis=axes)
    gain = (scale.astype(work) * inv).reshape(vec)
    if is_training:
        n = x.size // max(scale.size, 1)
        dx = dyw - (d_offset / n).reshape(vec) - x_hat * (d_scale / n).reshape(vec)
        dx *= gain
    else:
        dx = dyw * gain
    return dx.astype(dt, copy=False), d_scale.astype(dt), d_offset.astype(dt)


def check_relu_mask(x, scale, y_mean, y_gain, y_offset):
    """FusedBatchNormGradReluMask's per-channel vectors of the ReLU's input y: one value of x's dtype
    per channel each."""
    for v, what in ((y_mean, "y_mean"), (y_gain, "y_gain"), (y_offset, "y_offset")):
        if v.size != scale.size or v.dtype != x.dtype:
            raise ValueError(f"{what} of shape {v.shape} must have one {x.dtype.name} value "
                             f"per channel ({scale.size})")


def node_settings(node):
    """(epsilon, data_format, reduction axes, is_training) of a batch norm kernel's node."""
    fmt = node.attrs["data_format"]
    return node.attrs["epsilon"], fmt, layout(fmt)[0], node.attrs["is_training"]


@cpu_kernel("FusedBatchNorm")
def _fused_batch_norm(node):
    eps, fmt, _, training = node_settings(node)

    def fused_batch_norm(x, scale, offset, mean, variance):
        return fused_batch_norm_reference(x, scale, offset, mean, variance, eps, fmt, training)
    return fused_batch_norm


@cpu_kernel("FusedBatchNormGrad")
def _fused_batch_norm_grad(node):
    eps, fmt, _, training = node_settings(node)

    def fused_batch_norm_grad(dy, x, scale, saved_mean, saved_variance):
        return fused_batch_norm_grad_reference(dy, x, scale, saved_mean, saved_variance, eps, fmt,
                                               training)
    return fused_batch_norm_grad


def relu_mask_reference(dy, x, y_mean, y_gain, y_offset, data_format):
    """where(y > 0, dy, 0) with y = (x - y_mean) * y_gain + y_offset in x's dtype, the split
    forward pass's ops in its order (FusedBatchNormGradReluMask's ReLU gradient)."""
    _, vec = layout(data_format)
    y = (x - y_mean.reshape(vec)) * y_gain.reshape(vec) + y_offset.reshape(vec)
    return np.where(y > 0, dy, dy.dtype.type(0))


@cpu_kernel("FusedBatchNormGradReluMask")
def _fused_batch_norm_grad_relu_mask(node):
    eps, fmt, axes, training = node_settings(node)

    def fused_batch_norm_grad_relu_mask(dy, x, scale, saved_mean, saved_variance, y_mean, y_gain,
                                        y_offset):
        check_grad(dy, x, scale, saved_mean, saved_variance, axes)
        check_relu_mask(x, scale, y_mean, y_gain, y_offset)
        masked = relu_mask_reference(dy, x, y_mean.reshape(-1), y_gain.reshape(-1),
                                     y_offset.reshape(-1), fmt)
        return fused_batch_norm_grad_reference(masked, x, scale, saved_mean, saved_variance, eps,
                                               fmt, training)
    return fused_batch_norm_grad_relu_mask


def check_stats(x):
    """FusedBatchNormStats's x: 4-D."""
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D, got shape {x.shape}")


@cpu_kernel("FusedBatchNormStats")
def _fused_batch_norm_stats(node):
    fmt = node.attrs["data_format"]

    def fused_batch_norm_stats(x):
        check_stats(x)
        dt = x.dtype
        mean, variance, batch_variance = batch_statistics_reference(
            x.astype(work_dtype(dt), copy=False), fmt)
        return mean.astype(dt), variance.astype(dt), batch_variance.astype(dt)
    return fused_batch_norm_stats
