"""`tf.contrib.rnn.stack_bidirectional_rnn` and `stack_bidirectional_dynamic_rnn`: layers of
bidirectional RNNs, each layer's input the concatenated forward and backward outputs of the layer
below, with TF1's arguments and scopes ('stack_bidirectional_rnn/cell_<i>/fw', '.../bw' for the
static one; 'stack_bidirectional_rnn/cell_<i>/bidirectional_rnn/fw', '.../bw' for the dynamic
one). They return (outputs, states_fw, states_bw), one final state per layer and direction."""

from graphflow.ops import shape_ops
from graphflow.tf1.rnn import bidirectional_dynamic_rnn, static_bidirectional_rnn
from graphflow.tf1.variable_scope import variable_scope


def _check_layers(cells_fw, cells_bw, initial_states_fw, initial_states_bw):
    if not cells_fw:
        raise ValueError("Must specify at least one fw cell for BidirectionalRNN.")
    if not cells_bw:
        raise ValueError("Must specify at least one bw cell for BidirectionalRNN.")
    if not isinstance(cells_fw, list):
        raise ValueError("cells_fw must be a list of RNNCells (one per layer).")
    if not isinstance(cells_bw, list):
        raise ValueError("cells_bw must be a list of RNNCells (one per layer).")
    if len(cells_fw) != len(cells_bw):
        raise ValueError("Forward and Backward cells must have the same depth.")
    for what, states in (("initial_states_fw", initial_states_fw),
                         ("initial_states_bw", initial_states_bw)):
        if states is not None and (not isinstance(states, list) or
                                   len(states) != len(cells_fw)):
            raise ValueError(f"{what} must be a list of state tensors (one per layer).")


def stack_bidirectional_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None,
                            initial_states_bw=None, dtype=None, sequence_length=None,
                            scope=None):
    """Stacked `static_bidirectional_rnn` layers over the list `inputs`: (outputs list,
    states_fw tuple, states_bw tuple)."""
    _check_layers(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    if not inputs:
        raise ValueError("inputs must not be empty")
    states_fw, states_bw, prev_layer = [], [], inputs
    with variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with variable_scope(f"cell_{i}") as cell_scope:
                prev_layer, state_fw, state_bw = static_bidirectional_rnn(
                    cell_fw, cell_bw, prev_layer,
                    initial_state_fw=initial_states_fw[i] if initial_states_fw else None,
                    initial_state_bw=initial_states_bw[i] if initial_states_bw else None,
                    sequence_length=sequence_length, dtype=dtype, scope=cell_scope)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return prev_layer, tuple(states_fw), tuple(states_bw)


def stack_bidirectional_dynamic_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None,
                                    initial_states_bw=None, dtype=None, sequence_length=None,
                                    parallel_iterations=None, time_major=False, scope=None,
                                    swap_memory=False):
    """Stacked `bidirectional_dynamic_rnn` layers: (outputs [batch, time, 2 * units of the last
    layer] (time major with `time_major`), states_fw tuple, states_bw tuple)."""
    _check_layers(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw, prev_layer = [], [], inputs
    with variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with variable_scope(f"cell_{i}"):
                outputs, (state_fw, state_bw) = bidirectional_dynamic_rnn(
                    cell_fw, cell_bw, prev_layer,
                    initial_state_fw=initial_states_fw[i] if initial_states_fw else None,
                    initial_state_bw=initial_states_bw[i] if initial_states_bw else None,
                    sequence_length=sequence_length, parallel_iterations=parallel_iterations,
                    dtype=dtype, swap_memory=swap_memory, time_major=time_major)
                prev_layer = shape_ops.concat(list(outputs), 2)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return prev_layer, tuple(states_fw), tuple(states_bw)


__all__ = ["stack_bidirectional_rnn", "stack_bidirectional_dynamic_rnn"]
