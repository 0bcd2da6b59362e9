"""The `model_config` document of Keras HDF5 model files, read: tf_keras's (or graphflow's)
description of a model rebuilt as a graphflow tf.keras model in the default graph.

`model_config` is `{"class_name": "Sequential" | "Functional" | "Model", "config": ...}`: a
Sequential's layers (an InputLayer first, or a `batch_input_shape` on the first layer), or a
functional model's layers with the calls that connect them (`inbound_nodes`: [layer name, node
index, tensor index, call kwargs]) and its `input_layers` / `output_layers`. Each layer is
`{"class_name", "config"}`; `hdf5_layer_specs` says which keys each class takes and how.
Loading collects every layer class and key graphflow cannot compute with and refuses the file
once with a ValueError listing them all (class, layer name, key). A malformed document (wrong
types, dangling references, cycles, a layer that cannot be built from its values) is a
`GraphFormatError` naming the file and the fault. Calls are replayed in dependency order
(linear in the number of calls, whatever order the file lists them in).
"""

from graphflow.framework.errors import GraphFormatError
from graphflow.tf1.keras import hdf5_layer_specs as specs

_DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")


class _Faults:
    """The unsupported classes and keys found while reading one file."""

    def __init__(self, path):
        self.path, self.items = path, []

    def add(self, text):
        self.items.append(text)

    def raise_if_any(self):
        if self.items:
            raise ValueError(f"{self.path}: graphflow's tf.keras cannot rebuild this model; "
                             f"unsupported: {'; '.join(self.items)}")


def _dict(value, where, path):
    if not isinstance(value, dict):
        raise GraphFormatError(f"{path}: {where} should be a JSON object, found "
                               f"{type(value).__name__}")
    return value


def _list(value, where, path):
    if not isinstance(value, list):
        raise GraphFormatError(f"{path}: {where} should be a JSON list, found "
                               f"{type(value).__name__}")
    return value


def _dtype(value):
    if isinstance(value, dict):      # a mixed-precision policy: {"config": {"name": ...}}
        value = (value.get("config") or {}).get("name") if isinstance(value.get("config"),
                                                                      dict) else None
    if value is None:
        return None
    if value not in _DTYPES:
        raise specs.Unsupported(f"{value!r} (graphflow has {_DTYPES})")
    return value


# ------------------------------------------------------------------ reading layers
def _layer_kwargs(class_name, config, path, faults):
    """The graphflow constructor arguments of one layer's config (None when unsupported)."""
    name = config.get("name")
    if not isinstance(name, str) or not name or len(name) > 1000:
        raise GraphFormatError(f"{path}: a {class_name} layer has no valid name ({name!r})")
    where = f"{class_name} {name!r}"
    spec = specs.SPECS.get(class_name)
    if spec is None:
        faults.add(f"layer class {class_name} (layer {name!r})")
        return None
    kwargs, ok = {"name": name}, True
    for key, value in config.items():
        try:
            if key == "name":
                continue
            if key == "trainable":
                kwargs["trainable"] = specs.KINDS["bool"][0](value)
            elif key == "dtype":
                kwargs["dtype"] = _dtype(value)
            elif key == "batch_input_shape":
                if value is not None:
                    kwargs["batch_input_shape"] = specs._shape(value, allow_none=True)
            elif key == "batch_size":
                continue
            elif key in spec:
                read, _, passed = specs.KINDS[spec[key][0]]
                converted = read(value)
                if passed and converted is not None:
                    kwargs[key] = converted
            else:
                faults.add(f"{where}: key {key!r}")
                ok = False
        except specs.Malformed as exc:
            raise GraphFormatError(f"{path}: layer {where}, key {key!r}: {exc}") from None
        except specs.Unsupported as exc:
            faults.add(f"{where}: {key}={exc}")
            ok = False
    if class_name == "Embedding" and isinstance(config.get("input_length"), int) \
            and "batch_input_shape" not in kwargs:
        kwargs["input_length"] = specs._int(config["input_length"], 1)
    return kwargs if ok else None


def layer_kwargs(class_name, config):
    """The constructor arguments of a layer config (`Layer.from_config`); ValueError naming
    the keys graphflow cannot compute with."""
    faults = set()
    try:
        kwargs = _layer_kwargs(class_name, dict(config), "layer config", faults)
    except GraphFormatError as exc:
        raise ValueError(str(exc)) from None
    if kwargs is None:
        raise ValueError(f"{class_name}.from_config: unsupported {sorted(faults)}")
    return kwargs


