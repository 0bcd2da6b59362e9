"""`tf.contrib.seq2seq.Decoder`, `BasicDecoder` and `dynamic_decode`: a decoder stepped inside one
`tf.while_loop` until every sequence of the batch is finished (or `maximum_iterations` steps have
run), its per-step outputs collected in growing TensorArrays.

`dynamic_decode(decoder, output_time_major=False, impute_finished=False, maximum_iterations=None)`
returns `(final_outputs, final_state, final_sequence_lengths)` as TF 1.x did: the outputs batch
major unless `output_time_major`; with `impute_finished` the outputs of finished sequences are zero
and their state is copied through; a sequence's length is the step at which it finished (plus one).
The decoder's variables are created inside the loop body and kept in the user's graph (graphflow's
`get_variable` lifts them out of a loop body).
"""

import collections

from graphflow.framework import dtypes, nest
from graphflow.framework.graph import name_scope
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import math_ops, shape_ops
from graphflow.ops.control_flow_ops import while_loop
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.static_value import scalar_value
from graphflow.ops.tensor_array_ops import TensorArray
from graphflow.tf1.rnn_cell import RNNCell, zeros_for_batch
from graphflow.tf1.seq2seq_helpers import Helper, transpose_batch_time
from graphflow.tf1.variable_scope import variable_scope


class Decoder:
    """What `dynamic_decode` drives: `batch_size`, `output_size`, `output_dtype`,
    `initialize() -> (finished, inputs, state)`, `step(time, inputs, state) -> (outputs, state,
    inputs, finished)` and optionally `finalize(outputs, state, sequence_lengths)`."""

    @property
    def batch_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define batch_size")

    @property
    def output_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define output_size")

    @property
    def output_dtype(self):
        raise NotImplementedError(f"{type(self).__name__} must define output_dtype")

    @property
    def tracks_own_finished(self):
        """True when `step` returns the finished flags to use as they are (beam search)."""
        return False

    def initialize(self, name=None):
        raise NotImplementedError(f"{type(self).__name__} must define initialize")

    def step(self, time, inputs, state, name=None):
        raise NotImplementedError(f"{type(self).__name__} must define step")

    def finalize(self, outputs, final_state, sequence_lengths):
        raise NotImplementedError


class BasicDecoderOutput(collections.namedtuple("BasicDecoderOutput",
                                                ("rnn_output", "sample_id"))):
    """One step's (or, stacked, every step's) cell output and sampled ids."""

    __slots__ = ()


def check_cell(cell):
    if not isinstance(cell, RNNCell) and not (hasattr(cell, "output_size") and
                                              hasattr(cell, "state_size") and callable(cell)):
        raise TypeError(f"cell must be an RNNCell, saw: {type(cell).__name__}")


def check_output_layer(layer):
    if layer is not None and not callable(layer):
        raise TypeError(f"output_layer must be a Layer, received: {type(layer)}")


def layer_output_size(layer, size):
    """The per-example output size of `layer` applied to inputs of per-example size `size`."""
    if layer is None:
        return size
    units = getattr(layer, "units", None)
    if units is None:
        units = getattr(layer, "_options", {}).get("units")
    if units is not None:
        return nest.map_structure(lambda s: TensorShape(
            TensorShape(s).as_list()[:-1] + [int(units)]), size)
    if hasattr(layer, "compute_output_shape"):
        shapes = nest.map_structure(
            lambda s: layer.compute_output_shape(TensorShape([None] + TensorShape(s).as_list())),
            size)
        return nest.map_structure(lambda s: TensorShape(TensorShape(s).as_list()[1:]), shapes)
    raise TypeError(f"the output size of output_layer {layer!r} is unknown: give it `units` or "
                    f"`compute_output_shape`")


