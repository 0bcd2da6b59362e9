"""Graph -> saved document: `encode_graph` turns a Graph's ops (type, inputs, control inputs, typed
attrs, declared output dtypes/shapes, device, source line), its named input/output signatures, its
variables (with the session's values) and its collections into the JSON document of a graph file,
plus the arrays that go to the file's `.npz`. Generic over OpDefs: every attr an op holds must be
declared, with its type, in its OpDef's `attrs`, so that a loader can validate it.
"""

import importlib.metadata

from graphflow.fileformat import graph_format as fmt
from graphflow.framework.func_graph import FuncGraph
from graphflow.framework.graph import Operation, Tensor, describe_op, needed_ops
from graphflow.ops import registry
from graphflow.ops.attr_types import AttrTypeError, check_attrs
from graphflow.ops.state_ops import Variable

VARIABLE_TYPE = "VariableV2"


def _producer():
    try:
        return "graphflow " + importlib.metadata.version("graphflow")
    except importlib.metadata.PackageNotFoundError:
        return "graphflow"


def encode_graph(graph, inputs, outputs, variable_values, strip_source=False, ops=None):
    """(document, {npz key: array}) for `graph` with named `inputs`/`outputs` signatures.

    `variable_values` is {shared_name: array} (a session's snapshot); values of variables in the
    graph are stored under 'variables/<shared_name>'. `ops`: the ops to write (a subgraph closed
    under inputs, e.g. `needed_ops(...)`; default all): variables, initializers and collection
    entries outside it are left out."""
    _check_signatures_saveable(inputs, outputs)
    arrays = {}
    kept = None if ops is None else set(ops)
    entries = []
    for op in graph.get_operations():
        if kept is None or op in kept:
            entries.append(_encode_op(op, arrays, strip_source))
    doc = {"format": fmt.FORMAT, "version": fmt.VERSION, "producer": _producer(),
           "seed": graph.seed if type(graph.seed) is int else None,
           "signatures": {"inputs": {k: _signature_entry(v, k, True) for k, v in inputs.items()},
                          "outputs": {k: _signature_entry(v, k, False) for k, v in outputs.items()}},
           "variables": _encode_variables(graph, variable_values, arrays, kept),
           "collections": _encode_collections(graph, kept),
           "ops": entries}
    return doc, arrays


def _check_signatures_saveable(inputs, outputs):
    """Ops flagged `unsaveable` in their OpDef (an iterator over a Python input pipeline) may sit
    in a saved graph, but no saved output may need them: loaded elsewhere they could not run."""
    fed = {_element(e) for e in inputs.values()}
    roots = [_element(e) for e in outputs.values()]
    roots = [e.op if isinstance(e, Tensor) else e for e in roots if isinstance(e, (Tensor, Operation))]
    for op in needed_ops(roots, fed):
        reason = registry.lookup(op.type).unsaveable
        if reason:
            raise ValueError(f"Cannot save a graph whose outputs need {describe_op(op)}: {reason}")


def _element(element):
    as_element = getattr(element, "_as_graph_element", None)
    return as_element() if as_element is not None else element


def _encode_op(op, arrays, strip_source, key_prefix=""):
    op_def = registry.lookup(op.type)
    reason = op_def.cannot_save
    if reason:
        raise ValueError(f"Cannot save the graph: {describe_op(op)} cannot be saved: {reason}")
    entry = {"name": op.name, "type": op.type}
    if op.inputs:
        entry["inputs"] = [t.name for t in op.inputs]
    if op.control_inputs:
        entry["control_inputs"] = [c.name for c in op.control_inputs]
    if op.attrs:
        undeclared = sorted(set(op.attrs) - set(op_def.attr_names))
        if undeclared:
            raise ValueError(f"Cannot save {describe_op(op)}: attr(s) {undeclared} are not "
                             f"declared in the OpDef of '{op.type}' (its attrs=...), so a loader "
                             "could not validate them")
        try:
            check_attrs(op_def.attr_types, op.attrs)
        except AttrTypeError as exc:
            raise TypeError(f"Cannot save attr '{exc.attr}' of {describe_op(op)}: {exc} (its "
                            f"OpDef declares the type), so a loader would refuse it") from None
        attrs = {}
        for key, value in op.attrs.items():
            array_key = f"attrs/{key_prefix}{op.name}/{key}"
            if isinstance(value, FuncGraph):
                attrs[key] = _encode_function(value, op, array_key, arrays, strip_source)
                continue
            try:
                attrs[key] = fmt.encode_value(value, array_key, arrays)
            except TypeError as exc:
                raise TypeError(f"Cannot save attr '{key}' of {describe_op(op)}: {exc}") from None
        entry["attrs"] = attrs
    if op.outputs:
        entry["outputs"] = [[t.dtype.name, fmt.shape_json(t.shape)] for t in op.outputs]
    if op.device:
        entry["device"] = op.device
    if op.source is not None and not strip_source:
        entry["source"] = [str(op.source.filename), int(op.source.lineno), str(op.source.function)]
    return entry


