"""`tf.contrib.rnn`'s cell wrappers beyond tf.nn.rnn_cell: `HighwayWrapper`,
`AttentionCellWrapper`, `OutputProjectionWrapper`, `InputProjectionWrapper` and
`EmbeddingWrapper`, with TF1's arguments and variable names (the last four make their variables
in a scope of their own, 'output_projection_wrapper/kernel', with the wrapped cell's scope
inside it).

`HighwayWrapper(cell)` mixes each input with the cell's output through a carry gate
(Srivastava et al. 2015): `out = x * t + cell_out * (1 - t)`, `t = sigmoid(x W_c + b_c)`
('carry_w', 'carry_b' initialized to `carry_bias_init`, in the caller's scope like TF1's; with
`couple_carry_transform_gates=False` a separate transform gate 'transform_w', 'transform_b').

`AttentionCellWrapper(cell, attn_length)` (Bahdanau-style attention over the cell's last
`attn_length` outputs, TF1's contrib cell): the input is projected with the previous attention
(its 'kernel', 'bias'), the cell steps, its concatenated new state queries the window of past
outputs ('attention/attn_w', 'attention/attn_v', 'attention/kernel', 'attention/bias'), and the
output is projected from the cell output and the new attention ('attn_output_projection/...'),
then pushed into the window. The state is `(cell_state, attention, window)` (flattened with
`state_is_tuple=False`).
"""

import math

from graphflow.framework import nest
from graphflow.framework.graph import get_default_graph
from graphflow.ops import math_ops, nn_ops, shape_ops
from graphflow.tf1.embedding_ops import embedding_lookup
from graphflow.tf1.init_ops import constant_initializer, random_uniform_initializer, zeros_initializer
from graphflow.tf1.rnn_cell import RNNCell
from graphflow.tf1.rnn_cell_wrappers import _CellWrapper
from graphflow.tf1.variable_scope import get_variable, variable_scope


class HighwayWrapper(_CellWrapper):
    """A highway connection around `cell` (see the module docstring); inputs and outputs must
    have the same structure and shapes."""

    def __init__(self, cell, couple_carry_transform_gates=True, carry_bias_init=1.0):
        super().__init__(cell)
        self._couple_carry_transform_gates = couple_carry_transform_gates
        self._carry_bias_init = carry_bias_init

    def _highway(self, inp, out):
        size = inp.shape[-1] if inp.shape.ndims == 2 else None
        if size is None:
            raise ValueError(f"HighwayWrapper: inputs must be [batch, depth] with a known depth, "
                             f"got {inp.name} of shape {inp.shape}")
        carry_w = get_variable("carry_w", [size, size], inp.dtype)
        carry_b = get_variable("carry_b", [size], inp.dtype,
                               initializer=constant_initializer(self._carry_bias_init))
        carry = math_ops.sigmoid(nn_ops.bias_add(math_ops.matmul(inp, carry_w), carry_b))
        if self._couple_carry_transform_gates:
            transform = 1 - carry
        else:
            transform_w = get_variable("transform_w", [size, size], inp.dtype)
            transform_b = get_variable("transform_b", [size], inp.dtype,
                                       initializer=constant_initializer(-self._carry_bias_init))
            transform = math_ops.sigmoid(nn_ops.bias_add(math_ops.matmul(inp, transform_w),
                                                         transform_b))
        return inp * carry + out * transform

    def __call__(self, inputs, state, scope=None):
        outputs, new_state = self._cell(inputs, state, scope=scope)
        mismatch = nest.structure_mismatch(inputs, outputs)
        if mismatch is not None:
            raise ValueError(f"HighwayWrapper: the cell's inputs and outputs differ in structure "
                             f"({mismatch})")
        flat_in, flat_out = nest.flatten(inputs), nest.flatten(outputs)
        for i, o in zip(flat_in, flat_out):
            if not i.shape.is_compatible_with(o.shape):
                raise ValueError(f"HighwayWrapper: input shape {i.shape} does not match the "
                                 f"cell's output shape {o.shape}")
        mixed = [self._highway(i, o) for i, o in zip(flat_in, flat_out)]
        return nest.pack_sequence_as(outputs, mixed), new_state

    call = __call__


