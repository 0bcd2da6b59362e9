"""`tf.keras.models.load_model('m.h5')`: a Keras HDF5 model file (tf_keras's or graphflow's,
see `hdf5_saving` for the layout) rebuilt in the default graph (`hdf5_model_config`), its
weights set by layer name from `model_weights` (every layer with weights must find its group;
counts and shapes are checked before any weight changes) and, with `compile` and a
`training_config` in the file, compiled.

`training_config`: the loss(es) by name (or tf_keras's loss classes without `from_logits`),
the metrics (names graphflow does not know are left out with a warning: they change no
weight), `loss_weights`, and the optimizer Adam, SGD or RMSprop with its hyperparameters; any
other optimizer, a learning-rate schedule, `decay`, `amsgrad` or clipping refuses the compile
with a ValueError saying so (`load_model(..., compile=False)` loads without it). The optimizer's
state (`optimizer_weights`) is not read: the optimizer starts afresh.
"""

import warnings

from graphflow.framework.errors import GraphFormatError
from graphflow.tf1.keras import hdf5_format, hdf5_model_config

_LOSS_CLASSES = {"MeanSquaredError": "mean_squared_error",
                 "MeanAbsoluteError": "mean_absolute_error",
                 "CategoricalCrossentropy": "categorical_crossentropy",
                 "SparseCategoricalCrossentropy": "sparse_categorical_crossentropy",
                 "BinaryCrossentropy": "binary_crossentropy", "Hinge": "hinge"}
_OPTIMIZER_KEYS = {
    "Adam": {"learning_rate", "beta_1", "beta_2", "epsilon"},
    "SGD": {"learning_rate", "momentum", "nesterov"},
    "RMSprop": {"learning_rate", "rho", "momentum", "epsilon", "centered"}}
_OPTIMIZER_IGNORED = {"name", "is_legacy_optimizer", "jit_compile", "use_ema", "ema_momentum",
                      "ema_overwrite_frequency"}


def _loss(spec, path):
    if isinstance(spec, str):
        return spec
    if isinstance(spec, list):
        return [_loss(s, path) for s in spec]
    if isinstance(spec, dict) and "class_name" in spec:
        config = spec.get("config") if isinstance(spec.get("config"), dict) else {}
        name = _LOSS_CLASSES.get(spec["class_name"])
        if name is None or config.get("from_logits") or \
                config.get("reduction", "auto") not in ("auto", "sum_over_batch_size"):
            raise ValueError(f"{path}: graphflow cannot compile with the loss {spec!r} (load "
                             "with compile=False)")
        return name
    if isinstance(spec, dict):
        return {str(k): _loss(v, path) for k, v in spec.items()}
    raise GraphFormatError(f"{path}: training_config loss {spec!r} is not a loss")


def _metrics(spec, path):
    from graphflow.tf1.keras import losses
    if spec is None:
        return []
    if isinstance(spec, dict):
        return {str(k): _metrics(v, path) for k, v in spec.items()}
    if not isinstance(spec, list):
        raise GraphFormatError(f"{path}: training_config metrics should be a list")
    out = []
    for item in spec:
        if isinstance(item, list):
            out.append(_metrics(item, path))
            continue
        name = item if isinstance(item, str) else None
        if isinstance(item, dict) and isinstance(item.get("config"), dict):
            name = item["config"].get("name")
        if name in ("accuracy", "acc") or name in losses._METRICS:
            out.append(name)
        else:
            warnings.warn(f"{path}: the metric {item!r} is unknown to graphflow's tf.keras and "
                          "is left out", stacklevel=2)
    return out


def _optimizer(config, path):
    from graphflow.tf1.keras import optimizers
    if not isinstance(config, dict) or not isinstance(config.get("config"), dict):
        raise GraphFormatError(f"{path}: training_config has no valid optimizer_config")
    name = str(config.get("class_name", "")).replace("Custom>", "")
    settings = dict(config["config"])
    if "lr" in settings and "learning_rate" not in settings:
        settings["learning_rate"] = settings.pop("lr")
    known = _OPTIMIZER_KEYS.get(name)
    faults = []
    if known is None:
        faults.append(f"optimizer {name!r}")
    else:
        for key, value in settings.items():
            if key in known:
                bad = isinstance(value, bool) != (key in ("nesterov", "centered")) or \
                    not isinstance(value, (int, float))
                if bad:
                    raise GraphFormatError(f"{path}: optimizer {name} {key}={value!r}")
            elif key in _OPTIMIZER_IGNORED:
                continue
            elif key in ("decay", "clipnorm", "clipvalue", "global_clipnorm", "amsgrad") and \
                    not value:
                continue
            else:
                faults.append(f"optimizer {name} {key}={value!r}")
    if faults:
        raise ValueError(f"{path}: graphflow cannot compile with {'; '.join(faults)} (load "
                         "with compile=False)")
    kwargs = {k: v for k, v in settings.items() if k in known}
    try:
        return getattr(optimizers, name)(**kwargs)
    except (TypeError, ValueError) as exc:
        raise GraphFormatError(f"{path}: optimizer {name}: {exc}") from None


def compile_from(model, config, path):
    """`model.compile(...)` with the arguments of a `training_config` document."""
    if not isinstance(config, dict):
        raise GraphFormatError(f"{path}: training_config should be a JSON object")
    loss = _loss(config.get("loss"), path)
    metrics = _metrics(config.get("metrics"), path)
    weights = config.get("loss_weights")
    if weights is not None and not (
            isinstance(weights, list) and all(isinstance(w, (int, float)) for w in weights)
            or isinstance(weights, dict) and all(isinstance(w, (int, float))
                                                 for w in weights.values())):
        raise GraphFormatError(f"{path}: training_config loss_weights {weights!r}")
    for key in ("weighted_metrics", "sample_weight_mode"):
        if config.get(key):
            warnings.warn(f"{path}: training_config {key} is not supported and is left out", stacklevel=2)
    optimizer = _optimizer(config.get("optimizer_config"), path)
    try:
        model.compile(optimizer, loss=loss, metrics=metrics, loss_weights=weights)
    except (TypeError, ValueError, KeyError, IndexError) as exc:
        raise ValueError(f"{path}: compiling with its training_config failed: {exc} (load "
                         "with compile=False)") from None


def load_model(filepath, custom_objects=None, compile=True, limits=None):
    """The model of a Keras HDF5 file, in the default graph, its weights set and (with
    `compile` and a `training_config` in the file) compiled."""
    with hdf5_format.Reader(filepath, limits) as reader:
        config = reader.json_attr("model_config")
        if config is None:
            raise ValueError(f"No model config found in the file at {reader.path} (a "
                             "save_weights file? build the model and use load_weights)")
        model = hdf5_model_config.model_from_config(config, reader.path)
        groups = reader.layer_groups(reader.child(reader.file, "model_weights", "group"))
        saved = {name for name, values in groups if values}
        missing = [layer.name for layer in hdf5_format.keras_layers(model)
                   if hdf5_format.layer_weights(layer) and layer.name not in saved]
        if missing:
            raise GraphFormatError(f"{reader.path}: model_weights holds no weights for the "
                                   f"layers {missing}")
        hdf5_format.assign(reader, model, groups, by_name=True)
        compiled = reader.json_attr("training_config") if compile else None
    if compiled is not None:
        compile_from(model, compiled, reader.path)
    return model


__all__ = ["load_model", "compile_from"]
