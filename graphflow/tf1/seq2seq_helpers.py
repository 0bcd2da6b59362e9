"""`tf.contrib.seq2seq`'s helpers: what a `BasicDecoder` feeds its cell at each step and when a
sequence is finished, with TF1's arguments and semantics.

- `TrainingHelper` reads the ground-truth inputs (teacher forcing) from TensorArrays and finishes
  each sequence at its `sequence_length`;
- `GreedyEmbeddingHelper` feeds back the embedding of the argmax of the logits and finishes a
  sequence when it emits `end_token`; `SampleEmbeddingHelper` samples from the softmax instead;
- `ScheduledEmbeddingTrainingHelper` (scheduled sampling, Bengio et al. 2015) replaces each
  ground-truth input by the embedding of a sample with probability `sampling_probability`;
- `CustomHelper` takes the three functions.

Every helper answers `initialize() -> (finished, first_inputs)`, `sample(time, outputs, state) ->
sample_ids` and `next_inputs(time, outputs, state, sample_ids) -> (finished, next_inputs,
next_state)`; once every sequence of the batch is finished the next inputs are placeholders (zeros
or the start inputs) and are never read.
"""

from graphflow.framework import dtypes, nest
from graphflow.framework.graph import Tensor, name_scope
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import array_ops, math_ops, random_ops, shape_ops
from graphflow.ops.control_flow_ops import cond
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.tensor_array_ops import TensorArray
from graphflow.tf1.embedding_ops import embedding_lookup
from graphflow.tf1.rnn import select_rows


def transpose_batch_time(x):
    """[batch, time, ...] <-> [time, batch, ...] (rank >= 2; other tensors are returned as is)."""
    rank = x.shape.ndims
    if rank is not None and rank < 2:
        return x
    return array_ops.transpose(x, [1, 0] + list(range(2, rank)))


def _unstack_ta(inp):
    steps = inp.shape[0] if inp.shape.ndims else None
    size = steps if steps is not None else shape_ops.shape(inp)[0]
    return TensorArray(inp.dtype, size=size, element_shape=inp.shape.dims[1:]
                       if inp.shape.ndims is not None else None).unstack(inp)


def embedding_function(embedding):
    """`embedding` itself when callable, else `ids -> embedding_lookup(embedding, ids)`."""
    if callable(embedding):
        return embedding
    params = convert_to_tensor(embedding, name="embedding")
    return lambda ids: embedding_lookup(params, ids)


class Helper:
    """The interface `BasicDecoder` drives (`tf.contrib.seq2seq.Helper`)."""

    @property
    def batch_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define batch_size")

    @property
    def sample_ids_shape(self):
        raise NotImplementedError(f"{type(self).__name__} must define sample_ids_shape")

    @property
    def sample_ids_dtype(self):
        raise NotImplementedError(f"{type(self).__name__} must define sample_ids_dtype")

    def initialize(self, name=None):
        raise NotImplementedError(f"{type(self).__name__} must define initialize")

    def sample(self, time, outputs, state, name=None):
        raise NotImplementedError(f"{type(self).__name__} must define sample")

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        raise NotImplementedError(f"{type(self).__name__} must define next_inputs")


class CustomHelper(Helper):
    """A helper from `initialize_fn() -> (finished, next_inputs)`, `sample_fn(time, outputs,
    state) -> sample_ids` and `next_inputs_fn(time, outputs, state, sample_ids) -> (finished,
    next_inputs, next_state)`."""

    def __init__(self, initialize_fn, sample_fn, next_inputs_fn, sample_ids_shape=None,
                 sample_ids_dtype=None):
        self._initialize_fn = initialize_fn
        self._sample_fn = sample_fn
        self._next_inputs_fn = next_inputs_fn
        self._batch_size = None
        self._sample_ids_shape = TensorShape(sample_ids_shape or [])
        self._sample_ids_dtype = dtypes.as_dtype(sample_ids_dtype or dtypes.int32)

    @property
    def batch_size(self):
        if self._batch_size is None:
            raise ValueError("batch_size accessed before initialize was called")
        return self._batch_size

    sample_ids_shape = property(lambda self: self._sample_ids_shape)
    sample_ids_dtype = property(lambda self: self._sample_ids_dtype)

    def initialize(self, name=None):
        with name_scope(name, "CustomHelperInitialize"):
            finished, next_inputs = self._initialize_fn()
            if self._batch_size is None:
                self._batch_size = shape_ops.size(finished)
        return finished, next_inputs

    def sample(self, time, outputs, state, name=None):
        with name_scope(name, "CustomHelperSample"):
            return self._sample_fn(time=time, outputs=outputs, state=state)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with name_scope(name, "CustomHelperNextInputs"):
            return self._next_inputs_fn(time=time, outputs=outputs, state=state,
                                        sample_ids=sample_ids)


