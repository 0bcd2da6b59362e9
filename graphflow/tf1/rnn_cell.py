"""`tf.nn.rnn_cell`: TF1's recurrent cells (BasicRNNCell, BasicLSTMCell, LSTMCell, GRUCell) and the
cell combinators (MultiRNNCell, DropoutWrapper), with TF1's arguments, state layouts and variable
names.

A cell maps `(inputs [batch, depth], state)` to `(output, new_state)`. Like a TF1 layer, a cell opens
its variable scope on its first call ('basic_lstm_cell', made unique among the scopes of the current
variable scope, or the `name` given), creates its variables there with `tf.get_variable`
('rnn/basic_lstm_cell/kernel', 'rnn/basic_lstm_cell/bias') and reuses them on every later call, so
one cell object used at every time step shares one set of weights. `build(inputs_shape)` creates the
variables without building the step; `tf.nn.dynamic_rnn` calls it before its loop so that variables
and their initializers stay outside the loop body.
"""

import collections
import contextlib
import re

from graphflow.framework import dtypes, nest
from graphflow.framework.graph import Tensor, get_default_graph
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import math_ops, nn_ops, shape_ops, slice_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.init_ops import constant_initializer, zeros_initializer
from graphflow.tf1.variable_scope import get_variable, variable_scope


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """The state of an LSTM cell: `c` (the memory cell) and `h` (the output)."""

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


def _snake_case(name):
    """'BasicLSTMCell' -> 'basic_lstm_cell' (TF1's default layer names)."""
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()


def zeros_for_batch(batch_size, size, dtype):
    """Zeros of shape [batch_size] + size; `batch_size` may be an int or a scalar tensor."""
    dims = [batch_size] + TensorShape(size).as_list()
    if any(isinstance(d, Tensor) for d in dims):
        return shape_ops.zeros(shape_ops.stack(dims), dtype=dtype)
    return shape_ops.zeros(dims, dtype=dtype)


def _input_depth(inputs_shape, cell):
    shape = TensorShape(inputs_shape)
    if shape.ndims is None or shape[-1] is None:
        raise ValueError(f"{type(cell).__name__}: expected inputs with a known last dimension, "
                         f"got shape {shape}")
    return int(shape[-1])


