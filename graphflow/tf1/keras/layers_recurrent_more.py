"""Keras's `GRU` and `SimpleRNN` layers in graph mode and the `Bidirectional` wrapper, run by
graphflow's `dynamic_rnn` with cells holding the layers' weights.

TF1 Keras's layouts and defaults: GRU kernel [input, 3 * units] and recurrent_kernel
[units, 3 * units] with the gates in the order update (z), reset (r), candidate (h);
`reset_after=False` (TF1's default: the reset gate multiplies the state before the recurrent
matmul, bias [3 * units]); `reset_after=True` (the CuDNN-compatible form) applies it after, with
bias [2, 3 * units] (input bias, recurrent bias). h' = z * h + (1 - z) * candidate; activation
tanh, recurrent activation hard_sigmoid. SimpleRNN: h' = tanh(x W + h U + b).
A mask on the inputs (Masking, Embedding(mask_zero=True)) makes masked steps keep the state
(and repeat the previous output), as Keras does. `go_backwards` runs the sequence reversed
(its sequences come back in the reversed order, as in Keras); `Bidirectional` concatenates
(or sums, multiplies, averages) a forward layer and a backward copy whose sequences it puts
back in time order.
"""

from graphflow.ops import array_ops, math_ops, shape_ops, slice_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.keras import activations, initializers
from graphflow.tf1.keras.base_layer import Layer, get_mask, shape_list
from graphflow.tf1.keras.layers_recurrent import KerasRecurrentCell, masked_inputs
from graphflow.tf1.rnn import dynamic_rnn


class _Recurrent(Layer):
    """What GRU and SimpleRNN share: weights, the loop over time and the return forms."""

    _gates = 1

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, dropout=0.0, recurrent_dropout=0.0,
                 unroll=False, **kwargs):
        for key in ("activity_regularizer", "kernel_constraint", "recurrent_constraint",
                    "bias_constraint"):
            if kwargs.pop(key, None) is not None:
                raise NotImplementedError(f"{type(self).__name__}: {key} is not supported")
        super().__init__(**kwargs)
        if stateful or dropout or recurrent_dropout:
            raise NotImplementedError(f"{type(self).__name__}: stateful and (recurrent_)dropout "
                                      "are not supported")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.inits = (kernel_initializer, recurrent_initializer, bias_initializer)
        self.regularizers = (kernel_regularizer, recurrent_regularizer, bias_regularizer)
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards = go_backwards

    def _bias_shape(self):
        return [self._gates * self.units]

    def build(self, input_shape):
        features = shape_list(input_shape)[-1]
        if features is None:
            raise ValueError(f"{type(self).__name__}: the last dimension of the inputs must be "
                             "known")
        width = self._gates * self.units
        self.kernel = self.add_weight("kernel", [features, width], None, self.inits[0],
                                      self.regularizers[0])
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel", [self.units, width], None, initializers.get(self.inits[1]),
            self.regularizers[1])
        self.bias = self.add_weight("bias", self._bias_shape(), None, self.inits[2],
                                    self.regularizers[2]) if self.use_bias else None

    def call(self, inputs, initial_state=None):
        x = convert_to_tensor(inputs)
        sequence = masked_inputs(x, get_mask(inputs), self.go_backwards)
        if isinstance(initial_state, (list, tuple)):
            initial_state = initial_state[0]
        outputs, state = dynamic_rnn(KerasRecurrentCell(self), sequence,
                                     initial_state=initial_state, dtype=x.dtype)
        result = outputs if self.return_sequences else state
        return [result, state] if self.return_state else result


class SimpleRNN(_Recurrent):
    """`SimpleRNN(units, activation='tanh', use_bias=True, return_sequences=False,
    return_state=False, go_backwards=False)`: h' = activation(x W + h U + b)."""

    def step(self, x, h):
        z = math_ops.matmul(x, self.kernel) + math_ops.matmul(h, self.recurrent_kernel)
        if self.use_bias:
            z = z + self.bias
        return self.activation(z)


