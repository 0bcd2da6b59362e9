"""Saving a graph to one file and running it later without the code that built it.

    graphflow.save("model.gfz", inputs={"x": x}, outputs={"y": y}, session=sess)
    model = graphflow.load("model.gfz")          # in any process: no model code needed
    model.run({"x": batch})                      # -> {"y": array}, bit-identical to sess.run

A `.gfz` file is a zip holding `graph.json` (the versioned, human-readable graph: ops, attrs,
signatures, variables, collections — see `graphflow.fileformat.graph_format`) and `tensors.npz` (constants too
big to inline and the session's variable values). It is written atomically. Loading executes no
code from the file (JSON and pickle-free `.npy` only), enforces size limits, and rebuilds every op
through its OpDef so shapes and dtypes are re-validated; any bad file raises `GraphFormatError`.
Ops that reach outside the process (files, network, Python: `OpDef.touches`) are refused unless
the caller passes `allow_io=True` (`graphflow.fileformat.io_policy`).
"""

import os
import zipfile
import zlib

from graphflow.engine.session import Session
from graphflow.fileformat import file_io, io_policy
from graphflow.fileformat import graph_format as fmt
from graphflow.fileformat.graph_decoder import decode_graph
from graphflow.fileformat.graph_encoder import encode_graph
from graphflow.fileformat.signature_graph import (  # noqa: F401
    inference_graph,
    signature_ops,
    subgraph_ops,
    with_initializers,
)
from graphflow.framework.errors import GraphFormatError
from graphflow.framework.gc_pause import gc_paused
from graphflow.framework.graph import Graph, Operation, Tensor, get_default_graph

GRAPH_MEMBER = "graph.json"
TENSORS_MEMBER = "tensors.npz"


# ------------------------------------------------------------------------------------ saving
def save(path, inputs=None, outputs=None, session=None, graph=None, strip_source=False,
         variable_values=None, inference=True):
    """Write the graph, its named input/output signatures and variable values to one file.

    inputs: {name: Tensor} fed at run time (a list of Tensors is named by op name).
    outputs: {name: Tensor or Operation} fetched at run time (a list is named by op name). With
        outputs, the file keeps only the ops they need, the inputs and the initializers of the
        variables kept (`subgraph_ops`): e.g. a model saved with outputs={"probabilities": p}
        carries no optimizer slots, labels, loss or train op. Without outputs, the whole graph.
    session: the Session whose variable values are saved (None: variables are saved without
        values and must be initialized after loading).
    graph: the graph to save (default: the outputs' graph, else the default graph).
    strip_source: leave out the source file/line of each op.
    variable_values: {shared_name: array} to store instead of reading them from `session`.
    inference: with outputs, save the graph as inference through this signature sees it. A
        `placeholder_with_default` the outputs read that is not among `inputs` (a `training`
        flag) cannot be fed through the signature, so it always gives its default: when that
        default is known when the graph is built, the file holds a constant instead, and what
        it decides is folded (ops computed from it, `tf.where` on it picks one operand, a
        `tf.cond` on it keeps the branch it takes). So `tf.layers.dropout(h, rate,
        training=training)` with `training = tf.placeholder_with_default(False, [])` is saved
        without its random numbers, and `tf.layers.batch_normalization` with the moving
        statistics only. The user's graph is not changed (a copy is saved; see
        `graphflow.fileformat.signature_graph`). To keep a flag feedable in the file, list it
        in `inputs` (`inputs={"x": x, "training": training}`; unfed, it still gives its
        default); `inference=False` saves the graph as built.
    Returns `path`.
    """
    inputs = _named(inputs, "inputs")
    outputs = _named(outputs, "outputs")
    graph = graph or _graph_of(list(inputs.values()) + list(outputs.values())) or (
        session.graph if session is not None else get_default_graph())
    for name, element in list(inputs.items()) + list(outputs.items()):
        owner = _graph_of([element])
        if owner is not None and owner is not graph:
            raise ValueError(f"Signature entry '{name}' belongs to a different graph than the one "
                             "being saved")
    if session is not None and session.graph is not graph:
        raise ValueError("The session runs a different graph than the one being saved")
    if variable_values is not None:
        values = dict(variable_values)
    else:
        values = session.variable_values() if session is not None else {}
    kept = None
    if outputs:
        inferred = inference_graph(inputs, outputs, graph) if inference else None
        if inferred is not None:
            graph, inputs, outputs, kept = (inferred.graph, inferred.inputs, inferred.outputs,
                                            inferred.ops)
        else:
            kept = signature_ops(graph, inputs, outputs)
    with gc_paused():
        doc, arrays = encode_graph(graph, inputs, outputs, values, strip_source=strip_source,
                                   ops=kept)
        text = fmt.dumps_document(doc).encode("utf-8")
        del doc
    tensors = file_io.npz_bytes(arrays)
    with file_io.atomic_write(path) as f:
        with zipfile.ZipFile(f, "w", allowZip64=True) as zf:
            # uncompressed: the loader's default limits allow a document no larger than its
            # file (beyond 1 MiB), which bounds a load's memory by the file's size
            zf.writestr(file_io.zip_entry(GRAPH_MEMBER), text)
            zf.writestr(file_io.zip_entry(TENSORS_MEMBER), tensors)
    return path


