"""Batch normalization as one op: `tf.nn.fused_batch_norm` (FusedBatchNorm) and its backprop op
FusedBatchNormGrad, for 4-D inputs in NHWC or NCHW.

FusedBatchNorm(x, scale, offset, mean, variance) -> (y, batch_mean, batch_variance,
reserve_space_1, reserve_space_2), as TF's op:
* is_training=True: statistics of `x` over N, H, W (`mean`/`variance` inputs are empty);
  y = scale * (x - m) / sqrt(v + epsilon) + offset with the biased batch variance v;
  batch_variance is the unbiased one (v * n / (n - 1), what TF returns for moving averages);
  reserve_space_1/2 are m and v (what the backprop op needs).
* is_training=False: normalizes with the given `mean`/`variance`, which it also returns.

FusedBatchNormGrad(y_backprop, x, scale, reserve_space_1, reserve_space_2) -> (x_backprop,
scale_backprop, offset_backprop). The composed forms (nn.moments + nn.batch_normalization) stay
in `nn_ops.py`.
"""

from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx, shape_ops
from graphflow.ops.core_ops import constant, convert_to_tensor
from graphflow.ops.registry import FLOATS, define, make_op, no_gradient, require_dtype

_FORMATS = ("NHWC", "NCHW")
_ATTRS = "epsilon:float data_format:enum(NHWC,NCHW) is_training:bool"


def data_format_of(data_format):
    data_format = data_format or "NHWC"
    if data_format not in _FORMATS:
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    return data_format


def channel_axis(data_format):
    return 3 if data_format == "NHWC" else 1


def _channels(x, attrs):
    if x.shape.ndims is None:
        return None
    if x.shape.ndims != 4:
        raise ValueError(f"x must be 4-D, got shape {x.shape}")
    return x.shape[channel_axis(data_format_of(attrs.get("data_format")))]


def _vector(t, what, channels, allow_empty=False):
    """Merge a 1-D per-channel input's length into `channels` (None = unknown)."""
    if t.shape.ndims is None:
        return channels
    if t.shape.ndims != 1:
        raise ValueError(f"{what} must be 1-D, got shape {t.shape}")
    n = t.shape[0]
    if n is None or (allow_empty and n == 0):
        return channels
    if channels is not None and n != channels:
        raise ValueError(f"{what} has {n} elements but x has {channels} channels")
    return n


def _fused_batch_norm_infer(inputs, attrs):
    x, scale, offset, mean, variance = inputs
    require_dtype(x, FLOATS, "x")
    for t, what in ((scale, "scale"), (offset, "offset"), (mean, "mean"), (variance, "variance")):
        if t.dtype != x.dtype:
            raise TypeError(f"{what} must have the dtype of x ({x.dtype.name}), got {t.dtype.name}")
    c = _channels(x, attrs)
    c = _vector(scale, "scale", c)
    c = _vector(offset, "offset", c)
    training = bool(attrs.get("is_training", True))
    c = _vector(mean, "mean", c, allow_empty=training)
    c = _vector(variance, "variance", c, allow_empty=training)
    stats = TensorShape([c])
    return [(x.dtype, x.shape)] + [(x.dtype, stats)] * 4


# fresh_output: every output is a new array (the CPU kernels copy even the statistics they pass
# through), so an elementwise reader such as the ReLU after it may write over y in place
define("FusedBatchNorm", _fused_batch_norm_infer, attrs=_ATTRS, fresh_output=True,
       onnx={"converter": "fused_batch_norm"})


def _fused_batch_norm_grad_infer(inputs, attrs):
    dy, x, scale, saved_mean, saved_variance = inputs
    require_dtype(x, FLOATS, "x")
    for t, what in ((dy, "y_backprop"), (scale, "scale"), (saved_mean, "reserve_space_1"),
                    (saved_variance, "reserve_space_2")):
        if t.dtype != x.dtype:
            raise TypeError(f"{what} must have the dtype of x ({x.dtype.name}), got {t.dtype.name}")
    try:
        shape = x.shape.merge_with(dy.shape)
    except ValueError:
        raise ValueError(f"y_backprop of shape {dy.shape} must have the shape of x "
                         f"{x.shape}") from None
    c = _channels(x, attrs)
    for t, what in ((scale, "scale"), (saved_mean, "reserve_space_1"),
                    (saved_variance, "reserve_space_2")):
        c = _vector(t, what, c)
    stats = TensorShape([c])
    return [(x.dtype, shape), (x.dtype, stats), (x.dtype, stats)]


define("FusedBatchNormGrad", _fused_batch_norm_grad_infer, attrs=_ATTRS, fresh_output=True,
       onnx=no_onnx.GRADIENT)


def _stats_infer(inputs, attrs):
    (x,) = inputs
    require_dtype(x, FLOATS, "x")
    stats = TensorShape([_channels(x, attrs)])
    return [(x.dtype, stats)] * 3


# FusedBatchNormStats(x) -> (mean, variance, unbiased variance): a training FusedBatchNorm's
# statistics alone, the same bits. Built on plan copies (fusion, `fusion_batch_norm.py`), where y
# becomes elementwise ops the ReLU or residual add after it joins; no gradient.
define("FusedBatchNormStats", _stats_infer, attrs="data_format:enum(NHWC,NCHW)", fresh_output=True,
       onnx=no_onnx.OPTIMIZER_BUILT)