class GRU(_Recurrent):
    """`GRU(units, activation='tanh', recurrent_activation='hard_sigmoid', use_bias=True,
    reset_after=False, return_sequences=False, return_state=False, go_backwards=False)`, TF1
    Keras's gate order (z, r, h) and equations."""

    _gates = 3

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid",
                 reset_after=False, implementation=1, **kwargs):
        super().__init__(units, activation=activation, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = reset_after

    def _bias_shape(self):
        return [2, 3 * self.units] if self.reset_after else [3 * self.units]

    def step(self, x, h):
        units = self.units
        x_all = math_ops.matmul(x, self.kernel)
        if self.use_bias:
            x_all = x_all + (self.bias[0] if self.reset_after else self.bias)
        x_z, x_r, x_h = slice_ops.split(x_all, 3, axis=1)
        u_zr = self.recurrent_kernel[:, :2 * units]
        u_h = self.recurrent_kernel[:, 2 * units:]
        if self.reset_after:
            h_all = math_ops.matmul(h, self.recurrent_kernel)
            if self.use_bias:
                h_all = h_all + self.bias[1]
            h_z, h_r, h_h = slice_ops.split(h_all, 3, axis=1)
            z = self.recurrent_activation(x_z + h_z)
            r = self.recurrent_activation(x_r + h_r)
            candidate = self.activation(x_h + r * h_h)
        else:
            h_z, h_r = slice_ops.split(math_ops.matmul(h, u_zr), 2, axis=1)
            z = self.recurrent_activation(x_z + h_z)
            r = self.recurrent_activation(x_r + h_r)
            candidate = self.activation(x_h + math_ops.matmul(r * h, u_h))
        return z * h + (1.0 - z) * candidate


class Bidirectional(Layer):
    """`Bidirectional(layer, merge_mode='concat')`: `layer` forward and a copy of it (same
    configuration, its own weights) over the reversed sequence; outputs merged by 'concat',
    'sum', 'mul', 'ave' or returned as a list with merge_mode=None."""

    def __init__(self, layer, merge_mode="concat", backward_layer=None, **kwargs):
        super().__init__(**kwargs)
        if merge_mode not in ("concat", "sum", "mul", "ave", None):
            raise ValueError(f"Invalid merge mode {merge_mode!r}")
        if getattr(layer, "return_state", False):
            raise NotImplementedError("Bidirectional: return_state is not supported")
        self.forward_layer = layer
        if backward_layer is None:
            backward_layer = type(layer)(**_backward_config(layer))
        self.backward_layer = backward_layer
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences

    def call(self, inputs):
        forward = self.forward_layer(inputs)
        backward = self.backward_layer(inputs)
        if self.return_sequences:
            backward = array_ops.reverse(backward, [1])
        if self.merge_mode == "concat":
            return shape_ops.concat([forward, backward], axis=-1)
        if self.merge_mode == "sum":
            return forward + backward
        if self.merge_mode == "mul":
            return forward * backward
        if self.merge_mode == "ave":
            return (forward + backward) * 0.5
        return [forward, backward]

    @property
    def weights(self):
        return self.forward_layer.weights + self.backward_layer.weights

    @property
    def trainable_weights(self):
        return self.forward_layer.trainable_weights + self.backward_layer.trainable_weights

    @property
    def non_trainable_weights(self):
        return self.forward_layer.non_trainable_weights + \
            self.backward_layer.non_trainable_weights


def _backward_config(layer):
    """The arguments that rebuild `layer` (GRU, SimpleRNN or LSTM) going the other way."""
    config = {"units": layer.units, "activation": layer.activation,
              "use_bias": layer.use_bias, "kernel_initializer": layer.inits[0],
              "recurrent_initializer": layer.inits[1], "return_sequences": layer.return_sequences,
              "go_backwards": not layer.go_backwards, "name": "backward_" + layer.name}
    if isinstance(layer, (GRU, SimpleRNN)):
        config["bias_initializer"] = layer.inits[2]
    if not isinstance(layer, SimpleRNN):
        config["recurrent_activation"] = layer.recurrent_activation
    if isinstance(layer, GRU):
        config["reset_after"] = layer.reset_after
    return config


__all__ = ["GRU", "SimpleRNN", "Bidirectional"]
