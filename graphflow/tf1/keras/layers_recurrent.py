"""Keras's `LSTM` layer in graph mode, run by graphflow's `dynamic_rnn` (one while loop over
time) with a cell holding the layer's weights.

TF1 Keras's layout and defaults: kernel [input, 4 * units] and recurrent_kernel [units, 4 * units]
with the gates in the order input, forget, cell, output; glorot_uniform kernel, orthogonal
recurrent kernel, zero bias with the forget gate's part at one (`unit_forget_bias`); activation
tanh and recurrent activation hard_sigmoid (TF1's `tf.keras.layers.LSTM`). A mask on the
inputs (Masking, Embedding(mask_zero=True)) makes masked steps keep the state.
"""

from graphflow.ops import array_ops, math_ops, shape_ops, slice_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1 import init_ops
from graphflow.tf1.keras import activations, initializers
from graphflow.tf1.keras.base_layer import Layer, get_mask, shape_list
from graphflow.tf1.rnn import dynamic_rnn
from graphflow.tf1.rnn_cell import LSTMStateTuple, RNNCell


class _UnitForgetBias(init_ops.Initializer):
    """Zeros with ones for the forget gate's quarter."""

    def _build(self, shape, dtype):
        from graphflow.ops import shape_ops
        units = shape[0] // 4
        return shape_ops.concat([shape_ops.zeros([units], dtype), shape_ops.ones([units], dtype),
                                 shape_ops.zeros([2 * units], dtype)], axis=0)


def masked_inputs(x, mask, go_backwards):
    """What a Keras recurrent layer runs over: `x`, or (x, mask as 0/1 [batch, time, 1]) when
    the inputs carry a mask; reversed in time with `go_backwards` (its sequences then come back
    reversed, as in Keras)."""
    if mask is not None:
        keep = shape_ops.expand_dims(math_ops.cast(mask, x.dtype), -1)
        if go_backwards:
            keep = array_ops.reverse(keep, [1])
    if go_backwards:
        x = array_ops.reverse(x, [1])
    return x if mask is None else (x, keep)


class KerasRecurrentCell(RNNCell):
    """One step over the weights of a recurrent layer (already created: nothing to build)."""

    def __init__(self, layer):
        super().__init__(name=layer.name + "_cell")
        self.layer = layer
        self.built = True

    @property
    def state_size(self):
        return self.layer.units

    @property
    def output_size(self):
        return self.layer.units

    def call(self, inputs, state):
        if isinstance(inputs, tuple):          # (x, mask): masked steps keep the state
            x, keep = inputs
            h = self.layer.step(x, state)
            h = keep * h + (1.0 - keep) * state
        else:
            h = self.layer.step(inputs, state)
        return h, h


class KerasLSTMCell(KerasRecurrentCell):
    """One LSTM step over the weights of an `LSTM` layer: its state is (c, h)."""

    @property
    def state_size(self):
        return LSTMStateTuple(self.layer.units, self.layer.units)

    def call(self, inputs, state):
        layer = self.layer
        keep = None
        if isinstance(inputs, tuple):          # (x, mask): masked steps keep the state
            inputs, keep = inputs
        c, h = state
        c_old, h_old = c, h
        z = math_ops.matmul(inputs, layer.kernel) + math_ops.matmul(h, layer.recurrent_kernel)
        if layer.use_bias:
            z = z + layer.bias
        i, f, g, o = slice_ops.split(z, 4, axis=1)
        i = layer.recurrent_activation(i)
        f = layer.recurrent_activation(f)
        c = f * c + i * layer.activation(g)
        h = layer.recurrent_activation(o) * layer.activation(c)
        if keep is not None:
            c = keep * c + (1.0 - keep) * c_old
            h = keep * h + (1.0 - keep) * h_old
        return h, LSTMStateTuple(c, h)


class LSTM(Layer):
    """`LSTM(units, activation='tanh', recurrent_activation='hard_sigmoid', use_bias=True,
    return_sequences=False, return_state=False, go_backwards=False, ...)` over inputs
    [batch, time, features]."""

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, dropout=0.0, recurrent_dropout=0.0,
                 **kwargs):
        super().__init__(**kwargs)
        if stateful or dropout or recurrent_dropout:
            raise NotImplementedError("LSTM: stateful and (recurrent_)dropout are not supported")
        self.go_backwards = go_backwards
        self.units = int(units)
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = use_bias
        self.inits = (kernel_initializer, recurrent_initializer,
                      _UnitForgetBias() if unit_forget_bias and bias_initializer == "zeros"
                      else bias_initializer)
        self.regularizers = (kernel_regularizer, recurrent_regularizer, bias_regularizer)
        self.return_sequences, self.return_state = return_sequences, return_state

    def build(self, input_shape):
        features = shape_list(input_shape)[-1]
        if features is None:
            raise ValueError("LSTM: the last dimension of the inputs must be known")
        self.kernel = self.add_weight("kernel", [features, 4 * self.units], None, self.inits[0],
                                      self.regularizers[0])
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel", [self.units, 4 * self.units], None,
            initializers.get(self.inits[1]), self.regularizers[1])
        self.bias = self.add_weight("bias", [4 * self.units], None, self.inits[2],
                                    self.regularizers[2]) if self.use_bias else None

    def call(self, inputs, initial_state=None):
        x = convert_to_tensor(inputs)
        sequence = masked_inputs(x, get_mask(inputs), self.go_backwards)
        if initial_state is not None:
            initial_state = LSTMStateTuple(*initial_state)
        outputs, state = dynamic_rnn(KerasLSTMCell(self), sequence, initial_state=initial_state,
                                     dtype=x.dtype)
        result = outputs if self.return_sequences else state.h
        if self.return_state:
            return [result, state.h, state.c]
        return result


__all__ = ["LSTM"]
