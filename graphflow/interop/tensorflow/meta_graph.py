"""TensorFlow's MetaGraphDef read into a graphflow graph, and `tf.train.import_meta_graph`.

`import_meta_graph_def` splits TensorFlow's save subgraph off (graphflow's Saver restores in
Python; which key restores which variable is read from it, `tf_saver_graph.restore_keys`), builds
the rest through `import_graph_def`, and rebuilds the collections over the imported ops:
`Variable` objects from the VariableDefs (one object per variable, shared by every collection
naming it), ops and tensors from `node_list` names. `import_meta_graph(path or MetaGraphDef)`
returns a graphflow `Saver` restoring what TensorFlow's Saver of that graph restores, so the TF1
tutorial runs unchanged:

    saver = tf.train.import_meta_graph("ckpt/model-100.meta")   # written by TensorFlow or graphflow
    saver.restore(sess, "ckpt/model-100")
    train_op = tf.get_collection("train_op")[0]
    sess.run(train_op, {"x:0": batch, "labels:0": labels})

`.meta` files of older graphflow versions (a graphflow graph file without variable values, a zip)
are recognised by their content and still read. The file reading (limits, hostile bytes) and the
writer are `graphflow.fileformat.tf_meta_graph`.
"""

import os

from tensorboard.compat.proto import variable_pb2

from graphflow.fileformat import tf_meta_graph as tmg
from graphflow.fileformat import tf_protos as pb
from graphflow.fileformat import tf_saver_graph as saver_graph
from graphflow.fileformat.checkpoint import Saver
from graphflow.fileformat.io_policy import IOPolicyError
from graphflow.fileformat.serialization import import_graph
from graphflow.framework.errors import GraphFormatError
from graphflow.framework.graph import GraphKeys, Tensor, get_default_graph
from graphflow.interop.tensorflow.importer import import_graph_def
from graphflow.ops import registry
from graphflow.ops.state_ops import Variable

HOW = "tf.train.import_meta_graph(path, allow_io=True)"


class ImportedMetaGraph:
    """What `import_meta_graph_def` added: `variables` (the Variables of its global-variables
    collection, else of every variable collection), `saver_def` (TensorFlow's SaverDef, or None),
    `restore_keys` {variable op: checkpoint key} read from the save subgraph, `scope`, and
    `collections` {key: [items]} as added to the graph."""

    def __init__(self, scope, variables, saver_def, restore_keys, collections):
        self.scope = scope
        self.variables = variables
        self.saver_def = saver_def
        self.restore_keys = restore_keys
        self.collections = collections

    def checkpoint_keys(self):
        """{checkpoint key: Variable} for a graphflow Saver restoring what TensorFlow's Saver of
        this meta graph restores (all variables by op name when the graph had no saver)."""
        strip = len(self.scope) + 1 if self.scope else 0
        out = {}
        by_op = {v.op: v for v in self.variables}
        if self.restore_keys:
            for op, key in self.restore_keys.items():
                if op in by_op:
                    out[key] = by_op[op]
            return out
        for var in self.variables:
            out[var.op.name[strip:]] = var
        return out


def _prefixed(scope, name):
    return f"{scope}/{name}" if scope else name


def _element(graph, scope, name, what):
    try:
        return graph.as_graph_element(_prefixed(scope, name))
    except (KeyError, ValueError, TypeError):
        raise GraphFormatError(f"{what}: names '{name}', which is not in its graph") from None


def _variable(graph, scope, raw, known, what, trainable_names):
    try:
        proto = variable_pb2.VariableDef.FromString(raw)
    except Exception:  # protobuf's DecodeError (and RecursionError)
        raise GraphFormatError(f"{what}: an entry is not a VariableDef") from None
    if proto.variable_name in known:
        return known[proto.variable_name]
    tensor = _element(graph, scope, proto.variable_name, what)
    if not isinstance(tensor, Tensor) or not registry.lookup(tensor.op.type).variable:
        raise GraphFormatError(f"{what}: '{proto.variable_name}' is not a variable's tensor")
    init = None
    if proto.initializer_name:
        init = _element(graph, scope, proto.initializer_name, what)
        if isinstance(init, Tensor):
            init = init.op
        if not init.inputs or init.op_def.variable or \
                init.attrs.get("shared_name") != tensor.op.attrs["shared_name"]:
            raise GraphFormatError(f"{what}: initializer '{proto.initializer_name}' of "
                                   f"'{proto.variable_name}' is not an assignment")
    trainable = proto.trainable or proto.variable_name in trainable_names
    var = Variable.from_ops(tensor.op, init, trainable)
    known[proto.variable_name] = var
    return var


def _trainable_names(meta):
    col = meta.collection_def.get(GraphKeys.TRAINABLE_VARIABLES)
    names = set()
    if col is not None:
        for raw in col.bytes_list.value:
            try:
                names.add(variable_pb2.VariableDef.FromString(raw).variable_name)
            except Exception:  # protobuf's DecodeError (and RecursionError)
                pass  # reported when the collection itself is read
    return names


