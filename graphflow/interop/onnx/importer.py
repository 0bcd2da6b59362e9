"""Import an ONNX model as an ordinary graphflow graph (which can then be differentiated, optimized,
fine-tuned, saved as .gfz and run anywhere graphflow runs).

`import_model(path_or_proto, trainable=False, allow_io=False)` checks the file as untrusted input
(`validate.py`: size, node and element counts, nesting depth, every name defined once and before it is read,
external data only inside the model's own folder, dims that fit memory), lists every unsupported
op at once, then builds one graphflow op group per ONNX node through the builder table
`import_ops.BUILDERS`: each node once (a sub-graph sees its enclosing values through a chain of
scopes, not a copy), so the import takes time linear in the model; a model whose sub-graphs
would be traced more than `BUILD_FACTOR` times over (a Scan-8 per batch element, Loops whose
output types must be learned by tracing their bodies) is refused. Every fault is a
`GraphFormatError` (`OnnxImportError`) naming the file and the node.
Initializers become constants, or variables with `trainable=True`. The built ops pass
through `fileformat/io_policy.py` like a loaded graph's.
The returned `ImportedModel` has the graph, its input placeholders and output tensors by ONNX name,
a session holding the variable values, and `run({name: array}) -> {name: array}` (a list of
arrays for an output that is an ONNX sequence). Ops outside ai.onnx are keyed by domain
(`ai.onnx.preview.training.Gradient`).
"""

import collections
import os

from graphflow.engine.session import Session
from graphflow.fileformat import io_policy
from graphflow.framework.errors import GraphFormatError
from graphflow.framework.graph import Graph
from graphflow.interop.onnx import validate
from graphflow.interop.onnx.support import require_onnx
from graphflow.interop.onnx.validate import OnnxImportError

MAX_FILE_BYTES = 2 << 30
MAX_NODES = validate.MAX_NODES
MAX_ELEMENTS = validate.MAX_ELEMENTS  # elements of one initializer
# nodes built (sub-graphs count once per trace) at most BUILD_FACTOR x the model's nodes + floor
BUILD_FACTOR = 16
BUILD_FLOOR = 10_000
# what a builder raises on a node it cannot build (an attr of the wrong kind, a bad shape, ...)
_BUILD_ERRORS = (ValueError, TypeError, LookupError, ArithmeticError, AttributeError,
                 NotImplementedError)


class ImportContext:
    """What a builder sees: the model's opset, attribute values, and the graph being built."""

    def __init__(self, onnx, opset, graph, where="the ONNX model", budget=None):
        self.onnx = onnx
        self.opset = opset
        self.graph = graph
        self.where = where
        self.values = {}  # ONNX name -> tensor, of the graph being built
        self.budget = budget  # nodes still allowed to be built (None: no bound)

    def attrs(self, node):
        return {a.name: self.onnx.helper.get_attribute_value(a) for a in node.attribute}

    def build_nodes(self, nodes, values):
        """Build graphflow ops for `nodes` in the default graph; `values` maps ONNX names to
        tensors and gains the nodes' outputs."""
        from graphflow.interop.onnx.import_ops import BUILDERS, op_key  # noqa: PLC0415
        if self.budget is not None:
            self.budget -= len(nodes)
            if self.budget < 0:
                raise OnnxImportError(
                    f"{self.where}: building it would trace its sub-graphs more than "
                    f"{BUILD_FACTOR} times over (nested Loops or Scans): refused")
        for node in nodes:
            try:
                args = [values[name] if name else None for name in node.input]
                results = BUILDERS[op_key(node)](self, node, args)
            except OnnxImportError:
                raise
            except _BUILD_ERRORS as exc:
                raise OnnxImportError(f"{self.where}: ONNX node '{node.name or node.output[0]}' "
                                      f"({node.op_type}): {exc}") from exc
            except RecursionError as exc:
                raise OnnxImportError(f"{self.where}: ONNX node '{node.name}' ({node.op_type}) "
                                      "nests too deeply to build") from exc
            for name, result in zip(node.output, results):
                if name:
                    values[name] = result

    def build_subgraph(self, graph_proto, inputs=()):
        """Build an ONNX sub-graph (If branch, Loop body) in the default graph (a function graph
        being traced): its inputs read `inputs`, its free names read the enclosing values
        (captured); returns its output tensors."""
        import graphflow as tf  # noqa: PLC0415
        outer = self.values
        values = collections.ChainMap({}, outer)  # the outer names are read, never copied
        for info, tensor in zip(graph_proto.input, inputs):
            values[info.name] = tensor
        for init in graph_proto.initializer:
            values[init.name] = tf.constant(_to_array(self, init), name=_op_name(init.name))
        self.values = values
        try:
            self.build_nodes(graph_proto.node, values)
        finally:
            self.values = outer
        return [values[info.name] for info in graph_proto.output]