class BasicDecoder(Decoder):
    """One cell step per decoding step, the cell's output (through `output_layer` when given)
    handed to the `helper`, which picks the sample ids and the next inputs."""

    def __init__(self, cell, helper, initial_state, output_layer=None):
        check_cell(cell)
        if not isinstance(helper, Helper):
            raise TypeError(f"helper must be a Helper, received: {type(helper)}")
        check_output_layer(output_layer)
        self._cell = cell
        self._helper = helper
        self._initial_state = initial_state
        self._output_layer = output_layer

    batch_size = property(lambda self: self._helper.batch_size)

    def _rnn_output_size(self):
        return layer_output_size(self._output_layer, self._cell.output_size)

    @property
    def output_size(self):
        return BasicDecoderOutput(rnn_output=self._rnn_output_size(),
                                  sample_id=self._helper.sample_ids_shape)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_state)[0].dtype
        return BasicDecoderOutput(nest.map_structure(lambda _: dtype, self._rnn_output_size()),
                                  self._helper.sample_ids_dtype)

    def initialize(self, name=None):
        """(finished, first inputs, initial state)."""
        return self._helper.initialize() + (self._initial_state,)

    def step(self, time, inputs, state, name=None):
        """(BasicDecoderOutput, next state, next inputs, finished) of one decoding step."""
        with name_scope(name, "BasicDecoderStep"):
            cell_outputs, cell_state = self._cell(inputs, state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            sample_ids = self._helper.sample(time=time, outputs=cell_outputs, state=cell_state)
            finished, next_inputs, next_state = self._helper.next_inputs(
                time=time, outputs=cell_outputs, state=cell_state, sample_ids=sample_ids)
        return BasicDecoderOutput(cell_outputs, sample_ids), next_state, next_inputs, finished


def map2(fn, a, b):
    """`fn` over the paired leaves of two structures nested alike; the result nests like `a`."""
    flat_a, flat_b = nest.flatten(a), nest.flatten(b)
    if len(flat_a) != len(flat_b):
        raise ValueError(f"The two structures don't have the same number of elements: "
                         f"{len(flat_a)} vs {len(flat_b)}")
    return nest.pack_sequence_as(a, [fn(x, y) for x, y in zip(flat_a, flat_b)])


def _element_shape(batch_size, size):
    """[batch] + size: the shape of one step's output (its batch size when known)."""
    static = batch_size if isinstance(batch_size, int) else scalar_value(batch_size)
    return TensorShape([None if static is None else int(static)] + TensorShape(size).as_list())


def dynamic_decode(decoder, output_time_major=False, impute_finished=False,
                   maximum_iterations=None, parallel_iterations=32, swap_memory=False,
                   scope=None):
    """Run `decoder` until every sequence is finished: (final_outputs, final_state,
    final_sequence_lengths). `parallel_iterations` and `swap_memory` are accepted for TF1
    compatibility."""
    if not isinstance(decoder, Decoder):
        raise TypeError(f"Expected decoder to be type Decoder, but saw: {type(decoder)}")
    with variable_scope(scope or "decoder"):
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(maximum_iterations, dtype=dtypes.int32,
                                                   name="maximum_iterations")
            if maximum_iterations.shape.ndims != 0:
                raise ValueError("maximum_iterations must be a scalar")
        initial_finished, initial_inputs, initial_state = decoder.initialize()
        batch_size = decoder.batch_size
        zero_outputs = map2(lambda size, dtype: zeros_for_batch(batch_size, size, dtype),
                            decoder.output_size, decoder.output_dtype)
        if maximum_iterations is not None:
            initial_finished = math_ops.logical_or(
                initial_finished, math_ops.greater_equal(0, maximum_iterations))
        initial_lengths = math_ops.cast(shape_ops.zeros_like(initial_finished), dtypes.int32)
        initial_time = convert_to_tensor(0, dtype=dtypes.int32, name="time")
        initial_outputs_ta = map2(lambda size, dtype: TensorArray(
            dtype, size=0, dynamic_size=True, element_shape=_element_shape(batch_size, size)),
            decoder.output_size, decoder.output_dtype)

        def condition(time, outputs_ta, state, inputs, finished, lengths):
            return math_ops.logical_not(math_ops.reduce_all(finished))

        def body(time, outputs_ta, state, inputs, finished, lengths):
            next_outputs, decoder_state, next_inputs, decoder_finished = decoder.step(
                time, inputs, state)
            if decoder.tracks_own_finished:
                next_finished = decoder_finished
            else:
                next_finished = math_ops.logical_or(decoder_finished, finished)
            next_lengths = math_ops.where(math_ops.logical_not(finished),
                                          shape_ops.fill(shape_ops.shape(lengths), time + 1),
                                          lengths)
            for what, a, b in (("state", state, decoder_state), ("inputs", inputs, next_inputs),
                               ("outputs", outputs_ta, next_outputs)):
                mismatch = nest.structure_mismatch(a, b)
                if mismatch is not None:
                    raise ValueError(f"dynamic_decode: the decoder's step returned {what} "
                                     f"nested unlike its initial {what} ({mismatch})")
            if impute_finished:
                emit = map2(lambda out, zero: _where_finished(finished, zero, out),
                            next_outputs, zero_outputs)
                next_state = map2(lambda new, cur: _maybe_copy_state(finished, new, cur),
                                  decoder_state, state)
            else:
                emit, next_state = next_outputs, decoder_state
            outputs_ta = map2(lambda ta, out: ta.write(time, out), outputs_ta, emit)
            return time + 1, outputs_ta, next_state, next_inputs, next_finished, next_lengths

        result = while_loop(condition, body, (initial_time, initial_outputs_ta, initial_state,
                                              initial_inputs, initial_finished, initial_lengths),
                            parallel_iterations=parallel_iterations,
                            maximum_iterations=maximum_iterations, swap_memory=swap_memory)
        final_outputs = nest.map_structure(lambda ta: ta.stack(), result[1])
        final_state, final_lengths = result[2], result[5]
        try:
            final_outputs, final_state = decoder.finalize(final_outputs, final_state,
                                                          final_lengths)
        except NotImplementedError:
            pass
        if not output_time_major:
            final_outputs = nest.map_structure(transpose_batch_time, final_outputs)
    return final_outputs, final_state, final_lengths


def _where_finished(finished, if_finished, otherwise):
    """`if_finished` where `finished` ([batch] or [batch, beam]) holds, else `otherwise`: the
    flags broadcast over the trailing axes of the values."""
    extra = (otherwise.shape.ndims or 0) - (finished.shape.ndims or 0)
    mask = finished
    for _ in range(max(extra, 0)):
        mask = shape_ops.expand_dims(mask, -1)
    return math_ops.where(mask, if_finished, otherwise)


def _maybe_copy_state(finished, new, cur):
    """The old state where the sequence had finished; TensorArrays and scalars pass through."""
    if isinstance(cur, TensorArray):
        return new
    if new.shape.ndims == 0 or cur.shape.ndims == 0:
        return new
    return _where_finished(finished, cur, new)


__all__ = ["Decoder", "BasicDecoder", "BasicDecoderOutput", "dynamic_decode"]
