"""`tf.saved_model`: TF1's SavedModel export and load (`simple_save`, `builder.SavedModelBuilder`,
`loader.load`, tag and signature constants, `signature_def_utils`, `utils.build_tensor_info`), so
serving code of that era runs unchanged, on directories TensorFlow reads and writes.

The builder writes TensorFlow's layout (`graphflow.interop.tensorflow.saved_model`):
`saved_model.pb` (or `.pbtxt`: a SavedModel message, one MetaGraphDef per tag set with its
signature defs, collections, saver and assets), `variables/variables.index` +
`variables/variables.data-00000-of-00001` (a V2 checkpoint) and `assets/`, all renamed into place
at once. `loader.load(sess, tags, export_dir)` imports the meta graph of those tags into
`sess.graph` (or under `import_scope`), restores the variables, runs the init op, and returns the
MetaGraphDef: `sess.graph.get_tensor_by_name(meta.signature_def[key].inputs["x"].name)`.

Directories written by older graphflow versions (`saved_model.gfz`, graphflow's graph file with
the variable values, and `saved_model.json`, the tags and signature defs) still load: the JSON is
size-bounded and checked field by field, the graph file read with `graphflow.load`'s limits.
"""

import json
import os

from graphflow.fileformat import tf_protos as pb
from graphflow.fileformat.checkpoint import Saver
from graphflow.fileformat.io_policy import IOPolicyError
from graphflow.fileformat.serialization import import_graph
from graphflow.fileformat.tf_saved_model import SavedModelWriter
from graphflow.fileformat.tf_saver_graph import datatype
from graphflow.framework import dtypes
from graphflow.framework.errors import GraphFormatError
from graphflow.framework.graph import GraphKeys, Tensor, get_default_graph
from graphflow.ops import registry

GRAPH_FILE = "saved_model.gfz"
META_FILE = "saved_model.json"
_META_LIMIT = 1 << 22


class tag_constants:  # noqa: N801 - TF1 module name
    SERVING = "serve"
    TRAINING = "train"
    EVAL = "eval"
    GPU = "gpu"
    TPU = "tpu"


class signature_constants:  # noqa: N801 - TF1 module name
    DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
    PREDICT_METHOD_NAME = "tensorflow/serving/predict"
    PREDICT_INPUTS = "inputs"
    PREDICT_OUTPUTS = "outputs"
    CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
    CLASSIFY_INPUTS = "inputs"
    CLASSIFY_OUTPUT_CLASSES = "classes"
    CLASSIFY_OUTPUT_SCORES = "scores"
    REGRESS_METHOD_NAME = "tensorflow/serving/regress"
    REGRESS_INPUTS = "inputs"
    REGRESS_OUTPUTS = "outputs"


class TensorInfo:
    """A signature entry: the tensor's `name` ('x:0'), `dtype` (a DType) and `tensor_shape`."""

    def __init__(self, name, dtype, shape):
        self.name = name
        self.dtype = dtypes.as_dtype(dtype)
        self.tensor_shape = shape  # a list with None for unknown dims, or None for unknown rank

    def to_json(self):
        return {"name": self.name, "dtype": self.dtype.name, "shape": self.tensor_shape}

    def __repr__(self):
        return f"TensorInfo(name={self.name!r}, dtype={self.dtype.name}, shape={self.tensor_shape})"


class SignatureDef:
    """`inputs` / `outputs`: {key: TensorInfo}; `method_name`: e.g. PREDICT_METHOD_NAME."""

    def __init__(self, inputs=None, outputs=None, method_name=""):
        self.inputs = dict(inputs or {})
        self.outputs = dict(outputs or {})
        self.method_name = method_name or ""

    def to_json(self):
        return {"inputs": {k: v.to_json() for k, v in self.inputs.items()},
                "outputs": {k: v.to_json() for k, v in self.outputs.items()},
                "method_name": self.method_name}


class MetaGraphDef:
    """What `loader.load` returns: `signature_def` {key: SignatureDef} and `meta_info_def.tags`."""

    class _MetaInfo:
        def __init__(self, tags):
            self.tags = list(tags)

    def __init__(self, tags, signature_def):
        self.meta_info_def = self._MetaInfo(tags)
        self.signature_def = signature_def


