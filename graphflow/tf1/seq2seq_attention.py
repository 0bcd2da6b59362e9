"""`tf.contrib.seq2seq`'s attention: `BahdanauAttention` (additive, optionally weight-normalized),
`LuongAttention` (multiplicative, optionally scaled) and `AttentionWrapper`, the cell that attends
over an encoder's memory at every step, with TF1's arguments, variable names and state layout.

A mechanism projects the memory once, when it is made ('memory_layer/kernel' in the variable
scope current then; the memory is zeroed past `memory_sequence_length`), and maps a query [batch,
depth] to alignments [batch, max_time]: the softmax of a score masked to -inf past the memory's
length. Bahdanau: `score = v . tanh(keys + W_q query)` ('bahdanau_attention/query_layer/kernel',
'bahdanau_attention/attention_v'; with `normalize`, `v` becomes `g v / |v|` plus a bias
'attention_b'). Luong: `score = query . keys` (times a scalar 'luong_attention/attention_g' with
`scale`).

`AttentionWrapper(cell, mechanism)` feeds `cell_input_fn(inputs, previous attention)` (their
concatenation) to the cell, attends with the cell's output, and forms the attention vector
`attention_layer([cell_output, context])` ('attention_layer/kernel', no bias) or, without
`attention_layer_size`, the context itself. Its state is an `AttentionWrapperState`.
"""

import collections
import math

import numpy as np

from graphflow.framework import dtypes, nest
from graphflow.framework.graph import Tensor, get_default_graph, name_scope
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import array_ops, index_ops, math_ops, nn_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor, identity
from graphflow.ops.static_value import scalar_value
from graphflow.ops.tensor_array_ops import TensorArray
from graphflow.tf1.init_ops import constant_initializer, ones_initializer, zeros_initializer
from graphflow.tf1.layers import Dense
from graphflow.tf1.rnn_cell import RNNCell, zeros_for_batch
from graphflow.tf1.variable_scope import get_variable, variable_scope


def _dim(tensor, axis):
    """The static size of `tensor`'s `axis` if known, else a scalar int32 tensor."""
    static = tensor.shape[axis] if tensor.shape.ndims is not None else None
    return int(static) if static is not None else shape_ops.shape(tensor)[axis]


def _dense(units, name):
    """A bias-free Dense layer whose scope is `name` made unique at its first call
    ('memory_layer', 'memory_layer_1', ...), as TF1's layers name themselves."""
    layer = Dense(units, use_bias=False)
    layer._default_name = name
    return layer


def _prepare_memory(memory, memory_sequence_length, check_inner_dims_defined):
    """The memory zeroed past each sequence's length (`memory_sequence_length` [batch])."""
    memory = nest.map_structure(lambda m: convert_to_tensor(m, name="memory"), memory)
    for m in nest.flatten(memory):
        if check_inner_dims_defined and (m.shape.ndims is None or m.shape.ndims < 2 or not
                                         TensorShape(m.shape.dims[2:]).is_fully_defined()):
            raise ValueError(f"Expected memory {m.name} to have fully defined inner dims, but saw "
                             f"shape: {m.shape}")
    if memory_sequence_length is None:
        return memory
    lengths = convert_to_tensor(memory_sequence_length, name="memory_sequence_length")
    first = nest.flatten(memory)[0]
    mask = index_ops.sequence_mask(lengths, maxlen=shape_ops.shape(first)[1], dtype=first.dtype)
    if lengths.shape.ndims == 1 and lengths.shape[0] is not None and first.shape[0] is not None \
            and lengths.shape[0] != first.shape[0]:
        raise ValueError("memory_sequence_length and memory tensor batch sizes do not match.")

    def masked(m):
        extra = m.shape.ndims - 2
        return m * (shape_ops.reshape(mask, shape_ops.concat(
            [shape_ops.shape(mask), [1] * extra], 0)) if extra else mask)
    return nest.map_structure(masked, memory)


def _maybe_mask_score(score, memory_sequence_length, score_mask_value):
    if memory_sequence_length is None:
        return score
    mask = index_ops.sequence_mask(memory_sequence_length, maxlen=shape_ops.shape(score)[1])
    return math_ops.where(mask, score, shape_ops.ones_like(score) * score_mask_value)