no_gradient("FusedBatchNormStats")


def fused_batch_norm_stats(x, data_format="NHWC", name=None):
    """(mean, biased variance, unbiased variance) of x per channel, as FusedBatchNorm's training
    outputs 3, 4 and 2 are."""
    op = make_op("FusedBatchNormStats", (convert_to_tensor(x),),
                 {"data_format": data_format_of(data_format)}, name=name or "FusedBatchNormStats")
    return tuple(op.outputs)


def _grad_relu_mask_infer(inputs, attrs):
    outputs = _fused_batch_norm_grad_infer(inputs[:5], attrs)
    x = inputs[1]
    c = outputs[1][1][0]
    for t, what in zip(inputs[5:], ("y_mean", "y_gain", "y_offset")):
        if t.dtype != x.dtype:
            raise TypeError(f"{what} must have the dtype of x ({x.dtype.name}), got {t.dtype.name}")
        if t.shape.is_fully_defined() and c is not None and t.shape.num_elements() != c:
            raise ValueError(f"{what} of shape {t.shape} must have one value per channel ({c})")
    return outputs


# FusedBatchNormGradReluMask(y_backprop, x, scale, reserve_space_1, reserve_space_2, y_mean, y_gain,
# y_offset) -> FusedBatchNormGrad's outputs for the gradient where(y > 0, y_backprop, 0) of a ReLU
# after the batch norm, y = (x - y_mean) * y_gain + y_offset recomputed from x as the split forward
# pass computes it (`fusion_batch_norm.py`: its vectors, [C], or [C, 1, 1] for NCHW), so the ReLU
# gradient is not a pass of its own. Built on plan copies after gradients exist; no gradient.
define("FusedBatchNormGradReluMask", _grad_relu_mask_infer, attrs=_ATTRS, fresh_output=True,
       onnx=no_onnx.GRADIENT)
no_gradient("FusedBatchNormGradReluMask")


def fused_batch_norm_grad_relu_mask(y_backprop, x, scale, reserve_space_1, reserve_space_2, y_mean,
                                    y_gain, y_offset, epsilon, data_format="NHWC", is_training=True,
                                    name=None):
    """FusedBatchNormGrad of `where((x - y_mean) * y_gain + y_offset > 0, y_backprop, 0)`:
    (x_backprop, scale_backprop, offset_backprop)."""
    attrs = {"epsilon": float(epsilon), "data_format": data_format_of(data_format),
             "is_training": bool(is_training)}
    op = make_op("FusedBatchNormGradReluMask",
                 tuple(convert_to_tensor(t) for t in (y_backprop, x, scale, reserve_space_1,
                                                      reserve_space_2, y_mean, y_gain, y_offset)),
                 attrs, name=name or "FusedBatchNormGradReluMask")
    return tuple(op.outputs)


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001, data_format="NHWC",
                     is_training=True, name=None):
    """`tf.nn.fused_batch_norm`: returns (y, batch_mean, batch_variance). With is_training=False,
    `mean` and `variance` (the population statistics) are required. As in TF, epsilon is raised to
    at least 1.001e-5."""
    x = convert_to_tensor(x)
    scale = convert_to_tensor(scale, dtype=x.dtype)
    offset = convert_to_tensor(offset, dtype=x.dtype)
    if is_training not in (True, False):
        raise TypeError("fused_batch_norm: is_training must be a Python bool (use "
                        "tf.layers.batch_normalization for a training tensor)")
    if not is_training and (mean is None or variance is None):
        raise ValueError("fused_batch_norm needs mean and variance when is_training=False")
    mean = constant([], dtype=x.dtype) if mean is None else convert_to_tensor(mean, dtype=x.dtype)
    variance = (constant([], dtype=x.dtype) if variance is None
                else convert_to_tensor(variance, dtype=x.dtype))
    attrs = {"epsilon": max(float(epsilon), 1.001e-5), "data_format": data_format_of(data_format),
             "is_training": bool(is_training)}
    op = make_op("FusedBatchNorm", (x, scale, offset, mean, variance), attrs,
                 name=name or "FusedBatchNorm")
    return op.outputs[0], op.outputs[1], op.outputs[2]


def fused_batch_norm_grad(y_backprop, x, scale, reserve_space_1, reserve_space_2, epsilon,
                          data_format="NHWC", is_training=True, name=None):
    """The backprop op of FusedBatchNorm: (x_backprop, scale_backprop, offset_backprop)."""
    attrs = {"epsilon": float(epsilon), "data_format": data_format_of(data_format),
             "is_training": bool(is_training)}
    op = make_op("FusedBatchNormGrad", (y_backprop, x, scale, reserve_space_1, reserve_space_2),
                 attrs, name=name or "FusedBatchNormGrad")
    return tuple(op.outputs)


def reduction_axes(data_format):
    return [0, 1, 2] if data_format == "NHWC" else [0, 2, 3]


def per_channel(v, data_format):
    """A 1-D per-channel tensor reshaped to broadcast against 4-D x in `data_format`."""
    return v if data_format == "NHWC" else shape_ops.reshape(v, [-1, 1, 1])


__all__ = []
