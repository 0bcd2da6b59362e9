"""Convolutions of `tf.nn` built from conv2d: `depthwise_conv2d` (and TF's raw
`depthwise_conv2d_native` with its two backprops), `separable_conv2d` and `atrous_conv2d`.

They are compositions of existing ops (reshapes, multiplies, Conv2D and its backprops), so their
gradients are those of the parts and no kernel is duplicated:
- depthwise_conv2d (filter [kh, kw, in, multiplier]): one conv2d with a block-diagonal filter
  [kh, kw, in, in * multiplier], output channel `c * multiplier + m` as in TF. Its input backprop
  is conv2d's with that filter; its filter backprop is the block diagonal of conv2d's.
- separable_conv2d: depthwise_conv2d, then a 1x1 conv2d with the pointwise filter.
- atrous_conv2d: conv2d with dilations [1, rate, rate, 1], as TF1 composes it.
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.ops import conv_ops, math_ops, shape_ops
from graphflow.ops.core_ops import constant, convert_to_tensor
from graphflow.ops.static_value import shape_vector


def _eye(channels, dtype):
    """[1, 1, channels, channels, 1]: the identity, shaped to pick a filter's block diagonal."""
    eye = constant([[1.0 if i == j else 0.0 for j in range(channels)] for i in range(channels)],
                   dtype=dtype)
    return shape_ops.reshape(eye, [1, 1, channels, channels, 1])


def _block_diagonal(f, dtype):
    """[kh, kw, in, multiplier] -> the conv2d filter [kh, kw, in, in * multiplier]."""
    kh, kw, channels, multiplier = f.shape.dims
    block = math_ops.multiply(shape_ops.reshape(f, [kh, kw, channels, 1, multiplier]),
                              _eye(channels, dtype))
    return shape_ops.reshape(block, [kh, kw, channels, channels * multiplier])


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None, data_format=None,
                     dilations=None):
    """`tf.nn.depthwise_conv2d`: each input channel convolved with its own `multiplier` filters
    ([kh, kw, in, multiplier]); output channel `c * multiplier + m`."""
    with name_scope(name, "depthwise", [input, filter]) as scope:
        x = convert_to_tensor(input)
        f = convert_to_tensor(filter, dtype=x.dtype)
        if f.shape.ndims != 4 or any(d is None for d in f.shape.dims):
            raise ValueError(f"depthwise_conv2d needs a static 4-D filter, got {f.shape}")
        full = _block_diagonal(f, x.dtype)
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


def _static_filter(f, what):
    if f.shape.ndims != 4 or any(d is None for d in f.shape.dims):
        raise ValueError(f"{what} needs a static 4-D filter [kh, kw, in, multiplier], got "
                         f"{f.shape}")
    return f


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",
                            dilations=(1, 1, 1, 1), name=None):
    """`tf.nn.depthwise_conv2d_native`: depthwise_conv2d with TF's raw op arguments (4-element
    strides and dilations in `data_format` order)."""
    with name_scope(name, "DepthwiseConv2dNative", [input, filter]) as scope:
        x = convert_to_tensor(input)
        f = _static_filter(convert_to_tensor(filter, dtype=x.dtype), "depthwise_conv2d_native")
        return conv_ops.conv2d(x, _block_diagonal(f, x.dtype), strides=strides, padding=padding,
                               data_format=data_format, dilations=dilations, name=scope)


def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop, strides, padding,
                                           data_format="NHWC", dilations=(1, 1, 1, 1),
                                           name=None):
    """`tf.nn.depthwise_conv2d_native_backprop_input`: the gradient of depthwise_conv2d_native
    with respect to its input (of shape `input_sizes`)."""
    with name_scope(name, "DepthwiseConv2dNativeBackpropInput", [filter, out_backprop]) as scope:
        g = convert_to_tensor(out_backprop)
        f = _static_filter(convert_to_tensor(filter, dtype=g.dtype),
                           "depthwise_conv2d_native_backprop_input")
        return conv_ops.conv2d_backprop_input(input_sizes, _block_diagonal(f, g.dtype), g,
                                              strides=strides, padding=padding,
                                              data_format=data_format, dilations=dilations,
                                              name=scope)


def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop, strides, padding,
                                            data_format="NHWC", dilations=(1, 1, 1, 1),
                                            name=None):
    """`tf.nn.depthwise_conv2d_native_backprop_filter`: the gradient of depthwise_conv2d_native
    with respect to its filter [kh, kw, in, multiplier] (`filter_sizes`, known when the graph is
    built): the block diagonal of conv2d's filter gradient."""
    with name_scope(name, "DepthwiseConv2dNativeBackpropFilter", [input, out_backprop]) as scope:
        x = convert_to_tensor(input)
        sizes = shape_vector(convert_to_tensor(filter_sizes, dtype=dtypes.int32))
        if sizes is None or len(sizes) != 4 or any(d is None for d in sizes):
            raise ValueError(f"depthwise_conv2d_native_backprop_filter needs filter_sizes of 4 "
                             f"values known when the graph is built, got {filter_sizes!r}")
        kh, kw, channels, multiplier = sizes
        full = conv_ops.conv2d_backprop_filter(
            x, [kh, kw, channels, channels * multiplier], convert_to_tensor(out_backprop, x.dtype),
            strides=strides, padding=padding, data_format=data_format, dilations=dilations)
        block = math_ops.multiply(shape_ops.reshape(full, [kh, kw, channels, channels, multiplier]),
                                  _eye(channels, x.dtype))
        return math_ops.reduce_sum(block, axis=3, name=scope)


def atrous_conv2d(value, filters, rate, padding, name=None):
    """`tf.nn.atrous_conv2d`: conv2d of NHWC `value` with `filters` [kh, kw, in, out] dilated by
    `rate` (rate - 1 zeros between the filter's taps), stride 1."""
    rate = int(rate)
    if rate < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    with name_scope(name, "atrous_conv2d", [value, filters]) as scope:
        return conv_ops.conv2d(value, filters, strides=[1, 1, 1, 1], padding=padding,
                               dilations=[1, rate, rate, 1], name=scope)


__all__ = ["depthwise_conv2d", "separable_conv2d", "depthwise_conv2d_native",
           "depthwise_conv2d_native_backprop_input", "depthwise_conv2d_native_backprop_filter",
           "atrous_conv2d"]
