"""`tf.contrib.rnn.ConvLSTMCell` and its `Conv1DLSTMCell`, `Conv2DLSTMCell`, `Conv3DLSTMCell`
(Shi et al. 2015): an LSTM whose gates are 'SAME' convolutions of [inputs, h] over the spatial
axes, with TF1's arguments and variable names ('conv_2d_lstm_cell/kernel' of shape kernel_shape +
[in_channels + output_channels, 4 * output_channels], 'biases' initialized to zero). State
`LSTMStateTuple(c, h)` of shape input_shape[:-1] + [output_channels]; with `skip_connection` the
output is h concatenated with the input along the channels (and, as in TF1, so is the state's h,
which therefore suits a single step only)."""

from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import conv3d_ops, conv_ops, math_ops, shape_ops, slice_ops
from graphflow.tf1.init_ops import zeros_initializer
from graphflow.tf1.rnn_cell import LSTMStateTuple, RNNCell


class ConvLSTMCell(RNNCell):
    """A convolutional LSTM over inputs [batch] + input_shape (`conv_ndims` spatial axes then
    channels): gates i, j, f, o from one convolution of [inputs, h]; `forget_bias` added to f."""

    def __init__(self, conv_ndims, input_shape, output_channels, kernel_shape, use_bias=True,
                 skip_connection=False, forget_bias=1.0, initializers=None,
                 name="conv_lstm_cell"):
        super().__init__(name=name)
        if conv_ndims != len(input_shape) - 1:
            raise ValueError(f"Invalid input_shape {input_shape} for conv_ndims={conv_ndims}.")
        if conv_ndims not in (1, 2, 3):
            raise ValueError(f"ConvLSTMCell: conv_ndims must be 1, 2 or 3, got {conv_ndims}")
        self._conv_ndims = conv_ndims
        self._input_shape = list(input_shape)
        self._output_channels = int(output_channels)
        self._kernel_shape = list(kernel_shape)
        self._use_bias = use_bias
        self._forget_bias = forget_bias
        self._skip_connection = skip_connection  # `initializers`: ignored, as TF1's cell did
        total = self._output_channels + (self._input_shape[-1] if skip_connection else 0)
        state = TensorShape(self._input_shape[:-1] + [self._output_channels])
        self._state_size = LSTMStateTuple(state, state)
        self._output_size = TensorShape(self._input_shape[:-1] + [total])

    state_size = property(lambda self: self._state_size)
    output_size = property(lambda self: self._output_size)

    def build(self, inputs_shape):
        shape = TensorShape(inputs_shape)
        if shape.ndims != self._conv_ndims + 2 or shape[-1] is None:
            raise ValueError(f"ConvLSTMCell: expected inputs of rank {self._conv_ndims + 2} with "
                             f"known channels, got shape {shape}")
        depth = int(shape[-1]) + self._output_channels
        self._kernel = self.add_variable("kernel",
                                         self._kernel_shape + [depth, 4 * self._output_channels])
        if self._use_bias:
            self._bias = self.add_variable("biases", [4 * self._output_channels],
                                           initializer=zeros_initializer())
        self.built = True

    def _conv(self, x):
        n = self._conv_ndims
        if n == 1:
            out = conv_ops.conv1d(x, self._kernel, 1, "SAME")
        elif n == 2:
            out = conv_ops.conv2d(x, self._kernel, [1, 1, 1, 1], "SAME")
        else:
            out = conv3d_ops.conv3d(x, self._kernel, [1, 1, 1, 1, 1], "SAME")
        return out + self._bias if self._use_bias else out

    def call(self, inputs, state):
        cell, hidden = state
        gates = self._conv(shape_ops.concat([inputs, hidden], self._conv_ndims + 1))
        i, j, f, o = slice_ops.split(gates, 4, axis=self._conv_ndims + 1)
        new_cell = math_ops.sigmoid(f + self._forget_bias) * cell
        new_cell += math_ops.sigmoid(i) * math_ops.tanh(j)
        output = math_ops.tanh(new_cell) * math_ops.sigmoid(o)
        if self._skip_connection:
            output = shape_ops.concat([output, inputs], -1)
        return output, LSTMStateTuple(new_cell, output)


class Conv1DLSTMCell(ConvLSTMCell):
    """ConvLSTMCell over one spatial axis."""

    def __init__(self, name="conv_1d_lstm_cell", **kwargs):
        super().__init__(conv_ndims=1, name=name, **kwargs)


class Conv2DLSTMCell(ConvLSTMCell):
    """ConvLSTMCell over two spatial axes (images)."""

    def __init__(self, name="conv_2d_lstm_cell", **kwargs):
        super().__init__(conv_ndims=2, name=name, **kwargs)


class Conv3DLSTMCell(ConvLSTMCell):
    """ConvLSTMCell over three spatial axes."""

    def __init__(self, name="conv_3d_lstm_cell", **kwargs):
        super().__init__(conv_ndims=3, name=name, **kwargs)


__all__ = ["ConvLSTMCell", "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell"]
