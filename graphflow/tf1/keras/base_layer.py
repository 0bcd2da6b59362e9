"""The Keras `Layer` base class and `Input`/`InputLayer`, in graph mode.

A layer gets its name at construction ('dense', 'dense_1', ... counted per graph by the backend).
Its first call builds it (`build(input_shape)` creates the weights with `add_weight`: real
`tf.Variable`s named '<layer>/kernel' under the caller's name scope) and every call builds the
layer's ops (`call`) under a name scope of the layer's name, so one layer object applied twice
shares its weights. Each call is recorded as a node (inputs, outputs, keyword arguments) and the
outputs remember which layer made them (`history`): the functional `Model(inputs, outputs)` walks
these records. A `training` argument left out resolves to the backend's learning phase.
"""

import inspect
import re
import weakref

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import GraphKeys, get_default_graph
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops.core_ops import convert_to_tensor, placeholder
from graphflow.ops.state_ops import Variable
from graphflow.tf1.keras import backend, initializers

_HISTORY = weakref.WeakKeyDictionary()   # output tensor -> (layer, node index, tensor index)
_MASKS = weakref.WeakKeyDictionary()     # output tensor -> its Keras mask [batch, time] (bool)


def set_mask(tensor, mask):
    """Attaches a Keras mask (which time steps count) to a layer's output: Masking and
    Embedding(mask_zero=True) set it, the recurrent layers read it."""
    _MASKS[tensor] = mask


def get_mask(tensor):
    try:
        return _MASKS.get(tensor)
    except TypeError:
        return None


def history(tensor):
    """(layer, node index, tensor index) of a tensor a Keras layer made, or None."""
    try:
        return _HISTORY.get(tensor)
    except TypeError:
        return None


def snake_case(name):
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower().lstrip("_") or "layer"


def to_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


class Node:
    """One call of a layer: its input and output tensors and the call's keyword arguments."""

    def __init__(self, layer, inputs, outputs, kwargs, single=True, updates=()):
        self.layer, self.inputs, self.outputs, self.kwargs = layer, inputs, outputs, kwargs
        self.single = single          # called on one tensor (not a list)
        self.updates = list(updates)  # the update ops this call added (BatchNormalization)


