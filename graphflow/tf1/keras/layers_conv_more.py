"""More of Keras's convolution-family layers, on graphflow's tf.layers functions and ops:
Conv1D, MaxPooling1D/AveragePooling1D, GlobalMaxPooling1D/GlobalAveragePooling1D,
Conv2DTranspose, UpSampling2D (nearest), ZeroPadding2D, LeakyReLU (Keras's alpha 0.3) and the
TimeDistributed wrapper (the inner layer over [batch * time, ...]). channels_last by default,
kernels glorot_uniform, biases zero, as in TF1 Keras."""

from graphflow.ops import array_ops, conv_ops, image_ops, math_ops, nn_ops, shape_ops
from graphflow.tf1 import layers as tf_layers
from graphflow.tf1 import layers_conv as tf_layers_conv
from graphflow.tf1 import nn as tf_nn
from graphflow.tf1.keras import activations
from graphflow.tf1.keras.base_layer import Layer, shape_list


def _single(value):
    return int(value[0]) if isinstance(value, (list, tuple)) else int(value)


def _pair(value):
    return (int(value), int(value)) if isinstance(value, int) else tuple(int(v) for v in value)


class Conv1D(Layer):
    """`Conv1D(filters, kernel_size, strides=1, padding='valid', dilation_rate=1,
    activation=None, ...)` over [batch, steps, channels]; kernel [kernel_size, in, filters]."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        super().__init__(**kwargs)
        if padding == "causal":
            raise NotImplementedError("Conv1D(padding='causal') is not supported")
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("Conv1D: only channels_last is supported")
        self.filters, self.kernel_size = int(filters), _single(kernel_size)
        self.strides, self.dilation_rate = _single(strides), _single(dilation_rate)
        self.padding = tf_layers._padding(padding)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.inits = (kernel_initializer, bias_initializer)
        self.regularizers = (kernel_regularizer, bias_regularizer)

    def build(self, input_shape):
        channels = shape_list(input_shape)[-1]
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        self.kernel = self.add_weight("kernel", [self.kernel_size, channels, self.filters], None,
                                      self.inits[0], self.regularizers[0])
        self.bias = self.add_weight("bias", [self.filters], None, self.inits[1],
                                    self.regularizers[1]) if self.use_bias else None

    def call(self, inputs):
        out = conv_ops.conv1d(inputs, self.kernel, self.strides, self.padding,
                              data_format="NWC", dilations=self.dilation_rate)
        if self.use_bias:
            out = nn_ops.bias_add(out, self.bias)
        return self.activation(out)


class _Pooling1D(Layer):
    _pool = None

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.pool_size = _single(pool_size)
        self.strides = _single(strides) if strides is not None else self.pool_size
        self.padding = padding
        self.data_format = data_format or "channels_last"

    def call(self, inputs):
        return type(self)._pool(inputs, self.pool_size, self.strides, padding=self.padding,
                                data_format=self.data_format, name="pool")


class MaxPooling1D(_Pooling1D):
    """`MaxPooling1D(pool_size=2, strides=None (= pool_size), padding='valid')`."""

    _pool = staticmethod(tf_layers_conv.max_pooling1d)


class AveragePooling1D(_Pooling1D):
    """`AveragePooling1D(pool_size=2, strides=None (= pool_size), padding='valid')`."""

    _pool = staticmethod(tf_layers_conv.average_pooling1d)


class _GlobalPooling1D(Layer):
    _reduce = None

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = data_format or "channels_last"

    def call(self, inputs):
        return type(self)._reduce(inputs, [1 if self.data_format == "channels_last" else 2])


class GlobalAveragePooling1D(_GlobalPooling1D):
    """The mean over the steps: [batch, steps, c] -> [batch, c]."""

    _reduce = staticmethod(math_ops.reduce_mean)


class GlobalMaxPooling1D(_GlobalPooling1D):
    """The maximum over the steps: [batch, steps, c] -> [batch, c]."""

    _reduce = staticmethod(math_ops.reduce_max)


class Conv2DTranspose(Layer):
    """`Conv2DTranspose(filters, kernel_size, strides=(1, 1), padding='valid', activation=None)`
    (channels_last): kernel [kh, kw, filters, in]; 'same' gives in * stride, 'valid'
    in * stride + max(kernel - stride, 0)."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", output_padding=None,
                 data_format=None, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        super().__init__(**kwargs)
        if output_padding is not None or data_format not in (None, "channels_last"):
            raise NotImplementedError("Conv2DTranspose: output_padding and channels_first are "
                                      "not supported")
        self.filters, self.kernel_size = int(filters), _pair(kernel_size)
        self.strides, self.padding = _pair(strides), tf_layers._padding(padding)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.inits = (kernel_initializer, bias_initializer)
        self.regularizers = (kernel_regularizer, bias_regularizer)

    def build(self, input_shape):
        channels = shape_list(input_shape)[-1]
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        self.kernel = self.add_weight("kernel", list(self.kernel_size) + [self.filters, channels],
                                      None, self.inits[0], self.regularizers[0])
        self.bias = self.add_weight("bias", [self.filters], None, self.inits[1],
                                    self.regularizers[1]) if self.use_bias else None

    def call(self, inputs):
        dims = inputs.shape.as_list()
        out_h, out_w = (tf_layers_conv._deconv_length(d, k, s, self.padding)
                        for d, k, s in zip(dims[1:3], self.kernel_size, self.strides))
        if out_h is None or out_w is None:
            raise ValueError("Conv2DTranspose: the spatial dimensions of the inputs must be known")
        shape = shape_ops.stack([shape_ops.shape(inputs)[0], out_h, out_w, self.filters])
        out = conv_ops.conv2d_transpose(inputs, self.kernel, shape,
                                        strides=[1, self.strides[0], self.strides[1], 1],
                                        padding=self.padding)
        if self.use_bias:
            out = nn_ops.bias_add(out, self.bias)
        return self.activation(out)