def build_tensor_info(tensor):
    """The signature entry of a Tensor (`tf.saved_model.utils.build_tensor_info`)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"build_tensor_info needs a Tensor, got {tensor!r}")
    shape = None if tensor.shape.ndims is None else tensor.shape.as_list()
    return TensorInfo(tensor.name, tensor.dtype, shape)


def build_signature_def(inputs=None, outputs=None, method_name=None):
    return SignatureDef(inputs, outputs, method_name)


def predict_signature_def(inputs, outputs):
    """A predict signature from {key: Tensor} inputs and outputs."""
    if not inputs or not outputs:
        raise ValueError("Prediction signatures need at least one input and one output")
    return SignatureDef({k: build_tensor_info(t) for k, t in inputs.items()},
                        {k: build_tensor_info(t) for k, t in outputs.items()},
                        signature_constants.PREDICT_METHOD_NAME)


def _tensor_info_proto(info):
    proto = pb.TensorInfo(name=info.name, dtype=datatype(info.dtype.name))
    if info.tensor_shape is None:
        proto.tensor_shape.unknown_rank = True
    else:
        for d in info.tensor_shape:
            proto.tensor_shape.dim.add(size=-1 if d is None else int(d))
    return proto


def _signature_proto(key, sig):
    if isinstance(sig, pb.SignatureDef):
        return sig
    if not isinstance(sig, SignatureDef):
        raise TypeError(f"signature_def_map['{key}'] must be a SignatureDef, got {sig!r}")
    proto = pb.SignatureDef(method_name=sig.method_name)
    for side, entries in (("inputs", sig.inputs), ("outputs", sig.outputs)):
        for name, info in entries.items():
            getattr(proto, side)[name].CopyFrom(
                info if isinstance(info, pb.TensorInfo) else _tensor_info_proto(info))
    return proto


def _assets(assets_collection):
    """[(string Const tensor, its file path)] of an assets collection (TF1's ASSET_FILEPATHS)."""
    out = []
    for tensor in assets_collection or ():
        tensor = getattr(tensor, "_as_graph_element", lambda t=tensor: t)()
        if not isinstance(tensor, Tensor) or registry.constant_value_of(tensor) is None \
                or tensor.dtype.name != "string":
            raise TypeError(f"assets_collection entries must be string constants naming files, "
                            f"got {tensor!r}")
        value = tensor.op.attrs["value"]
        value = value.item() if hasattr(value, "item") else value
        out.append((tensor, value.decode() if isinstance(value, bytes) else str(value)))
    return out


class SavedModelBuilder:
    """`tf.saved_model.builder.SavedModelBuilder(export_dir)`: one graph and its variables
    (`add_meta_graph_and_variables`), more tag sets over the same graph (`add_meta_graph`), then
    `save(as_text=False)`, which writes TensorFlow's SavedModel directory atomically."""

    def __init__(self, export_dir):
        self._writer = SavedModelWriter(export_dir)
        self._graph = None

    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None,
                                     assets_collection=None, legacy_init_op=None,
                                     clear_devices=False, main_op=None, strip_default_attrs=False,
                                     saver=None):
        if self._writer.has_variables:
            raise AssertionError("Graph state including variables and assets has already been "
                                 "saved. Please invoke `add_meta_graph()` instead.")
        if saver is None:
            saver = Saver(sess.graph.get_collection(GraphKeys.GLOBAL_VARIABLES), allow_empty=True)
        self._graph = sess.graph
        self._writer.set_variables(sess, [(s.key, s.op) for s in saver._saveables])
        self._add(tags, signature_def_map, assets_collection, main_op or legacy_init_op,
                  clear_devices)

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None,
                       legacy_init_op=None, clear_devices=False, main_op=None,
                       strip_default_attrs=False, saver=None):
        if not self._writer.has_variables:
            raise AssertionError("Graph state including variables and assets has not been saved "
                                 "yet. Please invoke `add_meta_graph_and_variables()` first.")
        self._add(tags, signature_def_map, assets_collection, main_op or legacy_init_op,
                  clear_devices)

    def _add(self, tags, signature_def_map, assets_collection, init_op, clear_devices):
        signatures = {k: _signature_proto(k, v) for k, v in (signature_def_map or {}).items()}
        graph = get_default_graph() if self._graph is None else self._graph
        self._writer.add(graph, tags, signatures, _assets(assets_collection), init_op,
                         clear_devices)

    def save(self, as_text=False):
        if not self._writer.has_variables:
            raise AssertionError("Nothing to save: call add_meta_graph_and_variables() first")
        return self._writer.save(as_text)


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None):
    """Export `session`'s graph and variables with one predict signature ('serving_default')
    under the SERVING tag (`tf.saved_model.simple_save`)."""
    builder = SavedModelBuilder(export_dir)
    signature = predict_signature_def(inputs, outputs)
    builder.add_meta_graph_and_variables(
        session, [tag_constants.SERVING],
        {signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: signature},
        legacy_init_op=legacy_init_op)
    builder.save()


