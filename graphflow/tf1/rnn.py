"""`tf.nn.static_rnn`, `tf.nn.static_bidirectional_rnn`, `tf.nn.dynamic_rnn` and
`tf.nn.bidirectional_dynamic_rnn`: a cell from `graphflow.tf1.rnn_cell` applied along time, with
TF1's arguments, scopes ('rnn', 'bidirectional_rnn/fw', 'bidirectional_rnn/bw') and
`sequence_length` semantics: past a sequence's length its outputs are zero and its state is copied
through, so the final state is the state after its last valid step.

`static_rnn` unrolls the steps in the graph (one copy of the cell's ops per step);
`dynamic_rnn` runs the cell inside one `tf.while_loop`, reading inputs from and writing outputs to
TensorArrays, so the graph stays the same size for any number of steps, known only at run time.
"""

from graphflow.framework import dtypes, nest
from graphflow.framework.graph import get_default_graph
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import array_ops, math_ops, shape_ops
from graphflow.ops.control_flow_ops import while_loop
from graphflow.ops.core_ops import convert_to_tensor, identity
from graphflow.ops.tensor_array_ops import TensorArray
from graphflow.tf1.rnn_cell import RNNCell, zeros_for_batch
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
    return nest.map_structure(lambda size: zeros_for_batch(batch_size, size, dtype),
                              cell.output_size)


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

    def select(if_finished, computed):
        pairs = zip(nest.flatten(if_finished), nest.flatten(computed))
        return nest.pack_sequence_as(computed, [select_rows(finished, a, b) for a, b in pairs])
    return select(zero_output, new_output), select(state, new_state)


def _output_dtype(state, dtype):
    if dtype is not None:
        return dtypes.as_dtype(dtype)
    return nest.flatten(state)[0].dtype


# ------------------------------------------------------------------ static (unrolled) rnn
def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """Unrolled RNN over the list `inputs` (T tensors [batch, depth]): returns (outputs, state),
    `outputs` a list of T cell outputs and `state` the final state."""
    _check_cell(cell)
    if not nest.is_sequence(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    outputs = []
    with variable_scope(scope or "rnn") as varscope:
        first = nest.flatten(inputs[0])[0]
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
    flat = [nest.flatten(x) for x in inputs]
    reversed_flat = []
    for parts in zip(*flat):
        stacked = shape_ops.stack(list(parts), axis=0)
        rev = reverse_sequence(stacked, lengths, seq_axis=0, batch_axis=1)
        reversed_flat.append(shape_ops.unstack(rev, num=len(inputs), axis=0))
    return [nest.pack_sequence_as(inputs[t], [r[t] for r in reversed_flat]) for t in range(len(inputs))]


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None, scope=None):
    """Forward and backward unrolled RNNs: returns (outputs, state_fw, state_bw), `outputs[t]` the
    concatenation of the forward and backward outputs at step t."""
    _check_cell(cell_fw, "cell_fw")
    _check_cell(cell_bw, "cell_bw")
    if not nest.is_sequence(inputs):
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
        parts = [shape_ops.concat([f, b], 1) for f, b in zip(nest.flatten(fw), nest.flatten(bw))]
        outputs.append(nest.pack_sequence_as(fw, parts))
    return outputs, state_fw, state_bw


# ------------------------------------------------------------------ dynamic rnn (one while_loop)
def _transpose_batch_time(x):
    """[batch, time, ...] <-> [time, batch, ...]."""
    if x.shape.ndims is not None and x.shape.ndims < 2:
        raise ValueError(f"Expected input tensor {x.name} to have rank at least 2, got {x.shape}")
    rank = x.shape.ndims
    return array_ops.transpose(x, [1, 0] + list(range(2, rank)))


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """Run `cell` along the time axis of `inputs` ([batch, time, ...], or [time, batch, ...] with
    `time_major`; any nest of such tensors) inside one `tf.while_loop`: returns (outputs, state),
    `outputs` shaped like the inputs' batch and time axes with the cell's output size, `state` the
    final state. The number of steps is read from the inputs at run time. `parallel_iterations` and
    `swap_memory` are accepted for TF1 compatibility (the loop runs its iterations in order)."""
    _check_cell(cell)
    with variable_scope(scope or "rnn"):
        flat_input = [convert_to_tensor(x) for x in nest.flatten(inputs)]
        if not time_major:
            flat_input = [_transpose_batch_time(x) for x in flat_input]
        if sequence_length is not None:
            sequence_length = _sequence_length(sequence_length)
        batch_size = _batch_size(flat_input[0], 1)
        state = _initial_state(cell, initial_state, batch_size, dtype)
        out_dtype = _output_dtype(state, dtype)
        inputs = nest.pack_sequence_as(inputs, flat_input)
        outputs, final_state = _dynamic_rnn_loop(cell, inputs, state, sequence_length, batch_size,
                                                 out_dtype, swap_memory)
        if not time_major:
            outputs = nest.map_structure(_transpose_batch_time, outputs)
        return outputs, final_state


