"""TensorFlow's SavedModel directory loaded into a graphflow graph: `tf.saved_model.loader.load`.

`load(session, tags, export_dir)` imports the meta graph of exactly those tags into the
session's graph (`meta_graph.import_meta_graph_def`), restores its variables from
`variables/variables` (graphflow's Saver, reading TensorFlow's V2 checkpoint with the bundle
reader's checks), runs its main (or legacy init) op with the asset paths fed (each checked to stay
inside `assets/`), and returns the MetaGraphDef (`.signature_def[key].inputs[name].name`).
Directories written by older graphflow versions (`saved_model.json` + `saved_model.gfz`) load
through `graphflow.tf1.saved_model`. `LoadedSavedModel` is one signature of a directory in its
own graph and session, with `graphflow.load`'s interface (the `graphflow run` command uses it).
The directory's files and the writer are `graphflow.fileformat.tf_saved_model`.
Ops that reach outside the process (files, network, Python: `OpDef.touches`) are refused before
anything runs, its init op included, unless the caller passes `allow_io=True`.
"""

import os

from graphflow.fileformat import tf_protos as pb
from graphflow.fileformat import tf_saved_model as files
from graphflow.fileformat.checkpoint import Saver
from graphflow.fileformat.serialization import run_signature
from graphflow.framework.errors import GraphFormatError
from graphflow.framework.graph import Graph, GraphKeys, Operation, Tensor
from graphflow.interop.tensorflow import meta_graph as mg
from graphflow.tf1 import saved_model as graphflow_layout


def asset_feeds(export_dir, meta, graph, scope, what):
    """{asset tensor: path} for the meta graph's AssetFileDefs (the field, else TensorFlow 1's
    `saved_model_assets` collection of Any-packed AssetFileDefs)."""
    defs = list(meta.asset_file_def)
    if not defs and "saved_model_assets" in meta.collection_def:
        for packed in meta.collection_def["saved_model_assets"].any_list.value:
            asset = pb.AssetFileDef()
            if not packed.type_url.endswith("AssetFileDef"):
                raise GraphFormatError(f"{what}: saved_model_assets holds {packed.type_url!r}")
            try:
                asset.ParseFromString(packed.value)
            except Exception:  # protobuf's DecodeError and its C++ variants
                raise GraphFormatError(f"{what}: an asset entry is not an AssetFileDef") from None
            defs.append(asset)
    feeds = {}
    for asset in defs:
        path = files.asset_path(export_dir, asset.filename, what)
        tensor = mg._element(graph, scope, asset.tensor_info.name, f"{what}: asset")
        if not isinstance(tensor, Tensor) or tensor.dtype.name != "string":
            raise GraphFormatError(f"{what}: asset tensor '{asset.tensor_info.name}' is not a "
                                   "string tensor")
        feeds[tensor] = path.encode()
    return feeds


def _init_op(meta, graph, scope, what):
    for key in (files.MAIN_OP_KEY, files.LEGACY_INIT_OP_KEY):
        col = meta.collection_def.get(key)
        if col is not None and col.node_list.value:
            return mg._element(graph, scope, col.node_list.value[0], what)
    sig = meta.signature_def.get(files.INIT_OP_SIGNATURE_KEY)
    if sig is not None and files.INIT_OP_SIGNATURE_KEY in sig.outputs:
        return mg._element(graph, scope, sig.outputs[files.INIT_OP_SIGNATURE_KEY].name, what)
    return None


def check_signatures(meta, graph, scope, what):
    """Every signature entry names a tensor of the imported graph."""
    for key, sig in meta.signature_def.items():
        for side in (sig.inputs, sig.outputs):
            for name, info in side.items():
                if info.WhichOneof("encoding") != "name":
                    raise GraphFormatError(f"{what}: signature '{key}' entry '{name}' is not a "
                                           "named tensor (sparse or composite tensors are not "
                                           "supported)")
                element = mg._element(graph, scope, info.name, f"{what}: signature '{key}'")
                if not isinstance(element, (Tensor, Operation)):
                    raise GraphFormatError(f"{what}: signature '{key}' names {info.name!r}")