def _linear(args, output_size):
    """TF1's `_Linear`: concat(args) @ 'kernel' + 'bias' (zeros) in the current scope."""
    x = shape_ops.concat(list(args), 1) if isinstance(args, (list, tuple)) else args
    kernel = get_variable("kernel", [x.shape[-1], output_size], x.dtype)
    bias = get_variable("bias", [output_size], x.dtype, initializer=zeros_initializer())
    return nn_ops.bias_add(math_ops.matmul(x, kernel), bias)


class _ScopedWrapper(RNNCell):
    """A wrapper with a variable scope of its own (its snake-case class name), in which it makes
    its variables, and the wrapped cell its scope, on the first call."""

    def __init__(self, cell, reuse=None):
        super().__init__(_reuse=reuse)
        if not isinstance(cell, RNNCell):
            raise TypeError(f"The parameter cell is not RNNCell: {cell!r}")
        self._cell = cell

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)

    def zero_state(self, batch_size, dtype):
        with get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)

    def ensure_built(self, inputs_shape, dtype, scope=None):
        """Nothing to build ahead: the variables are made on the first call."""

    def __call__(self, inputs, state, scope=None):
        with self._cell_scope(scope):
            self.built = True
            return self.call(inputs, state)


class OutputProjectionWrapper(_ScopedWrapper):
    """The cell's output projected to `output_size` ('kernel', 'bias'), then `activation`."""

    def __init__(self, cell, output_size, activation=None, reuse=None):
        super().__init__(cell, reuse)
        if output_size < 1:
            raise ValueError(f"Parameter output_size must be > 0: {output_size}.")
        self._output_size = int(output_size)
        self._activation = activation

    output_size = property(lambda self: self._output_size)

    def call(self, inputs, state):
        output, new_state = self._cell(inputs, state)
        projected = _linear(output, self._output_size)
        if self._activation is not None:
            projected = self._activation(projected)
        return projected, new_state


class InputProjectionWrapper(_ScopedWrapper):
    """The input projected to `num_proj` ('kernel', 'bias'), then `activation`, before the
    cell. `input_size` is accepted for TF1 compatibility."""

    def __init__(self, cell, num_proj, activation=None, input_size=None, reuse=None):
        super().__init__(cell, reuse)
        self._num_proj = int(num_proj)
        self._activation = activation

    def call(self, inputs, state):
        projected = _linear(inputs, self._num_proj)
        if self._activation is not None:
            projected = self._activation(projected)
        return self._cell(projected, state)


class EmbeddingWrapper(_ScopedWrapper):
    """Integer inputs [batch] or [batch, 1] looked up in an 'embedding' [embedding_classes,
    embedding_size] (uniform in +-sqrt(3) unless `initializer`) before the cell."""

    def __init__(self, cell, embedding_classes, embedding_size, initializer=None, reuse=None):
        super().__init__(cell, reuse)
        if embedding_classes <= 0 or embedding_size <= 0:
            raise ValueError(f"Both embedding_classes and embedding_size must be > 0: "
                             f"{embedding_classes}, {embedding_size}.")
        self._embedding_classes = int(embedding_classes)
        self._embedding_size = int(embedding_size)
        self._initializer = initializer

    def call(self, inputs, state):
        state_dtype = nest.flatten(state)[0].dtype
        initializer = self._initializer or random_uniform_initializer(-math.sqrt(3),
                                                                      math.sqrt(3))
        embedding = get_variable("embedding", [self._embedding_classes, self._embedding_size],
                                 state_dtype, initializer=initializer)
        embedded = embedding_lookup(embedding, shape_ops.reshape(inputs, [-1]))
        return self._cell(embedded, state)