class Layer:
    """Base class: subclasses define `build(input_shape)` (weights) and `call(inputs, ...)`.
    Each instance keeps the arguments it was constructed with (`_init_args`), which
    `model.save` writes as the layer's configuration."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return

        def recording_init(self, *args, **kw):
            if "_init_args" not in self.__dict__:     # the most derived class's call
                object.__setattr__(self, "_init_args", (args, dict(kw)))
            init(self, *args, **kw)

        recording_init.__doc__, recording_init.__wrapped__ = init.__doc__, init
        recording_init.__name__ = recording_init.__qualname__ = "__init__"
        cls.__init__ = recording_init

    def __init__(self, trainable=True, name=None, dtype=None, input_shape=None,
                 batch_input_shape=None, batch_size=None, **kwargs):
        unknown = set(kwargs) - {"input_dim", "weights", "input_length"}
        if unknown:
            raise TypeError(f"{type(self).__name__}: unexpected keyword arguments "
                            f"{sorted(unknown)}")
        self.name = name or backend.unique_name(snake_case(type(self).__name__))
        self.trainable = trainable
        self.dtype = dtypes.as_dtype(dtype or backend.floatx())
        if input_shape is None and kwargs.get("input_dim") is not None:
            input_shape = (kwargs["input_dim"],)
        if batch_input_shape is None and input_shape is not None:
            batch_input_shape = (batch_size,) + tuple(input_shape)
        self.batch_input_shape = batch_input_shape
        self._initial_weights = kwargs.get("weights")
        self._weights = []
        self._trainable_ids = set()
        self._losses, self._updates = [], []
        self.inbound_nodes = []
        self.built = False

    # ------------------------------------------------------------------ weights
    def add_weight(self, name=None, shape=None, dtype=None, initializer=None, regularizer=None,
                   trainable=None, constraint=None, **kwargs):
        trainable = True if trainable is None else trainable
        name = name or "weight"
        shape = () if shape is None else shape
        if constraint is not None:
            raise NotImplementedError(f"{self.name}: weight constraints are not supported")
        dtype = dtypes.as_dtype(dtype or self.dtype)
        init = initializers.get(initializer or "glorot_uniform")
        shape = [int(d) for d in shape]
        variable = Variable(lambda: init(shape, dtype), trainable=trainable and self.trainable,
                            name=name, dtype=dtype)
        backend.track_variable(variable)
        self._weights.append(variable)
        if trainable and self.trainable:
            self._trainable_ids.add(id(variable))
        regularizer = initializers.get_regularizer(regularizer)
        if regularizer is not None:
            with get_default_graph().name_scope(name + "/Regularizer"):
                self.add_loss(regularizer(variable.value()))
        return variable

    def add_loss(self, loss):
        self._losses.append(loss)
        get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    def add_update(self, update):
        self._updates.append(update)
        get_default_graph().add_to_collection(GraphKeys.UPDATE_OPS, update)

    @property
    def weights(self):
        return list(self._weights)

    variables = weights

    @property
    def trainable_weights(self):
        return [w for w in self._weights if id(w) in self._trainable_ids] if self.trainable else []

    trainable_variables = trainable_weights

    @property
    def non_trainable_weights(self):
        trainable = {id(w) for w in self.trainable_weights}
        return [w for w in self._weights if id(w) not in trainable]

    non_trainable_variables = non_trainable_weights

    @property
    def losses(self):
        return list(self._losses)

    @property
    def updates(self):
        return list(self._updates)

    def get_weights(self):
        return backend.batch_get_value(self.weights) if self.weights else []

    def set_weights(self, weights):
        if len(weights) != len(self.weights):
            raise ValueError(f"Layer {self.name} expects {len(self.weights)} weights, got "
                             f"{len(weights)}")
        for w, value in zip(self.weights, weights):
            if tuple(np.shape(value)) != tuple(w.shape.as_list()):
                raise ValueError(f"Layer {self.name}: weight {w.op.name} has shape "
                                 f"{w.shape.as_list()}, got {np.shape(value)}")
        backend.batch_set_value(list(zip(self.weights, weights)))

    def count_params(self):
        return int(sum(np.prod(w.shape.as_list()) for w in self.weights))

    # ------------------------------------------------------------------ calling
    def build(self, input_shape):
        self.built = True

    def call(self, inputs, **kwargs):
        return inputs

    def compute_output_shape(self, input_shape):
        raise NotImplementedError(f"{type(self).__name__}.compute_output_shape")

    def _accepts(self, argument):
        return argument in inspect.signature(self.call).parameters

    def __call__(self, inputs, *args, **kwargs):
        graph = get_default_graph()
        single = not isinstance(inputs, (list, tuple))
        tensors = [convert_to_tensor(x) for x in to_list(inputs)]
        call_inputs = tensors[0] if single else tensors
        if self._accepts("training") and kwargs.get("training") is None:
            kwargs["training"] = backend.learning_phase()
        updates_before = len(graph.get_collection(GraphKeys.UPDATE_OPS))
        with graph.name_scope(self.name):
            if not self.built:
                shapes = [t.shape for t in tensors]
                self.build(shapes[0] if single else shapes)
                self.built = True
                if self._initial_weights is not None:
                    self.set_weights(self._initial_weights)
            outputs = self.call(call_inputs, *args, **kwargs)
        node = Node(self, tensors, to_list(outputs), kwargs, single,
                    graph.get_collection(GraphKeys.UPDATE_OPS)[updates_before:])
        self.inbound_nodes.append(node)
        for i, t in enumerate(node.outputs):
            try:
                _HISTORY[t] = (self, len(self.inbound_nodes) - 1, i)
            except TypeError:
                pass
        return outputs

    apply = __call__

    # ------------------------------------------------------------------ shapes
    def _node_shapes(self, attribute):
        if not self.inbound_nodes:
            raise AttributeError(f"The layer {self.name} has never been called and thus has no "
                                 f"defined {attribute[:-1]} shape.")
        shapes = [tuple(t.shape.as_list()) for t in getattr(self.inbound_nodes[0], attribute)]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def input_shape(self):
        return self._node_shapes("inputs")

    @property
    def output_shape(self):
        return self._node_shapes("outputs")

    @property
    def input(self):
        return self._node_tensors("inputs")

    @property
    def output(self):
        return self._node_tensors("outputs")

    def _node_tensors(self, attribute):
        if not self.inbound_nodes:
            raise AttributeError(f"Layer {self.name} is not connected, no {attribute[:-1]} "
                                 "to return.")
        tensors = getattr(self.inbound_nodes[0], attribute)
        return tensors[0] if len(tensors) == 1 else tensors

    def get_config(self):
        """The layer's configuration as tf_keras writes it (the keys of Keras's HDF5 files, see
        hdf5_layer_specs); name, trainable and dtype for a class those files do not describe."""
        from graphflow.tf1.keras import hdf5_layer_specs, hdf5_saving
        if type(self).__name__ in hdf5_layer_specs.SPECS:
            return hdf5_saving.layer_config(self)["config"]
        return {"name": self.name, "trainable": self.trainable, "dtype": self.dtype.name}

    @classmethod
    def from_config(cls, config):
        """A new layer from `get_config()`'s dictionary (or a tf_keras layer's config)."""
        from graphflow.tf1.keras import hdf5_layer_specs, hdf5_model_config
        if cls.__name__ not in hdf5_layer_specs.SPECS:
            return cls(**config)
        return cls(**hdf5_model_config.layer_kwargs(cls.__name__, config))


class InputLayer(Layer):
    """The layer behind `Input`: its output is a placeholder of shape [batch] + shape."""

    def __init__(self, input_shape=None, batch_size=None, dtype=None, input_tensor=None,
                 sparse=False, name=None, batch_input_shape=None, **kwargs):
        super().__init__(name=name or f"input_{backend.get_uid('input')}", dtype=dtype,
                         input_shape=input_shape, batch_input_shape=batch_input_shape,
                         batch_size=batch_size)
        if input_tensor is None:
            if self.batch_input_shape is None:
                raise ValueError("An Input needs a shape (or batch_shape, or a tensor)")
            input_tensor = placeholder(self.dtype, list(self.batch_input_shape), name=self.name)
        else:
            input_tensor = convert_to_tensor(input_tensor)
            self.batch_input_shape = tuple(input_tensor.shape.as_list())
        self.built = True
        node = Node(self, [], [input_tensor], {})
        self.inbound_nodes.append(node)
        _HISTORY[input_tensor] = (self, 0, 0)


def Input(shape=None, batch_size=None, name=None, dtype=None, sparse=False, tensor=None,  # noqa: N802
          batch_shape=None, **kwargs):
    """`tf.keras.Input(shape)`: a placeholder [None] + shape that starts a functional model."""
    if shape is None and batch_shape is None and tensor is None:
        raise ValueError("Please provide to Input either a `shape` or a `batch_shape` argument.")
    layer = InputLayer(input_shape=tuple(shape) if shape is not None else None,
                       batch_size=batch_size, dtype=dtype, input_tensor=tensor, name=name,
                       batch_input_shape=tuple(batch_shape) if batch_shape is not None else None)
    return layer.inbound_nodes[0].outputs[0]


def shape_list(shape):
    return TensorShape(shape).as_list()


__all__ = ["Layer", "InputLayer", "Input"]
