"""`tf.nn.static_rnn`, `tf.nn.static_bidirectional_rnn`, `tf.nn.dynamic_rnn` and
`tf.nn.bidirectional_dynamic_rnn`: a cell from `graphflow.tf1.rnn_cell` applied along time, with
TF1's arguments, scopes ('rnn', 'bidirectional_rnn/fw', 'bidirectional_rnn/bw') and
`sequence_length` semantics: past a sequence's length its outputs are zero and its state is copied
through, so the final state is the state after its last valid step.

`static_rnn` unrolls the steps in the graph (one copy of the cell's ops per step);
`dynamic_rnn` runs the cell inside one `tf.while_loop`, reading inputs from and writing outputs to
TensorArrays, so the graph stays the same size for any number of steps, known only at run time.
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import array_ops, math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor, identity
from graphflow.tf1.rnn_cell import RNNCell, flatten, is_sequence, map_structure, pack_sequence_as
from graphflow.tf1.variable_scope import variable_scope


def _check_cell(cell, what="cell"):
    if not isinstance(cell, RNNCell):
        raise TypeError(f"{what} must be an instance of RNNCell, got {cell!r}")


def _batch_size(tensor, axis=0):
    """The static batch size of `tensor` if known, else a scalar int32 tensor."""
    dim = tensor.shape[axis] if tensor.shape.ndims is not None else None
    return dim if dim is not None else shape_ops.shape(tensor)[axis]


def _sequence_length(sequence_length):
    length = math_ops.cast(sequence_length, dtypes.int32)
    if length.shape.ndims not in (None, 1):
        raise ValueError(f"sequence_length must be a vector of length batch_size, but saw shape: "
                         f"{length.shape}")
    return identity(length, name="sequence_length")


def _initial_state(cell, initial_state, batch_size, dtype):
    if initial_state is not None:
        return initial_state
    if dtype is None:
        raise ValueError("If no initial_state is provided, dtype must be specified")
    return cell.zero_state(batch_size, dtype)


def _zero_output(cell, batch_size, dtype):
    def zeros(size):
        dims = [batch_size] + TensorShape(size).as_list()
        if any(isinstance(d, Tensor) for d in dims):
            return shape_ops.zeros(shape_ops.stack(dims), dtype=dtype)
        return shape_ops.zeros(dims, dtype=dtype)
    return map_structure(zeros, cell.output_size)


def select_rows(row_mask, if_true, if_false):
    """Row b of `if_true` where `row_mask[b]`, else row b of `if_false` (TF1's `where` with a
    vector condition), for tensors of any rank >= 1."""
    rank = if_true.shape.ndims
    if rank is None:
        rank = if_false.shape.ndims
    mask = row_mask
    for _ in range(max((rank or 1) - 1, 0)):
        mask = shape_ops.expand_dims(mask, -1)
    return math_ops.where(mask, if_true, if_false)


def copy_through(time, sequence_length, zero_output, state, new_output, new_state):
    """One step's (output, state) under `sequence_length`: zero output and the old state for the
    sequences that have ended (time >= length), the cell's results for the others."""
    finished = math_ops.greater_equal(time, sequence_length)
    output = map_structure(lambda z, n: select_rows(finished, z, n), zero_output, new_output)
    state = map_structure(lambda s, n: select_rows(finished, s, n), state, new_state)
    return output, state


def _output_dtype(state, dtype):
    if dtype is not None:
        return dtypes.as_dtype(dtype)
    return flatten(state)[0].dtype


# ------------------------------------------------------------------ static (unrolled) rnn
def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """Unrolled RNN over the list `inputs` (T tensors [batch, depth]): returns (outputs, state),
    `outputs` a list of T cell outputs and `state` the final state."""
    _check_cell(cell)
    if not is_sequence(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    outputs = []
    with variable_scope(scope or "rnn") as varscope:
        first = flatten(inputs[0])[0]
        first = convert_to_tensor(first)
        if first.shape.ndims is not None and first.shape.ndims < 2:
            raise ValueError(f"Input size (depth of inputs) must be accessible via shape "
                             f"inference, but saw shape {first.shape}")
        batch_size = _batch_size(first)
        state = _initial_state(cell, initial_state, batch_size, dtype)
        out_dtype = _output_dtype(state, dtype)
        if sequence_length is not None:
            sequence_length = _sequence_length(sequence_length)
            zero_output = _zero_output(cell, batch_size, out_dtype)
        for time, step_input in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            output, new_state = cell(step_input, state)
            if sequence_length is not None:
                output, new_state = copy_through(time, sequence_length, zero_output, state,
                                                 output, new_state)
            state = new_state
            outputs.append(output)
    return outputs, state


def reverse_sequence(input, seq_lengths, seq_axis, batch_axis, name=None):  # noqa: A002
    """`tf.reverse_sequence`: reverse the first `seq_lengths[b]` entries of each batch entry b
    along `seq_axis`; the rest stay in place (built from `gather` with batch dims)."""
    x = convert_to_tensor(input)
    lengths = math_ops.cast(seq_lengths, dtypes.int32)
    ndims = x.shape.ndims
    if ndims is None:
        raise ValueError(f"reverse_sequence needs a known rank, got {x.name}")
    perm = [batch_axis, seq_axis] + [d for d in range(ndims) if d not in (batch_axis, seq_axis)]
    inverse = [perm.index(d) for d in range(ndims)]
    moved = array_ops.transpose(x, perm) if perm != list(range(ndims)) else x
    steps = array_ops.range(_batch_size(moved, 1))                     # [T]
    lengths_col = shape_ops.expand_dims(lengths, 1)                     # [B, 1]
    reversed_index = lengths_col - 1 - shape_ops.expand_dims(steps, 0)  # [B, T]
    index = math_ops.where(math_ops.less(steps, lengths_col), reversed_index,
                           reversed_index * 0 + steps)
    out = array_ops.gather(moved, index, axis=1, batch_dims=1)
    out = array_ops.transpose(out, inverse) if perm != list(range(ndims)) else out
    return identity(out, name=name or "ReverseSequence")


def _reverse_list(inputs, lengths):
    """The list of step tensors reversed in time (per sequence when `lengths` is given)."""
    if lengths is None:
        return list(reversed(inputs))
    flat = [flatten(x) for x in inputs]
    reversed_flat = []
    for parts in zip(*flat):
        stacked = shape_ops.stack(list(parts), axis=0)
        rev = reverse_sequence(stacked, lengths, seq_axis=0, batch_axis=1)
        reversed_flat.append(shape_ops.unstack(rev, num=len(inputs), axis=0))
    return [pack_sequence_as(inputs[t], [r[t] for r in reversed_flat]) for t in range(len(inputs))]


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None, scope=None):
    """Forward and backward unrolled RNNs: returns (outputs, state_fw, state_bw), `outputs[t]` the
    concatenation of the forward and backward outputs at step t."""
    _check_cell(cell_fw, "cell_fw")
    _check_cell(cell_bw, "cell_bw")
    if not is_sequence(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                             sequence_length, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_list(inputs, sequence_length)
            tmp, state_bw = static_rnn(cell_bw, reversed_inputs, initial_state_bw, dtype,
                                       sequence_length, scope=bw_scope)
    output_bw = _reverse_list(tmp, sequence_length)
    outputs = []
    for fw, bw in zip(output_fw, output_bw):
        parts = [shape_ops.concat([f, b], 1) for f, b in zip(flatten(fw), flatten(bw))]
        outputs.append(pack_sequence_as(fw, parts))
    return outputs, state_fw, state_bw


__all__ = ["static_rnn", "static_bidirectional_rnn", "reverse_sequence"]