class AttentionCellWrapper(_ScopedWrapper):
    """Attention over the cell's last `attn_length` outputs (see the module docstring).
    attn_size: the attention's size (default: the cell's output size); attn_vec_size: the size
    of the score's hidden layer (default attn_size); input_size: the size the input is
    projected to (default: the input's own)."""

    def __init__(self, cell, attn_length, attn_size=None, attn_vec_size=None, input_size=None,
                 state_is_tuple=True, reuse=None):
        super().__init__(cell, reuse)
        if nest.is_sequence(cell.state_size) and not state_is_tuple:
            raise ValueError(f"Cell returns tuple of states, but the flag state_is_tuple is not "
                             f"set. State size is: {cell.state_size}")
        if attn_length <= 0:
            raise ValueError(f"attn_length should be greater than zero, got {attn_length}")
        self._attn_length = int(attn_length)
        self._attn_size = int(attn_size if attn_size is not None else cell.output_size)
        self._attn_vec_size = int(attn_vec_size if attn_vec_size is not None
                                  else self._attn_size)
        self._input_size = input_size
        self._state_is_tuple = state_is_tuple

    @property
    def state_size(self):
        sizes = (self._cell.state_size, self._attn_size, self._attn_size * self._attn_length)
        return sizes if self._state_is_tuple else sum(sizes)

    output_size = property(lambda self: self._attn_size)

    def zero_state(self, batch_size, dtype):
        return RNNCell.zero_state(self, batch_size, dtype)

    def call(self, inputs, state):
        size, length = self._attn_size, self._attn_length
        if self._state_is_tuple:
            state, attns, attn_states = state
        else:
            states = state
            cell_size = self._cell.state_size
            state = states[:, :cell_size]
            attns = states[:, cell_size:cell_size + size]
            attn_states = states[:, cell_size + size:cell_size + size + size * length]
        attn_states = shape_ops.reshape(attn_states, [-1, length, size])
        input_size = self._input_size if self._input_size is not None else inputs.shape[1]
        inputs = _linear([inputs, attns], int(input_size))
        cell_output, new_state = self._cell(inputs, state)
        new_state_cat = shape_ops.concat(nest.flatten(new_state), 1) \
            if self._state_is_tuple else new_state
        new_attns, new_attn_states = self._attention(new_state_cat, attn_states)
        with variable_scope("attn_output_projection"):
            output = _linear([cell_output, new_attns], size)
        new_attn_states = shape_ops.concat([new_attn_states, shape_ops.expand_dims(output, 1)], 1)
        new_attn_states = shape_ops.reshape(new_attn_states, [-1, length * size])
        new_state = (new_state, new_attns, new_attn_states)
        if not self._state_is_tuple:
            new_state = shape_ops.concat(list(new_state), 1)
        return output, new_state

    def _attention(self, query, attn_states):
        size, vec, length = self._attn_size, self._attn_vec_size, self._attn_length
        with variable_scope("attention"):
            k = get_variable("attn_w", [1, 1, size, vec], query.dtype)
            v = get_variable("attn_v", [vec], query.dtype)
            # the 1x1 convolution of TF1's cell over [batch, length, 1, size] is a matmul
            hidden_features = shape_ops.reshape(
                math_ops.matmul(shape_ops.reshape(attn_states, [-1, size]),
                                shape_ops.reshape(k, [size, vec])), [-1, length, vec])
            y = shape_ops.reshape(_linear(query, vec), [-1, 1, vec])
            s = math_ops.reduce_sum(v * math_ops.tanh(hidden_features + y), [2])
            a = nn_ops.softmax(s)
            new_attns = math_ops.reduce_sum(shape_ops.expand_dims(a, 2) * attn_states, [1])
            return new_attns, attn_states[:, 1:]


__all__ = ["HighwayWrapper", "AttentionCellWrapper", "OutputProjectionWrapper",
           "InputProjectionWrapper", "EmbeddingWrapper"]
