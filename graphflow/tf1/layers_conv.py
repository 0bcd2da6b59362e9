"""More `tf.layers` convolutions: `conv1d`, `conv2d_transpose`, `conv3d`, `separable_conv2d`, the
1-D poolings and the 3-D poolings `max_pooling3d` / `average_pooling3d`, with TF1's variable names
('conv1d/kernel' [k, in, filters], 'conv2d_transpose/kernel' [kh, kw, filters, in],
'conv3d/kernel' [kd, kh, kw, in, filters], 'separable_conv2d/depthwise_kernel'
[kh, kw, in, depth_multiplier] and '.../pointwise_kernel' [1, 1, in * depth_multiplier, filters],
and 'bias'), scoping and reuse rules as in `graphflow.tf1.layers`.
"""

from graphflow.framework.graph import get_default_graph
from graphflow.ops import conv3d_ops, conv_composite_ops, conv_ops, nn_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.layers import (
    _ZEROS,
    _data_format,
    _finish,
    _float_input,
    _layer_scope,
    _no_constraints,
    _padding,
    _pair,
)
from graphflow.tf1.variable_scope import get_variable


def _triple(value, what):
    if isinstance(value, int):
        return (value,) * 3
    value = tuple(int(v) for v in value)
    if len(value) != 3:
        raise ValueError(f"{what} must be an int or 3 ints, got {value}")
    return value


def _deconv_length(size, kernel, stride, padding):
    """TF's deconv_output_length."""
    if size is None:
        return None
    size *= stride
    if padding == "VALID":
        size += max(kernel - stride, 0)
    return size


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=_ZEROS, kernel_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    """Transposed 2-D convolution ("deconvolution"): SAME gives in * stride, VALID
    in * stride + max(kernel - stride, 0) in each spatial dimension."""
    _no_constraints("conv2d_transpose", kernel_constraint, bias_constraint)
    x = _float_input(inputs, "conv2d_transpose")
    fmt = _data_format(data_format)
    if x.shape.ndims != 4:
        raise ValueError(f"conv2d_transpose: inputs must have rank 4, got {x.name} of shape "
                         f"{x.shape}")
    h_axis, w_axis, c_axis = (1, 2, 3) if fmt == "NHWC" else (2, 3, 1)
    in_channels = x.shape[c_axis]
    if in_channels is None:
        raise ValueError(f"conv2d_transpose: the channel dimension of the inputs must be known, "
                         f"got {x.name} of shape {x.shape}")
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(strides, "strides")
    pad = _padding(padding)
    with _layer_scope(name, "conv2d_transpose", reuse):
        kernel = get_variable("kernel", [kh, kw, int(filters), in_channels], x.dtype,
                              kernel_initializer, kernel_regularizer, trainable)
        dynamic = shape_ops.shape(x)
        out_h = _deconv_length(x.shape[h_axis], kh, sh, pad)
        out_w = _deconv_length(x.shape[w_axis], kw, sw, pad)
        if out_h is None or out_w is None:
            raise ValueError(f"conv2d_transpose: the spatial dimensions of the inputs must be "
                             f"known, got {x.name} of shape {x.shape}")
        dims = [dynamic[0], out_h, out_w, int(filters)] if fmt == "NHWC" else \
            [dynamic[0], int(filters), out_h, out_w]
        four = [1, sh, sw, 1] if fmt == "NHWC" else [1, 1, sh, sw]
        outputs = conv_ops.conv2d_transpose(x, kernel, shape_ops.stack(dims), strides=four,
                                            padding=pad, data_format=fmt)
        if use_bias:
            bias = get_variable("bias", [int(filters)], x.dtype, bias_initializer,
                                bias_regularizer, trainable)
            outputs = nn_ops.bias_add(outputs, bias, data_format=fmt)
        return _finish(outputs, activation, activity_regularizer)


