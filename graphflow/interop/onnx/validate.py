"""Checks of an ONNX model as untrusted input, made before anything is built from it.

`parse(onnx, data, where)` decodes the protobuf (a truncated or corrupt file is a
`GraphFormatError` naming it, not a protobuf traceback). `check_model(onnx, model, where)` walks
the main graph and every sub-graph (If branches, Loop and Scan bodies) once, iteratively, in time
linear in the model's size, and refuses:

- more than `MAX_NODES` nodes in all, or sub-graphs nested deeper than `MAX_DEPTH`;
- a node reading a name that nothing defines before it: an undefined (dangling) input, its own
  output (a self loop), or the output of a later node (a cycle; ONNX requires nodes in
  topological order);
- a name defined twice (two node outputs, inputs or initializers of the same name, or a node
  output that shadows a name of an enclosing graph): ONNX graphs are in single static assignment
  form;
- a graph output that nothing defines;
- a tensor (initializer, Constant value, any tensor attribute) with a negative dim, more than
  `MAX_ELEMENTS` elements, or whose stored data does not match its declared size;
- an input or output whose declared dims are negative or above `MAX_DIM`, or whose element type
  is not one ONNX defines.

Each refusal is an `OnnxImportError` (a `GraphFormatError`) naming the file and the node (or
tensor) at fault.
"""

from graphflow.framework import errors


class OnnxImportError(errors.GraphFormatError):
    """An ONNX model graphflow cannot (or will not) import (a GraphFormatError, a ValueError)."""

MAX_NODES = 1_000_000  # nodes of the model, sub-graphs included
MAX_DEPTH = 24  # sub-graphs inside sub-graphs
MAX_ELEMENTS = 1 << 31  # elements of one stored tensor
MAX_DIM = 1 << 62  # a declared dim of an input or output


def parse(onnx, data, where):
    """The ModelProto in `data` (bytes); GraphFormatError naming `where` if it is not one."""
    from google.protobuf.message import DecodeError  # noqa: PLC0415  (onnx depends on protobuf)
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise OnnxImportError(f"{where}: not an ONNX model (truncated or corrupt: "
                               f"{exc or type(exc).__name__})") from None
    if not model.HasField("graph"):
        raise OnnxImportError(f"{where}: not an ONNX model (it has no graph)")
    return model


def _node_name(node):
    return node.name or (node.output[0] if node.output else node.op_type)


def _fault(where, node, message):
    return OnnxImportError(f"{where}: ONNX node '{_node_name(node)}' ({node.op_type}) {message}")


def check_tensor(onnx, tensor, where, what):
    """Dims, element count and stored size of one TensorProto, before it is converted."""
    count = 1
    for d in tensor.dims:
        if d < 0:
            raise OnnxImportError(f"{where}: {what} '{tensor.name}' has a negative dim {d}")
        count *= d
    if count > MAX_ELEMENTS:
        raise OnnxImportError(f"{where}: {what} '{tensor.name}' declares {count} elements, more "
                               f"than {MAX_ELEMENTS}")
    kind = tensor.data_type
    if kind not in onnx.TensorProto.DataType.values() or kind == onnx.TensorProto.UNDEFINED:
        raise OnnxImportError(f"{where}: {what} '{tensor.name}' has an unknown element type "
                               f"{kind}")
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        return  # checked (inside the model's folder, a regular file) and read by the loader
    if tensor.HasField("raw_data"):
        itemsize = _itemsize(onnx, kind)
        if itemsize and len(tensor.raw_data) != count * itemsize:
            raise OnnxImportError(f"{where}: {what} '{tensor.name}' holds "
                                   f"{len(tensor.raw_data)} bytes for {count} elements of "
                                   f"{itemsize} bytes")


_PACKED = ("INT4", "UINT4", "FLOAT4E2M1", "INT2", "UINT2", "FLOAT6E2M3", "FLOAT6E3M2")


def _itemsize(onnx, kind):
    try:
        dtype = onnx.helper.tensor_dtype_to_np_dtype(kind)
    except (KeyError, ValueError, TypeError):
        return None
    if dtype.kind in "OSU":
        return None
    if kind in (getattr(onnx.TensorProto, n, -1) for n in _PACKED):
        return None  # several to a byte
    return dtype.itemsize


