"""`model.save('m.h5')` / `tf.keras.models.save_model(..., save_format='h5')`: graphflow's
models written in Keras's HDF5 layout, as tf_keras writes them (its `load_model` reads them):

- root attributes `model_config` (JSON): `{"class_name": "Sequential", "config": {"name",
  "layers": [InputLayer, ...]}}` or `{"class_name": "Functional", "config": {"name", "layers":
  [{"class_name", "config", "name", "inbound_nodes": [[[layer, node, tensor, {}], ...]]}],
  "input_layers", "output_layers"}}`, each layer's config with every key that sets what it
  computes (`hdf5_layer_specs`); `training_config` (JSON: loss, metrics, loss_weights and
  `optimizer_config` for Adam, SGD and RMSprop of tf.keras.optimizers); `keras_version`;
  `backend` ('tensorflow': the weights are laid out as TensorFlow lays them out);
- the group `model_weights`, laid out as `save_weights` lays out a weights file
  (`hdf5_format`).

The optimizer's state (`optimizer_weights`) is not written: a loaded model's optimizer starts
afresh. A layer graphflow cannot describe in tf_keras's terms (Lambda, a custom layer, a wrapper)
or a custom loss makes the save fail with its name before anything is written.
"""

import json
import warnings

from graphflow.tf1.keras import hdf5_format
from graphflow.tf1.keras import hdf5_layer_specs as specs


def layer_config(layer):
    """{"class_name", "config"} of a graphflow layer as tf_keras writes it."""
    class_name = type(layer).__name__
    spec = specs.SPECS.get(class_name)
    if spec is None or getattr(type(layer), "__module__", "").split(".")[:3] != \
            ["graphflow", "tf1", "keras"]:
        raise ValueError(f"model.save to HDF5 cannot write layer {layer.name!r} of class "
                         f"{class_name} (graphflow writes {sorted(specs.SPECS)})")
    config = {"name": layer.name, "trainable": bool(layer.trainable), "dtype": layer.dtype.name}
    for key, (kind, getter) in spec.items():
        _, write, _ = specs.KINDS[kind]
        if write is None:
            continue
        try:
            config[key] = write(getter(layer) if getter is not None else None)
        except specs.Unsupported as exc:
            raise ValueError(f"model.save to HDF5 cannot write {key} of layer {layer.name!r} "
                             f"({class_name}): {exc}") from None
    if class_name == "Embedding":
        config["input_length"] = layer._init_args[1].get("input_length")
    return {"class_name": class_name, "config": config}


def _input_config(layer):
    return {"class_name": "InputLayer",
            "config": {"batch_input_shape": list(layer.batch_input_shape),
                       "dtype": layer.dtype.name, "sparse": False, "ragged": False,
                       "name": layer.name}}


def model_config(model):
    """The `model_config` document of a built Sequential or functional model."""
    from graphflow.tf1.keras.base_layer import InputLayer, history
    if model.inputs is None or model.outputs is None:
        raise ValueError("model.save to HDF5 needs a built model (give the first layer an "
                         "input_shape, or fit/predict once)")
    if hasattr(model, "_stack"):
        first = history(model.inputs[0])[0]
        layers = [_input_config(first)] + [layer_config(layer) for layer in model.layers]
        return {"class_name": "Sequential", "config": {"name": model.name, "layers": layers}}
    nodes = model._nodes
    in_model = {id(node) for node in nodes}
    node_index = {}
    for layer in hdf5_format.keras_layers(model):
        own = [n for n in layer.inbound_nodes if id(n) in in_model]
        for k, node in enumerate(own):
            node_index[id(node)] = k

    def ref(tensor):
        layer, index, t = history(tensor)
        return [layer.name, node_index[id(layer.inbound_nodes[index])], t]

    layers = []
    for layer in hdf5_format.keras_layers(model):
        if isinstance(layer, InputLayer):
            entry = dict(_input_config(layer), name=layer.name, inbound_nodes=[])
        else:
            entry = dict(layer_config(layer), name=layer.name, inbound_nodes=[])
            for node in (n for n in layer.inbound_nodes if id(n) in in_model):
                if any(k != "training" and v is not None for k, v in node.kwargs.items()):
                    raise ValueError(f"model.save to HDF5 cannot write the call arguments "
                                     f"{sorted(node.kwargs)} of layer {layer.name!r}")
                entry["inbound_nodes"].append([ref(t) + [{}] for t in node.inputs])
        layers.append(entry)
    return {"class_name": "Functional",
            "config": {"name": model.name, "trainable": bool(model.trainable), "layers": layers,
                       "input_layers": [ref(t) for t in model.inputs],
                       "output_layers": [ref(t) for t in model.outputs]}}