class UpSampling2D(Layer):
    """`UpSampling2D(size=(2, 2))`: each pixel repeated size[0] x size[1] times (nearest)."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        if interpolation != "nearest" or data_format not in (None, "channels_last"):
            raise NotImplementedError("UpSampling2D: only nearest, channels_last")
        self.size = _pair(size)

    def call(self, inputs):
        h, w = inputs.shape.as_list()[1:3]
        if h is None or w is None:
            raise ValueError("UpSampling2D: the spatial dimensions of the inputs must be known")
        return image_ops.resize_nearest_neighbor(inputs, [h * self.size[0], w * self.size[1]])


class ZeroPadding2D(Layer):
    """`ZeroPadding2D(padding=(1, 1))`: an int, (rows, cols) or ((top, bottom), (left, right))."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("ZeroPadding2D: only channels_last")
        if isinstance(padding, int):
            padding = ((padding, padding), (padding, padding))
        elif isinstance(padding[0], int):
            padding = ((padding[0], padding[0]), (padding[1], padding[1]))
        self.padding = tuple(tuple(int(v) for v in pair) for pair in padding)

    def call(self, inputs):
        return array_ops.pad(inputs, [[0, 0], list(self.padding[0]), list(self.padding[1]),
                                      [0, 0]])


class LeakyReLU(Layer):
    """`LeakyReLU(alpha=0.3)`: x for x > 0, alpha * x below (Keras's default alpha is 0.3)."""

    def __init__(self, alpha=0.3, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return tf_nn.leaky_relu(inputs, alpha=self.alpha)


class TimeDistributed(Layer):
    """`TimeDistributed(layer)`: `layer` applied to every step of [batch, time, ...] (one call
    over [batch * time, ...], reshaped back)."""

    def __init__(self, layer, **kwargs):
        super().__init__(**kwargs)
        self.layer = layer

    def call(self, inputs):
        dims = inputs.shape.as_list()
        if any(d is None for d in dims[2:]):
            raise ValueError("TimeDistributed: the dimensions after time must be known")
        steps = dims[1] if dims[1] is not None else shape_ops.shape(inputs)[1]
        inner = self.layer(shape_ops.reshape(inputs, [-1] + dims[2:]))
        out_dims = inner.shape.as_list()[1:]
        if any(d is None for d in out_dims):
            raise ValueError("TimeDistributed: the inner layer's output dimensions must be known")
        if isinstance(steps, int):
            return shape_ops.reshape(inner, [-1, steps] + out_dims)
        return shape_ops.reshape(inner, shape_ops.stack([-1, steps] + out_dims))

    @property
    def weights(self):
        return self.layer.weights

    @property
    def trainable_weights(self):
        return self.layer.trainable_weights

    @property
    def non_trainable_weights(self):
        return self.layer.non_trainable_weights


MaxPool1D, AvgPool1D = MaxPooling1D, AveragePooling1D
GlobalAvgPool1D, GlobalMaxPool1D = GlobalAveragePooling1D, GlobalMaxPooling1D
Convolution1D, Convolution2DTranspose = Conv1D, Conv2DTranspose
__all__ = ["Conv1D", "Convolution1D", "MaxPooling1D", "AveragePooling1D", "MaxPool1D",
           "AvgPool1D", "GlobalAveragePooling1D", "GlobalMaxPooling1D", "GlobalAvgPool1D",
           "GlobalMaxPool1D", "Conv2DTranspose", "Convolution2DTranspose", "UpSampling2D",
           "ZeroPadding2D", "LeakyReLU", "TimeDistributed"]