def conv3d(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=_ZEROS, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """3-D convolution layer over [batch, depth, height, width, channels] (channels_last only)."""
    _no_constraints("conv3d", kernel_constraint, bias_constraint)
    if data_format != "channels_last":
        raise ValueError("conv3d: only data_format='channels_last' is supported")
    x = _float_input(inputs, "conv3d")
    if x.shape.ndims != 5 or x.shape[4] is None:
        raise ValueError(f"conv3d: inputs must have rank 5 and known channels, got {x.name} of "
                         f"shape {x.shape}")
    kd, kh, kw = _triple(kernel_size, "kernel_size")
    sd, sh, sw = _triple(strides, "strides")
    with _layer_scope(name, "conv3d", reuse):
        kernel = get_variable("kernel", [kd, kh, kw, x.shape[4], int(filters)], x.dtype,
                              kernel_initializer, kernel_regularizer, trainable)
        dd, dh, dw = _triple(dilation_rate, "dilation_rate")
        outputs = conv3d_ops.conv3d(x, kernel, [1, sd, sh, sw, 1], _padding(padding),
                                    dilations=[1, dd, dh, dw, 1])
        if use_bias:
            bias = get_variable("bias", [int(filters)], x.dtype, bias_initializer,
                                bias_regularizer, trainable)
            outputs = nn_ops.bias_add(outputs, bias)
        return _finish(outputs, activation, activity_regularizer)


def separable_conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", dilation_rate=(1, 1), depth_multiplier=1,
                     activation=None, use_bias=True, depthwise_initializer=None,
                     pointwise_initializer=None, bias_initializer=_ZEROS,
                     depthwise_regularizer=None, pointwise_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                     pointwise_constraint=None, bias_constraint=None, trainable=True, name=None,
                     reuse=None):
    """Depthwise separable 2-D convolution: a depthwise conv (depth_multiplier filters per input
    channel), then a 1x1 conv to `filters` channels."""
    _no_constraints("separable_conv2d", depthwise_constraint, pointwise_constraint,
                    bias_constraint)
    x = _float_input(inputs, "separable_conv2d")
    fmt = _data_format(data_format)
    if x.shape.ndims != 4:
        raise ValueError(f"separable_conv2d: inputs must have rank 4, got {x.name} of shape "
                         f"{x.shape}")
    in_channels = x.shape[3] if fmt == "NHWC" else x.shape[1]
    if in_channels is None:
        raise ValueError(f"separable_conv2d: the channel dimension must be known, got {x.shape}")
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(strides, "strides")
    dh, dw = _pair(dilation_rate, "dilation_rate")
    four = (lambda a, b: [1, a, b, 1]) if fmt == "NHWC" else (lambda a, b: [1, 1, a, b])
    multiplier = int(depth_multiplier)
    with _layer_scope(name, "separable_conv2d", reuse):
        depthwise = get_variable("depthwise_kernel", [kh, kw, in_channels, multiplier], x.dtype,
                                 depthwise_initializer, depthwise_regularizer, trainable)
        pointwise = get_variable("pointwise_kernel", [1, 1, in_channels * multiplier,
                                                      int(filters)],
                                 x.dtype, pointwise_initializer, pointwise_regularizer, trainable)
        outputs = conv_composite_ops.separable_conv2d(x, depthwise, pointwise, four(sh, sw),
                                                      _padding(padding), rate=four(dh, dw),
                                                      data_format=fmt)
        if use_bias:
            bias = get_variable("bias", [int(filters)], x.dtype, bias_initializer,
                                bias_regularizer, trainable)
            outputs = nn_ops.bias_add(outputs, bias, data_format=fmt)
        return _finish(outputs, activation, activity_regularizer)


def _pooling3d(pool, default_name, inputs, pool_size, strides, padding, data_format, name):
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first', got "
                         f"{data_format!r}")
    fmt = "NDHWC" if data_format == "channels_last" else "NCDHW"
    with get_default_graph().name_scope(name or default_name):
        return pool(convert_to_tensor(inputs), list(_triple(pool_size, "pool_size")),
                    list(_triple(strides, "strides")), _padding(padding), data_format=fmt)


