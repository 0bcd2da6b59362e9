"""Keras's volumetric and factorized convolution layers: Conv3D, MaxPooling3D/AveragePooling3D,
GlobalAveragePooling3D/GlobalMaxPooling3D, SeparableConv2D (depthwise then pointwise kernels) and
DepthwiseConv2D, channels_last, kernels glorot_uniform and biases zero as in TF1 Keras. Weights
are named and ordered as Keras's (kernel, bias; depthwise_kernel, pointwise_kernel, bias)."""

from graphflow.ops import conv3d_ops, conv_composite_ops, math_ops, nn_ops
from graphflow.tf1 import layers as tf_layers
from graphflow.tf1.keras import activations
from graphflow.tf1.keras.base_layer import Layer, shape_list


def _tuple(value, n):
    return (int(value),) * n if isinstance(value, int) else tuple(int(v) for v in value)


def _channels_last(layer, data_format):
    if data_format not in (None, "channels_last"):
        raise NotImplementedError(f"{type(layer).__name__}: only channels_last")
    return "channels_last"


def _channels(layer, input_shape):
    channels = shape_list(input_shape)[-1]
    if channels is None:
        raise ValueError(f"{type(layer).__name__} {layer.name!r}: the channel dimension of the "
                         "inputs should be defined. Found `None`.")
    return channels


class _Conv(Layer):
    """What Conv3D, SeparableConv2D and DepthwiseConv2D share: activation, bias, regularizers."""

    def _finish(self, out):
        if self.use_bias:
            out = nn_ops.bias_add(out, self.bias)
        out = self.activation(out)
        if self.activity_regularizer is not None:
            self.add_loss(self.activity_regularizer(out))
        return out


