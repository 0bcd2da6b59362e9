"""Keras's HDF5 files (`.h5`, `.hdf5`) for graphflow's tf.keras: the weights of `save_weights`
and `load_weights`, and the file of `model.save` / `load_model` (whose JSON configurations
`hdf5_model_config` translates), read and written with h5py in the layout tf_keras uses:

- a weights file (`save_weights`): root attributes `layer_names` (the model's layers, in Keras's
  order), `backend` ('tensorflow': kernels are laid out as TensorFlow lays them out) and
  `keras_version`; one group per layer holding the attribute `weight_names`
  (['dense/kernel:0', 'dense/bias:0']) and one dataset at each of those paths inside the group;
  an empty group `top_level_model_weights`.
- a model file (`model.save`): root attributes `model_config` and `training_config` (JSON),
  `keras_version`, `backend`; the group `model_weights` laid out as a weights file.

A layer's weights are in Keras's order (trainable ones, then the others); a functional model's
layers in Keras's order (by depth from the outputs, then by first visit), computed here as
tf_keras computes it, so loading by order pairs the same layers in both.

Every file is untrusted: h5py runs no code from it, and nothing is read before it is checked:
links must be plain (no external or soft links, no external or virtual storage: a file never
makes graphflow open another file), weights must be numeric datasets of graphflow's dtypes with a
bounded rank, and their declared sizes count against `file_io.Limits.max_tensor_bytes` and,
beyond `ratio_floor_bytes`, `max_ratio` times the file's size, before any is read. Attributes are
checked for kind, shape and size before they are read. A fault is a `GraphFormatError` naming
the file and what is wrong.
"""

import contextlib
import io
import json
import os

import numpy as np

from graphflow.fileformat import file_io
from graphflow.framework import dtypes
from graphflow.framework.errors import GraphFormatError

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
BACKEND = "tensorflow"
MAX_NAMES = 1_000_000          # entries of one name-list attribute
MAX_ATTR_BYTES = 1 << 26       # one attribute (a JSON configuration)


def keras_version():
    """What graphflow writes as `keras_version` (tf_keras converts weights only for "1")."""
    return "graphflow"


def is_hdf5_path(filepath):
    """True for the names tf_keras writes as HDF5 (`.h5`, `.hdf5`)."""
    return isinstance(filepath, (str, os.PathLike)) and \
        os.fspath(filepath).lower().endswith((".h5", ".hdf5"))


def file_kind(filepath):
    """'hdf5', 'zip' (graphflow's own weights or model format) or None, from the first bytes."""
    try:
        with open(os.fspath(filepath), "rb") as f:
            head = f.read(8)
    except (OSError, TypeError, ValueError):
        return None
    if head == HDF5_SIGNATURE:
        return "hdf5"
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    return None


def _describe(filepath):
    kind = file_kind(filepath)
    if kind == "zip":
        return ("a zip archive: graphflow's own weights or model format (what graphflow wrote "
                "before it wrote Keras HDF5), not HDF5")
    with open(os.fspath(filepath), "rb") as f:
        head = f.read(16)
    return f"not an HDF5 file (it starts with {head!r})"


class _Budget:
    """The bytes of weight data a read may still allocate."""

    def __init__(self, path, limits):
        self.path, self.limits = path, limits
        size = os.path.getsize(path)
        self.file_size = size
        self.left = min(limits.max_tensor_bytes,
                        max(limits.ratio_floor_bytes, limits.max_ratio * max(size, 1)))

    def take(self, nbytes, where):
        if nbytes > self.left:
            raise GraphFormatError(f"{self.path}: {where} declares {nbytes} bytes of data, beyond "
                                   f"the {self.left} bytes the file's size and the limits allow")
        self.left -= nbytes


