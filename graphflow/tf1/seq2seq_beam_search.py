"""`tf.contrib.seq2seq.BeamSearchDecoder`, `tile_batch` and `gather_tree`, with TF1's arguments
and algorithm.

The decoder keeps `beam_width` hypotheses per batch entry; the cell runs on the merged
[batch * beam_width, ...] tensors (its initial state and the attention memory tiled with
`tile_batch`). A step adds the log-softmax of the logits to each beam's log probability (a
finished beam can only extend with `end_token`, at no cost), scores every (beam, word) pair -
divided by the GNMT length penalty `((5 + length) / 6) ** length_penalty_weight`, plus for the
finished beams the coverage penalty of their accumulated attention (`coverage_penalty_weight`,
AttentionWrapper cells only) - and keeps the `beam_width` best per batch entry (`top_k`),
gathering the cell states of their parent beams. The per-step outputs hold the scores, the
chosen word ids and the parent beam ids; `finalize` follows the parents back from the last step
(`gather_tree`) into `FinalBeamSearchDecoderOutput.predicted_ids` [batch, time, beam_width]
(time major with `output_time_major`).

`gather_tree` is built from ordinary ops: a backward `while_loop` over time carries each beam's
ancestor index, then every id after a sequence's first `end_token` becomes `end_token`, as TF's
GatherTree kernel writes them.
"""

import collections

import numpy as np

from graphflow.framework import dtypes, nest
from graphflow.framework.graph import name_scope
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import array_ops, cumulative_ops, index_ops, math_ops, nn_ops, shape_ops
from graphflow.ops.control_flow_ops import cond, while_loop
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.static_value import scalar_value
from graphflow.ops.tensor_array_ops import TensorArray
from graphflow.tf1.seq2seq_attention import AttentionWrapperState
from graphflow.tf1.seq2seq_decoder import Decoder, check_cell, check_output_layer, layer_output_size
from graphflow.tf1.seq2seq_helpers import embedding_function


class BeamSearchDecoderState(collections.namedtuple(
        "BeamSearchDecoderState", ("cell_state", "log_probs", "finished", "lengths",
                                   "accumulated_attention_probs"))):
    """The beams' cell states [batch, beam, ...], log probabilities, finished flags and lengths."""

    __slots__ = ()


class BeamSearchDecoderOutput(collections.namedtuple(
        "BeamSearchDecoderOutput", ("scores", "predicted_ids", "parent_ids"))):
    """One step's beam scores, chosen word ids and parent beam ids, each [batch, beam_width]."""

    __slots__ = ()


class FinalBeamSearchDecoderOutput(collections.namedtuple(
        "FinalBeamDecoderOutput", ("predicted_ids", "beam_search_decoder_output"))):
    """`predicted_ids` [batch, time, beam_width] (the beams traced back through their parents)
    and the raw per-step `BeamSearchDecoderOutput`."""

    __slots__ = ()


def _static(value):
    return value if isinstance(value, int) else scalar_value(value)


def _tile_batch(t, multiplier):
    t = convert_to_tensor(t)
    if t.shape.ndims is None:
        raise ValueError("t must have statically known rank")
    if t.shape.ndims < 1:
        raise ValueError(f"tile_batch: {t.name} must have rank >= 1 (a batch axis), got a scalar")
    tiling = [1] * (t.shape.ndims + 1)
    tiling[1] = multiplier
    tiled = array_ops.tile(shape_ops.expand_dims(t, 1), tiling)
    shape = shape_ops.shape(t)
    tiled = shape_ops.reshape(tiled, shape_ops.concat([shape[:1] * multiplier, shape[1:]], 0))
    batch = t.shape[0]
    tiled.set_shape([None if batch is None else batch * multiplier] + t.shape.as_list()[1:])
    return tiled


