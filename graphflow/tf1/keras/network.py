"""The structure of a Keras model: `Network`, a layer made of layers.

Functional: `Network(inputs, outputs)` walks back from `outputs` through the nodes the layers
recorded (`base_layer.history`) to the `Input` placeholders, keeping the calls in topological
order; calling the network on new tensors replays those calls on them (sharing the weights).
Subclassed: a network built without inputs and outputs tracks the layers assigned to its attributes
and runs the subclass's own `call`. Weights, trainable weights, losses and updates are gathered from
the layers. The training methods are added by `training.Model`.
"""

from graphflow.tf1.keras.base_layer import InputLayer, Layer, history, to_list


class Network(Layer):
    """A layer made of layers (see the module docstring)."""

    def __init__(self, *args, **kwargs):
        inputs = kwargs.pop("inputs", args[0] if args else None)
        outputs = kwargs.pop("outputs", args[1] if len(args) > 1 else None)
        object.__setattr__(self, "_tracked", [])
        super().__init__(name=kwargs.pop("name", None), trainable=kwargs.pop("trainable", True))
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected arguments {sorted(kwargs)}")
        self.inputs = self.outputs = None
        self._nodes = None
        if inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError("A functional Model needs both `inputs` and `outputs`")
            self._init_graph(inputs, outputs)

    def __setattr__(self, name, value):
        if isinstance(value, Layer) and not name.startswith("_") and value is not self \
                and value not in self._tracked:
            self._tracked.append(value)
        object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ functional structure
    def _init_graph(self, inputs, outputs):
        self._single_input = not isinstance(inputs, (list, tuple))
        self._single_output = not isinstance(outputs, (list, tuple))
        self.inputs, self.outputs = to_list(inputs), to_list(outputs)
        for x in self.inputs:
            found = history(x)
            if found is None or not isinstance(found[0], InputLayer):
                raise ValueError(f"Input tensors to a Model must come from `tf.keras.Input`; "
                                 f"{getattr(x, 'name', x)} does not")
        order, seen = [], set()

        def visit(tensor):
            found = history(tensor)
            if found is None:
                raise ValueError(f"Output tensors to a Model must be the output of a Keras layer; "
                                 f"{tensor.name} is not (wrap TF ops in tf.keras.layers.Lambda)")
            layer, index, _ = found
            node = layer.inbound_nodes[index]
            if id(node) in seen:
                return
            seen.add(id(node))
            for t in node.inputs:
                visit(t)
            order.append(node)

        for t in self.outputs:
            visit(t)
        given = {id(x) for x in self.inputs}
        for node in order:
            if isinstance(node.layer, InputLayer) and id(node.outputs[0]) not in given:
                raise ValueError(f"Graph disconnected: cannot obtain the value of "
                                 f"{node.outputs[0].name}: it is not among the model's inputs")
        self._nodes = order
        self._layers_in_order = []
        for x in self.inputs:
            self._add_layer(history(x)[0])
        for node in order:
            self._add_layer(node.layer)
        self.built = True

    def _add_layer(self, layer):
        if all(layer is not known for known in self._layers_in_order):
            self._layers_in_order.append(layer)

    @property
    def layers(self):
        if self._nodes is not None:
            return list(self._layers_in_order)
        return list(self._tracked)

    def get_layer(self, name=None, index=None):
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}")

    def call(self, inputs, training=None):
        if self._nodes is None:
            raise NotImplementedError(f"{type(self).__name__} has neither inputs and outputs nor "
                                      "a `call` method")
        values = {id(old): new for old, new in zip(self.inputs, to_list(inputs))}
        if len(values) != len(self.inputs):
            raise ValueError(f"Model {self.name} expects {len(self.inputs)} inputs")
        for node in self._nodes:
            if isinstance(node.layer, InputLayer):
                continue
            args = [values[id(t)] for t in node.inputs]
            kwargs = {k: v for k, v in node.kwargs.items() if k != "training"}
            if node.layer._accepts("training"):
                kwargs["training"] = training
            out = node.layer(args[0] if node.single else args, **kwargs)
            for old, new in zip(node.outputs, to_list(out)):
                values[id(old)] = new
        outputs = [values[id(t)] for t in self.outputs]
        return outputs[0] if self._single_output else outputs

    # ------------------------------------------------------------------ gathered state
    def _unique(self, items):
        out, seen = [], set()
        for item in items:
            if id(item) not in seen:
                seen.add(id(item))
                out.append(item)
        return out

    @property
    def weights(self):
        return self._unique([w for layer in self.layers for w in layer.weights] + self._weights)

    variables = weights

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        return self._unique([w for layer in self.layers for w in layer.trainable_weights])

    trainable_variables = trainable_weights

    @property
    def non_trainable_weights(self):
        trainable = {id(w) for w in self.trainable_weights}
        return [w for w in self.weights if id(w) not in trainable]

    non_trainable_variables = non_trainable_weights

    @property
    def losses(self):
        return self._unique([loss for layer in self.layers for loss in layer.losses]
                            + self._losses)

    def model_updates(self):
        """The update ops of the calls that compute this model's outputs."""
        if self._nodes is None:
            return self._unique([u for layer in self.layers for u in layer.updates])
        return self._unique([u for node in self._nodes for u in node.updates])

    @property
    def updates(self):
        return self.model_updates()

    def count_params(self):
        return sum(layer.count_params() for layer in self.layers)


__all__ = []
