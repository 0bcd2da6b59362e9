"""`tf.train.export_meta_graph` and `tf.train.read_meta_graph_file`: TensorFlow's `.meta` files
(`tf.train.import_meta_graph`, which builds TensorFlow's graphs, is
`graphflow.interop.tensorflow.meta_graph`).

A `.meta` file is TensorFlow's MetaGraphDef (`graphflow.fileformat.tf_meta_graph`): the graph as
a GraphDef with the save/restore subgraph TensorFlow's Saver adds, the saver's names, and the
collections. `Saver.save` writes one next to each checkpoint, so TensorFlow's tutorials work in
both directions:

    saver = tf.train.import_meta_graph("ckpt/model-100.meta")   # written by TensorFlow or graphflow
    saver.restore(sess, "ckpt/model-100")
    train_op = tf.get_collection("train_op")[0]
    sess.run(train_op, {"x:0": batch, "labels:0": labels})

`.meta` files of older graphflow versions (a graphflow graph file without variable values, a zip)
are recognised by their content and still read.
"""

import os
import warnings

from graphflow.fileformat import tf_meta_graph as mg
from graphflow.framework.errors import GraphFormatError
from graphflow.framework.graph import get_default_graph


def _warn(text):
    warnings.warn(f"export_meta_graph: {text}", stacklevel=3)


def _saver_pairs(saver):
    return [(s.key, s.op, s.spec) for s in saver._saveables] if saver is not None else None


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None,
                      collection_list=None, as_text=False, graph=None, export_scope=None,
                      clear_devices=False, clear_extraneous_savers=False,
                      strip_default_attrs=False, save_debug_info=False, saver=None, **kwargs):
    """The MetaGraphDef of `graph` (default: the default graph), also written to `filename`
    when given (binary, or text format with `as_text`). A graph holding an op TensorFlow has no
    counterpart for is written to `filename` as a graphflow graph file (with a warning; None is
    returned), which `import_meta_graph` reads. `saver`: a graphflow Saver whose
    save/restore subgraph and SaverDef are written (TensorFlow's saver_def argument)."""
    unsupported = {"graph_def": graph_def, "export_scope": export_scope}
    given = sorted(k for k, v in unsupported.items() if v is not None)
    if given:
        raise NotImplementedError(f"export_meta_graph: {given} not supported by graphflow")
    if saver_def is not None and saver is None:
        raise NotImplementedError("export_meta_graph: pass saver= (a graphflow Saver); a "
                                  "SaverDef alone names no variables")
    graph = graph or get_default_graph()
    try:
        meta = mg.meta_graph_def(graph, saver=_saver_pairs(saver), collection_list=collection_list,
                                 clear_devices=clear_devices,
                                 max_to_keep=getattr(saver, "_max_to_keep", 5), warn=_warn)
    except ValueError as exc:  # an op TensorFlow has no counterpart for (the exporter says which)
        if filename is None:
            raise
        from graphflow.fileformat.serialization import save
        warnings.warn(f"export_meta_graph: the graph cannot be written as TensorFlow's "
                      f"MetaGraphDef ({exc}); {filename} is a graphflow graph file, which "
                      "tf.train.import_meta_graph reads but TensorFlow does not", stacklevel=2)
        save(os.fspath(filename), graph=graph)
        return None
    if meta_info_def is not None:
        meta.meta_info_def.MergeFrom(meta_info_def)
    if filename is not None:
        write_meta_graph(meta, filename, as_text)
    return meta


def write_meta_graph(meta, filename, as_text=False):
    from graphflow.fileformat import file_io
    with file_io.atomic_write(os.fspath(filename)) as f:
        f.write(mg.serialize(meta, as_text))


def read_meta_graph_file(filename):
    """`tf.train.read_meta_graph_file`: the MetaGraphDef of a `.meta` file."""
    path = os.fspath(filename)
    if mg.is_graphflow_graph_file(path):
        raise GraphFormatError(f"'{path}' is a graphflow graph file (written by an older "
                               "graphflow), not a MetaGraphDef; tf.train.import_meta_graph reads it")
    return mg.read_meta_graph_file(path)


__all__ = ["export_meta_graph", "read_meta_graph_file"]