# ------------------------------------------------------------------ the base class
class RNNCell:
    """Abstract recurrent cell: subclasses define `state_size`, `output_size`, `build(inputs_shape)`
    (create variables with `get_variable`) and `call(inputs, state)`."""

    def __init__(self, trainable=True, name=None, dtype=None, _reuse=None):
        self.trainable = trainable
        self._base_name = name or _snake_case(type(self).__name__)
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._reuse = _reuse
        self._scope = None
        self.built = False
        self._variables = []

    @property
    def name(self):
        return self._scope.name if self._scope is not None else self._base_name

    @property
    def state_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define state_size")

    @property
    def output_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define output_size")

    @property
    def variables(self):
        return list(self._variables)

    trainable_variables = trainable_weights = weights = variables

    def build(self, inputs_shape):
        """Create this cell's variables for inputs of `inputs_shape` (a no-op by default)."""
        self.built = True

    def call(self, inputs, state):
        raise NotImplementedError(f"{type(self).__name__} must define call(inputs, state)")

    def add_variable(self, name, shape, dtype=None, initializer=None, trainable=None):
        """`get_variable` in the cell's scope, remembered in `cell.variables`."""
        var = get_variable(name, shape, dtype or self._dtype or dtypes.float32,
                           initializer=initializer,
                           trainable=self.trainable if trainable is None else trainable)
        self._variables.append(var)
        return var

    add_weight = add_variable

    @contextlib.contextmanager
    def _cell_scope(self, scope=None):
        """The variable scope of a call, chosen on first use as TF1's layers do (`scope` when
        given, else the cell's name made unique: 'basic_lstm_cell', 'basic_lstm_cell_1', ...)
        and re-entered, reusing its variables, by every later call."""
        if self._scope is None:
            if scope is not None:
                cm = variable_scope(scope, reuse=self._reuse)
            elif self._reuse:
                cm = variable_scope(self._base_name, reuse=self._reuse)
            else:
                cm = variable_scope(None, default_name=self._base_name)
            with cm as vs:
                self._scope = vs
                yield vs
            return
        with variable_scope(self._scope, reuse=True, auxiliary_name_scope=False) as vs:
            with get_default_graph().name_scope(self._scope.original_name_scope or None):
                yield vs

    def ensure_built(self, inputs_shape, dtype, scope=None):
        """Create the variables (in the cell's scope, of the inputs' `dtype` unless the cell was
        given one) unless already built."""
        if not self.built:
            self._dtype = self._dtype or dtypes.as_dtype(dtype)
            with self._cell_scope(scope):
                self.build(TensorShape(inputs_shape))
                self.built = True

    def __call__(self, inputs, state, scope=None):
        """(output, new_state) of one step."""
        inputs = inputs if nest.is_sequence(inputs) else convert_to_tensor(inputs)
        first = nest.flatten(inputs)[0]
        self.ensure_built(first.shape, first.dtype, scope)
        with self._cell_scope(scope):
            return self.call(inputs, state)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is not None:
            inputs = convert_to_tensor(inputs)
            batch_size = inputs.shape[0]
            if batch_size is None:
                batch_size = shape_ops.shape(inputs)[0]
            dtype = dtype or inputs.dtype
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size, dtype):
        """Zero-filled state(s) for a batch: a nest like `state_size` of [batch_size, size]."""
        dtype = dtypes.as_dtype(dtype)
        with get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            return nest.map_structure(lambda s: zeros_for_batch(batch_size, s, dtype), self.state_size)


def _concat_matmul(inputs, state, kernel, bias):
    """concat([inputs, state], 1) @ kernel + bias: every TF1 cell's affine map."""
    x = math_ops.matmul(shape_ops.concat([inputs, state], 1), kernel)
    return nn_ops.bias_add(x, bias)