class Conv3D(_Conv):
    """`Conv3D(filters, kernel_size, strides=(1, 1, 1), padding='valid', ...)`: kernel
    [kd, kh, kw, in, filters]."""

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format=None, dilation_rate=(1, 1, 1), activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.filters, self.kernel_size = int(filters), _tuple(kernel_size, 3)
        self.strides, self.dilation_rate = _tuple(strides, 3), _tuple(dilation_rate, 3)
        self.padding = tf_layers._padding(padding).lower()
        self.data_format = _channels_last(self, data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.inits = (kernel_initializer, bias_initializer)
        self.regularizers = (kernel_regularizer, bias_regularizer)
        self.constraints = (kernel_constraint, bias_constraint)
        self.activity_regularizer = activity_regularizer

    def build(self, input_shape):
        channels = _channels(self, input_shape)
        self.kernel = self.add_weight("kernel", list(self.kernel_size) + [channels, self.filters],
                                      None, self.inits[0], self.regularizers[0],
                                      constraint=self.constraints[0])
        self.bias = self.add_weight("bias", [self.filters], None, self.inits[1],
                                    self.regularizers[1], constraint=self.constraints[1]) \
            if self.use_bias else None

    def call(self, inputs):
        out = conv3d_ops.conv3d(inputs, self.kernel, [1, *self.strides, 1], self.padding.upper(),
                                dilations=[1, *self.dilation_rate, 1])
        return self._finish(out)


class SeparableConv2D(_Conv):
    """`SeparableConv2D(filters, kernel_size, depth_multiplier=1, ...)`: a depthwise kernel
    [kh, kw, in, depth_multiplier] then a pointwise kernel [1, 1, in * depth_multiplier,
    filters]."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.filters, self.kernel_size = int(filters), _tuple(kernel_size, 2)
        self.strides, self.dilation_rate = _tuple(strides, 2), _tuple(dilation_rate, 2)
        self.depth_multiplier = int(depth_multiplier)
        self.padding = tf_layers._padding(padding).lower()
        self.data_format = _channels_last(self, data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.inits = (depthwise_initializer, pointwise_initializer, bias_initializer)
        self.regularizers = (depthwise_regularizer, pointwise_regularizer, bias_regularizer)
        self.constraints = (depthwise_constraint, pointwise_constraint, bias_constraint)
        self.activity_regularizer = activity_regularizer

    def build(self, input_shape):
        channels = _channels(self, input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", list(self.kernel_size) + [channels, self.depth_multiplier], None,
            self.inits[0], self.regularizers[0], constraint=self.constraints[0])
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", [1, 1, channels * self.depth_multiplier, self.filters], None,
            self.inits[1], self.regularizers[1], constraint=self.constraints[1])
        self.bias = self.add_weight("bias", [self.filters], None, self.inits[2],
                                    self.regularizers[2], constraint=self.constraints[2]) \
            if self.use_bias else None

    def call(self, inputs):
        out = conv_composite_ops.separable_conv2d(
            inputs, self.depthwise_kernel, self.pointwise_kernel, [1, *self.strides, 1],
            self.padding.upper(), rate=list(self.dilation_rate))
        return self._finish(out)


class DepthwiseConv2D(_Conv):
    """`DepthwiseConv2D(kernel_size, depth_multiplier=1, ...)`: each input channel convolved
    with its own `depth_multiplier` filters (kernel [kh, kw, in, depth_multiplier])."""

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=(1, 1), activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.kernel_size = _tuple(kernel_size, 2)
        self.strides, self.dilation_rate = _tuple(strides, 2), _tuple(dilation_rate, 2)
        self.depth_multiplier = int(depth_multiplier)
        self.padding = tf_layers._padding(padding).lower()
        self.data_format = _channels_last(self, data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.inits = (depthwise_initializer, bias_initializer)
        self.regularizers = (depthwise_regularizer, bias_regularizer)
        self.constraints = (depthwise_constraint, bias_constraint)
        self.activity_regularizer = activity_regularizer

    def build(self, input_shape):
        channels = _channels(self, input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", list(self.kernel_size) + [channels, self.depth_multiplier], None,
            self.inits[0], self.regularizers[0], constraint=self.constraints[0])
        self.bias = self.add_weight("bias", [channels * self.depth_multiplier], None,
                                    self.inits[1], self.regularizers[1],
                                    constraint=self.constraints[1]) if self.use_bias else None

    def call(self, inputs):
        out = conv_composite_ops.depthwise_conv2d(
            inputs, self.depthwise_kernel, [1, *self.strides, 1], self.padding.upper(),
            rate=list(self.dilation_rate))
        return self._finish(out)


class _Pooling3D(Layer):
    _pool = None

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.pool_size = _tuple(pool_size, 3)
        self.strides = _tuple(strides, 3) if strides is not None else self.pool_size
        self.padding = tf_layers._padding(padding).lower()
        self.data_format = _channels_last(self, data_format)

    def call(self, inputs):
        return type(self)._pool(inputs, [1, *self.pool_size, 1], [1, *self.strides, 1],
                                self.padding.upper())


class MaxPooling3D(_Pooling3D):
    """`MaxPooling3D(pool_size=(2, 2, 2), strides=None (= pool_size), padding='valid')`."""

    _pool = staticmethod(conv3d_ops.max_pool3d)


class AveragePooling3D(_Pooling3D):
    """`AveragePooling3D(pool_size=(2, 2, 2), strides=None (= pool_size), padding='valid')`."""

    _pool = staticmethod(conv3d_ops.avg_pool3d)


class _GlobalPooling3D(Layer):
    _reduce = None

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _channels_last(self, data_format)

    def call(self, inputs):
        return type(self)._reduce(inputs, [1, 2, 3])


class GlobalAveragePooling3D(_GlobalPooling3D):
    """The mean over the three spatial axes: [batch, d, h, w, c] -> [batch, c]."""

    _reduce = staticmethod(math_ops.reduce_mean)


class GlobalMaxPooling3D(_GlobalPooling3D):
    """The maximum over the three spatial axes: [batch, d, h, w, c] -> [batch, c]."""

    _reduce = staticmethod(math_ops.reduce_max)


Convolution3D, SeparableConvolution2D = Conv3D, SeparableConv2D
MaxPool3D, AvgPool3D = MaxPooling3D, AveragePooling3D
GlobalAvgPool3D, GlobalMaxPool3D = GlobalAveragePooling3D, GlobalMaxPooling3D
__all__ = ["Conv3D", "SeparableConv2D", "DepthwiseConv2D", "MaxPooling3D", "AveragePooling3D",
           "GlobalAveragePooling3D", "GlobalMaxPooling3D", "Convolution3D",
           "SeparableConvolution2D", "MaxPool3D", "AvgPool3D", "GlobalAvgPool3D",
           "GlobalMaxPool3D"]