def tile_batch(t, multiplier, name=None):
    """Each batch entry of every tensor in the nest `t` repeated `multiplier` times in a row:
    [batch, ...] -> [batch * multiplier, ...] (entry b becomes rows b*m ... b*m + m - 1)."""
    with name_scope(name, "tile_batch"):
        return nest.map_structure(lambda t_: _tile_batch(t_, multiplier), t)


def gather_tree(step_ids, parent_ids, max_sequence_lengths, end_token, name=None):
    """The full beams from per-step ids and parent beam ids, both [max_time, batch, beam]: beam k
    of entry b at its last step (`max_sequence_lengths[b] - 1`) traced back through its parents;
    `end_token` after each beam's first `end_token` and past its entry's length."""
    with name_scope(name, "GatherTree"):
        step_ids = convert_to_tensor(step_ids, name="step_ids")
        parent_ids = convert_to_tensor(parent_ids, dtype=step_ids.dtype, name="parent_ids")
        lengths = math_ops.cast(convert_to_tensor(max_sequence_lengths,
                                                  name="max_sequence_lengths"), step_ids.dtype)
        end_token = convert_to_tensor(end_token, dtype=step_ids.dtype, name="end_token")
        for what, t, rank in (("step_ids", step_ids, 3), ("parent_ids", parent_ids, 3),
                              ("max_sequence_lengths", lengths, 1), ("end_token", end_token, 0)):
            if t.shape.ndims is not None and t.shape.ndims != rank:
                raise ValueError(f"gather_tree: {what} must have rank {rank}, got shape {t.shape}")
        shape = shape_ops.shape(step_ids)
        max_time = shape[0]
        lengths = math_ops.minimum(lengths, math_ops.cast(max_time, lengths.dtype))
        length_col = shape_ops.expand_dims(lengths, 1)                        # [batch, 1]
        own = array_ops.tile(shape_ops.expand_dims(
            math_ops.cast(array_ops.range(shape[2]), step_ids.dtype), 0),
            shape_ops.stack([shape[1], 1]))                                     # [batch, beam]
        ids_ta = TensorArray(step_ids.dtype, size=max_time).unstack(step_ids)
        parents_ta = TensorArray(step_ids.dtype, size=max_time).unstack(parent_ids)
        out_ta = TensorArray(step_ids.dtype, size=max_time)

        def body(time, beam, out_ta):
            t = math_ops.cast(time, step_ids.dtype)
            beam = math_ops.where(math_ops.greater_equal(t, length_col - 1), own, beam)
            ids = array_ops.gather(ids_ta.read(time), beam, axis=1, batch_dims=1)
            ids = math_ops.where(math_ops.less(t, length_col), ids,
                                 shape_ops.zeros_like(ids) + end_token)
            parents = array_ops.gather(parents_ta.read(time), beam, axis=1, batch_dims=1)
            return time - 1, parents, out_ta.write(time, ids)

        _, _, out_ta = while_loop(lambda time, *_: math_ops.greater_equal(time, 0), body,
                                  (max_time - 1, own, out_ta), back_prop=False)
        beams = out_ta.stack()
        beams.set_shape(step_ids.shape)
        ended = math_ops.cast(math_ops.equal(beams, end_token), dtypes.int32)
        after_end = math_ops.greater(cumulative_ops.cumsum(ended, axis=0, exclusive=True), 0)
        return math_ops.where(after_end, shape_ops.zeros_like(beams) + end_token, beams)


def _gather_beams(gather_from, beam_ids):
    """`gather_from` [batch, beam, ...] reordered along the beam axis by `beam_ids` [batch,
    beam]: row (b, k) is gather_from[b, beam_ids[b, k]]."""
    return array_ops.gather(gather_from, beam_ids, axis=1, batch_dims=1)