# ------------------------------------------------------------------ writing
def _optimizer_config(optimizer):
    from graphflow.tf1.keras import backend, optimizers
    if not isinstance(optimizer, (optimizers.Adam, optimizers.SGD, optimizers.RMSprop)):
        return None
    rate = float(backend.get_value(optimizer.lr))
    if isinstance(optimizer, optimizers.Adam):
        return {"class_name": "Adam", "config": {
            "name": "Adam", "learning_rate": rate, "decay": 0.0, "beta_1": optimizer._beta1,
            "beta_2": optimizer._beta2, "epsilon": optimizer._epsilon, "amsgrad": False}}
    if isinstance(optimizer, optimizers.SGD):
        return {"class_name": "SGD", "config": {
            "name": "SGD", "learning_rate": rate, "decay": 0.0, "momentum": optimizer._momentum,
            "nesterov": bool(optimizer._use_nesterov)}}
    return {"class_name": "RMSprop", "config": {
            "name": "RMSprop", "learning_rate": rate, "decay": 0.0, "rho": optimizer._decay,
            "momentum": optimizer._momentum, "epsilon": optimizer._epsilon,
            "centered": bool(optimizer._centered)}}


def training_config(model):
    """The compile arguments as tf_keras writes them, or None (not compiled, or with an
    optimizer tf_keras could not rebuild: a warning says so)."""
    from graphflow.tf1.keras import losses
    if model.optimizer is None:
        return None
    optimizer = _optimizer_config(model.optimizer)
    if optimizer is None:
        warnings.warn(f"model.save to HDF5: the optimizer {type(model.optimizer).__name__} "
                      "is not one of tf.keras.optimizers (Adam, SGD, RMSprop): the file holds "
                      "no compile arguments", stacklevel=2)
        return None

    def name_of(spec):
        if spec is None or isinstance(spec, str):
            return spec
        if isinstance(spec, (list, tuple)):
            return [name_of(s) for s in spec]
        if isinstance(spec, dict):
            return {k: name_of(v) for k, v in spec.items()}
        name = getattr(spec, "__name__", None)
        if name is None or getattr(losses, name, None) is not spec:
            raise ValueError(f"model.save to HDF5 cannot write the loss or metric {spec!r}")
        return name

    weights = model._loss_weights
    return {"loss": name_of(model._loss_spec), "metrics": name_of(model._metric_spec),
            "weighted_metrics": None, "sample_weight_mode": None,
            "loss_weights": list(weights) if isinstance(weights, tuple) else weights,
            "optimizer_config": optimizer}


def save_model(model, filepath):
    """Writes `model` to `filepath` in Keras's HDF5 layout."""
    config = json.dumps(model_config(model)).encode("utf8")
    compiled = training_config(model)
    with hdf5_format.writing(filepath) as f:
        f.attrs["model_config"] = config
        if compiled is not None:
            f.attrs["training_config"] = json.dumps(compiled).encode("utf8")
        f.attrs["keras_version"] = hdf5_format.keras_version().encode("utf8")
        f.attrs["backend"] = hdf5_format.BACKEND.encode("utf8")
        hdf5_format.write_weights_group(f.create_group("model_weights"), model)


__all__ = ["save_model", "model_config", "layer_config", "training_config"]