class Reader:
    """An HDF5 file opened for checked reading (a context manager): `file` (h5py.File)."""

    def __init__(self, filepath, limits=None):
        import h5py
        self.path = os.fspath(filepath)
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"No such file: {self.path}")
        if file_kind(self.path) != "hdf5":
            raise GraphFormatError(f"{self.path} is {_describe(self.path)}")
        self.limits = limits or file_io.DEFAULT_LIMITS
        self.budget = _Budget(self.path, self.limits)
        try:
            self.file = h5py.File(self.path, "r", locking=False)
        except Exception as exc:   # OSError from HDF5 for damaged files
            raise GraphFormatError(f"{self.path} is not a readable HDF5 file (truncated or "
                                   f"corrupted): {exc}") from None

    def close(self):
        with contextlib.suppress(Exception):
            self.file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def fault(self, message):
        return GraphFormatError(f"{self.path}: {message}")

    # ------------------------------------------------------------------ objects and attributes
    def child(self, group, path, want):
        """The object at `path` (components separated by '/') under `group`, each link a hard
        link; `want` is 'group' or 'dataset'."""
        import h5py
        node = group
        parts = [p for p in str(path).split("/") if p]
        if not parts:
            raise self.fault(f"empty object name {path!r} in {group.name}")
        for part in parts:
            if not isinstance(node, h5py.Group):
                raise self.fault(f"{node.name} is not a group (looking for {path!r})")
            try:
                link = node.get(part, getlink=True)
            except Exception as exc:
                raise self.fault(f"cannot read the link {part!r} in {node.name}: {exc}") from None
            if link is None:
                raise self.fault(f"{node.name} has no {path!r}")
            if not isinstance(link, h5py.HardLink):
                raise self.fault(f"{node.name}/{part} is a {type(link).__name__}: only plain "
                                 "objects are read (a file never makes graphflow open another)")
            try:
                node = node[part]
            except Exception as exc:
                raise self.fault(f"cannot open {node.name}/{part}: {exc}") from None
        cls = h5py.Group if want == "group" else h5py.Dataset
        if not isinstance(node, cls):
            raise self.fault(f"{node.name} is not a {want}")
        return node

    def has(self, obj, name, attribute=False):
        """Whether `obj` has a member (or, with `attribute`, an attribute) `name`."""
        try:
            return name in (obj.attrs if attribute else obj)
        except Exception as exc:
            raise self.fault(f"cannot read {obj.name}: {exc}") from None

    def attr(self, obj, name, kind):
        """Attribute `name` of `obj` or None; `kind` 'text' (one string) or 'names' (a list of
        strings; an empty numeric array reads as [])."""
        import h5py
        if not self.has(obj, name, attribute=True):
            return None
        try:
            aid = obj.attrs.get_id(name)
            shape, dtype = aid.shape, aid.dtype
        except Exception as exc:
            raise self.fault(f"cannot read the attribute {name!r} of {obj.name}: {exc}") from None
        where = f"attribute {name!r} of {obj.name}"
        try:
            stored = aid.get_storage_size()
        except Exception:     # HDF5 reports an error for an empty attribute
            stored = 0
        string = h5py.check_string_dtype(dtype) is not None or dtype.kind == "S"
        count = int(np.prod(shape)) if shape else 1
        if stored > MAX_ATTR_BYTES or count > MAX_NAMES or (shape is not None and len(shape) > 1):
            raise self.fault(f"{where} is too large or of rank > 1 (shape {shape})")
        if kind == "text":
            if not string or shape not in ((), (1,)):
                raise self.fault(f"{where} should be one string, found {dtype} of shape {shape}")
        elif not string and not (count == 0 and dtype.kind in "fiu"):
            raise self.fault(f"{where} should be a list of strings, found {dtype}")
        try:
            value = obj.attrs[name]
        except Exception as exc:
            raise self.fault(f"cannot read {where}: {exc}") from None
        items = [value] if np.ndim(value) == 0 else list(np.asarray(value).reshape(-1))
        texts = []
        for item in items:
            if isinstance(item, (bytes, np.bytes_)):
                try:
                    item = bytes(item).decode("utf-8")
                except UnicodeDecodeError:
                    raise self.fault(f"{where} is not UTF-8 text") from None
            if not isinstance(item, str):
                if kind == "names" and count == 0:
                    continue
                raise self.fault(f"{where} holds {type(item).__name__}, not text")
            if len(item) > MAX_ATTR_BYTES:
                raise self.fault(f"{where} is too large")
            texts.append(item)
        return texts[0] if kind == "text" else texts

    def names(self, group, name):
        """A list-of-names attribute, joined from `name0`, `name1`, ... when Keras split it."""
        found = self.attr(group, name, "names")
        if found is not None:
            return found
        out, chunk = [], 0
        while self.attr(group, f"{name}{chunk}", "names") is not None:
            out += self.attr(group, f"{name}{chunk}", "names")
            chunk += 1
            if len(out) > MAX_NAMES:
                raise self.fault(f"{group.name}: attribute {name!r} has too many entries")
        return out

    def json_attr(self, name):
        """The JSON document in root attribute `name` (None when absent), nesting bounded."""
        text = self.attr(self.file, name, "text")
        if text is None:
            return None
        return parse_json(text, f"{self.path}: attribute {name!r}", self.limits.max_nesting)

    # ------------------------------------------------------------------ weights
    def dataset(self, group, path):
        """The array of dataset `path` under `group`, checked before it is read."""
        ds = self.child(group, path, "dataset")
        where = f"weight {ds.name}"
        try:
            dtype, shape = ds.dtype, ds.shape
            external, virtual = ds.external, ds.is_virtual
        except Exception as exc:
            raise self.fault(f"cannot read {where}: {exc}") from None
        if external or virtual:
            raise self.fault(f"{where} keeps its data in other files (external or virtual "
                             "storage): refused")
        native = dtype.newbyteorder("=") if dtype.byteorder not in "=|" else dtype
        if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None \
                or dtype.kind not in "biuf" or native not in _NUMERIC:
            raise self.fault(f"{where} has dtype {dtype}: weights must be numbers (bool, ints, "
                             "floats)")
        if shape is None or len(shape) > self.limits.max_rank or \
                any(d > self.limits.max_dim for d in shape):
            raise self.fault(f"{where} has shape {shape}, beyond the limits")
        nbytes = dtype.itemsize
        for d in shape:
            nbytes *= int(d)
        self.budget.take(nbytes, where)
        try:
            value = np.asarray(ds[()])
        except Exception as exc:
            raise self.fault(f"cannot read {where}: {type(exc).__name__}: {exc}") from None
        if value.shape != tuple(shape) or value.dtype.hasobject:
            raise self.fault(f"{where} read back as {value.dtype} {value.shape}")
        return value.astype(native, copy=False)

    def layer_groups(self, group):
        """[(layer name, [(weight name, array)])] of a weights group, in its `layer_names`
        order."""
        layer_names = self.names(group, "layer_names")
        if not layer_names and not self.has(group, "layer_names", attribute=True):
            raise self.fault(f"{group.name} holds no 'layer_names' attribute: not a Keras "
                             "weights file")
        if len(set(layer_names)) != len(layer_names):
            raise self.fault(f"{group.name}: a layer name appears twice in 'layer_names'")
        out = []
        for name in layer_names:
            layer_group = self.child(group, name, "group")
            weight_names = self.names(layer_group, "weight_names")
            out.append((name, [(w, self.dataset(layer_group, w)) for w in weight_names]))
        return out