def _check_value_info(onnx, info, where, what):
    tensor_type = info.type.tensor_type if info.type.HasField("tensor_type") else None
    if tensor_type is None:
        return
    kind = tensor_type.elem_type
    if kind and (kind not in onnx.TensorProto.DataType.values()):
        raise OnnxImportError(f"{where}: {what} '{info.name}' has an unknown element type {kind}")
    if tensor_type.HasField("shape"):
        for dim in tensor_type.shape.dim:
            if dim.HasField("dim_value") and not 0 <= dim.dim_value <= MAX_DIM:
                raise OnnxImportError(f"{where}: {what} '{info.name}' declares a dim "
                                       f"{dim.dim_value} (allowed: 0 to {MAX_DIM})")


class _Scope:
    """The names a graph defines, in order (name -> position), and the scope enclosing it with
    the position there up to which its names are visible."""

    __slots__ = ("names", "outer", "limit")

    def __init__(self, outer=None, limit=0):
        self.names, self.outer, self.limit = {}, outer, limit

    def visible(self, name):
        if name in self.names:
            return True
        scope, limit = self.outer, self.limit
        while scope is not None:
            at = scope.names.get(name)
            if at is not None and at < limit:
                return True
            scope, limit = scope.outer, scope.limit
        return False

    def define(self, name, where, node=None, what="name"):
        """Add `name`; a node output may not repeat any visible name (as onnx.checker says), a
        sub-graph's input or initializer only one of its own graph (it may shadow outer ones)."""
        if name in self.names or (node is not None and self.visible(name)):
            message = f"defines '{name}' a second time (ONNX names are assigned once)"
            if node is not None:
                raise _fault(where, node, message)
            raise OnnxImportError(f"{where}: the {what} {message}")
        self.names[name] = len(self.names)


def check_model(onnx, model, where):
    """Refuse what the module doc lists, in one pass over every graph of `model`."""
    for init in model.graph.initializer:  # (a main-graph input may repeat an initializer's name)
        check_tensor(onnx, init, where, "initializer")
    stack = [(model.graph, 0, None, 0)]
    nodes = 0
    while stack:
        graph, depth, outer, limit = stack.pop()
        if depth > MAX_DEPTH:
            raise OnnxImportError(f"{where}: sub-graphs are nested more than {MAX_DEPTH} deep "
                                   f"(graph '{graph.name}')")
        scope = _Scope(outer, limit)
        initializers = {init.name for init in graph.initializer}
        for info in graph.input:
            _check_value_info(onnx, info, where, "input")
            if depth == 0 and info.name in initializers and info.name not in scope.names:
                continue  # defined below, by its initializer (older exporters list both)
            scope.define(info.name, where, what="input")
        for init in graph.initializer:
            if depth:
                check_tensor(onnx, init, where, "initializer")
            scope.define(init.name, where, what="initializer")
        for init in graph.sparse_initializer:
            check_tensor(onnx, init.values, where, "sparse initializer")
            scope.define(init.values.name, where, what="sparse initializer")
        nodes += len(graph.node)
        if nodes > MAX_NODES:
            raise OnnxImportError(f"{where}: the model has more than {MAX_NODES} nodes")
        produced_later = None
        for node in graph.node:
            for name in node.input:
                if name and not scope.visible(name):
                    if produced_later is None:
                        produced_later = {o: n for n in graph.node for o in n.output}
                    raise _fault(where, node, _missing(node, name, produced_later))
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH or attr.HasField("g"):
                    stack.append((attr.g, depth + 1, scope, len(scope.names)))
                for sub in attr.graphs:
                    stack.append((sub, depth + 1, scope, len(scope.names)))
                if attr.HasField("t"):
                    check_tensor(onnx, attr.t, where, f"attribute '{attr.name}' of node "
                                 f"'{_node_name(node)}'")
                for t in attr.tensors:
                    check_tensor(onnx, t, where, f"attribute '{attr.name}' of node "
                                 f"'{_node_name(node)}'")
            for name in node.output:
                if name:
                    scope.define(name, where, node)
        for info in graph.output:
            _check_value_info(onnx, info, where, "output")
            if not scope.visible(info.name):
                raise OnnxImportError(f"{where}: graph '{graph.name}' has an output "
                                       f"'{info.name}' that nothing defines")


def _missing(node, name, producers):
    if name in node.output:
        return f"reads '{name}', its own output (a self loop)"
    later = producers.get(name)
    if later is not None:
        return (f"reads '{name}', which the later node '{_node_name(later)}' defines (a cycle, "
                "or nodes out of topological order)")
    return f"reads '{name}', which no input, initializer or earlier node defines"
