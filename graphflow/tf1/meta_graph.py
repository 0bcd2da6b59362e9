"""`tf.train.export_meta_graph` / `tf.train.import_meta_graph` onto graphflow's own graph file.

TF1 keeps a graph in a `.meta` MetaGraphDef; graphflow's `.meta` is an ordinary graph file
(`graphflow.save` without variable values: the whole graph, its collections and the variables'
initializers). `Saver.save` writes one next to each checkpoint, so the TF1 idiom works:

    saver = tf.train.import_meta_graph("ckpt/model-100.meta")
    saver.restore(sess, "ckpt/model-100")
    probs = tf.get_default_graph().get_tensor_by_name("probs:0")
"""

import os

from graphflow.fileformat.checkpoint import Saver
from graphflow.fileformat.serialization import import_graph, save
from graphflow.framework.graph import get_default_graph


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None,
                      collection_list=None, as_text=False, graph=None, export_scope=None,
                      clear_devices=False, clear_extraneous_savers=False,
                      strip_default_attrs=False, save_debug_info=False, **kwargs):
    """Write `graph` (default: the default graph) to `filename` as a graphflow graph file without
    variable values; returns `filename`."""
    if filename is None:
        raise ValueError("export_meta_graph: graphflow writes meta graphs to files; pass filename")
    unsupported = {"graph_def": graph_def, "export_scope": export_scope,
                   "collection_list": collection_list}
    given = sorted(k for k, v in unsupported.items() if v is not None)
    if given or as_text or clear_devices:
        raise NotImplementedError(f"export_meta_graph: {given or ['as_text/clear_devices']} "
                                  "are not supported")
    save(os.fspath(filename), graph=graph or get_default_graph())
    return filename


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """Add the graph of a `.meta` file (or any graphflow graph file) to the default graph, under
    `import_scope` if given, and return a `Saver` over its variables (None when it has none)
    that restores checkpoints written by the saver of the original graph."""
    if clear_devices:
        raise NotImplementedError("import_meta_graph: clear_devices is not supported")
    imported = import_graph(os.fspath(meta_graph_or_file), prefix=import_scope or "",
                            graph=get_default_graph())
    if not imported.variables:
        return None
    strip = len(imported.prefix) + 1 if imported.prefix else 0
    return Saver({v.op.name[strip:]: v for v in imported.variables})


__all__ = ["export_meta_graph", "import_meta_graph"]