def _argmax_ids(outputs):
    return math_ops.cast(math_ops.argmax(outputs, axis=-1), dtypes.int32)


class TrainingHelper(Helper):
    """Teacher forcing: step t's input is `inputs[:, t]` ([batch, time, ...], or [time, batch, ...]
    with `time_major`); a sequence is finished once `time + 1 >= sequence_length`."""

    def __init__(self, inputs, sequence_length, time_major=False, name=None):
        with name_scope(name, "TrainingHelper"):
            inputs = nest.map_structure(lambda x: convert_to_tensor(x, name="inputs"), inputs)
            self._inputs = inputs
            if not time_major:
                inputs = nest.map_structure(transpose_batch_time, inputs)
            self._input_tas = nest.map_structure(_unstack_ta, inputs)
            self._sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
            if self._sequence_length.shape.ndims != 1:
                raise ValueError(f"Expected sequence_length to be a vector, but received shape: "
                                 f"{self._sequence_length.shape}")
            self._zero_inputs = nest.map_structure(lambda x: shape_ops.zeros_like(x[0]), inputs)
            static = self._sequence_length.shape[0]
            self._batch_size = static if static is not None else shape_ops.size(
                self._sequence_length)

    inputs = property(lambda self: self._inputs)
    sequence_length = property(lambda self: self._sequence_length)
    batch_size = property(lambda self: self._batch_size)
    sample_ids_shape = property(lambda self: TensorShape([]))
    sample_ids_dtype = property(lambda self: dtypes.int32)

    def _inputs_at(self, time, finished):
        return cond(math_ops.reduce_all(finished), lambda: self._zero_inputs,
                    lambda: nest.map_structure(lambda ta: ta.read(time), self._input_tas))

    def initialize(self, name=None):
        with name_scope(name, "TrainingHelperInitialize"):
            finished = math_ops.equal(0, self._sequence_length)
            return finished, self._inputs_at(0, finished)

    def sample(self, time, outputs, name=None, **unused_kwargs):
        with name_scope(name, "TrainingHelperSample"):
            return _argmax_ids(outputs)

    def next_inputs(self, time, outputs, state, name=None, **unused_kwargs):
        with name_scope(name, "TrainingHelperNextInputs"):
            next_time = time + 1
            finished = math_ops.greater_equal(next_time, self._sequence_length)
            return finished, self._inputs_at(next_time, finished), state


class ScheduledEmbeddingTrainingHelper(TrainingHelper):
    """A TrainingHelper that, for each sequence and step, feeds the embedding of a token sampled
    from the logits instead of the ground truth with probability `sampling_probability` (a scalar
    or one per batch entry); `sample` returns -1 where the ground truth is fed."""

    def __init__(self, inputs, sequence_length, embedding, sampling_probability,
                 time_major=False, seed=None, scheduling_seed=None, name=None):
        with name_scope(name, "ScheduledEmbeddingSamplingWrapper"):
            self._embedding_fn = embedding_function(embedding)
            self._sampling_probability = convert_to_tensor(sampling_probability,
                                                           name="sampling_probability")
            if self._sampling_probability.shape.ndims not in (0, 1):
                raise ValueError(f"sampling_probability must be either a scalar or a vector. "
                                 f"saw shape: {self._sampling_probability.shape}")
            self._seed = seed
            self._scheduling_seed = scheduling_seed
            super().__init__(inputs, sequence_length, time_major=time_major, name=name)

    def sample(self, time, outputs, state, name=None):
        with name_scope(name, "ScheduledEmbeddingTrainingHelperSample"):
            size = self.batch_size
            shape = [size] if isinstance(size, int) else shape_ops.stack([size])
            uniform = random_ops.random_uniform(shape, seed=self._scheduling_seed,
                                                dtype=self._sampling_probability.dtype)
            select = math_ops.less(uniform, self._sampling_probability)
            sampled = _categorical_sample(outputs, self._seed)
            return math_ops.where(select, sampled, shape_ops.ones_like(sampled) * -1)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with name_scope(name, "ScheduledEmbeddingTrainingHelperNextInputs"):
            finished, base_next_inputs, state = super().next_inputs(time, outputs, state)

            def maybe_sample():
                sampling = math_ops.greater(sample_ids, -1)
                sampled = self._embedding_fn(math_ops.maximum(sample_ids, 0))
                return select_rows(sampling, sampled, base_next_inputs)
            next_inputs = cond(math_ops.reduce_all(finished), lambda: base_next_inputs,
                               maybe_sample)
            return finished, next_inputs, state


