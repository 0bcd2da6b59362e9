"""Cells built from cells (`tf.nn.rnn_cell.MultiRNNCell`, `DropoutWrapper`, `ResidualWrapper`,
`DeviceWrapper`), with TF1's arguments and variable names: a MultiRNNCell's layer i lives in
'multi_rnn_cell/cell_<i>/'; a wrapper adds no scope of its own (its cell's variables keep their
names)."""

import hashlib
import numbers

from graphflow.framework import nest
from graphflow.framework.graph import get_default_graph
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import math_ops, nn_ops, random_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.rnn_cell import LSTMStateTuple, RNNCell
from graphflow.tf1.variable_scope import variable_scope


class MultiRNNCell(RNNCell):
    """Cells stacked in layers: the output of cell i is the input of cell i + 1. The state is the
    tuple of the cells' states (or their concatenation with `state_is_tuple=False`)."""

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not nest.is_sequence(cells):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells}.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(nest.is_sequence(c.state_size) for c in self._cells):
            raise ValueError("Some cells return tuples of states, but the flag state_is_tuple is "
                             f"not set. State sizes are: {[c.state_size for c in self._cells]}")

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    output_size = property(lambda self: self._cells[-1].output_size)

    @property
    def variables(self):
        return [v for cell in self._cells for v in cell.variables]

    trainable_variables = trainable_weights = weights = variables

    def zero_state(self, batch_size, dtype):
        if not self._state_is_tuple:
            return super().zero_state(batch_size, dtype)
        with get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)

    def build(self, inputs_shape):
        shape = TensorShape(inputs_shape)
        for i, cell in enumerate(self._cells):
            with variable_scope(f"cell_{i}"):
                cell.ensure_built(shape, self._dtype)
            shape = TensorShape([shape[0], cell.output_size])
        self.built = True

    def call(self, inputs, state):
        position, layer_input, new_states = 0, inputs, []
        for i, cell in enumerate(self._cells):
            with variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    if not nest.is_sequence(state):
                        raise ValueError(f"Expected state to be a tuple of length "
                                         f"{len(self.state_size)}, but received: {state}")
                    layer_state = state[i]
                else:
                    layer_state = state[:, position:position + cell.state_size]
                    position += cell.state_size
                layer_input, new_state = cell(layer_input, layer_state)
                new_states.append(new_state)
        if self._state_is_tuple:
            return layer_input, tuple(new_states)
        return layer_input, shape_ops.concat(new_states, 1)


class _CellWrapper(RNNCell):
    """A cell around a cell: the same sizes, variables and scope (no scope of its own)."""

    def __init__(self, cell):
        super().__init__()
        if not isinstance(cell, RNNCell):
            raise TypeError(f"The parameter cell is not a RNNCell: {cell!r}")
        self._cell = cell

    wrapped_cell = property(lambda self: self._cell)
    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)
    variables = property(lambda self: self._cell.variables)
    trainable_variables = trainable_weights = weights = variables
    built = property(lambda self: self._cell.built, lambda self, value: None)

    def zero_state(self, batch_size, dtype):
        with get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)

    def ensure_built(self, inputs_shape, dtype, scope=None):
        self._cell.ensure_built(inputs_shape, dtype, scope)