class _BaseAttentionMechanism:
    """Memory, keys and the masked probability function shared by the mechanisms."""

    def __init__(self, query_layer, memory, probability_fn, memory_sequence_length=None,
                 memory_layer=None, check_inner_dims_defined=True, score_mask_value=None,
                 custom_key_value_fn=None, name=None):
        if query_layer is not None and not callable(query_layer):
            raise TypeError(f"query_layer is not a Layer: {type(query_layer).__name__}")
        if memory_layer is not None and not callable(memory_layer):
            raise TypeError(f"memory_layer is not a Layer: {type(memory_layer).__name__}")
        if not callable(probability_fn):
            raise TypeError(f"probability_fn must be callable, saw type: "
                            f"{type(probability_fn).__name__}")
        self._query_layer = query_layer
        self._memory_layer = memory_layer
        with name_scope(name, "BaseAttentionMechanismInit"):
            self._values = _prepare_memory(memory, memory_sequence_length,
                                           check_inner_dims_defined)
            self._keys = memory_layer(self._values) if memory_layer is not None else self._values
            if custom_key_value_fn is not None:
                self._keys, self._values = custom_key_value_fn(self._keys, self._values)
            if score_mask_value is None:
                score_mask_value = np.dtype(self._keys.dtype.as_numpy_dtype).type(-np.inf)
            if memory_sequence_length is not None:
                memory_sequence_length = convert_to_tensor(memory_sequence_length)
            self._probability_fn = lambda score, state: probability_fn(
                _maybe_mask_score(score, memory_sequence_length, score_mask_value), state)
            self._batch_size = _dim(self._keys, 0)
            self._alignments_size = _dim(self._keys, 1)

    memory_layer = property(lambda self: self._memory_layer)
    query_layer = property(lambda self: self._query_layer)
    values = property(lambda self: self._values)
    keys = property(lambda self: self._keys)
    batch_size = property(lambda self: self._batch_size)
    alignments_size = property(lambda self: self._alignments_size)
    state_size = property(lambda self: self._alignments_size)

    def initial_alignments(self, batch_size, dtype):
        """Zeros [batch_size, max_time]."""
        size = self._alignments_size
        if isinstance(size, Tensor):  # a memory of a length known at run time
            return shape_ops.zeros(shape_ops.stack([batch_size, size]), dtype=dtype)
        return zeros_for_batch(batch_size, size, dtype)

    def initial_state(self, batch_size, dtype):
        return self.initial_alignments(batch_size, dtype)


def _softmax_probability(probability_fn):
    probability_fn = probability_fn or nn_ops.softmax
    return lambda score, _: probability_fn(score)


class LuongAttention(_BaseAttentionMechanism):
    """Multiplicative attention (Luong et al. 2015): `score = query . (W_m memory)`."""

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name="LuongAttention"):
        super().__init__(query_layer=None,
                         memory_layer=_dense(num_units, "memory_layer"),
                         memory=memory, probability_fn=_softmax_probability(probability_fn),
                         memory_sequence_length=memory_sequence_length,
                         score_mask_value=score_mask_value,
                         custom_key_value_fn=custom_key_value_fn, name=name)
        self._num_units = num_units
        self._scale = scale
        self._name = name

    def __call__(self, query, state):
        """(alignments, next_state) for `query` [batch, num_units]."""
        with variable_scope(None, default_name="luong_attention"):
            query = convert_to_tensor(query)
            depth, key_units = query.shape[-1], self._keys.shape[-1]
            if depth is not None and key_units is not None and depth != key_units:
                raise ValueError(f"Incompatible or unknown inner dimensions between query and "
                                 f"keys.  Query ({query.name}) has units: {depth}.  Keys have "
                                 f"units: {key_units}.  Perhaps you need to set num_units to "
                                 f"the keys' dimension ({key_units})?")
            score = math_ops.matmul(shape_ops.expand_dims(query, 1), self._keys,
                                    transpose_b=True)
            score = shape_ops.squeeze(score, [1])
            if self._scale:
                g = get_variable("attention_g", shape=(), dtype=query.dtype,
                                 initializer=ones_initializer())
                score = g * score
            alignments = self._probability_fn(score, state)
        return alignments, alignments