def _named(spec, what):
    if spec is None:
        return {}
    if isinstance(spec, dict):
        return dict(spec)
    if isinstance(spec, (list, tuple)):
        named = {}
        for element in spec:
            as_element = getattr(element, "_as_graph_element", None)
            element = as_element() if as_element is not None else element
            if not isinstance(element, (Tensor, Operation)):
                raise TypeError(f"{what} must be Tensors or Operations, got {element!r}")
            name = element.op.name if isinstance(element, Tensor) else element.name
            if name in named:
                raise ValueError(f"{what}: two entries would both be named '{name}'; pass a dict")
            named[name] = element
        return named
    raise TypeError(f"{what} must be a dict of name -> Tensor (or a list of Tensors), got {spec!r}")


def _graph_of(elements):
    for e in elements:
        graph = getattr(e, "graph", None)
        if isinstance(graph, Graph):
            return graph
    return None


# ------------------------------------------------------------------------------------ reading
def read_file(path, limits=None):
    """(document, {npz key: array}) from a graph file, checked for structure, sizes and version."""
    doc, tensors, _ = _read_file(path, limits)
    return doc, tensors


def _read_file(path, limits=None):
    """(document, tensors, the document's JSON bytes)."""
    limits = limits or file_io.DEFAULT_LIMITS
    what = f"graph file '{os.fspath(path)}'"
    with file_io.Archive(path, what, limits) as archive, gc_paused():
        names = set(archive.members)
        if GRAPH_MEMBER not in names:
            raise GraphFormatError(f"{what} has no {GRAPH_MEMBER}: not a graphflow graph file")
        extra = sorted(names - {GRAPH_MEMBER, TENSORS_MEMBER})
        if extra:
            raise GraphFormatError(f"{what} contains unexpected entries {extra}")
        _check_document_size(archive, limits, what)
        raw = archive.read(GRAPH_MEMBER, limits.max_json_bytes)
        doc = fmt.parse_document(raw, f"{what}: {GRAPH_MEMBER}")
        tensors = {}
        if TENSORS_MEMBER in names:
            data = archive.read(TENSORS_MEMBER, limits.max_tensor_bytes + (1 << 26))
            tensors = file_io.read_npz(data, f"{what}: {TENSORS_MEMBER}", limits)
    return doc, tensors, raw