def _default_state_filter(substate):
    """Drop out every state except an LSTM's memory cell `c` (TF1's default)."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


def _check_keep_prob(value, what):
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"Parameter {what} must be between 0 and 1: {value}")
        return float(value)
    return convert_to_tensor(value, name=what)


def _should_drop(keep_prob):
    return not isinstance(keep_prob, float) or keep_prob < 1.0


class DropoutWrapper(_CellWrapper):
    """Dropout on a cell's inputs, outputs and (filtered) new state, each kept with its
    `*_keep_prob` (floats or scalar tensors). With `variational_recurrent=True` one mask per
    run is drawn for each of them and reused at every time step (Gal & Ghahramani); the input
    mask then needs `input_size`."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        super().__init__(cell)
        self._input_keep_prob = _check_keep_prob(input_keep_prob, "input_keep_prob")
        self._state_keep_prob = _check_keep_prob(state_keep_prob, "state_keep_prob")
        self._output_keep_prob = _check_keep_prob(output_keep_prob, "output_keep_prob")
        self._variational_recurrent = variational_recurrent
        self._seed = seed
        self._state_filter = dropout_state_filter_visitor or _default_state_filter
        self._noise = {}
        if variational_recurrent:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")
            if _should_drop(self._input_keep_prob):
                if input_size is None:
                    raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 "
                                     "or is unknown, input_size must be provided")
                self._noise["input"] = self._batch_noise(input_size, "input", dtype)
            self._noise["state"] = self._batch_noise(cell.state_size, "state", dtype)
            self._noise["output"] = self._batch_noise(cell.output_size, "output", dtype)

    def _batch_noise(self, sizes, salt, dtype):
        """Uniform noise of shape [1, size] per leaf of `sizes` (one mask shared by the batch)."""
        leaves = nest.flatten(sizes)
        noise = [random_ops.random_uniform([1] + TensorShape(s).as_list(), dtype=dtype,
                                           seed=self._gen_seed(salt, i))
                 for i, s in enumerate(leaves)]
        return nest.pack_sequence_as(sizes, noise)

    def _gen_seed(self, salt_prefix, index):
        """TF1's per-mask seed: md5 of the wrapper's seed and the mask's salt."""
        if self._seed is None:
            return None
        text = (str(self._seed) + f"{salt_prefix}_{index}").encode("utf-8")
        return int(hashlib.md5(text).hexdigest()[:8], 16) & 0x7FFFFFFF

    def _drop(self, values, salt, keep_prob, mask_flags=None):
        leaves = nest.flatten(values)
        flags = mask_flags if mask_flags is not None else [True] * len(leaves)
        noise = nest.flatten(self._noise[salt]) if self._variational_recurrent else None
        out = []
        for i, (v, keep) in enumerate(zip(leaves, flags)):
            if not keep:
                out.append(v)
            elif noise is not None:
                binary = math_ops.floor(keep_prob + noise[i])
                out.append(math_ops.truediv(v, keep_prob) * binary)
            else:
                out.append(nn_ops.dropout(v, keep_prob=keep_prob, seed=self._gen_seed(salt, i)))
        return nest.pack_sequence_as(values, out)

    def _state_flags(self, state):
        """One bool per leaf of `state`: whether dropout applies (from the filter visitor)."""
        flags, todo = [], [(state, None)]
        while todo:
            sub, decided = todo.pop()
            if decided is None:
                decided = self._state_filter(sub)
            if isinstance(decided, bool):
                flags.extend([decided] * len(nest.flatten(sub)))
            elif nest.is_sequence(sub):
                todo.extend(reversed(list(zip(sub, decided))))
            else:
                raise TypeError(f"dropout_state_filter_visitor returned {decided!r} for {sub!r}")
        return flags

    def __call__(self, inputs, state, scope=None):
        """Dropout around the wrapped cell's step; no variable scope of its own."""
        if _should_drop(self._input_keep_prob):
            inputs = self._drop(inputs, "input", self._input_keep_prob)
        output, new_state = self._cell(inputs, state, scope=scope)
        if _should_drop(self._state_keep_prob):
            new_state = self._drop(new_state, "state", self._state_keep_prob,
                                   self._state_flags(new_state))
        if _should_drop(self._output_keep_prob):
            output = self._drop(output, "output", self._output_keep_prob)
        return output, new_state

    call = __call__


class ResidualWrapper(_CellWrapper):
    """`output = residual_fn(inputs, cell_output)`, by default `inputs + cell_output` (leaf by
    leaf); the state is the cell's."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn

    def __call__(self, inputs, state, scope=None):
        output, new_state = self._cell(inputs, state, scope=scope)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, output), new_state
        mismatch = nest.structure_mismatch(inputs, output)
        if mismatch is not None:
            raise ValueError(f"ResidualWrapper: the cell's inputs and outputs differ in structure "
                             f"({mismatch})")
        added = [i + o for i, o in zip(nest.flatten(inputs), nest.flatten(output))]
        return nest.pack_sequence_as(output, added), new_state

    call = __call__


class DeviceWrapper(_CellWrapper):
    """Builds the wrapped cell's ops (and its zero state) on `device`."""

    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with get_default_graph().device(self._device):
            return super().zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        with get_default_graph().device(self._device):
            return self._cell(inputs, state, scope=scope)

    call = __call__


__all__ = ["MultiRNNCell", "DropoutWrapper", "ResidualWrapper", "DeviceWrapper"]
