"""More `tf.contrib.layers` convolutions: `convolution` (1-D, 2-D or 3-D by the rank of the
inputs, `conv_dims` to insist), `convolution2d`, `conv2d_transpose` (`convolution2d_transpose`)
and `separable_conv2d` (`separable_convolution2d`), with contrib's names and defaults: scopes
'Conv', 'Conv2d_transpose' and 'SeparableConv2d'; variables 'weights' ([k..., in, out], for the
transpose [kh, kw, out, in]), 'depthwise_weights' [kh, kw, in, multiplier], 'pointwise_weights'
[1, 1, in * multiplier, out] and 'biases'; xavier weights, zero biases, ReLU, and `arg_scope`.
"""

from graphflow.ops import conv3d_ops, conv_composite_ops, conv_ops, math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.arg_scope import add_arg_scope
from graphflow.tf1.contrib_layers import (
    _ZEROS,
    _collect,
    _finish,
    _model_variable,
    _pair,
    conv2d,
    xavier_initializer,
)
from graphflow.tf1.variable_scope import variable_scope

convolution2d = conv2d


def _n_ints(value, n, what):
    if isinstance(value, int):
        return [int(value)] * n
    value = [int(v) for v in value]
    if len(value) != n:
        raise ValueError(f"{what} must be an int or {n} ints, got {value}")
    return value


def _defaults(weights_initializer, biases_initializer):
    return weights_initializer or xavier_initializer(), biases_initializer


@add_arg_scope
def convolution(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None,
                rate=1, activation_fn=math_ops.relu, normalizer_fn=None, normalizer_params=None,
                weights_initializer=None, weights_regularizer=None, biases_initializer=_ZEROS,
                biases_regularizer=None, reuse=None, variables_collections=None,
                outputs_collections=None, trainable=True, scope=None, conv_dims=None):
    """An N-D convolution picked by the rank of `inputs` (3: 1-D [batch, width, channels], 4: 2-D
    as `conv2d`, 5: 3-D [batch, depth, height, width, channels]); `conv_dims` must then agree."""
    x = convert_to_tensor(inputs)
    rank = x.shape.ndims
    if conv_dims is not None and rank is not None and rank != conv_dims + 2:
        raise ValueError(f"Convolution expects input with rank {conv_dims + 2}, got {rank}")
    if rank == 4:
        return conv2d(x, num_outputs, kernel_size, stride=stride, padding=padding,
                      data_format=data_format, rate=rate, activation_fn=activation_fn,
                      normalizer_fn=normalizer_fn, normalizer_params=normalizer_params,
                      weights_initializer=weights_initializer,
                      weights_regularizer=weights_regularizer,
                      biases_initializer=biases_initializer,
                      biases_regularizer=biases_regularizer, reuse=reuse,
                      variables_collections=variables_collections,
                      outputs_collections=outputs_collections, trainable=trainable, scope=scope)
    if rank not in (3, 5):
        raise ValueError(f"Convolution not supported for input with rank {rank} ({x.name})")
    if data_format not in (None, "NWC", "NDHWC"):
        raise ValueError(f"convolution: graphflow supports channels-last data_format for rank "
                         f"{rank} inputs, got {data_format}")
    dims = rank - 2
    channels = x.shape.dims[-1]
    if channels is None:
        raise ValueError(f"convolution: the channel dimension of {x.name} must be known")
    kernel = _n_ints(kernel_size, dims, "kernel_size")
    strides = _n_ints(stride, dims, "stride")
    rates = _n_ints(rate, dims, "rate")
    weights_initializer, biases_initializer = _defaults(weights_initializer, biases_initializer)
    with variable_scope(scope, default_name="Conv", values=[x], reuse=reuse):
        weights = _model_variable("weights", kernel + [channels, num_outputs], x.dtype,
                                  weights_initializer, weights_regularizer, trainable,
                                  variables_collections)
        if dims == 1:
            out = conv_ops.conv1d(x, weights, stride=strides[0], padding=padding.upper(),
                                  dilations=rates[0])
        else:
            out = conv3d_ops.conv3d(x, weights, [1] + strides + [1], padding.upper(),
                                    dilations=[1] + rates + [1])
        out = _finish(out, normalizer_fn, normalizer_params, biases_initializer,
                      biases_regularizer, num_outputs, activation_fn, variables_collections,
                      trainable)
        return _collect(out, outputs_collections)


def _transposed_length(static, dynamic, kernel, stride, padding):
    """TF's deconv output length: in * stride, plus max(kernel - stride, 0) for VALID."""
    extra = max(kernel - stride, 0) if padding == "VALID" else 0
    if static is not None:
        return static * stride + extra
    return dynamic * stride + extra