_NUMERIC = {np.dtype(d.as_numpy_dtype) for d in dtypes.ALL_DTYPES
            if np.dtype(d.as_numpy_dtype).kind in "biuf"}


def parse_json(text, where, max_nesting):
    """`json.loads(text)` with the nesting of lists and dicts at most `max_nesting` (checked on
    the text before parsing), any fault a GraphFormatError naming `where`."""
    depth, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > max_nesting:
                raise GraphFormatError(f"{where}: JSON nested deeper than {max_nesting}")
        elif ch in "]}":
            depth -= 1
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise GraphFormatError(f"{where} is not valid JSON: {exc}") from None


# ------------------------------------------------------------------ layers and their weights
def keras_layers(model):
    """The model's layers in Keras's order: a Sequential's stack; a functional model's layers
    as tf_keras orders them (deepest from the outputs first, ties by first visit)."""
    from graphflow.tf1.keras.base_layer import history
    nodes = getattr(model, "_nodes", None)
    if hasattr(model, "_stack") or nodes is None or model.outputs is None:
        return list(model.layers)
    order, visited, index = [], set(), {}

    def visit(tensor):     # tf_keras's _build_map: a DFS from each output
        layer, node_index, _ = history(tensor)
        node = layer.inbound_nodes[node_index]
        if id(node) in visited:
            return
        index.setdefault(id(layer), len(index))
        for t in node.inputs:
            visit(t)
        visited.add(id(node))
        order.append(node)

    for t in model.outputs:
        visit(t)
    node_depth, layer_depth, layers = {}, {}, {}
    for node in reversed(order):
        depth = node_depth.setdefault(id(node), 0)
        depth = max(depth, layer_depth.get(id(node.layer), 0))
        layer_depth[id(node.layer)] = depth
        layers[id(node.layer)] = node.layer
        node_depth[id(node)] = depth
        for t in node.inputs:
            layer, node_index, _ = history(t)
            parent = layer.inbound_nodes[node_index]
            node_depth[id(parent)] = max(depth + 1, node_depth.get(id(parent), 0))
    for x in model.inputs:
        layer = history(x)[0]
        if id(layer) not in layer_depth:
            layer_depth[id(layer)], index[id(layer)], layers[id(layer)] = 0, -1, layer
    by_depth = {}
    for key, depth in layer_depth.items():
        by_depth.setdefault(depth, []).append(key)
    return [layers[key] for depth in sorted(by_depth, reverse=True)
            for key in sorted(by_depth[depth], key=lambda k: index[k])]


def layer_weights(layer):
    """A layer's weights in Keras's file order: trainable, then non-trainable."""
    trainable = layer.trainable_weights
    ids = {id(w) for w in trainable}
    return list(trainable) + [w for w in layer.weights if id(w) not in ids]


_CELLS = {"LSTM": "lstm_cell", "GRU": "gru_cell", "SimpleRNN": "simple_rnn_cell"}