def _encode_function(func, op, key, arrays, strip_source):
    """{"function": {...}}: a control-flow op's sub-graph, its ops encoded like the graph's own.
    `parent` names the sibling attr holding the function graph this one was built inside (a
    gradient graph is built inside the loop body or branch it differentiates); its captures then
    name tensors of that parent. Otherwise (null) the op's inputs carry the captured values."""
    parent = None
    if isinstance(func.outer_graph, FuncGraph):
        parent = next((k for k, v in op.attrs.items() if v is func.outer_graph), None)
    captures = [[outer.name if parent is not None else None, ph.name]
                for outer, ph in func.captures]
    return {"function": {
        "name": func.name, "parent": parent, "error": func.error,
        "inputs": [t.name for t in func.inputs], "outputs": [t.name for t in func.outputs],
        "captures": captures,
        "ops": [_encode_op(inner, arrays, strip_source, key_prefix=f"{key}/")
                for inner in func.get_operations()]}}


def _signature_entry(element, name, is_input):
    if type(name) is not str or not name:
        raise ValueError(f"Signature names must be non-empty strings, got {name!r}")
    as_element = getattr(element, "_as_graph_element", None)
    if as_element is not None:
        element = as_element()
    if isinstance(element, Tensor):
        return {"tensor": element.name, "dtype": element.dtype.name,
                "shape": fmt.shape_json(element.shape)}
    if isinstance(element, Operation) and not is_input:
        return {"op": element.name}
    kind = "a Tensor" if is_input else "a Tensor or an Operation"
    raise TypeError(f"Signature entry '{name}' must be {kind}, got {element!r}")


def python_variables(graph):
    """{VariableV2 op: Variable object} for the Variables held in the graph's collections."""
    found = {}
    for key in graph.get_all_collection_keys():
        for item in graph.get_collection(key):
            if isinstance(item, Variable) and item.graph is graph:
                found.setdefault(item.op, item)
    return found


def _encode_variables(graph, values, arrays, kept):
    objects = python_variables(graph)
    entries = []
    for op in graph.get_operations():
        if not registry.lookup(op.type).variable or (kept is not None and op not in kept):
            continue
        var = objects.get(op)
        init = var.initializer if var is not None else None
        if kept is not None and init not in kept:
            init = None
        entry = {"op": op.name, "initializer": init.name if init is not None else None,
                 "trainable": bool(var.trainable) if var is not None else False, "value": None}
        shared = op.attrs["shared_name"]
        if shared in values:
            key = f"variables/{shared}"
            arrays[key] = values[shared]
            entry["value"] = key
        entries.append(entry)
    return entries


def _encode_collections(graph, kept):
    def inside(op):
        return op.graph is graph and (kept is None or op in kept)

    out = {}
    for key in graph.get_all_collection_keys():
        if type(key) is not str:
            continue
        items = []
        for item in graph.get_collection(key):
            if isinstance(item, Variable):
                if inside(item.op):
                    items.append({"variable": item.op.name})
            elif isinstance(item, Tensor):
                if inside(item.op):
                    items.append({"tensor": item.name})
            elif isinstance(item, Operation):
                if inside(item):
                    items.append({"op": item.name})
            elif type(item) in (str, int, bool) or (type(item) is float and item == item
                                                    and abs(item) != float("inf")):
                items.append({"value": item})
            # other Python objects (optimizer state, callables) are not part of the saved graph
        if items:
            out[key] = items
    return out


__all__ = ["encode_graph", "VARIABLE_TYPE"]
