"""TensorFlow's MetaGraphDef (the `.meta` file beside a checkpoint, and each graph of a SavedModel):
written from a graphflow graph, and read from a file as hostile input.

Writing (`meta_graph_def`): `graph_def` is the graph's GraphDef (`Graph.as_graph_def`, the
GraphDef writer of `graphflow.interop.tensorflow`) plus the save/restore subgraph TensorFlow's
Saver would have added (`tf_saver_graph.saver_nodes`, named by `saver_def`); `collection_def`
holds the graph's collections as TensorFlow writes them: variables (`variables`,
`trainable_variables`, `global_step`, ...) as VariableDef bytes, ops and tensors (`train_op`,
`losses`, `summaries`, `update_ops`, ...) as `node_list` names, Python ints, floats and strings
as `int64_list` / `float_list` / `bytes_list`; a collection of anything else is left out with a
warning, as TensorFlow leaves it out. `meta_info_def` has the tags; `signature_def` and
`asset_file_def` come from the SavedModel writer.

Reading (`read_meta_graph_file`, `parse_message`): the file's size is checked before it is read;
binary protobuf, else text format, as TensorFlow reads them; any fault (DecodeError, ParseError,
RecursionError of deep nesting) is a `GraphFormatError` naming the file. Building the graph of
a MetaGraphDef is `graphflow.interop.tensorflow.meta_graph`.
"""

import os

from google.protobuf import message, text_format
from tensorboard.compat.proto import variable_pb2

from graphflow.fileformat import file_io
from graphflow.fileformat import tf_protos as pb
from graphflow.fileformat import tf_saver_graph as saver_graph
from graphflow.framework.errors import GraphFormatError
from graphflow.framework.graph import GraphKeys, Operation, Tensor
from graphflow.ops.state_ops import Variable

MAX_META_GRAPH_BYTES = 1 << 30  # TensorFlow's protobuf reader stops at 2 GiB; graphflow at 1 GiB

# The collections whose bytes_list holds VariableDefs (TensorFlow registers these names).
VARIABLE_COLLECTIONS = frozenset({
    GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES, GraphKeys.LOCAL_VARIABLES,
    GraphKeys.MODEL_VARIABLES, GraphKeys.MOVING_AVERAGE_VARIABLES, GraphKeys.METRIC_VARIABLES,
    GraphKeys.GLOBAL_STEP, "concatenated_variables"})
# Collections TensorFlow fills with protos graphflow has no use for (queue runners, savers,
# control-flow contexts, SavedModel assets): skipped on import, never written.
SKIPPED = frozenset({GraphKeys.QUEUE_RUNNERS, GraphKeys.SAVERS, "cond_context", "while_context",
                      "saved_model_assets", "saveable_objects"})


# ------------------------------------------------------------------------------------ writing
def _variable_def(var):
    proto = variable_pb2.VariableDef(variable_name=var.name, snapshot_name=var.name,
                                     trainable=bool(var.trainable))
    if var.initializer is not None:
        proto.initializer_name = var.initializer.name
    if var.initial_value is not None:
        proto.initial_value_name = var.initial_value.name
    return proto.SerializeToString()


def _collection_def(key, items, warn):
    """The CollectionDef of one collection, or None (with a warning) when it cannot be written."""
    col = pb.CollectionDef()
    if not items or key in SKIPPED or not isinstance(key, str) or key.startswith("__"):
        return None  # graphflow's internal collections are not the program's
    if all(isinstance(v, Variable) for v in items):
        if key not in VARIABLE_COLLECTIONS:
            warn(f"collection '{key}' holds variables but is not one TensorFlow reads as "
                 "VariableDefs; left out")
            return None
        col.bytes_list.value.extend(_variable_def(v) for v in items)
    elif all(isinstance(v, (Tensor, Operation, Variable)) for v in items):
        col.node_list.value.extend(v.name for v in items)
    elif all(isinstance(v, bool) for v in items) or all(
            isinstance(v, int) and not isinstance(v, bool) for v in items):
        col.int64_list.value.extend(int(v) for v in items)
    elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
        col.float_list.value.extend(float(v) for v in items)
    elif all(isinstance(v, (str, bytes)) for v in items):
        col.bytes_list.value.extend(v.encode("utf-8") if isinstance(v, str) else v for v in items)
    else:
        kinds = sorted({type(v).__name__ for v in items})
        warn(f"collection '{key}' holds {kinds}, which a MetaGraphDef cannot hold; left out")
        return None
    return col


def saver_variables(pairs):
    """[(key, node name, dtype name, shape, shape-and-slice spec)] of (checkpoint key, variable
    op[, spec]) pairs; the spec ("" for a whole tensor) places a partitioned variable's part."""
    out = []
    for key, op, *spec in pairs:
        shape = op.outputs[0].shape
        out.append((key, op.name, op.outputs[0].dtype.name,
                    None if shape.dims is None else list(shape.dims), spec[0] if spec else ""))
    return out