def weight_names(layer, weights):
    """Keras-style names ('dense/kernel:0', 'lstm/lstm_cell/kernel:0'), unique in the layer."""
    names, seen = [], set()
    cell = _CELLS.get(type(layer).__name__)
    for w in weights:
        short = w.op.name.rsplit("/", 1)[-1]
        if cell is not None:
            name = f"{layer.name}/{cell}/{short}:0"
        else:
            name = f"{w.op.name}:0" if w.op.name.startswith(layer.name + "/") else \
                f"{layer.name}/{w.op.name}:0"
        while name in seen:
            name = name[:-2] + "_1:0"
        seen.add(name)
        names.append(name)
    return names


# ------------------------------------------------------------------ writing
def write_weights_group(group, model):
    """Writes the model's weights into `group` (an h5py group) in Keras's layout."""
    from graphflow.tf1.keras import backend
    layers = keras_layers(model)
    group.attrs["layer_names"] = [layer.name.encode("utf8") for layer in layers]
    group.attrs["backend"] = BACKEND.encode("utf8")
    group.attrs["keras_version"] = keras_version().encode("utf8")
    for layer in sorted(layers, key=lambda x: x.name):
        weights = layer_weights(layer)
        values = backend.batch_get_value(weights) if weights else []
        sub = group.create_group(layer.name)
        names = weight_names(layer, weights)
        sub.attrs["weight_names"] = [n.encode("utf8") for n in names]
        for name, value in zip(names, values):
            sub.create_dataset(name, data=np.asarray(value))
    group.create_group("top_level_model_weights").attrs["weight_names"] = []


@contextlib.contextmanager
def writing(filepath):
    """`with writing(path) as f:` an h5py.File whose bytes replace `path` atomically when the
    block ends without an exception."""
    import h5py
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as f:
        yield f
    with file_io.atomic_write(filepath) as out:
        out.write(buffer.getvalue())


def save_weights(model, filepath):
    """`model.save_weights(path)` in Keras's HDF5 layout."""
    with writing(filepath) as f:
        write_weights_group(f, model)


# ------------------------------------------------------------------ loading into a model
def assign(reader, model, layer_groups, by_name=False, skip_mismatch=False):
    """Sets the model's weights from `layer_groups` (see `Reader.layer_groups`): by order of
    the layers that have weights, or by layer name; every count and shape is checked before
    any weight changes."""
    from graphflow.tf1.keras import backend
    path = reader.path
    pairs = []
    if not by_name:
        layers = [layer for layer in keras_layers(model) if layer_weights(layer)]
        saved = [(name, values) for name, values in layer_groups if values]
        if len(saved) != len(layers):
            raise ValueError(f"Layer count mismatch when loading weights from {path}: the model "
                             f"has {len(layers)} layers with weights, the file {len(saved)}")
        matched = [(layer, name, values) for layer, (name, values) in zip(layers, saved)]
    else:
        index = {}
        for layer in keras_layers(model):
            index.setdefault(layer.name, []).append(layer)
        matched = [(layer, name, values) for name, values in layer_groups
                   for layer in index.get(name, [])]
    for k, (layer, name, values) in enumerate(matched):
        symbolic = layer_weights(layer)
        if len(values) != len(symbolic):
            if skip_mismatch:
                continue
            raise ValueError(f"Weight count mismatch for layer #{k} (named {layer.name} in the "
                             f"model, {name} in {path}): the layer expects {len(symbolic)} "
                             f"weight(s), the file holds {len(values)}")
        for w, (weight_name, value) in zip(symbolic, values):
            expected = tuple(w.shape.as_list())
            if value.shape != expected:
                if skip_mismatch:
                    continue
                raise ValueError(f"Shape mismatch in layer #{k} (named {layer.name}) for weight "
                                 f"{w.op.name}: it expects shape {expected}, {path} holds "
                                 f"{weight_name} with shape {value.shape}")
            pairs.append((w, value))
    backend.batch_set_value(pairs)


def load_weights(model, filepath, by_name=False, skip_mismatch=False, limits=None):
    """`model.load_weights(path)` of a Keras HDF5 weights file or a model file's weights."""
    if skip_mismatch and not by_name:
        raise ValueError("When calling model.load_weights, skip_mismatch can only be set to "
                         "True when by_name is True.")
    with Reader(filepath, limits) as reader:
        root = reader.file
        if not reader.has(root, "layer_names", attribute=True) and \
                reader.has(root, "model_weights"):
            root = reader.child(root, "model_weights", "group")
        groups = reader.layer_groups(root)
        assign(reader, model, groups, by_name, skip_mismatch)


__all__ = ["is_hdf5_path", "file_kind", "Reader", "save_weights", "load_weights",
           "keras_layers", "layer_weights", "write_weights_group", "parse_json"]
