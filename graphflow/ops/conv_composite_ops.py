"""Convolutions of `tf.nn` built from conv2d: `depthwise_conv2d` and `separable_conv2d`.

They are compositions of existing ops (reshapes, multiplies, Conv2D), so their gradients
are those of the parts and no kernel is duplicated:
- depthwise_conv2d (filter [kh, kw, in, multiplier]): one conv2d with a block-diagonal filter
  [kh, kw, in, in * multiplier], output channel `c * multiplier + m` as in TF.
- separable_conv2d: depthwise_conv2d, then a 1x1 conv2d with the pointwise filter.
"""

from graphflow.framework.graph import name_scope
from graphflow.ops import conv_ops, math_ops, shape_ops
from graphflow.ops.core_ops import constant, convert_to_tensor


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None, data_format=None,
                     dilations=None):
    """`tf.nn.depthwise_conv2d`: each input channel convolved with its own `multiplier` filters
    ([kh, kw, in, multiplier]); output channel `c * multiplier + m`."""
    with name_scope(name, "depthwise", [input, filter]) as scope:
        x = convert_to_tensor(input)
        f = convert_to_tensor(filter, dtype=x.dtype)
        if f.shape.ndims != 4 or any(d is None for d in f.shape.dims):
            raise ValueError(f"depthwise_conv2d needs a static 4-D filter, got {f.shape}")
        kh, kw, channels, multiplier = f.shape.dims
        eye = constant([[1.0 if i == j else 0.0 for j in range(channels)]
                        for i in range(channels)], dtype=x.dtype)
        block = math_ops.multiply(shape_ops.reshape(f, [kh, kw, channels, 1, multiplier]),
                                  shape_ops.reshape(eye, [1, 1, channels, channels, 1]))
        full = shape_ops.reshape(block, [kh, kw, channels, channels * multiplier])
        rate = dilations if rate is None else rate
        return conv_ops.conv2d(x, full, strides=strides, padding=padding,
                               data_format=data_format or "NHWC", dilations=rate or 1,
                               name=scope)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None,
                     name=None, data_format=None, dilations=None):
    """`tf.nn.separable_conv2d`: depthwise_conv2d, then a 1x1 conv2d with `pointwise_filter`
    [1, 1, in * multiplier, out]."""
    with name_scope(name, "separable_conv2d", [input, depthwise_filter, pointwise_filter]) as scope:
        depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, rate=rate,
                                     data_format=data_format, dilations=dilations)
        return conv_ops.conv2d(depthwise, convert_to_tensor(pointwise_filter, dtype=depthwise.dtype),
                               strides=[1, 1, 1, 1], padding="VALID",
                               data_format=data_format or "NHWC", name=scope)


__all__ = ["depthwise_conv2d", "separable_conv2d"]