def _make_layer(class_name, kwargs, path):
    from graphflow.tf1.keras import saving
    try:
        return saving.make_layer({"class_name": class_name, "args": [], "kwargs": kwargs})
    except (TypeError, ValueError, NotImplementedError, OverflowError) as exc:
        raise GraphFormatError(f"{path}: layer {kwargs.get('name')!r} ({class_name}): "
                               f"{exc}") from None


def _entry(item, path, what):
    item = _dict(item, what, path)
    class_name = item.get("class_name")
    if not isinstance(class_name, str):
        raise GraphFormatError(f"{path}: {what} has no class_name")
    return class_name, _dict(item.get("config"), f"{what} config", path)


def _input_layer(config, path):
    from graphflow.tf1.keras.base_layer import InputLayer
    shape = config.get("batch_input_shape", config.get("batch_shape"))
    try:
        shape = specs._shape(shape, allow_none=True)
        dtype = _dtype(config.get("dtype"))
        for key in ("sparse", "ragged"):
            specs._required(False)(config.get(key))
    except (specs.Malformed, specs.Unsupported) as exc:
        raise GraphFormatError(f"{path}: InputLayer {config.get('name')!r}: {exc}") from None
    name = config.get("name")
    if not isinstance(name, str) or not name:
        raise GraphFormatError(f"{path}: an InputLayer has no valid name")
    try:
        return InputLayer(batch_input_shape=shape, dtype=dtype, name=name)
    except (TypeError, ValueError) as exc:
        raise GraphFormatError(f"{path}: InputLayer {name!r}: {exc}") from None


def _sequential(config, path, faults):
    from graphflow.tf1.keras.sequential import Sequential
    if isinstance(config, list):            # Keras 2.0-2.2 wrote the layer list itself
        config = {"layers": config}
    config = _dict(config, "the Sequential's config", path)
    entries = _list(config.get("layers"), "the Sequential's layers", path)
    made = []
    for i, item in enumerate(entries):
        class_name, layer_config = _entry(item, path, f"layer #{i}")
        if class_name == "InputLayer":
            if i != 0:
                raise GraphFormatError(f"{path}: an InputLayer can only be a Sequential's first "
                                       "layer")
            made.append(("InputLayer", layer_config))
            continue
        made.append((class_name, _layer_kwargs(class_name, layer_config, path, faults)))
    faults.raise_if_any()
    name = config.get("name")
    model = Sequential(name=name if isinstance(name, str) and name else None)
    for class_name, kwargs in made:
        layer = _input_layer(kwargs, path) if class_name == "InputLayer" else \
            _make_layer(class_name, kwargs, path)
        try:
            model.add(layer)
        except (TypeError, ValueError, NotImplementedError, IndexError) as exc:
            raise GraphFormatError(f"{path}: adding layer {layer.name!r} ({class_name}): "
                                   f"{exc}") from None
    return model


def _ref(value, path, where, with_kwargs):
    value = _list(value, where, path)
    if len(value) not in ((3, 4) if with_kwargs else (3,)) or not isinstance(value[0], str) \
            or any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 1 << 20
                   for v in value[1:3]):
        raise GraphFormatError(f"{path}: {where} should be [layer name, node index, tensor "
                               f"index{', kwargs' if with_kwargs else ''}], found {value!r}")
    kwargs = value[3] if len(value) == 4 else {}
    return (value[0], value[1], value[2]), _dict(kwargs, f"{where} kwargs", path)