class GreedyEmbeddingHelper(Helper):
    """Inference: step 0 feeds `embedding(start_tokens)`, each later step the embedding of the
    argmax of the previous logits; a sequence is finished when it emits `end_token`."""

    def __init__(self, embedding, start_tokens, end_token):
        self._embedding_fn = embedding_function(embedding)
        self._start_tokens = convert_to_tensor(start_tokens, dtype=dtypes.int32,
                                               name="start_tokens")
        self._end_token = convert_to_tensor(end_token, dtype=dtypes.int32, name="end_token")
        if self._start_tokens.shape.ndims != 1:
            raise ValueError("start_tokens must be a vector")
        if self._end_token.shape.ndims != 0:
            raise ValueError("end_token must be a scalar")
        static = self._start_tokens.shape[0]
        self._batch_size = static if static is not None else shape_ops.size(self._start_tokens)
        self._start_inputs = self._embedding_fn(self._start_tokens)

    batch_size = property(lambda self: self._batch_size)
    sample_ids_shape = property(lambda self: TensorShape([]))
    sample_ids_dtype = property(lambda self: dtypes.int32)

    def initialize(self, name=None):
        finished = math_ops.equal(shape_ops.zeros_like(self._start_tokens), 1)
        return finished, self._start_inputs

    def sample(self, time, outputs, state, name=None):
        if not isinstance(outputs, Tensor):
            raise TypeError(f"Expected outputs to be a single Tensor, got: {type(outputs)}")
        return _argmax_ids(outputs)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        finished = math_ops.equal(sample_ids, self._end_token)
        next_inputs = cond(math_ops.reduce_all(finished), lambda: self._start_inputs,
                           lambda: self._embedding_fn(sample_ids))
        return finished, next_inputs, state


def _categorical_sample(logits, seed):
    """One int32 id per row of `logits` [batch, classes], drawn from softmax(logits)."""
    return math_ops.cast(random_ops.multinomial(logits, 1, seed=seed)[:, 0], dtypes.int32)


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """GreedyEmbeddingHelper that samples each next token from softmax(logits / temperature)."""

    def __init__(self, embedding, start_tokens, end_token, softmax_temperature=None, seed=None):
        super().__init__(embedding, start_tokens, end_token)
        self._softmax_temperature = softmax_temperature
        self._seed = seed

    def sample(self, time, outputs, state, name=None):
        if not isinstance(outputs, Tensor):
            raise TypeError(f"Expected outputs to be a single Tensor, got: {type(outputs)}")
        logits = outputs
        if self._softmax_temperature is not None:
            logits = outputs / self._softmax_temperature
        return _categorical_sample(logits, self._seed)


class InferenceHelper(Helper):
    """Inference without embeddings: the next inputs are `next_inputs_fn(sample_ids)` (the sample
    ids themselves by default), the samples `sample_fn(outputs)`, and a sequence finishes where
    `end_fn(sample_ids)` is true."""

    def __init__(self, sample_fn, sample_shape, sample_dtype, start_inputs, end_fn,
                 next_inputs_fn=None):
        self._sample_fn = sample_fn
        self._end_fn = end_fn
        self._sample_shape = TensorShape(sample_shape)
        self._sample_dtype = dtypes.as_dtype(sample_dtype)
        self._next_inputs_fn = next_inputs_fn
        self._start_inputs = convert_to_tensor(start_inputs, name="start_inputs")
        static = self._start_inputs.shape[0] if self._start_inputs.shape.ndims else None
        self._batch_size = static if static is not None else shape_ops.shape(
            self._start_inputs)[0]

    batch_size = property(lambda self: self._batch_size)
    sample_ids_shape = property(lambda self: self._sample_shape)
    sample_ids_dtype = property(lambda self: self._sample_dtype)

    def initialize(self, name=None):
        size = self._batch_size
        finished = shape_ops.zeros([size] if isinstance(size, int) else shape_ops.stack([size]),
                                   dtype=dtypes.int32)
        return math_ops.equal(finished, 1), self._start_inputs

    def sample(self, time, outputs, state, name=None):
        return self._sample_fn(outputs)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        finished = self._end_fn(sample_ids)
        next_inputs = sample_ids if self._next_inputs_fn is None else \
            self._next_inputs_fn(sample_ids)
        return finished, next_inputs, state


__all__ = ["Helper", "CustomHelper", "InferenceHelper", "TrainingHelper", "ScheduledEmbeddingTrainingHelper",
           "GreedyEmbeddingHelper", "SampleEmbeddingHelper"]
