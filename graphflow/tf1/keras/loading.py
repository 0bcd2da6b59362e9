"""`tf.keras.models.load_model`: rebuilds a model `model.save` wrote (see `saving` for the
format) in the default graph: a Sequential from its layers' configurations, a functional model by
replaying the saved calls once their inputs exist; then the weights, then `compile` with the
saved optimizer class, learning rate, losses, metrics and loss weights."""

import json

import numpy as np

from graphflow.tf1.keras import backend
from graphflow.tf1.keras.base_layer import Input, InputLayer
from graphflow.tf1.keras.saving import FORMAT, _decode, make_layer
from graphflow.tf1.keras.sequential import Sequential
from graphflow.tf1.keras.training import Model
from graphflow.tf1.keras.training_utils import read_weights


def _build(config, custom_objects):
    if config["class_name"] == "Sequential":
        model = Sequential(name=config["name"])
        if config["batch_input_shape"] is not None:
            model.add(InputLayer(batch_input_shape=tuple(config["batch_input_shape"])))
        for layer in config["layers"]:
            model.add(make_layer(layer, custom_objects))
        return model
    tensors = {}
    inputs = []
    for spec in config["inputs"]:
        x = Input(batch_shape=tuple(spec["batch_shape"]), dtype=spec["dtype"], name=spec["name"])
        tensors[(spec["name"], 0, 0)] = x
        inputs.append(x)
    pending = [(make_layer(entry["config"], custom_objects), entry["calls"])
               for entry in config["layers"]]
    done = set()
    while len(done) < sum(len(calls) for _, calls in pending):
        progressed = False
        for layer, calls in pending:
            for call in calls:
                key = (layer.name, call["node"])
                refs = [tuple(r) for r in call["inputs"]]
                if key in done or not all(r in tensors for r in refs):
                    continue
                args = [tensors[r] for r in refs]
                kwargs = {k: _decode(v, custom_objects) for k, v in call["kwargs"].items()}
                outputs = layer(args[0] if call["single"] else args, **kwargs)
                for i, t in enumerate(outputs if isinstance(outputs, (list, tuple))
                                      else [outputs]):
                    tensors[(layer.name, call["node"], i)] = t
                done.add(key)
                progressed = True
        if not progressed:
            raise ValueError("the saved model's calls do not connect")
    outputs = [tensors[tuple(r)] for r in config["outputs"]]
    return Model(inputs, outputs[0] if config["single_output"] else outputs, name=config["name"])


def load_model(filepath, custom_objects=None, compile=True):
    """The model `model.save(filepath)` wrote, in the default graph, weights set and (with
    `compile`) compiled as it was. A Keras HDF5 file (by its content, as tf_keras decides)
    is read by `hdf5_loading.load_model`."""
    import warnings

    from graphflow.tf1.keras import hdf5_format, hdf5_loading
    kind = hdf5_format.file_kind(filepath)
    if kind == "hdf5":
        return hdf5_loading.load_model(filepath, custom_objects, compile)
    if hdf5_format.is_hdf5_path(filepath):
        if kind != "zip":
            hdf5_format.Reader(filepath)         # says what the file is instead
        warnings.warn(f"{filepath} is graphflow's own model format (a zip, as graphflow wrote "
                      ".h5 names before it wrote Keras HDF5), not HDF5: read with graphflow's "
                      "reader; save it again for a file TensorFlow opens", stacklevel=2)
    with np.load(filepath, allow_pickle=False) as data:
        if "model_config" not in data.files:
            raise ValueError(f"{filepath} holds no model configuration (a save_weights file? "
                             "rebuild the model and use load_weights)")
        config = json.loads(data["model_config"].tobytes().decode())
    if config.get("format") != FORMAT:
        raise ValueError(f"{filepath}: unknown model format {config.get('format')!r}")
    model = _build(config["model"], custom_objects)
    names, values = read_weights(filepath)
    if len(values) != len(model.weights):
        raise ValueError(f"{filepath} holds {len(values)} weights, the rebuilt model has "
                         f"{len(model.weights)}")
    backend.batch_set_value(list(zip(model.weights, values)))
    compiled = config.get("compile")
    if compile and compiled is not None:
        from graphflow.tf1.keras import optimizers
        cls = getattr(optimizers, compiled["optimizer"], None)
        if cls is None:
            raise ValueError(f"unknown optimizer {compiled['optimizer']}")
        optimizer = cls(compiled["learning_rate"]) if compiled["learning_rate"] is not None \
            else cls()
        model.compile(optimizer, loss=_decode(compiled["loss"], custom_objects),
                      metrics=_decode(compiled["metrics"], custom_objects),
                      loss_weights=_decode(compiled["loss_weights"], custom_objects))
    return model


__all__ = ["load_model"]