def _mask_probs(probs, end_token, finished):
    """A finished beam's log probabilities: 0 for `end_token`, the dtype's lowest elsewhere."""
    vocab = shape_ops.shape(probs)[2]
    lowest = float(np.finfo(probs.dtype.as_numpy_dtype).min)
    row = array_ops.one_hot(end_token, vocab, on_value=0.0, off_value=lowest, dtype=probs.dtype)
    finished_probs = shape_ops.zeros_like(probs) + shape_ops.reshape(row, [1, 1, -1])
    mask = array_ops.tile(shape_ops.expand_dims(finished, 2),
                          shape_ops.stack([1, 1, vocab]))
    return math_ops.where(mask, finished_probs, probs)


def _length_penalty(sequence_lengths, penalty_factor):
    """GNMT's length penalty ((5 + length) / 6) ** penalty_factor (1 when the factor is 0)."""
    if isinstance(penalty_factor, (int, float, np.number)) and penalty_factor == 0:
        return 1.0
    factor = convert_to_tensor(penalty_factor, name="penalty_factor")
    if factor.shape.ndims not in (None, 0):
        raise ValueError(f"length_penalty_weight must be a scalar, got shape {factor.shape}")
    lengths = math_ops.cast(sequence_lengths, dtypes.float32)
    factor = math_ops.cast(factor, dtypes.float32)
    return math_ops.div((5.0 + lengths) ** factor, (5.0 + 1.0) ** factor)


def _mean_alignments(state):
    """The alignments of an AttentionWrapperState, averaged over its mechanisms."""
    alignments = state.alignments
    if isinstance(alignments, tuple):
        alignments = math_ops.reduce_mean(shape_ops.stack(list(alignments), axis=-1), -1)
    return alignments


def _attention_probs(cell_state, coverage_penalty_weight):
    """The cell's attention probabilities [batch, beam, max_time] (averaged over the attention
    wrappers of a tuple of states), or None when the coverage penalty is off."""
    if isinstance(coverage_penalty_weight, (int, float, np.number)) and \
            coverage_penalty_weight == 0:
        return None
    if isinstance(cell_state, AttentionWrapperState):
        per_layer = [_mean_alignments(cell_state)]
    elif isinstance(cell_state, tuple):
        per_layer = [_mean_alignments(s) for s in cell_state
                     if isinstance(s, AttentionWrapperState)]
    else:
        per_layer = []
    if not per_layer:
        raise ValueError("coverage_penalty_weight must be 0.0 if no cell is attentional.")
    if len(per_layer) == 1:
        return per_layer[0]
    return math_ops.reduce_mean(shape_ops.stack(per_layer, axis=-1), -1)


def _coverage_penalty(accumulated, finished, weight):
    """GNMT's coverage penalty of the finished beams, [batch, beam, 1]: weight times the sum over
    the source of log(min(accumulated attention, 1)), positions never attended left out."""
    weight = convert_to_tensor(weight, dtype=accumulated.dtype, name="coverage_penalty_weight")
    if weight.shape.ndims != 0:
        raise ValueError(f"coverage_penalty_weight should be a scalar, but saw shape: "
                         f"{weight.shape}")
    attended = math_ops.where(math_ops.equal(accumulated, 0.0), shape_ops.ones_like(accumulated),
                              accumulated)
    penalty = math_ops.reduce_sum(math_ops.log(math_ops.minimum(attended, 1.0)), 2)
    penalty = penalty * math_ops.cast(finished, penalty.dtype) * weight
    return shape_ops.expand_dims(penalty, 2)