# ------------------------------------------------------------------ cells
class BasicRNNCell(RNNCell):
    """`output = new_state = activation(W [inputs, state] + b)` (default activation tanh)."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = int(num_units)
        self._activation = activation or math_ops.tanh

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        self._kernel = self.add_variable("kernel", [depth + self._num_units, self._num_units])
        self._bias = self.add_variable("bias", [self._num_units], initializer=zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        output = self._activation(_concat_matmul(inputs, state, self._kernel, self._bias))
        return output, output


class BasicLSTMCell(RNNCell):
    """The LSTM of Zaremba et al. (no peepholes, no projection): gates i, j, f, o from one matmul of
    [inputs, h]; `c' = c * sigmoid(f + forget_bias) + sigmoid(i) * tanh(j)`,
    `h' = tanh(c') * sigmoid(o)`. State `LSTMStateTuple(c, h)` or, with `state_is_tuple=False`,
    `concat([c, h], 1)`."""

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = int(num_units)
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        n = self._num_units
        self._kernel = self.add_variable("kernel", [depth + n, 4 * n])
        self._bias = self.add_variable("bias", [4 * n], initializer=zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = slice_ops.split(state, 2, axis=1)
        gates = _concat_matmul(inputs, h, self._kernel, self._bias)
        i, j, f, o = slice_ops.split(gates, 4, axis=1)
        forget = math_ops.sigmoid(f + self._forget_bias)
        new_c = c * forget + math_ops.sigmoid(i) * self._activation(j)
        new_h = self._activation(new_c) * math_ops.sigmoid(o)
        if self._state_is_tuple:
            return new_h, LSTMStateTuple(new_c, new_h)
        return new_h, shape_ops.concat([new_c, new_h], 1)


class LSTMCell(RNNCell):
    """The LSTM of Hochreiter & Schmidhuber with TF1's options: `use_peepholes` (diagonal
    connections w_i_diag, w_f_diag, w_o_diag from c), `cell_clip` (clip c), `num_proj` (project h
    through 'projection/kernel', then `proj_clip`). State `LSTMStateTuple(c, h)` with h of size
    `num_proj` (or `num_units`)."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise NotImplementedError("LSTMCell: num_unit_shards and num_proj_shards (partitioned "
                                      "variables) are not supported")
        self._num_units = int(num_units)
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = int(num_proj) if num_proj else None
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self):
        n, h = self._num_units, self._num_proj or self._num_units
        return LSTMStateTuple(n, h) if self._state_is_tuple else n + h

    output_size = property(lambda self: self._num_proj or self._num_units)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        n, h = self._num_units, self._num_proj or self._num_units
        self._kernel = self.add_variable("kernel", [depth + h, 4 * n], initializer=self._initializer)
        self._bias = self.add_variable("bias", [4 * n], initializer=zeros_initializer())
        if self._use_peepholes:
            self._w_f_diag = self.add_variable("w_f_diag", [n], initializer=self._initializer)
            self._w_i_diag = self.add_variable("w_i_diag", [n], initializer=self._initializer)
            self._w_o_diag = self.add_variable("w_o_diag", [n], initializer=self._initializer)
        if self._num_proj is not None:
            self._proj_kernel = self.add_variable("projection/kernel", [n, self._num_proj],
                                                  initializer=self._initializer)
        self.built = True

    def call(self, inputs, state):
        n = self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev, m_prev = slice_ops.split(state, [n, self._num_proj or n], axis=1)
        gates = _concat_matmul(inputs, m_prev, self._kernel, self._bias)
        i, j, f, o = slice_ops.split(gates, 4, axis=1)
        act, sigmoid = self._activation, math_ops.sigmoid
        if self._use_peepholes:
            c = (sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev
                 + sigmoid(i + self._w_i_diag * c_prev) * act(j))
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * act(j)
        if self._cell_clip is not None:
            c = math_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + self._w_o_diag * c) * act(c)
        else:
            m = sigmoid(o) * act(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = math_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else shape_ops.concat([c, m], 1)
        return m, new_state


class GRUCell(RNNCell):
    """Gated recurrent unit (Cho et al.): `r, u = sigmoid(W_g [x, h] + b_g)` ('gates/kernel',
    'gates/bias', bias initialized to 1), `c = tanh(W_c [x, r * h] + b_c)` ('candidate/...'),
    `h' = u * h + (1 - u) * c`."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = int(num_units)
        self._activation = activation or math_ops.tanh
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        n = self._num_units
        bias_init = self._bias_initializer
        self._gate_kernel = self.add_variable("gates/kernel", [depth + n, 2 * n],
                                              initializer=self._kernel_initializer)
        self._gate_bias = self.add_variable(
            "gates/bias", [2 * n], initializer=bias_init or constant_initializer(1.0))
        self._candidate_kernel = self.add_variable("candidate/kernel", [depth + n, n],
                                                   initializer=self._kernel_initializer)
        self._candidate_bias = self.add_variable(
            "candidate/bias", [n], initializer=bias_init or zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        gates = math_ops.sigmoid(_concat_matmul(inputs, state, self._gate_kernel,
                                                self._gate_bias))
        r, u = slice_ops.split(gates, 2, axis=1)
        candidate = self._activation(_concat_matmul(inputs, r * state, self._candidate_kernel,
                                                    self._candidate_bias))
        new_h = u * state + (1 - u) * candidate
        return new_h, new_h


# The cells built from cells (MultiRNNCell, the wrappers) are in rnn_cell_wrappers.py; tf.nn.rnn_cell
# exports both modules.
__all__ = ["RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "LSTMStateTuple"]