def meta_graph_def(graph, saver=None, collection_list=None, clear_devices=False, tags=(),
                   signature_def_map=None, asset_file_defs=(), max_to_keep=5,
                   keep_checkpoint_every_n_hours=10000.0, warn=None):
    """A MetaGraphDef of `graph`.

    saver: [(checkpoint key, variable op)] the save/restore subgraph and `saver_def` are written
        for (None: none, as `tf.train.export_meta_graph` without a saver).
    collection_list: the collection keys to write (None: all).
    signature_def_map: {key: SignatureDef proto}; asset_file_defs: [AssetFileDef]."""
    warn = warn or (lambda text: None)
    graph_def = graph.as_graph_def()  # the GraphDef writer graphflow/__init__.py hands down
    if clear_devices:
        for node in graph_def.node:
            node.device = ""
    if saver:
        taken = {n.name for n in graph_def.node}
        nodes, saver_def = saver_graph.saver_nodes(
            saver_variables(saver), saver_graph.unique_scope(taken), max_to_keep,
            keep_checkpoint_every_n_hours)
        graph_def.node.extend(nodes)
    meta = pb.MetaGraphDef()
    meta.meta_info_def.tags.extend(tags)
    meta.graph_def.CopyFrom(graph_def)
    if saver:
        meta.saver_def.CopyFrom(saver_def)
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    for key in keys:
        col = _collection_def(key, graph.get_collection(key), warn)
        if col is not None:
            meta.collection_def[key].CopyFrom(col)
    for key, sig in (signature_def_map or {}).items():
        meta.signature_def[key].CopyFrom(sig)
    meta.asset_file_def.extend(asset_file_defs)
    return meta


def serialize(meta, as_text=False):
    return text_format.MessageToString(meta).encode("utf-8") if as_text else \
        meta.SerializeToString()


# ------------------------------------------------------------------------------------ reading
def parse_message(cls, data, what):
    """A message of `cls` from binary protobuf bytes, else from text format (as TensorFlow reads
    `.meta` and `saved_model.pb(txt)` files); any fault is a GraphFormatError naming `what`."""
    try:
        return cls.FromString(data)
    except message.DecodeError as exc:
        binary_error = exc
    except RecursionError:
        raise GraphFormatError(f"{what}: messages nested too deeply") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise GraphFormatError(f"{what} is not a {cls.DESCRIPTOR.name} (binary protobuf: "
                               f"{binary_error})") from None
    try:
        return text_format.Parse(text, cls())
    except (text_format.ParseError, message.DecodeError) as exc:
        raise GraphFormatError(f"{what} is not a {cls.DESCRIPTOR.name} (text format: "
                               f"{exc})") from None
    except RecursionError:
        raise GraphFormatError(f"{what}: messages nested too deeply") from None


def is_graphflow_graph_file(path):
    """Whether `path` is a graphflow graph file (a zip: `.meta` files of older graphflow) rather
    than a MetaGraphDef; a FIFO or device is a GraphFormatError, never a blocked read."""
    return file_io.regular_file_starts_with(path, f"meta graph file '{os.fspath(path)}'",
                                            b"PK\x03\x04")


def read_limited(path, what, max_bytes=MAX_META_GRAPH_BYTES):
    """The bytes of `path`, refused (GraphFormatError) before reading when larger than
    `max_bytes` or not a regular file."""
    return file_io.read_regular_file(path, what, max_bytes)


def read_meta_graph_file(path, max_bytes=MAX_META_GRAPH_BYTES):
    what = f"meta graph file '{os.fspath(path)}'"
    return parse_message(pb.MetaGraphDef, read_limited(path, what, max_bytes), what)


def write_saver_meta_graph(path, graph, saver):
    """`Saver.save`'s `<prefix>.meta`: TensorFlow's MetaGraphDef of `graph` with `saver`'s
    save/restore subgraph and all collections, written atomically. A graph holding an op
    TensorFlow has no counterpart for is written as a graphflow graph file instead (which
    `tf.train.import_meta_graph` also reads), with a warning naming the op."""
    import warnings

    from graphflow.fileformat import file_io
    pairs = [(s.key, s.op, s.spec) for s in saver._saveables]
    try:
        meta = meta_graph_def(graph, saver=pairs, max_to_keep=saver._max_to_keep,
                              keep_checkpoint_every_n_hours=saver._keep_every_seconds / 3600.0,
                              warn=lambda text: warnings.warn(f"Saver.save: {text}",
                                                              stacklevel=4))
    except Exception as exc:  # noqa: BLE001 - the checkpoint matters more than its .meta form
        # ValueError: the GraphDef writer's ExportError (an op TensorFlow lacks); anything else
        # is a fault of the writer, reported in the warning rather than losing the checkpoint
        from graphflow.fileformat.serialization import save as save_graph
        why = str(exc) if isinstance(exc, ValueError) else \
            f"graphflow's GraphDef writer failed: {type(exc).__name__}: {exc}"
        if not getattr(saver, "_warned_meta_form", False):  # once per Saver, not every save
            saver._warned_meta_form = True
            warnings.warn(f"Saver.save: the graph cannot be written as TensorFlow's MetaGraphDef "
                          f"({why}); {path} is a graphflow graph file, which "
                          "tf.train.import_meta_graph reads but TensorFlow does not (said once "
                          "per Saver)", stacklevel=3)
        save_graph(path, graph=graph)
        return
    with file_io.atomic_write(path) as f:
        f.write(meta.SerializeToString())