def maybe_saved_model_directory(export_dir):
    return os.path.isfile(os.path.join(export_dir, META_FILE))


def _read_meta(export_dir):
    path = os.path.join(export_dir, META_FILE)
    if not os.path.isfile(path):
        raise OSError(f"SavedModel file does not exist at: {export_dir}/{META_FILE}")
    with open(path, "rb") as f:
        raw = f.read(_META_LIMIT + 1)
    what = f"SavedModel '{path}'"
    if len(raw) > _META_LIMIT:
        raise GraphFormatError(f"{what} is larger than {_META_LIMIT} bytes")
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise GraphFormatError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != "graphflow-saved-model" \
            or not isinstance(doc.get("meta_graphs"), list):
        raise GraphFormatError(f"{what} is not a graphflow SavedModel")
    return doc["meta_graphs"], what


def _tensor_info(entry, what):
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise GraphFormatError(f"{what}: a signature entry needs a tensor name")
    shape = entry.get("shape")
    if shape is not None and (not isinstance(shape, list) or not all(
            d is None or (isinstance(d, int) and not isinstance(d, bool) and d >= 0)
            for d in shape)):
        raise GraphFormatError(f"{what}: bad shape {shape!r} for '{entry['name']}'")
    try:
        return TensorInfo(entry["name"], entry.get("dtype", "float32"), shape)
    except (TypeError, ValueError, KeyError) as exc:
        raise GraphFormatError(f"{what}: bad dtype for '{entry['name']}': {exc}") from None


def _signature(entry, what):
    if not isinstance(entry, dict):
        raise GraphFormatError(f"{what}: a signature def must be an object")
    parts = {}
    for side in ("inputs", "outputs"):
        items = entry.get(side, {})
        if not isinstance(items, dict):
            raise GraphFormatError(f"{what}: signature {side} must be an object")
        parts[side] = {str(k): _tensor_info(v, what) for k, v in items.items()}
    return SignatureDef(parts["inputs"], parts["outputs"], str(entry.get("method_name", "")))


HOW_SAVED_MODEL = "tf.saved_model.loader.load(sess, tags, export_dir, allow_io=True)"


def load(sess, tags, export_dir, import_scope=None, allow_io=False, **saver_kwargs):
    """Load a directory an older graphflow wrote (`saved_model.json` + `saved_model.gfz`): import
    the meta graph saved with exactly `tags` into `sess.graph`, restore its variables into `sess`,
    and return its MetaGraphDef (`tf.saved_model.loader.load` is
    `graphflow.interop.tensorflow.saved_model.load`, which reads TensorFlow's layout too)."""
    tags = [tags] if isinstance(tags, str) else list(tags)
    meta_graphs, what = _read_meta(export_dir)
    for meta in meta_graphs:
        if isinstance(meta, dict) and isinstance(meta.get("tags"), list) \
                and sorted(map(str, meta["tags"])) == sorted(tags):
            break
    else:
        available = [m.get("tags") for m in meta_graphs if isinstance(m, dict)]
        raise RuntimeError(f"MetaGraphDef associated with tags {tags} could not be found in "
                           f"SavedModel. To inspect available tag-sets in the SavedModel, please "
                           f"use the SavedModel CLI: `saved_model_cli`; available: {available}")
    signatures = meta.get("signature_def", {})
    if not isinstance(signatures, dict):
        raise GraphFormatError(f"{what}: signature_def must be an object")
    signature_def = {str(k): _signature(v, what) for k, v in signatures.items()}
    prefix = import_scope or ""
    try:
        import_graph(os.path.join(export_dir, GRAPH_FILE), prefix=prefix, graph=sess.graph,
                     session=sess, allow_io=allow_io)
    except IOPolicyError as exc:
        raise IOPolicyError(exc.source, exc.ops, HOW_SAVED_MODEL) from None
    if prefix:
        for sig in signature_def.values():
            for info in list(sig.inputs.values()) + list(sig.outputs.values()):
                info.name = f"{prefix}/{info.name}"
    return MetaGraphDef(tags, signature_def)


__all__ = ["simple_save", "tag_constants", "signature_constants", "TensorInfo", "SignatureDef",
           "MetaGraphDef", "build_tensor_info", "build_signature_def", "predict_signature_def",
           "SavedModelBuilder", "load", "maybe_saved_model_directory"]