def _functional(config, path, faults):
    from graphflow.tf1.keras.training import Model
    config = _dict(config, "the model's config", path)
    entries = _list(config.get("layers"), "the model's layers", path)
    layers, calls = {}, []      # layer name -> layer; [(name, node index, [refs])]
    pending = []
    for i, item in enumerate(entries):
        class_name, layer_config = _entry(item, path, f"layer #{i}")
        name = _dict(item, f"layer #{i}", path).get("name", layer_config.get("name"))
        if not isinstance(name, str) or name in layers or name in (p[1] for p in pending):
            raise GraphFormatError(f"{path}: layer #{i} has a missing or repeated name")
        nodes = _list(item.get("inbound_nodes", []), f"layer {name!r} inbound_nodes", path)
        if class_name == "InputLayer":
            if nodes:
                raise GraphFormatError(f"{path}: InputLayer {name!r} has inbound nodes")
            pending.append(("InputLayer", name, layer_config))
            continue
        pending.append((class_name, name, _layer_kwargs(class_name, layer_config, path, faults)))
        for k, node in enumerate(nodes):
            node = _list(node, f"node {k} of layer {name!r}", path)
            if not node:
                raise GraphFormatError(f"{path}: node {k} of layer {name!r} has no inputs")
            refs = []
            for ref in node:
                key, kwargs = _ref(ref, path, f"an input of layer {name!r}", True)
                if any(v is not None for v in kwargs.values()):
                    faults.add(f"{class_name} {name!r}: call arguments {sorted(kwargs)}")
                refs.append(key)
            calls.append((name, k, refs))
    faults.raise_if_any()
    tensors = {}
    for class_name, name, kwargs in pending:
        if class_name == "InputLayer":
            layer = _input_layer(kwargs, path)
            tensors[(name, 0, 0)] = layer.inbound_nodes[0].outputs[0]
        else:
            layers[name] = (_make_layer(class_name, kwargs, path), class_name)
    _connect(calls, layers, tensors, path)
    inputs = [_lookup(tensors, _ref(r, path, "an input_layers entry", False)[0], path)
              for r in _list(config.get("input_layers"), "input_layers", path)]
    outputs = [_lookup(tensors, _ref(r, path, "an output_layers entry", False)[0], path)
               for r in _list(config.get("output_layers"), "output_layers", path)]
    if not inputs or not outputs:
        raise GraphFormatError(f"{path}: the model has no inputs or no outputs")
    name = config.get("name")
    try:
        return Model(inputs, outputs[0] if len(outputs) == 1 else outputs,
                     name=name if isinstance(name, str) and name else None)
    except (TypeError, ValueError) as exc:
        raise GraphFormatError(f"{path}: the model's structure: {exc}") from None


def _lookup(tensors, key, path):
    if key not in tensors:
        raise GraphFormatError(f"{path}: no tensor {list(key)} (layer, node, tensor) in the "
                               "model")
    return tensors[key]


def _connect(calls, layers, tensors, path):
    """Calls each layer once its inputs exist (in dependency order; a cycle or a reference to
    nothing is a GraphFormatError)."""
    producers = {}
    for index, (name, k, _) in enumerate(calls):
        producers[(name, k)] = index
    waiting, ready = {}, []
    missing = [0] * len(calls)
    for index, (name, _, refs) in enumerate(calls):
        if name not in layers:
            raise GraphFormatError(f"{path}: node of unknown layer {name!r}")
        for ref in refs:
            if ref in tensors:
                continue
            producer = producers.get(ref[:2])
            if producer is None:
                raise GraphFormatError(f"{path}: layer {name!r} reads {list(ref)}, which no "
                                       "layer makes")
            missing[index] += 1
            waiting.setdefault(producer, []).append(index)
        if not missing[index]:
            ready.append(index)
    done = 0
    while ready:
        index = ready.pop()
        name, k, refs = calls[index]
        layer, class_name = layers[name]
        args = [_lookup(tensors, ref, path) for ref in refs]
        try:
            out = layer(args[0] if len(args) == 1 else args)
        except (TypeError, ValueError, NotImplementedError, IndexError, KeyError) as exc:
            raise GraphFormatError(f"{path}: calling layer {name!r} ({class_name}): "
                                   f"{exc}") from None
        for i, t in enumerate(out if isinstance(out, (list, tuple)) else [out]):
            tensors[(name, k, i)] = t
        done += 1
        for follower in waiting.pop(index, ()):
            missing[follower] -= 1
            if not missing[follower]:
                ready.append(follower)
    if done != len(calls):
        raise GraphFormatError(f"{path}: the layers' calls form a cycle or read tensors that "
                               "do not exist")


def model_from_config(model_config, path):
    """A graphflow model (in the default graph, weights not set) from a `model_config`."""
    model_config = _dict(model_config, "model_config", path)
    class_name = model_config.get("class_name")
    faults = _Faults(path)
    if class_name == "Sequential":
        return _sequential(model_config.get("config"), path, faults)
    if class_name in ("Functional", "Model"):
        return _functional(model_config.get("config"), path, faults)
    raise ValueError(f"{path}: graphflow's tf.keras cannot rebuild a model of class "
                     f"{class_name!r} (Sequential and functional models only)")


__all__ = ["model_from_config"]