def max_pooling3d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """3-D max pooling over `pool_size` windows moved by `strides`."""
    return _pooling3d(conv3d_ops.max_pool3d, "max_pooling3d", inputs, pool_size, strides, padding,
                      data_format, name)


def average_pooling3d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                      name=None):
    """3-D average pooling over `pool_size` windows moved by `strides`."""
    return _pooling3d(conv3d_ops.avg_pool3d, "average_pooling3d", inputs, pool_size, strides,
                      padding, data_format, name)


def _single(value, what):
    if isinstance(value, int):
        return value
    value = tuple(int(v) for v in value)
    if len(value) != 1:
        raise ValueError(f"{what} must be an int or 1 int, got {value}")
    return value[0]


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
           dilation_rate=1, activation=None, use_bias=True, kernel_initializer=None,
           bias_initializer=_ZEROS, kernel_regularizer=None, bias_regularizer=None,
           activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
           trainable=True, name=None, reuse=None):
    """1-D convolution layer on [batch, width, channels] (channels_last) or [batch, channels,
    width]: kernel [kernel_size, in_channels, filters] (+ bias, activation)."""
    _no_constraints("conv1d", kernel_constraint, bias_constraint)
    x = _float_input(inputs, "conv1d")
    fmt = _data_format(data_format)
    if x.shape.ndims != 3:
        raise ValueError(f"conv1d: inputs must have rank 3, got {x.name} of shape {x.shape}")
    in_channels = x.shape[2] if fmt == "NHWC" else x.shape[1]
    if in_channels is None:
        raise ValueError(f"conv1d: the channel dimension of the inputs must be known, got "
                         f"{x.name} of shape {x.shape}")
    k = _single(kernel_size, "kernel_size")
    with _layer_scope(name, "conv1d", reuse):
        kernel = get_variable("kernel", [k, in_channels, int(filters)], x.dtype,
                              kernel_initializer, kernel_regularizer, trainable)
        outputs = conv_ops.conv1d(x, kernel, _single(strides, "strides"), _padding(padding),
                                  data_format="NWC" if fmt == "NHWC" else "NCW",
                                  dilations=_single(dilation_rate, "dilation_rate"))
        if use_bias:
            bias = get_variable("bias", [int(filters)], x.dtype, bias_initializer,
                                bias_regularizer, trainable)
            outputs = nn_ops.bias_add(outputs, bias, data_format="NHWC" if fmt == "NHWC"
                                      else "NCHW")
        return _finish(outputs, activation, activity_regularizer)


def _pooling1d(pool, default_name, inputs, pool_size, strides, padding, data_format, name):
    """A 1-D pooling as the 2-D one over a height-1 image (as TF1 does)."""
    x = convert_to_tensor(inputs)
    fmt = _data_format(data_format)
    p, s = _single(pool_size, "pool_size"), _single(strides, "strides")
    with get_default_graph().name_scope(name or default_name):
        axis = 1 if fmt == "NHWC" else 2
        four = (lambda a: [1, 1, a, 1]) if fmt == "NHWC" else (lambda a: [1, 1, 1, a])
        out = pool(shape_ops.expand_dims(x, axis), ksize=four(p), strides=four(s),
                   padding=_padding(padding), data_format=fmt)
        return shape_ops.squeeze(out, [axis])


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """Max pooling over `pool_size` windows of a [batch, width, channels] signal."""
    return _pooling1d(conv_ops.max_pool, "max_pooling1d", inputs, pool_size, strides, padding,
                      data_format, name)


def average_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                      name=None):
    """Average pooling over `pool_size` windows of a [batch, width, channels] signal."""
    return _pooling1d(conv_ops.avg_pool, "average_pooling1d", inputs, pool_size, strides,
                      padding, data_format, name)


__all__ = ["conv1d", "conv2d_transpose", "conv3d", "separable_conv2d", "max_pooling1d",
           "average_pooling1d", "max_pooling3d", "average_pooling3d"]
