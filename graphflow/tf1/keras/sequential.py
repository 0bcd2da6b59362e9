"""`tf.keras.Sequential`: a model that is a stack of layers, each applied to the previous output.

Given an input shape (`input_shape=` on its first layer, or an `InputLayer`/`Input` first) it
builds its graph on a placeholder as layers are added; otherwise it builds on the first data
`fit`/`evaluate`/`predict` see, or when it is called on a tensor. `layers` excludes the input layer,
as in Keras.
"""

from graphflow.framework.graph import Tensor, get_default_graph
from graphflow.tf1.keras.base_layer import Input, InputLayer, Layer, history
from graphflow.tf1.keras.training import Model


class Sequential(Model):
    """`Sequential([layer, ...], name=None)`; `add(layer)`, `pop()`."""

    def __init__(self, layers=None, name=None):
        super().__init__(name=name)
        self._stack = []
        for layer in layers or ():
            self.add(layer)

    @property
    def layers(self):
        return list(self._stack)

    def add(self, layer):
        if isinstance(layer, Tensor):
            found = history(layer)
            if found is None or not isinstance(found[0], InputLayer):
                raise TypeError("Sequential.add takes layers or a tf.keras.Input tensor")
            layer = found[0]
        if not isinstance(layer, Layer):
            raise TypeError(f"The added layer must be an instance of class Layer. Found: {layer}")
        if isinstance(layer, InputLayer):
            if self._stack or self.inputs is not None:
                raise ValueError("An InputLayer can only be the first layer of a Sequential")
            tensor = layer.inbound_nodes[0].outputs[0]
            self._init_data_graph([tensor], tensor)
            return
        if self.inputs is None and not self._stack and layer.batch_input_shape is not None \
                and not get_default_graph().eager:  # eager: the layers build on the first call
            shape = layer.batch_input_shape
            x = Input(batch_shape=shape, dtype=layer.dtype if not layer.dtype.is_floating
                      else None)
            self._init_data_graph([x], x)
        self._stack.append(layer)
        if self.outputs is not None:
            self._init_data_graph(self.inputs, layer(self.outputs[0]))

    def pop(self):
        if not self._stack:
            raise TypeError("There are no layers in the model.")
        self._stack.pop()
        if self.inputs is not None:
            out = self.inputs[0]
            for layer in self._stack:
                out = layer(out)
            self._init_data_graph(self.inputs, out)

    def call(self, inputs, training=None):
        x = inputs
        for layer in self._stack:
            x = layer(x, training=training) if layer._accepts("training") else layer(x)
        return x

    def model_updates(self):
        if self.inputs is None:
            return super().model_updates()
        found, out = set(), []
        for layer in self._stack:
            for node in layer.inbound_nodes:
                if any(id(t) in self._own for t in node.outputs):
                    for u in node.updates:
                        if id(u) not in found:
                            found.add(id(u))
                            out.append(u)
        return out

    def _init_data_graph(self, inputs, outputs):
        super()._init_data_graph(inputs, outputs)
        self._own = set()
        x = inputs[0]
        self._own.add(id(x))
        # the tensors of the stack's calls on this model's input, in order
        for layer in self._stack:
            for node in layer.inbound_nodes:
                if any(id(t) in self._own for t in node.inputs):
                    self._own.update(id(t) for t in node.outputs)


__all__ = ["Sequential"]