def load_tensorflow_layout(session, tags, export_dir, import_scope=None, allow_io=False,
                           initialize=True):
    """Import, restore, initialize a TensorFlow SavedModel directory; returns its MetaGraphDef.
    `initialize=False` leaves its init op unrun (for a look at the graph: `graphflow inspect`)."""
    export_dir = os.fspath(export_dir)
    saved = files.read_saved_model(export_dir)
    meta = files.find_meta_graph(saved, tags, export_dir)
    what = f"SavedModel '{export_dir}'"
    graph = session.graph
    imported = mg.import_meta_graph_def(meta, graph, import_scope, what=what, allow_io=allow_io,
                                        how=graphflow_layout.HOW_SAVED_MODEL)
    scope = imported.scope
    check_signatures(meta, graph, scope, what)
    feeds = asset_feeds(export_dir, meta, graph, scope, what)
    init_op = _init_op(meta, graph, scope, what)
    keys = imported.checkpoint_keys()
    if keys:
        prefix = os.path.join(export_dir, files.VARIABLES_DIR, files.VARIABLES_PREFIX)
        Saver(keys).restore(session, prefix)
    if init_op is not None and initialize:
        session.run(init_op, feeds)
    return meta


class LoadedSavedModel:
    """One signature of a SavedModel directory in a new graph and session, with the interface
    of `graphflow.load`'s LoadedGraph: `run({input key: array}) -> {output key: array}`,
    `inputs`/`outputs` ({key: Tensor}), `graph`, `session`, `variables`, `meta_graph_def`."""

    def __init__(self, export_dir, tags, signature_key, allow_io=False, initialize=True):
        from graphflow.engine.session import Session
        self.path = os.fspath(export_dir)
        self.graph = Graph()
        self.session = Session(graph=self.graph)
        self.meta_graph_def = load_tensorflow_layout(self.session, tags, export_dir,
                                                     allow_io=allow_io, initialize=initialize)
        sigs = self.meta_graph_def.signature_def
        if signature_key not in sigs:
            self.session.close()
            raise KeyError(f"SavedModel '{self.path}' has no signature '{signature_key}'; its "
                           f"signatures are {sorted(k for k in sigs if not k.startswith('__'))}")
        sig = sigs[signature_key]
        self.signature_key = signature_key
        self.method_name = sig.method_name
        self.inputs = {k: self.graph.as_graph_element(v.name) for k, v in sorted(sig.inputs.items())}
        self.outputs = {k: self.graph.as_graph_element(v.name)
                        for k, v in sorted(sig.outputs.items())}
        self.variables = self.graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
        self.format_version = f"TensorFlow SavedModel (tags {sorted(tags)}, signature " \
                              f"'{signature_key}')"
        version = self.meta_graph_def.meta_info_def.tensorflow_version
        self.producer = f"TensorFlow {version}" if version else ""

    def run(self, feeds=None, outputs=None):
        return run_signature(self.session, self.inputs, self.outputs, feeds, outputs,
                             "signature")

    def close(self):
        self.session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def load(sess, tags, export_dir, import_scope=None, allow_io=False, **saver_kwargs):
    """`tf.saved_model.loader.load(sess, tags, export_dir)`: import the meta graph saved with
    exactly `tags` into `sess.graph` (under `import_scope` if given), restore its variables into
    `sess`, run its init op, and return its MetaGraphDef: TensorFlow's message for a TensorFlow
    SavedModel directory, an object with the same `signature_def` and `meta_info_def.tags` for
    one an older graphflow wrote. Ops that reach outside the process (files, network, Python)
    are refused, all listed in one `IOPolicyError`, unless `allow_io=True`."""
    tags = [tags] if isinstance(tags, str) else list(tags)
    if files.is_saved_model_dir(export_dir):
        return load_tensorflow_layout(sess, tags, export_dir, import_scope, allow_io=allow_io)
    return graphflow_layout.load(sess, tags, export_dir, import_scope, allow_io=allow_io)


def maybe_saved_model_directory(export_dir):
    """`tf.saved_model.loader.maybe_saved_model_directory`."""
    return files.is_saved_model_dir(export_dir) or \
        graphflow_layout.maybe_saved_model_directory(export_dir)


def load_saved_model(export_dir, tags=("serve",), signature_key="serving_default",
                     allow_io=False):
    return LoadedSavedModel(export_dir, tags, signature_key, allow_io=allow_io)


__all__ = ["load", "maybe_saved_model_directory", "LoadedSavedModel", "load_saved_model"]