@add_arg_scope
def conv2d_transpose(inputs, num_outputs, kernel_size, stride=1, padding="SAME",
                     data_format="NHWC", activation_fn=math_ops.relu, normalizer_fn=None,
                     normalizer_params=None, weights_initializer=None, weights_regularizer=None,
                     biases_initializer=_ZEROS, biases_regularizer=None, reuse=None,
                     variables_collections=None, outputs_collections=None, trainable=True,
                     scope=None):
    """Transposed 2-D convolution: weights [kh, kw, num_outputs, in] in scope 'Conv2d_transpose';
    each spatial size becomes in * stride (SAME) or in * stride + max(k - stride, 0) (VALID)."""
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format has to be either NCHW or NHWC, got {data_format}")
    x = convert_to_tensor(inputs)
    if x.shape.ndims != 4:
        raise ValueError(f"conv2d_transpose: inputs must be 4-D, got {x.name} of shape {x.shape}")
    h_axis, w_axis, c_axis = (1, 2, 3) if data_format == "NHWC" else (2, 3, 1)
    channels = x.shape.dims[c_axis]
    if channels is None:
        raise ValueError(f"conv2d_transpose: the channel dimension of {x.name} must be known")
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride, "stride")
    pad = padding.upper()
    if pad not in ("SAME", "VALID"):
        raise ValueError(f"conv2d_transpose: padding must be SAME or VALID, got {padding}")
    weights_initializer, biases_initializer = _defaults(weights_initializer, biases_initializer)
    with variable_scope(scope, default_name="Conv2d_transpose", values=[x], reuse=reuse):
        weights = _model_variable("weights", [kh, kw, num_outputs, channels], x.dtype,
                                  weights_initializer, weights_regularizer, trainable,
                                  variables_collections)
        dynamic = shape_ops.shape(x)
        out_h = _transposed_length(x.shape.dims[h_axis], dynamic[h_axis], kh, sh, pad)
        out_w = _transposed_length(x.shape.dims[w_axis], dynamic[w_axis], kw, sw, pad)
        dims = [dynamic[0], out_h, out_w, num_outputs] if data_format == "NHWC" else \
            [dynamic[0], num_outputs, out_h, out_w]
        strides = [1, sh, sw, 1] if data_format == "NHWC" else [1, 1, sh, sw]
        out = conv_ops.conv2d_transpose(x, weights, shape_ops.stack(dims), strides=strides,
                                        padding=pad, data_format=data_format)
        out = _finish(out, normalizer_fn, normalizer_params, biases_initializer,
                      biases_regularizer, num_outputs, activation_fn, variables_collections,
                      trainable, data_format)
        return _collect(out, outputs_collections)


convolution2d_transpose = conv2d_transpose


@add_arg_scope
def separable_conv2d(inputs, num_outputs, kernel_size, depth_multiplier=1, stride=1,
                     padding="SAME", data_format="NHWC", rate=1, activation_fn=math_ops.relu,
                     normalizer_fn=None, normalizer_params=None, weights_initializer=None,
                     pointwise_initializer=None, weights_regularizer=None,
                     biases_initializer=_ZEROS, biases_regularizer=None, reuse=None,
                     variables_collections=None, outputs_collections=None, trainable=True,
                     scope=None):
    """Depthwise separable convolution in scope 'SeparableConv2d': 'depthwise_weights'
    [kh, kw, in, depth_multiplier], then (unless `num_outputs` is None, which keeps the
    in * depth_multiplier depthwise channels) a 1x1 convolution with 'pointwise_weights'
    (initialized by `pointwise_initializer`, default `weights_initializer`)."""
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format has to be either NCHW or NHWC, got {data_format}")
    x = convert_to_tensor(inputs)
    if x.shape.ndims != 4:
        raise ValueError(f"separable_conv2d: inputs must be 4-D, got {x.name} of shape {x.shape}")
    channels = x.shape.dims[3 if data_format == "NHWC" else 1]
    if channels is None:
        raise ValueError(f"separable_conv2d: the channel dimension of {x.name} must be known")
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride, "stride")
    rh, rw = _pair(rate, "rate")
    weights_initializer, biases_initializer = _defaults(weights_initializer, biases_initializer)
    pointwise_initializer = pointwise_initializer or weights_initializer
    four = (lambda a, b: [1, a, b, 1]) if data_format == "NHWC" else (lambda a, b: [1, 1, a, b])
    with variable_scope(scope, default_name="SeparableConv2d", values=[x], reuse=reuse):
        depthwise = _model_variable("depthwise_weights", [kh, kw, channels, depth_multiplier],
                                    x.dtype, weights_initializer, weights_regularizer, trainable,
                                    variables_collections)
        if num_outputs is not None:
            pointwise = _model_variable("pointwise_weights",
                                        [1, 1, channels * depth_multiplier, num_outputs],
                                        x.dtype, pointwise_initializer, weights_regularizer,
                                        trainable, variables_collections)
            out = conv_composite_ops.separable_conv2d(x, depthwise, pointwise, four(sh, sw),
                                                      padding.upper(), rate=four(rh, rw),
                                                      data_format=data_format)
        else:
            num_outputs = channels * depth_multiplier
            out = conv_composite_ops.depthwise_conv2d(x, depthwise, four(sh, sw),
                                                      padding.upper(), rate=four(rh, rw),
                                                      data_format=data_format)
        out = _finish(out, normalizer_fn, normalizer_params, biases_initializer,
                      biases_regularizer, num_outputs, activation_fn, variables_collections,
                      trainable, data_format)
        return _collect(out, outputs_collections)


separable_convolution2d = separable_conv2d

__all__ = ["convolution", "convolution2d", "conv2d_transpose", "convolution2d_transpose",
           "separable_conv2d", "separable_convolution2d"]