class BeamSearchDecoder(Decoder):
    """Beam search over `cell` (see the module docstring). `embedding`: a matrix or a callable
    on ids; `initial_state`: the cell's state for batch * beam_width rows (`tile_batch`)."""

    def __init__(self, cell, embedding, start_tokens, end_token, initial_state, beam_width,
                 output_layer=None, length_penalty_weight=0.0, coverage_penalty_weight=0.0,
                 reorder_tensor_arrays=True):
        check_cell(cell)
        check_output_layer(output_layer)
        self._cell = cell
        self._output_layer = output_layer
        self._reorder_tensor_arrays = reorder_tensor_arrays
        self._embedding_fn = embedding_function(embedding)
        self._start_tokens = convert_to_tensor(start_tokens, dtype=dtypes.int32,
                                               name="start_tokens")
        if self._start_tokens.shape.ndims != 1:
            raise ValueError("start_tokens must be a vector")
        self._end_token = convert_to_tensor(end_token, dtype=dtypes.int32, name="end_token")
        if self._end_token.shape.ndims != 0:
            raise ValueError("end_token must be a scalar")
        static = self._start_tokens.shape[0]
        self._batch_size = int(static) if static is not None else shape_ops.size(
            self._start_tokens)
        self._beam_width = int(beam_width)
        self._length_penalty_weight = length_penalty_weight
        self._coverage_penalty_weight = coverage_penalty_weight
        self._initial_cell_state = nest.map_structure(self._maybe_split_batch_beams,
                                                      initial_state)
        tokens = array_ops.tile(shape_ops.expand_dims(self._start_tokens, 1),
                                [1, self._beam_width])
        self._start_inputs = self._embedding_fn(tokens)
        first_beam = shape_ops.zeros_like(self._start_tokens)
        self._finished = array_ops.one_hot(first_beam, self._beam_width, on_value=False,
                                           off_value=True, dtype=dtypes.bool_)

    batch_size = property(lambda self: self._batch_size)
    tracks_own_finished = property(lambda self: True)

    def _rnn_output_size(self):
        return layer_output_size(self._output_layer, self._cell.output_size)

    @property
    def output_size(self):
        beams = TensorShape([self._beam_width])
        return BeamSearchDecoderOutput(scores=beams, predicted_ids=beams, parent_ids=beams)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        return BeamSearchDecoderOutput(scores=dtype, predicted_ids=dtypes.int32,
                                       parent_ids=dtypes.int32)

    # --- [batch * beam, ...] <-> [batch, beam, ...]
    def _split_batch_beams(self, t):
        shape = shape_ops.shape(t)
        out = shape_ops.reshape(t, shape_ops.concat(
            [shape_ops.stack([self._batch_size, self._beam_width]), shape[1:]], 0))
        batch = _static(self._batch_size)
        if t.shape.ndims is not None:
            out.set_shape([batch, self._beam_width] + t.shape.as_list()[1:])
        return out

    def _merge_batch_beams(self, t):
        shape = shape_ops.shape(t)
        out = shape_ops.reshape(t, shape_ops.concat(
            [shape_ops.stack([self._batch_size * self._beam_width]), shape[2:]], 0))
        batch = _static(self._batch_size)
        if t.shape.ndims is not None:
            out.set_shape([None if batch is None else batch * self._beam_width]
                          + t.shape.as_list()[2:])
        return out

    def _maybe_split_batch_beams(self, t):
        if isinstance(t, TensorArray):
            return t
        t = convert_to_tensor(t)
        if t.shape.ndims is None:
            raise ValueError(f"Expected tensor ({t.name}) to have known rank, but ndims == None.")
        return self._split_batch_beams(t) if t.shape.ndims >= 1 else t

    def _maybe_merge_batch_beams(self, t):
        if isinstance(t, TensorArray):
            return t
        return self._merge_batch_beams(t) if t.shape.ndims >= 1 else t

    def initialize(self, name=None):
        """(finished, start inputs, initial BeamSearchDecoderState): only beam 0 is live at
        first (log probability 0; the others -inf), so the first step picks distinct words."""
        with name_scope(name, "BeamSearchDecoderInitialize"):
            dtype = nest.flatten(self._initial_cell_state)[0].dtype
            first_beam = shape_ops.zeros_like(self._start_tokens)
            log_probs = array_ops.one_hot(first_beam, self._beam_width, on_value=0.0,
                                          off_value=-np.inf, dtype=dtype)
            lengths = math_ops.cast(shape_ops.zeros_like(self._finished), dtypes.int64)
            attention_probs = _attention_probs(self._initial_cell_state,
                                               self._coverage_penalty_weight)
            state = BeamSearchDecoderState(
                cell_state=self._initial_cell_state, log_probs=log_probs,
                finished=self._finished, lengths=lengths,
                accumulated_attention_probs=() if attention_probs is None else attention_probs)
            return self._finished, self._start_inputs, state

    def step(self, time, inputs, state, name=None):
        """(BeamSearchDecoderOutput, next state, next inputs, finished) of one step."""
        with name_scope(name, "BeamSearchDecoderStep"):
            inputs = nest.map_structure(self._merge_batch_beams, inputs)
            cell_state = nest.map_structure(self._maybe_merge_batch_beams, state.cell_state)
            cell_outputs, next_cell_state = self._cell(inputs, cell_state)
            cell_outputs = nest.map_structure(self._split_batch_beams, cell_outputs)
            next_cell_state = nest.map_structure(self._maybe_split_batch_beams, next_cell_state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            output, next_state = self._beam_search_step(cell_outputs, next_cell_state, state)
            finished = next_state.finished
            sample_ids = output.predicted_ids
            next_inputs = cond(math_ops.reduce_all(finished), lambda: self._start_inputs,
                               lambda: self._embedding_fn(sample_ids))
        return output, next_state, next_inputs, finished

    def _beam_search_step(self, logits, next_cell_state, beam_state):
        batch_size, beam_width, end_token = self._batch_size, self._beam_width, self._end_token
        previously_finished = beam_state.finished
        step_log_probs = nn_ops.log_softmax(logits)
        step_log_probs = _mask_probs(step_log_probs, end_token, previously_finished)
        total_probs = shape_ops.expand_dims(beam_state.log_probs, 2) + step_log_probs
        vocab_size = logits.shape[-1] if logits.shape[-1] is not None else \
            shape_ops.shape(logits)[-1]
        # a live beam grows by one unless the word is end_token; a finished one stays
        not_end = math_ops.cast(math_ops.not_equal(array_ops.range(vocab_size), end_token),
                                dtypes.int64)
        add = shape_ops.expand_dims(math_ops.cast(math_ops.logical_not(previously_finished),
                                                  dtypes.int64), 2) * not_end
        new_lengths = add + shape_ops.expand_dims(beam_state.lengths, 2)
        penalty = _length_penalty(new_lengths, self._length_penalty_weight)
        scores = total_probs / (math_ops.cast(penalty, total_probs.dtype)
                                if not isinstance(penalty, float) else penalty)
        accumulated = _attention_probs(next_cell_state, self._coverage_penalty_weight)
        if accumulated is not None:
            not_finished = math_ops.cast(math_ops.logical_not(previously_finished),
                                         accumulated.dtype)
            accumulated = beam_state.accumulated_attention_probs + \
                accumulated * shape_ops.expand_dims(not_finished, 2)
            scores = scores + _coverage_penalty(accumulated, previously_finished,
                                                self._coverage_penalty_weight)
        scores_flat = shape_ops.reshape(scores, shape_ops.stack([batch_size, -1]))
        next_beam_scores, word_indices = index_ops.top_k(scores_flat, k=beam_width)
        static_batch = _static(batch_size)
        next_beam_scores.set_shape([static_batch, beam_width])
        word_indices.set_shape([static_batch, beam_width])
        total_flat = shape_ops.reshape(total_probs, shape_ops.stack([batch_size, -1]))
        next_beam_probs = array_ops.gather(total_flat, word_indices, axis=1, batch_dims=1)
        word_indices = math_ops.cast(word_indices, dtypes.int32)
        vocab = math_ops.cast(vocab_size, dtypes.int32)
        next_word_ids = math_ops.mod(word_indices, vocab)
        next_beam_ids = math_ops.floordiv(word_indices, vocab)
        previously_finished = _gather_beams(previously_finished, next_beam_ids)
        next_finished = math_ops.logical_or(previously_finished,
                                            math_ops.equal(next_word_ids, end_token),
                                            name="next_beam_finished")
        lengths_to_add = math_ops.cast(math_ops.logical_not(previously_finished), dtypes.int64)
        next_lengths = _gather_beams(beam_state.lengths, next_beam_ids) + lengths_to_add
        next_cell_state = nest.map_structure(
            lambda t: t if isinstance(t, TensorArray) or t.shape.ndims == 0
            else _gather_beams(t, next_beam_ids), next_cell_state)
        next_state = BeamSearchDecoderState(
            cell_state=next_cell_state, log_probs=next_beam_probs, lengths=next_lengths,
            finished=next_finished, accumulated_attention_probs=() if accumulated is None
            else _gather_beams(accumulated, next_beam_ids))
        output = BeamSearchDecoderOutput(scores=next_beam_scores, predicted_ids=next_word_ids,
                                         parent_ids=next_beam_ids)
        return output, next_state

    def finalize(self, outputs, final_state, sequence_lengths):
        """The beams traced back through their parents (FinalBeamSearchDecoderOutput); the
        TensorArrays of the final cell state (alignment histories) reordered the same way."""
        max_lengths = math_ops.cast(math_ops.reduce_max(final_state.lengths, axis=1),
                                    dtypes.int32)
        predicted_ids = gather_tree(outputs.predicted_ids, outputs.parent_ids,
                                    max_sequence_lengths=max_lengths, end_token=self._end_token)
        if self._reorder_tensor_arrays:
            final_state = final_state._replace(cell_state=nest.map_structure(
                lambda t: self._maybe_sort_array_beams(t, outputs.parent_ids,
                                                       final_state.lengths),
                final_state.cell_state))
        return FinalBeamSearchDecoderOutput(beam_search_decoder_output=outputs,
                                            predicted_ids=predicted_ids), final_state

    def _maybe_sort_array_beams(self, t, parent_ids, sequence_length):
        """A TensorArray of [batch * beam, ...] entries reordered along the traced-back beams."""
        if not isinstance(t, TensorArray):
            return t
        stacked = t.stack()
        if stacked.shape.ndims is not None and stacked.shape.ndims < 2:
            return t
        sorted_values = gather_tree_from_array(stacked, parent_ids, sequence_length)
        return TensorArray(stacked.dtype, size=shape_ops.shape(stacked)[0],
                           element_shape=t.element_shape).unstack(sorted_values)


def gather_tree_from_array(t, parent_ids, sequence_length):
    """`t` [time, batch * beam, ...] reordered like `gather_tree` reorders the beams (within each
    beam's length; past it the entries stay)."""
    shape = shape_ops.shape(parent_ids)
    max_time, batch_size, beam_width = shape[0], shape[1], shape[2]
    beam_ids = array_ops.tile(shape_ops.reshape(array_ops.range(beam_width), [1, 1, -1]),
                              shape_ops.stack([max_time, batch_size, 1]))
    lengths = math_ops.cast(sequence_length, dtypes.int32)
    max_lengths = math_ops.reduce_max(lengths, axis=1)
    sorted_ids = gather_tree(beam_ids, parent_ids, max_lengths, end_token=beam_width + 1)
    in_bound = array_ops.transpose(index_ops.sequence_mask(lengths, maxlen=max_time),
                                   [2, 0, 1])
    sorted_ids = math_ops.where(in_bound, sorted_ids, beam_ids)
    split = shape_ops.reshape(t, shape_ops.concat(
        [shape_ops.stack([max_time, batch_size, beam_width]), shape_ops.shape(t)[2:]], 0))
    gathered = array_ops.gather(split, sorted_ids, axis=2, batch_dims=2)
    return shape_ops.reshape(gathered, shape_ops.shape(t))


__all__ = ["BeamSearchDecoder", "BeamSearchDecoderState", "BeamSearchDecoderOutput",
           "FinalBeamSearchDecoderOutput", "tile_batch", "gather_tree"]