class BahdanauAttention(_BaseAttentionMechanism):
    """Additive attention (Bahdanau et al. 2015): `score = v . tanh(W_m memory + W_q query)`,
    weight-normalized with `normalize` (Salimans & Kingma 2016)."""

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name="BahdanauAttention"):
        super().__init__(query_layer=_dense(num_units, "query_layer"),
                         memory_layer=_dense(num_units, "memory_layer"),
                         memory=memory, probability_fn=_softmax_probability(probability_fn),
                         memory_sequence_length=memory_sequence_length,
                         score_mask_value=score_mask_value,
                         custom_key_value_fn=custom_key_value_fn, name=name)
        self._num_units = num_units
        self._normalize = normalize
        self._name = name

    def __call__(self, query, state):
        """(alignments, next_state) for `query` [batch, depth]."""
        with variable_scope(None, default_name="bahdanau_attention"):
            processed = self._query_layer(query) if self._query_layer is not None else query
            keys = self._keys
            dtype = keys.dtype
            units = _dim(keys, 2)
            processed = shape_ops.expand_dims(processed, 1)
            v = get_variable("attention_v", [units], dtype=dtype)
            if self._normalize:
                g = get_variable("attention_g", shape=(), dtype=dtype,
                                 initializer=constant_initializer(math.sqrt(1.0 / units)))
                b = get_variable("attention_b", [units], dtype=dtype,
                                 initializer=zeros_initializer())
                normed_v = g * v * math_ops.rsqrt(math_ops.reduce_sum(math_ops.square(v)))
                score = math_ops.reduce_sum(normed_v * math_ops.tanh(keys + processed + b), [2])
            else:
                score = math_ops.reduce_sum(v * math_ops.tanh(keys + processed), [2])
            alignments = self._probability_fn(score, state)
        return alignments, alignments


class AttentionWrapperState(collections.namedtuple(
        "AttentionWrapperState", ("cell_state", "attention", "time", "alignments",
                                  "alignment_history", "attention_state"))):
    """The state of an AttentionWrapper: the wrapped cell's state, the last attention vector, the
    step count, the last alignments, their history (a TensorArray per mechanism with
    `alignment_history=True`, else ()) and the mechanisms' own states."""

    __slots__ = ()

    def clone(self, **kwargs):
        """A copy with the fields in `kwargs` replaced; each new tensor must fit the shape of the
        one it replaces (`zero_state(...).clone(cell_state=encoder_state)`)."""
        def same_shape(old, new):
            if isinstance(old, Tensor) and isinstance(new, Tensor):
                if not old.shape.is_compatible_with(new.shape):
                    raise ValueError(f"AttentionWrapperState.clone: {new.name} of shape "
                                     f"{new.shape} replaces a tensor of shape {old.shape}")
            return new
        from graphflow.tf1.seq2seq_decoder import map2
        return map2(lambda new, old: same_shape(old, new), self._replace(**kwargs), self)


def compute_attention(attention_mechanism, cell_output, attention_state, attention_layer):
    """(attention, alignments, next_attention_state) of one mechanism: the alignments' weighted
    sum of the memory (the context), through `attention_layer` with the cell output when given."""
    alignments, next_attention_state = attention_mechanism(cell_output, state=attention_state)
    context = shape_ops.squeeze(math_ops.matmul(shape_ops.expand_dims(alignments, 1),
                                                attention_mechanism.values), [1])
    attention = context if attention_layer is None else attention_layer(
        shape_ops.concat([cell_output, context], 1))
    return attention, alignments, next_attention_state


def hardmax(logits, name=None):
    """One-hot of the argmax of `logits` along its last axis (`tf.contrib.seq2seq.hardmax`), for
    hard attention: `probability_fn=tf.contrib.seq2seq.hardmax`."""
    with name_scope(name, "Hardmax"):
        logits = convert_to_tensor(logits, name="logits")
        depth = logits.shape[-1] if logits.shape[-1] is not None else \
            shape_ops.shape(logits)[-1]
        return array_ops.one_hot(math_ops.argmax(logits, -1), depth, dtype=logits.dtype)


def _item_or_tuple(seq):
    seq = tuple(seq)
    return seq[0] if len(seq) == 1 else seq


