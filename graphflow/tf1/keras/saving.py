"""`model.save(path)` and `tf.keras.models.load_model(path)` in graphflow's own format: the
weight file of `save_weights` (an .npz of the weights in model order and their names) with one
more entry, the model as JSON: each layer's class and the arguments it was constructed with,
the functional model's calls (which layer's output feeds which layer) and the compile
arguments. Loading (`loading.load_model`) rebuilds the model in the default graph, sets its
weights and compiles it again (the optimizer's slots start afresh: its state is not saved).

Arguments are saved when JSON can hold them: numbers, strings, lists, Keras activation functions
(by name), L1L2 regularizers, wrapped layers (Bidirectional, TimeDistributed). Initializer
objects are dropped (the weights are restored over them); anything else (a Lambda's function,
a custom object) makes `save` fail with its name.
"""

import json

import numpy as np

from graphflow.tf1.keras import activations, backend
from graphflow.tf1.keras import initializers as keras_initializers
from graphflow.tf1.keras import losses as keras_losses
from graphflow.tf1.keras.base_layer import InputLayer, history
from graphflow.tf1.keras.training_utils import write_weights

FORMAT = "graphflow-keras-model-1"


def _encode(value, where):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_encode(v, where) for v in value]
    if isinstance(value, dict):
        return {"__dict__": {str(k): _encode(v, where) for k, v in value.items()}}
    if isinstance(value, keras_initializers.L1L2):
        return {"__regularizer__": [value.l1, value.l2]}
    from graphflow.tf1.keras.base_layer import Layer
    if isinstance(value, Layer):
        return {"__layer__": layer_config(value)}
    if callable(value) and activations._BY_NAME.get(getattr(value, "__name__", None)) is value:
        return {"__activation__": value.__name__}
    raise ValueError(f"model.save cannot write {where} = {value!r} (only numbers, strings, "
                     "lists, activations by name, L1L2 regularizers and layers)")


def _decode(value, custom_objects):
    if isinstance(value, list):
        return [_decode(v, custom_objects) for v in value]
    if not isinstance(value, dict):
        return value
    if "__dict__" in value:
        return {k: _decode(v, custom_objects) for k, v in value["__dict__"].items()}
    if "__regularizer__" in value:
        return keras_initializers.L1L2(*value["__regularizer__"])
    if "__layer__" in value:
        return make_layer(value["__layer__"], custom_objects)
    return activations.get(value["__activation__"])


def _droppable(name, value):
    return name.endswith("_initializer") and not isinstance(value, (str, type(None)))


def layer_config(layer):
    """{'class_name', 'args', 'kwargs'} from the layer's constructor arguments, name included."""
    args, kwargs = getattr(layer, "_init_args", ((), {}))
    kwargs = {k: v for k, v in kwargs.items() if not _droppable(k, v)}
    kwargs["name"] = layer.name
    kwargs.pop("weights", None)
    where = f"{layer.name} ({type(layer).__name__})"
    return {"class_name": type(layer).__name__,
            "args": [_encode(a, where) for a in args],
            "kwargs": {k: _encode(v, f"{where}.{k}") for k, v in kwargs.items()}}


_LAYER_MODULES = ("base_layer", "layers_core", "layers_conv", "layers_recurrent",
                  "layers_recurrent_more", "layers_conv_more", "layers_merge",
                  "layers_activation", "layers_reshaping", "layers_noise", "layers_conv3d")


def make_layer(config, custom_objects=None):
    """The layer a `layer_config` describes (a class of tf.keras.layers or custom_objects)."""
    import importlib
    name = config["class_name"]
    cls = (custom_objects or {}).get(name)
    for module in _LAYER_MODULES:
        if cls is None:
            found = importlib.import_module("graphflow.tf1.keras." + module)
            cls = getattr(found, name, None) if name in found.__all__ else None
    if not isinstance(cls, type):
        raise ValueError(f"Unknown layer: {name} (pass it in custom_objects)")
    args = [_decode(a, custom_objects) for a in config["args"]]
    kwargs = {k: _decode(v, custom_objects) for k, v in config["kwargs"].items()}
    return cls(*args, **kwargs)


def _tensor_ref(tensor):
    layer, node_index, tensor_index = history(tensor)
    return [layer.name, node_index, tensor_index]


def model_config(model):
    """The JSON-able description of a Sequential or functional model."""
    if hasattr(model, "_stack"):                  # a Sequential
        layers = [layer_config(layer) for layer in model.layers]
        batch_shape = None
        if model.inputs is not None:
            batch_shape = model.inputs[0].shape.as_list()
        return {"class_name": "Sequential", "name": model.name, "layers": layers,
                "batch_input_shape": batch_shape}
    if getattr(model, "_nodes", None) is None:
        raise NotImplementedError("model.save writes Sequential and functional models; a "
                                  "subclassed model saves its weights (save_weights)")
    inputs = []
    for x in model.inputs:
        layer = history(x)[0]
        inputs.append({"name": layer.name, "batch_shape": x.shape.as_list(),
                       "dtype": x.dtype.name})
    layer_index = {}
    layers = []
    for node in model._nodes:
        if isinstance(node.layer, InputLayer):
            continue
        if node.layer.name not in layer_index:
            layer_index[node.layer.name] = len(layers)
            layers.append({"config": layer_config(node.layer), "calls": []})
        kwargs = {k: v for k, v in node.kwargs.items() if k != "training"}
        layers[layer_index[node.layer.name]]["calls"].append({
            "inputs": [_tensor_ref(t) for t in node.inputs], "single": node.single,
            "kwargs": {k: _encode(v, f"{node.layer.name} call {k}") for k, v in kwargs.items()},
            "node": node.layer.inbound_nodes.index(node)})
    return {"class_name": "Model", "name": model.name, "inputs": inputs, "layers": layers,
            "outputs": [_tensor_ref(t) for t in model.outputs],
            "single_output": getattr(model, "_single_output", False)}


def compile_config(model):
    if model.optimizer is None:
        return None
    optimizer = model.optimizer
    rate = getattr(optimizer, "lr", None)
    config = {"optimizer": type(optimizer).__name__,
              "learning_rate": None if rate is None else float(backend.get_value(rate))}

    def name_of(spec):
        if isinstance(spec, str) or spec is None:
            return spec
        if isinstance(spec, (list, tuple)):
            return [name_of(s) for s in spec]
        if isinstance(spec, dict):
            return {"__dict__": {k: name_of(v) for k, v in spec.items()}}
        name = getattr(spec, "__name__", None)
        if name is None or getattr(keras_losses, name, None) is not spec:
            raise ValueError(f"model.save cannot write the loss or metric {spec!r}")
        return name

    config.update(loss=name_of(model._loss_spec), metrics=name_of(model._metric_spec),
                  loss_weights=_encode(model._loss_weights, "loss_weights"))
    return config


def save_model(model, filepath, overwrite=True, include_optimizer=True, save_format=None):
    """`tf.keras.models.save_model`: Keras's HDF5 layout for .h5/.hdf5 names or
    save_format='h5' (see `hdf5_saving`), else graphflow's own format (this module)."""
    from graphflow.tf1.keras import hdf5_format, hdf5_saving
    if save_format == "h5" or (save_format is None and hdf5_format.is_hdf5_path(filepath)):
        hdf5_saving.save_model(model, filepath)
        return
    config = {"format": FORMAT, "model": model_config(model),
              "compile": compile_config(model)}
    weights = model.weights
    write_weights(filepath, [w.op.name for w in weights], backend.batch_get_value(weights),
                  extra={"model_config": json.dumps(config)})


__all__ = ["save_model", "layer_config", "make_layer"]