class ImportedModel:
    """An imported ONNX model: `graph`, `inputs`/`outputs` ({ONNX name: Tensor}), `session`."""

    def __init__(self, graph, inputs, outputs, session, variables):
        self.graph, self.inputs, self.outputs = graph, inputs, outputs
        self.session, self.variables = session, variables
        self._plain = None  # (names, tensors) of all outputs when none is a sequence; set by run
        # (graph version, input names, Session.make_callable of all plain outputs fed every input)
        self._callable = None

    def run(self, feeds=None, outputs=None):
        feeds = feeds or {}
        if outputs is None and self._plain and len(feeds) == len(self.inputs) \
                and not self.session._closed:
            # every input fed, all outputs: the session's callable, without Session.run's
            # per-call flattening and plan lookup (the same plan, the same checks and errors)
            fast = self._callable
            if fast is None or fast[0] != self.graph.version:
                names = tuple(self.inputs)
                fast = self._callable = (self.graph.version, names, self.session.make_callable(
                    self._plain[1], [self.inputs[k] for k in names]))
            try:
                values = [feeds[k] for k in fast[1]]
            except KeyError:
                values = None  # an unknown name: the general path below reports it
            if values is not None:
                return dict(zip(self._plain[0], fast[2](*values)))
        try:
            feed_dict = {self.inputs[k]: v for k, v in feeds.items()}
        except KeyError:
            unknown = [k for k in feeds if k not in self.inputs]
            raise KeyError(f"Unknown input(s) {unknown}; the model's inputs are "
                           f"{sorted(self.inputs)}") from None
        if outputs is None:  # all outputs: a list of tensors, Session.run's quickest form
            plain = self._plain
            if plain is None:
                plain = self._plain = self._plain_outputs()
            if plain:
                return dict(zip(plain[0], self.session.run(plain[1], feed_dict)))
        from graphflow.interop.onnx.import_sequence_ops import Sequence  # noqa: PLC0415
        names = list(self.outputs) if outputs is None else list(outputs)
        fetches = {}
        for k in names:  # a sequence output is fetched as the list of its elements
            value = self.outputs[k]
            fetches[k] = list(value.tensors) if isinstance(value, Sequence) else value
        return self.session.run(fetches, feed_dict)

    def _plain_outputs(self):
        from graphflow.interop.onnx.import_sequence_ops import Sequence  # noqa: PLC0415
        values = list(self.outputs.values())
        if any(isinstance(v, Sequence) for v in values):
            return False
        return list(self.outputs), values

    def close(self):
        self.session.close()


def _to_array(ctx, tensor):
    try:
        return ctx.onnx.numpy_helper.to_array(tensor)
    except _BUILD_ERRORS as exc:
        raise OnnxImportError(f"{ctx.where}: tensor '{tensor.name}' cannot be read: {exc}") from exc


def _load_proto(onnx, source):
    """(the ModelProto, the name errors give it)."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            raise OnnxImportError(f"'{path}' is {size} bytes, more than the {MAX_FILE_BYTES} allowed")
        with open(path, "rb") as f:
            model = validate.parse(onnx, f.read(), f"'{path}'")
        try:
            _load_external_data(onnx, model, os.path.dirname(os.path.abspath(path)))
        except OnnxImportError:
            raise
        except (OSError, ValueError, TypeError, KeyError) as exc:
            raise OnnxImportError(f"'{path}': its external data cannot be read: {exc}") from exc
        return model, f"'{path}'"
    if isinstance(source, bytes):
        return validate.parse(onnx, source, "the ONNX model"), "the ONNX model"
    if isinstance(source, onnx.ModelProto):
        return source, "the ONNX model"
    raise TypeError(f"import_model takes a path, bytes or an onnx.ModelProto, got {type(source)}")


def _load_external_data(onnx, model, base_dir):
    """Read external tensor data, refusing any location outside the model's own folder."""
    from onnx import external_data_helper  # noqa: PLC0415
    for tensor in external_data_helper._get_all_tensors(model):
        if not external_data_helper.uses_external_data(tensor):
            continue
        info = {e.key: e.value for e in tensor.external_data}
        location = info.get("location", "")
        full = os.path.realpath(os.path.join(base_dir, location))
        if os.path.isabs(location) or not full.startswith(os.path.realpath(base_dir) + os.sep):
            raise OnnxImportError(f"initializer '{tensor.name}' names external data '{location}' "
                                  "outside the model's folder: refused")
        if not os.path.isfile(full):
            raise OnnxImportError(f"initializer '{tensor.name}': external data '{location}' is not "
                                  "a regular file in the model's folder")
    external_data_helper.load_external_data_for_model(model, base_dir)


