"""Keras's image layers: Conv2D, MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D and
GlobalMaxPooling2D (channels_last by default, kernels glorot_uniform, biases zero)."""

from graphflow.ops import conv_ops, math_ops, nn_ops
from graphflow.tf1 import layers as tf_layers
from graphflow.tf1.keras import activations
from graphflow.tf1.keras.base_layer import Layer, shape_list


def _pair(value):
    return (int(value), int(value)) if isinstance(value, int) else tuple(int(v) for v in value)


class Conv2D(Layer):
    """`Conv2D(filters, kernel_size, strides=(1, 1), padding='valid', activation=None, ...)`."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format=None, dilation_rate=(1, 1), activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.filters, self.kernel_size = int(filters), _pair(kernel_size)
        self.strides, self.dilation_rate = _pair(strides), _pair(dilation_rate)
        self.padding = tf_layers._padding(padding)
        self.data_format = data_format or "channels_last"
        self.fmt = tf_layers._data_format(self.data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.inits = (kernel_initializer, bias_initializer)
        self.regularizers = (kernel_regularizer, bias_regularizer)
        self.constraints = (kernel_constraint, bias_constraint)
        self.activity_regularizer = activity_regularizer

    def build(self, input_shape):
        dims = shape_list(input_shape)
        channels = dims[3] if self.fmt == "NHWC" else dims[1]
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        self.kernel = self.add_weight("kernel", list(self.kernel_size) + [channels, self.filters],
                                      None, self.inits[0], self.regularizers[0],
                                      constraint=self.constraints[0])
        self.bias = self.add_weight("bias", [self.filters], None, self.inits[1],
                                    self.regularizers[1], constraint=self.constraints[1]) \
            if self.use_bias else None

    def _four(self, a, b):
        return [1, a, b, 1] if self.fmt == "NHWC" else [1, 1, a, b]

    def call(self, inputs):
        out = conv_ops.conv2d(inputs, self.kernel, strides=self._four(*self.strides),
                              padding=self.padding, data_format=self.fmt,
                              dilations=self._four(*self.dilation_rate))
        if self.use_bias:
            out = nn_ops.bias_add(out, self.bias, data_format=self.fmt)
        out = self.activation(out)
        if self.activity_regularizer is not None:
            self.add_loss(self.activity_regularizer(out))
        return out


class _Pooling2D(Layer):
    _pool = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.pool_size = _pair(pool_size)
        self.strides = _pair(strides) if strides is not None else self.pool_size
        self.padding = padding
        self.data_format = data_format or "channels_last"

    def call(self, inputs):
        return type(self)._pool(inputs, self.pool_size, self.strides, padding=self.padding,
                                data_format=self.data_format, name="pool")


class MaxPooling2D(_Pooling2D):
    """`MaxPooling2D(pool_size=(2, 2), strides=None (= pool_size), padding='valid')`."""

    _pool = staticmethod(tf_layers.max_pooling2d)


class AveragePooling2D(_Pooling2D):
    """`AveragePooling2D(pool_size=(2, 2), strides=None (= pool_size), padding='valid')`."""

    _pool = staticmethod(tf_layers.average_pooling2d)


class _GlobalPooling2D(Layer):
    _reduce = None

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = data_format or "channels_last"

    def call(self, inputs):
        axes = [1, 2] if self.data_format == "channels_last" else [2, 3]
        return type(self)._reduce(inputs, axes)


class GlobalAveragePooling2D(_GlobalPooling2D):
    """The mean over the spatial axes: [batch, h, w, c] -> [batch, c]."""

    _reduce = staticmethod(math_ops.reduce_mean)


class GlobalMaxPooling2D(_GlobalPooling2D):
    """The maximum over the spatial axes: [batch, h, w, c] -> [batch, c]."""

    _reduce = staticmethod(math_ops.reduce_max)


MaxPool2D, AvgPool2D = MaxPooling2D, AveragePooling2D
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D
__all__ = ["Conv2D", "MaxPooling2D", "AveragePooling2D", "GlobalAveragePooling2D",
           "GlobalMaxPooling2D", "MaxPool2D", "AvgPool2D", "GlobalAvgPool2D", "GlobalMaxPool2D"]