def import_meta_graph_def(meta, graph, import_scope=None, clear_devices=False,
                          what="meta graph", allow_io=False, how=HOW):
    """Add `meta`'s graph (without TensorFlow's save subgraph) and collections to `graph` under
    `import_scope`; returns an ImportedMetaGraph. Nodes reaching outside the process are refused
    (`IOPolicyError`, whose advice is `how`) unless `allow_io=True`."""
    saver_def = meta.saver_def if meta.HasField("saver_def") else None
    kept, save_nodes = saver_graph.split_saver_nodes(list(meta.graph_def.node), saver_def)
    graph_def = pb.GraphDef()
    graph_def.versions.CopyFrom(meta.graph_def.versions)
    graph_def.library.CopyFrom(meta.graph_def.library)
    graph_def.node.extend(kept)
    if clear_devices:
        for node in graph_def.node:
            node.device = ""
    removed = {n.name for n in save_nodes}
    scope = import_scope.rstrip("/") if import_scope else ""
    with graph.as_default():
        import_graph_def(graph_def, name=scope, source=what, allow_io=allow_io, how=how)
    known, collections, variables = {}, {}, []
    trainable_names = _trainable_names(meta)
    for key in sorted(meta.collection_def):
        if key in tmg.SKIPPED:
            continue
        col = meta.collection_def[key]
        where = f"{what}: collection '{key}'"
        kind = col.WhichOneof("kind")
        if key in tmg.VARIABLE_COLLECTIONS and kind not in ("bytes_list", None):
            raise GraphFormatError(f"{where} holds a {kind}; TensorFlow keeps variables there "
                                   "as VariableDef bytes")
        if kind == "node_list":
            items = [_element(graph, scope, name, where) for name in col.node_list.value
                     if name.lstrip("^").partition(":")[0] not in removed]
        elif kind == "bytes_list" and key in tmg.VARIABLE_COLLECTIONS:
            items = [_variable(graph, scope, raw, known, where, trainable_names)
                     for raw in col.bytes_list.value]
        elif kind == "bytes_list":
            items = list(col.bytes_list.value)
        elif kind == "int64_list":
            items = list(col.int64_list.value)
        elif kind == "float_list":
            items = list(col.float_list.value)
        else:
            continue  # any_list and empty collections: nothing graphflow can use
        collections[key] = items
    for key, items in collections.items():
        for item in items:
            graph.add_to_collection(key, item)
    variables = collections.get(GraphKeys.GLOBAL_VARIABLES)
    if variables is None:
        variables = list(dict.fromkeys(known.values()))
    by_name = {}
    for node, key in saver_graph.restore_keys(save_nodes).items():
        try:
            by_name[graph.get_operation_by_name(_prefixed(scope, node))] = key
        except (KeyError, ValueError):
            raise GraphFormatError(f"{what}: its saver restores '{node}', which is not in its "
                                   "graph") from None
    return ImportedMetaGraph(scope, variables, saver_def, by_name, collections)


# ------------------------------------------------------------------------------------ public


def _import_graphflow_file(path, import_scope, allow_io):
    try:
        imported = import_graph(path, prefix=import_scope or "", graph=get_default_graph(),
                                allow_io=allow_io)
    except IOPolicyError as exc:
        raise IOPolicyError(exc.source, exc.ops, HOW) from None
    if not imported.variables:
        return None
    strip = len(imported.prefix) + 1 if imported.prefix else 0
    return Saver({v.op.name[strip:]: v for v in imported.variables})


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None,
                      allow_io=False, **kwargs):
    """`tf.train.import_meta_graph`: add the graph of a `.meta` file (or a MetaGraphDef) to the
    default graph, under `import_scope` if given, with its collections; returns a `Saver`
    restoring what the saver of the original graph saved (None when it has no variables).
    Ops that reach outside the process (files, network, Python) are refused, all listed in one
    `IOPolicyError`, unless `allow_io=True`."""
    if isinstance(meta_graph_or_file, pb.MetaGraphDef):
        meta, what = meta_graph_or_file, "MetaGraphDef"
    else:
        path = os.fspath(meta_graph_or_file)
        if tmg.is_graphflow_graph_file(path):
            return _import_graphflow_file(path, import_scope, allow_io)
        meta = tmg.read_meta_graph_file(path)
        what = f"meta graph file '{path}'"
    imported = import_meta_graph_def(meta, get_default_graph(), import_scope, clear_devices,
                                     what=what, allow_io=allow_io)
    keys = imported.checkpoint_keys()
    if not keys:
        return None
    saver = Saver(keys, allow_empty=True)
    if imported.saver_def is not None:
        saver.saver_def = imported.saver_def
    return saver


__all__ = ["import_meta_graph", "import_meta_graph_def", "ImportedMetaGraph"]