def _dynamic_rnn_loop(cell, inputs, initial_state, sequence_length, batch_size, dtype,
                      swap_memory):
    """The while_loop of dynamic_rnn over time-major `inputs`: (outputs, final state)."""
    flat_input = nest.flatten(inputs)
    first = flat_input[0]
    static_steps = first.shape[0] if first.shape.ndims is not None else None
    time_steps = static_steps if static_steps is not None else shape_ops.shape(first)[0]
    step_shape = TensorShape(first.shape.dims[1:])
    cell.ensure_built(step_shape, first.dtype)  # variables and initializers stay out of the loop
    if sequence_length is not None:
        zero_output = _zero_output(cell, batch_size, dtype)
    graph_name = get_default_graph().get_name_scope()
    base = graph_name + "/" if graph_name else ""
    input_tas = [TensorArray(x.dtype, size=time_steps, element_shape=x.shape.dims[1:]
                             if x.shape.ndims is not None else None,
                             tensor_array_name=f"{base}dynamic_rnn/input_{i}").unstack(x)
                 for i, x in enumerate(flat_input)]
    flat_output_size = nest.flatten(cell.output_size)
    static_batch = batch_size if isinstance(batch_size, int) else None
    output_tas = tuple(TensorArray(dtype, size=time_steps,
                                   element_shape=[static_batch] + TensorShape(size).as_list(),
                                   tensor_array_name=f"{base}dynamic_rnn/output_{i}")
                       for i, size in enumerate(flat_output_size))

    def time_step(time, output_tas, state):
        step_inputs = []
        for ta, x in zip(input_tas, flat_input):
            value = ta.read(time)
            value.set_shape(x.shape.dims[1:] if x.shape.ndims is not None else None)
            step_inputs.append(value)
        step_inputs = nest.pack_sequence_as(inputs, step_inputs)
        output, new_state = cell(step_inputs, state)
        if sequence_length is not None:
            output, new_state = copy_through(time, sequence_length, zero_output, state, output,
                                             new_state)
        output_tas = tuple(ta.write(time, out) for ta, out in zip(output_tas, nest.flatten(output)))
        return time + 1, output_tas, new_state

    time = convert_to_tensor(0, dtype=dtypes.int32, name="time")
    _, output_tas, final_state = while_loop(
        lambda time, *_: math_ops.less(time, time_steps), time_step,
        (time, output_tas, initial_state), maximum_iterations=time_steps,
        swap_memory=swap_memory)
    outputs = []
    for ta, size in zip(output_tas, flat_output_size):
        out = ta.stack()
        out.set_shape([static_steps, static_batch] + TensorShape(size).as_list())
        outputs.append(out)
    return nest.pack_sequence_as(cell.output_size, outputs), final_state


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False, time_major=False,
                              scope=None):
    """A forward and a backward dynamic_rnn ('bidirectional_rnn/fw', '.../bw'): returns
    ((output_fw, output_bw), (state_fw, state_bw)); the backward RNN reads each sequence reversed
    within its length and its outputs are reversed back into input order."""
    _check_cell(cell_fw, "cell_fw")
    _check_cell(cell_bw, "cell_bw")
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def reverse(x):
        if sequence_length is not None:
            return nest.map_structure(lambda t: reverse_sequence(
                t, sequence_length, seq_axis=time_axis, batch_axis=batch_axis), x)
        return nest.map_structure(lambda t: array_ops.reverse(t, [time_axis]), x)

    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(cell_fw, inputs, sequence_length, initial_state_fw,
                                              dtype, parallel_iterations, swap_memory, time_major,
                                              scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            tmp, state_bw = dynamic_rnn(cell_bw, reverse(inputs), sequence_length,
                                        initial_state_bw, dtype, parallel_iterations, swap_memory,
                                        time_major, scope=bw_scope)
    return (output_fw, reverse(tmp)), (state_fw, state_bw)


__all__ = ["static_rnn", "static_bidirectional_rnn", "reverse_sequence", "dynamic_rnn",
           "bidirectional_dynamic_rnn"]