def _concat_inputs(inputs, attention):
    return shape_ops.concat([inputs, attention], -1)


class AttentionWrapper(RNNCell):
    """A cell that attends over one or more mechanisms' memories at each step (see the module
    docstring). `output_attention=False` outputs the cell's output instead of the attention
    (Bahdanau style); `alignment_history=True` keeps every step's alignments in TensorArrays."""

    def __init__(self, cell, attention_mechanism, attention_layer_size=None,
                 alignment_history=False, cell_input_fn=None, output_attention=True,
                 initial_cell_state=None, name=None, attention_layer=None, attention_fn=None):
        super().__init__(name=name)
        if not isinstance(cell, RNNCell):
            raise TypeError(f"cell must be an RNNCell, saw: {type(cell).__name__}")
        self._is_multi = isinstance(attention_mechanism, (list, tuple))
        mechanisms = tuple(attention_mechanism) if self._is_multi else (attention_mechanism,)
        for m in mechanisms:
            if not isinstance(m, _BaseAttentionMechanism):
                raise TypeError(f"attention_mechanism must be an AttentionMechanism or list of "
                                f"multiple AttentionMechanism instances, saw type: "
                                f"{type(m).__name__}")
        if cell_input_fn is not None and not callable(cell_input_fn):
            raise TypeError(f"cell_input_fn must be callable, saw type: "
                            f"{type(cell_input_fn).__name__}")
        if attention_layer_size is not None and attention_layer is not None:
            raise ValueError("Only one of attention_layer_size and attention_layer should be set")
        if attention_fn is not None and not callable(attention_fn):
            raise TypeError(f"attention_fn must be callable, saw type: "
                            f"{type(attention_fn).__name__}")
        if attention_layer_size is not None:
            sizes = tuple(attention_layer_size) if isinstance(attention_layer_size,
                                                              (list, tuple)) \
                else (attention_layer_size,)
            if len(sizes) != len(mechanisms):
                raise ValueError(f"If provided, attention_layer_size must contain exactly one "
                                 f"integer per attention_mechanism, saw: {len(sizes)} vs "
                                 f"{len(mechanisms)}")
            self._attention_layers = tuple(_dense(int(s), "attention_layer")
                                           for s in sizes)
            self._attention_layer_size = sum(int(s) for s in sizes)
        elif attention_layer is not None:
            layers = tuple(attention_layer) if isinstance(attention_layer, (list, tuple)) \
                else (attention_layer,)
            if len(layers) != len(mechanisms):
                raise ValueError(f"If provided, attention_layer must contain exactly one layer "
                                 f"per attention_mechanism, saw: {len(layers)} vs "
                                 f"{len(mechanisms)}")
            from graphflow.tf1.seq2seq_decoder import layer_output_size
            self._attention_layers = layers
            self._attention_layer_size = sum(
                int(TensorShape(layer_output_size(layer, [1])).as_list()[-1]) for layer in layers)
        else:
            self._attention_layers = None
            self._attention_layer_size = sum(int(m.values.shape[-1]) for m in mechanisms)
        self._cell = cell
        self._attention_mechanisms = mechanisms
        self._cell_input_fn = cell_input_fn or _concat_inputs
        self._attention_fn = attention_fn or compute_attention
        self._output_attention = output_attention
        self._alignment_history = alignment_history
        self._initial_cell_state = None if initial_cell_state is None else nest.map_structure(
            lambda s: identity(s, name="check_initial_cell_state"), initial_cell_state)

    @property
    def output_size(self):
        return self._attention_layer_size if self._output_attention else self._cell.output_size

    @property
    def state_size(self):
        mechanisms = self._attention_mechanisms
        return AttentionWrapperState(
            cell_state=self._cell.state_size, time=TensorShape([]),
            attention=self._attention_layer_size,
            alignments=_item_or_tuple(m.alignments_size for m in mechanisms),
            attention_state=_item_or_tuple(m.state_size for m in mechanisms),
            alignment_history=_item_or_tuple(
                m.alignments_size if self._alignment_history else () for m in mechanisms))

    @property
    def variables(self):
        return list(self._variables) + [v for v in self._cell.variables
                                        if v not in self._variables]

    trainable_variables = trainable_weights = weights = variables

    def _check_batch(self, batch_size, where):
        static = batch_size if isinstance(batch_size, int) else scalar_value(batch_size)
        for m in self._attention_mechanisms:
            if static is not None and isinstance(m.batch_size, int) and m.batch_size != static:
                raise ValueError(
                    f"When {where} of AttentionWrapper {self.name}: Non-matching batch sizes "
                    f"between the memory (encoder output) ({m.batch_size}) and the requested "
                    f"batch size ({static}). Are you using the BeamSearchDecoder? If so, make "
                    f"sure your encoder output has been tiled to beam_width via "
                    f"tf.contrib.seq2seq.tile_batch, and the batch_size= argument passed to "
                    f"zero_state is batch_size * beam_width.")

    def zero_state(self, batch_size, dtype):
        """The initial AttentionWrapperState: the cell's zero state (or `initial_cell_state`),
        time 0, zero attention and alignments, empty alignment histories."""
        with get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            dtype = dtypes.as_dtype(dtype)
            self._check_batch(batch_size, "calling zero_state")
            cell_state = self._initial_cell_state if self._initial_cell_state is not None \
                else self._cell.zero_state(batch_size, dtype)
            mechanisms = self._attention_mechanisms

            def history(m):
                if not self._alignment_history:
                    return ()
                shape = m.initial_alignments(batch_size, dtype).shape
                return TensorArray(dtype, size=0, dynamic_size=True, element_shape=shape)
            return AttentionWrapperState(
                cell_state=cell_state, time=shape_ops.zeros([], dtype=dtypes.int32),
                attention=zeros_for_batch(batch_size, self._attention_layer_size, dtype),
                alignments=_item_or_tuple(m.initial_alignments(batch_size, dtype)
                                          for m in mechanisms),
                attention_state=_item_or_tuple(m.initial_state(batch_size, dtype)
                                               for m in mechanisms),
                alignment_history=_item_or_tuple(history(m) for m in mechanisms))

    def ensure_built(self, inputs_shape, dtype, scope=None):
        """Nothing to build ahead: the wrapped cell, mechanisms and attention layers create their
        variables on the first call, inside the wrapper's scope."""

    def __call__(self, inputs, state, scope=None):
        """(output, next_state) of one step in the wrapper's scope ('attention_wrapper')."""
        with self._cell_scope(scope):
            self.built = True
            return self.call(inputs, state)

    def call(self, inputs, state):
        """(attention or cell output, next AttentionWrapperState) of one step."""
        if not isinstance(state, AttentionWrapperState):
            raise TypeError(f"Expected state to be instance of AttentionWrapperState. Received "
                            f"type {type(state).__name__} instead.")
        cell_inputs = self._cell_input_fn(inputs, state.attention)
        cell_output, next_cell_state = self._cell(cell_inputs, state.cell_state)
        self._check_batch(_dim(cell_output, 0), "calling call")
        if self._is_multi:
            previous_states, previous_histories = state.attention_state, state.alignment_history
        else:
            previous_states, previous_histories = [state.attention_state], [
                state.alignment_history]
        attentions, alignments_all, states_all, histories = [], [], [], []
        for i, mechanism in enumerate(self._attention_mechanisms):
            layer = self._attention_layers[i] if self._attention_layers else None
            attention, alignments, next_attention_state = self._attention_fn(
                mechanism, cell_output, previous_states[i], layer)
            histories.append(previous_histories[i].write(state.time, alignments)
                             if self._alignment_history else ())
            attentions.append(attention)
            alignments_all.append(alignments)
            states_all.append(next_attention_state)
        attention = shape_ops.concat(attentions, 1) if len(attentions) > 1 else attentions[0]
        next_state = AttentionWrapperState(
            time=state.time + 1, cell_state=next_cell_state, attention=attention,
            attention_state=_item_or_tuple(states_all), alignments=_item_or_tuple(alignments_all),
            alignment_history=_item_or_tuple(histories))
        return (attention if self._output_attention else cell_output), next_state


__all__ = ["LuongAttention", "BahdanauAttention", "AttentionWrapper", "AttentionWrapperState",
           "hardmax"]