def _check_document_size(archive, limits, what):
    """A compressed document larger than the limit gets an error saying how to load a trusted
    file (graphflow itself writes the document uncompressed; older files compressed it)."""
    info = archive.members[GRAPH_MEMBER]
    if info.file_size > limits.max_json_bytes and info.compress_type != zipfile.ZIP_STORED:
        raise GraphFormatError(
            f"{what}: entry '{GRAPH_MEMBER}' declares {info.file_size} bytes, more than the limit "
            f"of {limits.max_json_bytes}: its compressed document expands "
            f"{info.file_size / max(info.compress_size, 1):.0f}x, past the file's own size, which "
            f"graphflow refuses by default to bound the memory a load takes (docs/security.md). "
            f"graphflow writes this document uncompressed; to load a file you trust that an "
            f"older version wrote, pass explicit limits: graphflow.load(path, "
            f"limits=graphflow.fileformat.file_io.DEFAULT_LIMITS), then save it again")


def _decode(doc, tensors, graph, limits, prefix="", input_map=None, what="graph file"):
    try:
        with gc_paused():
            return decode_graph(doc, tensors, graph, limits, prefix=prefix, input_map=input_map)
    except GraphFormatError as exc:
        raise GraphFormatError(f"{what}: {exc}") from None
    except RecursionError:
        raise GraphFormatError(f"{what}: structure nested too deeply") from None


class LoadedGraph:
    """A graph read from a file, with a Session holding its restored variable values.

    `run(feeds)` takes and returns dicts keyed by the signature names given to `save`:
    `model.run({"x": array}) -> {"y": array}`. `graph`, `session`, `inputs` and `outputs`
    ({name: Tensor/Operation}), `variables` and `path` are exposed for direct use.
    """

    def __init__(self, path, graph, decoded, session, document, tensors, document_zlib):
        self.path = path
        self.graph = graph
        self.session = session
        self.inputs = decoded.inputs
        self.outputs = decoded.outputs
        self.variables = decoded.variables
        self.format_version = document["version"]
        self.producer = document.get("producer", "")
        # the document's JSON bytes, as read and zlib-compressed (a few percent of the parsed
        # objects' memory), for `import_graph(loaded_graph)`, which parses them again
        self._document_zlib = document_zlib
        self._tensors = tensors
        self._variable_values = decoded.variable_values

    def run(self, feeds=None, outputs=None):
        """Run the graph: `feeds` {input name: value}; `outputs` names to fetch (default all).
        Returns {output name: numpy array} (None for outputs that are operations)."""
        return run_signature(self.session, self.inputs, self.outputs, feeds, outputs, "graph")

    def signature(self):
        """{'inputs': {name: (dtype name, shape)}, 'outputs': {...}} for display."""
        def describe(element):
            if isinstance(element, Tensor):
                return (element.dtype.name, element.shape)
            return ("operation", None)
        return {"inputs": {k: describe(v) for k, v in self.inputs.items()},
                "outputs": {k: describe(v) for k, v in self.outputs.items()}}

    def close(self):
        self.session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"<graphflow.LoadedGraph '{self.path}' ops={self.graph.num_ops()} "
                f"inputs={sorted(self.inputs)} outputs={sorted(self.outputs)}>")


def load(path, limits=None, allow_io=False):
    """Load a graph file into a new Graph with a Session holding its variable values.

    Returns a `LoadedGraph`. Raises `GraphFormatError` for any truncated, corrupted, hostile or
    newer-version file (and the usual OSError when `path` cannot be opened), and
    `io_policy.IOPolicyError` listing the ops that reach outside the process (ReadFile,
    WriteFile, readers, PyFunc, collectives: `OpDef.touches`) unless `allow_io=True`."""
    limits = limits or file_io.default_limits_for(path)
    doc, tensors, raw = _read_file(path, limits)
    packed = zlib.compress(raw, 1)
    del raw
    graph = Graph()
    what = f"graph file '{os.fspath(path)}'"
    decoded = _decode(doc, tensors, graph, limits, what=what)
    io_policy.check_ops(graph.get_operations(), allow_io, what,
                        "graphflow.load(path, allow_io=True)")
    graph.seed = doc.get("seed")
    session = Session(graph=graph)
    if decoded.variable_values:
        session.set_variable_values(decoded.variable_values)
    return LoadedGraph(os.fspath(path), graph, decoded, session, doc, tensors, packed)