def all_nodes(onnx, graph):
    """The nodes of `graph` and of every sub-graph (If branches, Loop bodies) inside it."""
    nodes, stack = [], [graph]
    while stack:
        g = stack.pop()
        for node in g.node:
            nodes.append(node)
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    stack.append(attr.g)
                stack.extend(attr.graphs)
    return nodes


def _placeholder_shape(value_info):
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]


def import_model(source, trainable=False, graph=None, allow_io=False):
    """Build a graphflow graph from an ONNX model (path, bytes or ModelProto). See the module doc.
    The ops built are passed through `io_policy` like any loaded graph's (ONNX has no op that
    reaches outside the process today): refused unless `allow_io=True`."""
    onnx = require_onnx()
    import graphflow as tf  # noqa: PLC0415  (the public op constructors build the graph)
    from graphflow.interop.onnx import (  # noqa: F401, PLC0415
        import_control_flow,  # noqa: F401, PLC0415
        import_index_ops,
        import_nn_ops,
        import_reduce_ops,
        import_resize_ops,
        import_sequence_ops,
        import_shape_ops,
        import_string_ops,
    )
    from graphflow.interop.onnx.import_ops import BUILDERS, op_key  # noqa: PLC0415
    model, where = _load_proto(onnx, source)
    validate.check_model(onnx, model, where)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None:
        raise OnnxImportError(f"{where}: the model imports no ai.onnx opset")
    nodes = all_nodes(onnx, model.graph)
    unsupported = sorted({str(op_key(n)) for n in nodes if op_key(n) not in BUILDERS})
    if unsupported:
        raise OnnxImportError(f"{where}: graphflow cannot import ONNX op(s): "
                              f"{', '.join(unsupported)}")
    graph = graph or Graph()
    first_new = len(graph.get_operations())
    ctx = ImportContext(onnx, opset, graph, where, BUILD_FACTOR * len(nodes) + BUILD_FLOOR)
    try:
        return _build(tf, ctx, model, graph, trainable, allow_io, first_new)
    except GraphFormatError:
        raise
    except _BUILD_ERRORS as exc:
        raise OnnxImportError(f"{where}: {exc}") from exc


def _build(tf, ctx, model, graph, trainable, allow_io, first_new):
    onnx = ctx.onnx
    values, inputs, variables = {}, {}, []
    with graph.as_default():
        initializer_names = set()
        for init in model.graph.initializer:
            array = _to_array(ctx, init)
            initializer_names.add(init.name)
            if trainable and array.dtype.kind == "f":
                var = tf.Variable(array, name=_op_name(init.name))
                variables.append(var)
                values[init.name] = var
            else:
                values[init.name] = tf.constant(array, name=_op_name(init.name))
        for vi in model.graph.input:
            if vi.name in initializer_names:
                continue  # an initializer listed as an input (older exporters): its default value
            if not vi.type.HasField("tensor_type"):
                raise OnnxImportError(
                    f"input '{vi.name}' is not a tensor (an ONNX {vi.type.WhichOneof('value')}): "
                    "graphflow imports a sequence as a list of tensors whose length is known "
                    "when the graph is built")
            elem = vi.type.tensor_type.elem_type
            dtype = onnx.helper.tensor_dtype_to_np_dtype(elem)
            ph = tf.placeholder(dtype, _placeholder_shape(vi), name=_op_name(vi.name))
            inputs[vi.name] = ph
            values[vi.name] = ph
        ctx.values = values
        ctx.build_nodes(model.graph.node, values)
        outputs = {vi.name: values[vi.name] for vi in model.graph.output}
        io_policy.check_ops(graph.get_operations()[first_new:], allow_io, "the ONNX model",
                            "graphflow.interop.onnx.import_model(source, allow_io=True)")
        session = Session(graph=graph)
        if variables:
            session.run(tf.variables_initializer(variables))
    return ImportedModel(graph, inputs, outputs, session, variables)


def _op_name(onnx_name):
    cleaned = "".join(c if c.isalnum() or c in "_-." else "_" for c in onnx_name) or "value"
    return cleaned if cleaned[0].isalpha() else "v_" + cleaned