class ImportedGraph:
    """The result of `import_graph`: the imported `inputs`/`outputs` ({name: Tensor/Operation} in
    the target graph), its `variables`, the name `prefix` used and `ops` ({file name: Operation})."""

    def __init__(self, prefix, decoded):
        self.prefix = prefix
        self.inputs = decoded.inputs
        self.outputs = decoded.outputs
        self.variables = decoded.variables
        self.ops = decoded.ops

    def __repr__(self):
        return (f"<graphflow.ImportedGraph prefix='{self.prefix}' inputs={sorted(self.inputs)} "
                f"outputs={sorted(self.outputs)}>")


def import_graph(source, prefix="imported", graph=None, input_map=None, session=None,
                 limits=None, allow_io=False):
    """Import a saved graph (a path or a `LoadedGraph`) into `graph` (default: the default graph).

    Op names get `prefix` + '/' (made unique like a name scope; '' imports names unchanged) and so
    do the state names of the imported variables, so a model can be imported twice. `input_map`
    maps input signature names or tensor names of the file ('x:0') to Tensors of `graph` that
    replace them. With `session`, the file's variable values are written into it. The file is
    fully validated before anything is added to `graph`, and ops that reach outside the process
    are refused unless `allow_io=True` (as `load`). Returns an `ImportedGraph`.
    """
    how = "graphflow.import_graph(source, allow_io=True)"
    if limits is None:
        limits = (file_io.DEFAULT_LIMITS if isinstance(source, LoadedGraph)
                  else file_io.default_limits_for(source))
    if isinstance(source, LoadedGraph):
        what = f"graph file '{source.path}'"
        doc = fmt.parse_document(zlib.decompress(source._document_zlib), what)
        tensors = source._tensors
        io_policy.check_ops(source.graph.get_operations(), allow_io, what, how)
    else:
        doc, tensors = read_file(source, limits)
        what = f"graph file '{os.fspath(source)}'"
        scratch = Graph()
        _decode(doc, tensors, scratch, limits, what=what)  # validate fully before touching `graph`
        io_policy.check_ops(scratch.get_operations(), allow_io, what, how)
        del scratch
    graph = graph or get_default_graph()
    if prefix:
        prefix = prefix[:-1] if prefix.endswith("/") else graph.unique_name(prefix)
    mapping = {}
    signature_inputs = doc.get("signatures", {}).get("inputs", {})
    for key, tensor in (input_map or {}).items():
        if key in signature_inputs:
            key = signature_inputs[key]["tensor"]
        mapping[key] = tensor
    decoded = _decode(doc, tensors, graph, limits, prefix=prefix, input_map=mapping, what=what)
    for name, entry in signature_inputs.items():  # a mapped input is the tensor that replaced it
        if entry["tensor"] in mapping:
            decoded.inputs[name] = mapping[entry["tensor"]]
    if session is not None and decoded.variable_values:
        if session.graph is not graph:
            raise ValueError("import_graph: the session runs a different graph than the one "
                             "imported into")
        session.set_variable_values(decoded.variable_values)
    return ImportedGraph(prefix, decoded)


__all__ = ["save", "load", "import_graph", "LoadedGraph", "ImportedGraph", "read_file"]


def run_signature(session, inputs, outputs, feeds=None, names=None, what="graph"):
    """Run a signature in `session`: `feeds` {input name: value}, `names` the outputs to fetch
    (default all); unknown names are a KeyError listing the signature's. Returns {name: array}."""
    feeds = feeds or {}
    unknown = [k for k in feeds if k not in inputs]
    if unknown:
        raise KeyError(f"Unknown input(s) {unknown}; this {what}'s inputs are {sorted(inputs)}")
    names = list(outputs) if names is None else list(names)
    missing = [k for k in names if k not in outputs]
    if missing:
        raise KeyError(f"Unknown output(s) {missing}; this {what}'s outputs are "
                       f"{sorted(outputs)}")
    return session.run({k: outputs[k] for k in names}, {inputs[k]: v for k, v in feeds.items()})
