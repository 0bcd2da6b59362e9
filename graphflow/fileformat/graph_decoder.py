"""Saved document -> Graph: `decode_graph` validates a graph file's JSON document and rebuilds it.

Rebuilding never trusts the file: each op's type must be registered, its attrs must be ones its
OpDef declares, every input must name an existing output, names must be unique, the graph must be
acyclic (checked iteratively, any op order accepted), and every op goes through its OpDef's shape
and dtype inference again — the result must agree with the dtypes and shapes the file declares.
The format is generic over OpDefs: no op type is special-cased except `VariableV2`, whose values
the session restores. Every problem raises `GraphFormatError`.
"""

import heapq
import types
from array import array

from graphflow.fileformat import graph_format as fmt
from graphflow.fileformat.graph_encoder import VARIABLE_TYPE
from graphflow.framework import dtypes
from graphflow.framework.func_graph import FuncGraph
from graphflow.framework.graph import SourceLocation, Tensor, canonical_device
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import registry
from graphflow.ops.attr_types import AttrTypeError, check_attrs
from graphflow.ops.state_ops import Variable

fail = fmt.fail
expect = fmt.expect

_OP_KEYS = {"name", "type", "inputs", "control_inputs", "attrs", "outputs", "device", "source"}
_DOC_KEYS = {"format", "version", "producer", "seed", "signatures", "variables", "collections",
             "ops"}


class DecodedGraph:
    """What `decode_graph` built: the ops (by their name in the file), signatures, variables."""

    def __init__(self, ops, inputs, outputs, variables, variable_values):
        self.ops = ops                           # file op name -> Operation
        self.inputs = inputs                     # signature name -> Tensor
        self.outputs = outputs                   # signature name -> Tensor | Operation
        self.variables = variables               # [Variable]
        self.variable_values = variable_values   # {shared_name in the graph: array}


def check_document(doc, limits):
    """Top-level structure: known keys and types (format and version were checked on parse)."""
    unknown = sorted(set(doc) - _DOC_KEYS)
    if unknown:
        fail(f"graph document has unknown fields {unknown}")
    expect(doc.get("ops"), (list,), "graph document field 'ops'")
    if len(doc["ops"]) > limits.max_ops:
        fail(f"graph has {len(doc['ops'])} ops, more than the limit of {limits.max_ops}")
    expect(doc.get("seed"), (int, type(None)), "graph document field 'seed'")
    expect(doc.get("producer", ""), (str,), "graph document field 'producer'")


def _checked_ops(raw_ops, limits, where):
    """(per-op records, {name: position}, a topological order) of a list of op entries: each
    entry checked, names unique, edges resolved, cycles reported. `where` prefixes errors about a
    function sub-graph."""
    shapes, sources = {}, {}
    ops_meta = [_check_op(entry, i, limits, shapes, sources) for i, entry in enumerate(raw_ops)]
    index = {}
    for i, meta in enumerate(ops_meta):
        if meta["name"] in index:
            fail(f"{where}op name '{meta['name']}' appears twice (ops #{index[meta['name']]} "
                 f"and #{i})")
        index[meta["name"]] = i
    preds = [_resolve_edges(meta, index, ops_meta) for meta in ops_meta]
    return ops_meta, index, _topological_order(preds, ops_meta)


def decode_graph(doc, tensors, graph, limits, prefix="", input_map=None):
    """Validate `doc` and add its ops to `graph` (names prefixed by `prefix` + '/', if any).

    `input_map` maps tensor names of the file ('x:0') to existing Tensors of `graph` that replace
    them. Returns a `DecodedGraph`."""
    check_document(doc, limits)
    ops_meta, index, order = _checked_ops(doc["ops"], limits, "")
    full = (lambda n: f"{prefix}/{n}") if prefix else (lambda n: n)
    input_map = dict(input_map or {})
    _check_input_map(input_map, index, ops_meta, graph)
    for meta in ops_meta:
        try:
            graph.get_operation_by_name(full(meta["name"]))
        except KeyError:
            continue
        raise ValueError(f"Cannot import: the graph already has an op named "
                         f"'{full(meta['name'])}'; choose another prefix")
    shared_names = _variable_shared_names(ops_meta)
    built, shared_attrs = {}, {}
    for i in order:
        built[ops_meta[i]["name"]] = _build_op(ops_meta[i], built, graph, tensors, limits, full,
                                              input_map, shared_names, prefix, shared_attrs)
    variables, values = _decode_variables(doc.get("variables", []), built, tensors, graph,
                                          limits)
    inputs, outputs = _decode_signatures(doc.get("signatures", {}), built, limits)
    _decode_collections(doc.get("collections", {}), built, variables, graph)
    return DecodedGraph(built, inputs, outputs, list(variables.values()), values)


def _check_op(entry, i, limits, shapes, sources):
    """Structure of one op entry (cheap checks first; messages are only built on failure).
    `shapes` caches decoded output shapes, `sources` source locations (by 3-tuple), output specs
    (by (dtype, shape) pair) and canonical devices (by 1-tuple): big graphs repeat a few of each
    many times, and ops that share one share one object (not a copy per op)."""
    if type(entry) is not dict:
        expect(entry, (dict,), f"op #{i}")
    if not entry.keys() <= _OP_KEYS:
        fail(f"op #{i}: unknown fields {sorted(set(entry) - _OP_KEYS)}")
    name = entry.get("name")
    if type(name) is not str:
        expect(name, (str,), f"op #{i} field 'name'")
    if not name or len(name) > 1024 or ":" in name or name[0] == "^" or not name.isprintable():
        fail(f"op #{i}: invalid op name {fmt._short(name)}")
    where = f"op '{name}'"
    op_type = entry.get("type")
    if type(op_type) is not str:
        expect(op_type, (str,), f"{where} field 'type'")
    try:
        op_def = registry.lookup(op_type)
    except KeyError:
        fail(f"{where} has the unknown op type {fmt._short(op_type)}: no OpDef is registered under "
             "that name (the file may need a newer graphflow)")
    op_type = op_def.type  # the registry's string, shared by every op of this type
    inputs = entry.get("inputs", _ABSENT_LIST)
    controls = entry.get("control_inputs", _ABSENT_LIST)
    if type(inputs) is not list or type(controls) is not list:
        expect(inputs, (list,), f"{where} field 'inputs'")
        expect(controls, (list,), f"{where} field 'control_inputs'")
    for x in inputs:
        if type(x) is not str:
            expect(x, (str,), f"{where} input")
    for x in controls:
        if type(x) is not str:
            expect(x, (str,), f"{where} control input")
    attrs = entry.get("attrs", _ABSENT_DICT)
    if type(attrs) is not dict:
        expect(attrs, (dict,), f"{where} field 'attrs'")
    if attrs and not attrs.keys() <= op_def.attr_types.keys():
        undeclared = sorted(set(attrs) - set(op_def.attr_names))
        fail(f"{where}: attr(s) {undeclared} are not attrs of op type '{op_type}' (it declares "
             f"{list(op_def.attr_names)})")
    outputs = entry.get("outputs", _ABSENT_LIST)
    if type(outputs) is not list:
        expect(outputs, (list,), f"{where} field 'outputs'")
    specs = []
    for k, out in enumerate(outputs):
        if type(out) is not list or len(out) != 2:
            fail(f"{where} output {k}: expected [dtype, shape], found {fmt._short(out)}")
        dt = _DTYPES.get(out[0]) if type(out[0]) is str else None
        if dt is None:
            dt = fmt.decode_dtype(out[0], f"{where} output {k} dtype")  # fails with a message
        spec = (dt, _output_shape(out[1], f"{where} output {k} shape", limits, shapes))
        specs.append(sources.setdefault(spec, spec))  # one (dtype, shape) tuple per distinct pair
    specs = tuple(specs) if specs else ()
    device = entry.get("device", "")
    if device:
        if type(device) is not str:
            expect(device, (str,), f"{where} field 'device'")
        shared = sources.get((device,))  # one canonical device string per distinct device
        if shared is None:
            try:
                shared = sources[(device,)] = canonical_device(device)
            except ValueError as exc:
                fail(f"{where}: {exc}")
        device = shared
    source = entry.get("source")
    if source is not None:
        if type(source) is not list or len(source) != 3 or type(source[0]) is not str \
                or type(source[1]) is not int or type(source[2]) is not str:
            fail(f"{where} field 'source': expected [filename, line, function], found "
                 f"{fmt._short(source)}")
        key = (source[0], source[1], source[2])
        shared = sources.get(key)
        if shared is None:
            shared = sources[key] = SourceLocation(*key, text="")  # never opened
        source = shared
    return _OpMeta(name, op_type, op_def, inputs, controls, attrs, specs, device, source)


class _OpMeta:
    """One checked op entry of the file (slots: a loader holds one per op until it is built)."""

    __slots__ = ("name", "type", "op_def", "inputs", "controls", "attrs", "specs", "device",
                 "source", "input_refs", "control_refs")

    def __init__(self, name, op_type, op_def, inputs, controls, attrs, specs, device, source):
        self.name, self.type, self.op_def = name, op_type, op_def
        self.inputs, self.controls, self.attrs, self.specs = inputs, controls, attrs, specs
        self.device, self.source = device, source

    @property
    def where(self):
        return f"op '{self.name}'"

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        setattr(self, key, value)


_ABSENT_LIST, _ABSENT_DICT = [], {}  # absent fields of an op entry: read, never changed
_DTYPES = {d.name: d for d in dtypes.ALL_DTYPES + (dtypes.variant,)}


def _output_shape(value, where, limits, cache):
    shape = fmt.decode_shape(value, where, limits) if value is None or type(value) is not list \
        else None
    if shape is not None:
        return shape
    key = tuple(value) if all(d is None or type(d) is int for d in value) else None
    shape = cache.get(key) if key is not None else None
    if shape is None:
        shape = fmt.decode_shape(value, where, limits)
        cache[key] = shape
    return shape


def _parse_tensor_name(text, where, index, ops_meta):
    op_name, sep, idx = text.rpartition(":")
    if not sep or not idx.isdigit() or len(idx) > 9 or not op_name:
        fail(f"{where}: input {fmt._short(text)} is not a tensor name 'op:index'")
    producer = index.get(op_name)
    if producer is None:
        fail(f"{where}: input '{text}' refers to the op '{op_name}', which is not in the graph")
    if int(idx) >= len(ops_meta[producer]["specs"]):
        fail(f"{where}: input '{text}' refers to output {idx} of '{op_name}', which has "
             f"{len(ops_meta[producer]['specs'])} outputs")
    return producer, int(idx)


def _resolve_edges(meta, index, ops_meta):
    """The positions of the ops `meta` depends on (a tuple, repeats allowed; () when none)."""
    if not meta.inputs and not meta.controls:
        meta.input_refs = meta.control_refs = ()
        return ()
    where = meta.where
    meta.input_refs = tuple(_parse_tensor_name(t, where, index, ops_meta) for t in meta.inputs)
    refs = []
    for c in meta.controls:
        producer = index.get(c)
        if producer is None:
            fail(f"{where}: control input '{c}' is not an op in the graph")
        refs.append(producer)
    meta.control_refs = tuple(refs)
    return tuple(p for p, _ in meta.input_refs) + meta.control_refs


def _topological_order(preds, ops_meta):
    """Kahn's algorithm, smallest file position first (so a well-ordered file keeps its order);
    iterative. A cycle is reported with the names of the ops on it. `preds` may repeat a
    predecessor (an op reading two outputs of another): each edge is counted once each way.
    Successors are kept in flat machine-integer arrays (no list per op)."""
    n = len(preds)
    indegree = array("q", bytes(8 * n))
    start = array("q", bytes(8 * (n + 1)))
    for i, ps in enumerate(preds):
        indegree[i] = len(ps)
        for p in ps:
            start[p + 1] += 1
    for i in range(n):
        start[i + 1] += start[i]
    fill = array("q", start)
    succs = array("q", bytes(8 * start[n]))
    for i, ps in enumerate(preds):
        for p in ps:
            succs[fill[p]] = i
            fill[p] += 1
    del fill
    ready = [i for i in range(n) if indegree[i] == 0]
    heapq.heapify(ready)
    order = array("q")
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for k in range(start[i], start[i + 1]):
            s = succs[k]
            indegree[s] -= 1
            if indegree[s] == 0:
                heapq.heappush(ready, s)
    if len(order) == n:
        return order
    remaining = {i for i in range(n) if indegree[i] > 0}
    preds = [set(ps) for ps in preds]
    cur = min(remaining)
    position = {}
    path = []
    while cur not in position:
        position[cur] = len(path)
        path.append(cur)
        cur = min(p for p in preds[cur] if p in remaining)
    cycle = path[position[cur]:][::-1]
    names = " -> ".join(ops_meta[i]["name"] for i in cycle + cycle[:1])
    fail(f"the graph has a cycle: {names}")


def _check_input_map(input_map, index, ops_meta, graph):
    for name, tensor in input_map.items():
        as_element = getattr(tensor, "_as_graph_element", None)
        tensor = as_element() if as_element is not None else tensor
        if not isinstance(tensor, Tensor) or tensor.graph is not graph:
            raise ValueError(f"input_map['{name}'] must be a Tensor of the graph being imported "
                             f"into, got {tensor!r}")
        op_name, _, idx = name.rpartition(":")
        producer = index.get(op_name)
        if producer is None or not idx.isdigit() or int(idx) >= len(ops_meta[producer]["specs"]):
            raise ValueError(f"input_map key '{name}' is neither an input name of the saved "
                             "graph's signature nor one of its tensors ('op:index')")
        dt, shape = ops_meta[producer]["specs"][int(idx)]
        if tensor.dtype != dt or not shape.is_compatible_with(tensor.shape):
            raise ValueError(f"input_map['{name}']: {tensor.name} ({tensor.dtype.name}, "
                             f"{tensor.shape}) cannot replace a tensor of {dt.name} {shape}")
        input_map[name] = tensor


def _variable_shared_names(ops_meta):
    names = set()
    for meta in ops_meta:
        op_def = registry.find(meta["type"])
        if op_def is not None and op_def.variable and type(meta["attrs"].get("shared_name")) is str:
            names.add(meta["attrs"]["shared_name"])
    return names


def _build_op(meta, built, graph, tensors, limits, full, input_map, shared_names, prefix,
              shared_attrs):
    """Build one checked op in `graph`. Ops whose attrs are equal scalars (bool, int, float, str,
    dtype) share one read-only attrs mapping, from `shared_attrs` (one per load)."""
    where = meta["where"]
    attrs, parents = {}, {}
    if not meta["attrs"]:
        attrs = _NO_ATTRS  # shared by every attr-less op of a loaded graph (read-only)
    for k, v in meta["attrs"].items():
        if type(v) is dict and v.keys() == {"function"}:
            attrs[k], parents[k] = _decode_function(v["function"], f"{where} attr '{k}'", tensors,
                                                    limits, shared_names, prefix)
        else:
            attrs[k] = fmt.decode_value(v, f"{where} attr '{k}'", tensors, limits)
    _link_functions(attrs, parents, graph, where)
    try:
        check_attrs(meta["op_def"].attr_types, attrs)
    except AttrTypeError as exc:
        fail(f"{where} ({meta['type']}): {exc}")
    if prefix:  # imported variables get their own state: names of them are prefixed too
        for k, v in attrs.items():
            if type(v) is str and v in shared_names:
                attrs[k] = f"{prefix}/{v}"
    if attrs and all(type(v) in _SCALAR_ATTR_TYPES for v in attrs.values()):
        key = tuple((k, type(v), v) for k, v in attrs.items())
        shared = shared_attrs.get(key)
        if shared is None:
            shared = shared_attrs[key] = types.MappingProxyType(attrs)
        attrs = shared
    inputs = []
    for text, (_, idx) in zip(meta["inputs"], meta["input_refs"]):
        mapped = input_map.get(text)
        inputs.append(mapped if mapped is not None else built[_name_of(text)].outputs[idx])
    op_def = meta["op_def"]
    try:
        specs = op_def.infer(list(inputs), attrs)
        specs = list(specs)
    except Exception as exc:  # an OpDef rejecting what the file says is a format error
        fail(f"{where} ({meta['type']}) does not validate: {type(exc).__name__}: {exc}")
    declared = meta["specs"]
    if len(specs) != len(declared):
        fail(f"{where} ({meta['type']}) declares {len(declared)} outputs but its OpDef gives "
             f"{len(specs)}")
    merged = []
    for k, ((dt, shape), (ddt, dshape)) in enumerate(zip(specs, declared)):
        if type(shape) is not TensorShape:
            shape = TensorShape(shape)
        if shape.dims == dshape.dims and dt == ddt:
            merged.append(declared[k])
            continue
        if dt != ddt or not shape.is_compatible_with(dshape):
            fail(f"{where} ({meta['type']}) output {k}: the file declares {ddt.name} {dshape} but "
                 f"the op computes {dt.name} {shape}")
        merged.append((dt, shape.merge_with(dshape)))
    controls = [built[name] for name in meta["controls"]]
    op = graph.add_op(meta["type"], inputs, attrs, merged, name=full(meta["name"]),
                      control_inputs=controls, source=meta["source"] or _NO_SOURCE,
                      device=meta["device"], use_scopes=False)
    if meta["source"] is None:
        op.source = None
    return op


_NO_ATTRS = types.MappingProxyType({})
_SCALAR_ATTR_TYPES = frozenset({bool, int, float, str, dtypes.DType})
_NO_SOURCE = SourceLocation("<unknown>", 0, "<unknown>", text="")
_FUNCTION_KEYS = {"name", "parent", "error", "inputs", "outputs", "captures", "ops"}


def _decode_function(entry, where, tensors, limits, shared_names, prefix):
    """A control-flow op's sub-graph: its ops are validated and rebuilt like the graph's own
    (through their OpDefs), in a FuncGraph. Returns (FuncGraph, parent attr name or None)."""
    expect(entry, (dict,), where)
    if set(entry) != _FUNCTION_KEYS:
        fail(f"{where}: a function needs the fields {sorted(_FUNCTION_KEYS)}, found "
             f"{sorted(entry)}")
    name = expect(entry["name"], (str,), f"{where} name")
    parent = expect(entry["parent"], (str, type(None)), f"{where} parent")
    error = expect(entry["error"], (str, type(None)), f"{where} error")
    raw_ops = expect(entry["ops"], (list,), f"{where} ops")
    ops_meta, _, order = _checked_ops(raw_ops, limits, f"{where}: ")
    func = FuncGraph(name, None)
    built, shared_attrs = {}, {}
    for i in order:
        built[ops_meta[i]["name"]] = _build_op(ops_meta[i], built, func, tensors, limits,
                                              lambda n: n, {}, shared_names, prefix, shared_attrs)

    def tensor(text, what, placeholder=False):
        op_name, _, idx = expect(text, (str,), what).rpartition(":")
        op = built.get(op_name)
        if op is None or not idx.isdigit() or int(idx) >= len(op.outputs):
            fail(f"{what}: '{text}' is not a tensor of the function")
        if placeholder and not registry.lookup(op.type).must_feed:
            fail(f"{what}: '{text}' must be a Placeholder of the function")
        return op.outputs[int(idx)]
    func.inputs = [tensor(t, f"{where} input", True) for t in expect(entry["inputs"], (list,),
                                                                       f"{where} inputs")]
    func.outputs = [tensor(t, f"{where} output") for t in expect(entry["outputs"], (list,),
                                                                   f"{where} outputs")]
    captures = []
    for item in expect(entry["captures"], (list,), f"{where} captures"):
        if type(item) is not list or len(item) != 2:
            fail(f"{where}: a capture is [outer tensor name or null, placeholder name]")
        outer = expect(item[0], (str, type(None)), f"{where} capture")
        captures.append((outer, tensor(item[1], f"{where} capture", True)))
    func.captures = captures
    func.error = error
    return func, parent


def _link_functions(attrs, parents, graph, where):
    """Attach decoded functions to the graph they were built in: the op's graph, or (a gradient
    graph) the sibling function named by `parent`, whose tensors its captures name."""
    for key, parent in parents.items():
        func = attrs[key]
        if parent is None:
            func.outer_graph = graph
            func.captures = [(None, ph) for _, ph in func.captures]
            func.seed = graph.seed
            continue
        outer = attrs.get(parent)
        if not isinstance(outer, FuncGraph) or parents.get(parent, "") is not None and \
                parent == key:
            fail(f"{where} attr '{key}': its parent '{parent}' is not a function attr of the op")
        func.outer_graph = outer
        linked = []
        for name, ph in func.captures:
            try:
                linked.append((outer.get_tensor_by_name(name), ph))
            except (KeyError, ValueError, TypeError):
                fail(f"{where} attr '{key}': capture '{name}' is not a tensor of '{parent}'")
        func.captures = linked
        func._captured = {o: ph for o, ph in linked}


def _name_of(tensor_name):
    return tensor_name.rpartition(":")[0]


def _decode_variables(entries, built, tensors, graph, limits):
    expect(entries, (list,), "graph document field 'variables'")
    variables = {}
    values = {}
    for i, entry in enumerate(entries):
        where = f"variable #{i}"
        expect(entry, (dict,), where)
        if set(entry) != {"op", "initializer", "trainable", "value"}:
            fail(f"{where}: expected fields op, initializer, trainable, value; found {sorted(entry)}")
        op = built.get(expect(entry["op"], (str,), f"{where} field 'op'"))
        if op is None or not registry.lookup(op.type).variable:
            fail(f"{where}: '{entry['op']}' is not a {VARIABLE_TYPE} op of the graph")
        where = f"variable '{entry['op']}'"
        if op in variables:
            fail(f"{where} is listed twice")
        init_name = expect(entry["initializer"], (str, type(None)), f"{where} initializer")
        init = None
        if init_name is not None:
            init = built.get(init_name)
            if init is None:
                fail(f"{where}: initializer '{init_name}' is not an op of the graph")
        trainable = expect(entry["trainable"], (bool,), f"{where} field 'trainable'")
        variables[op] = Variable.from_ops(op, init, trainable)
        key = expect(entry["value"], (str, type(None)), f"{where} field 'value'")
        if key is not None:
            array = tensors.get(key)
            if array is None:
                fail(f"{where}: its value '{key}' is missing from tensors.npz")
            out = op.outputs[0]
            if array.dtype != out.dtype.as_numpy_dtype or not out.shape.is_compatible_with(
                    array.shape):
                fail(f"{where}: stored value is {array.dtype}{list(array.shape)} but the variable "
                     f"is {out.dtype.name} {out.shape}")
            values[op.attrs["shared_name"]] = array
    return variables, values


def _decode_signatures(signatures, built, limits):
    expect(signatures, (dict,), "graph document field 'signatures'")
    if set(signatures) - {"inputs", "outputs"}:
        fail(f"signatures: unknown fields {sorted(set(signatures) - {'inputs', 'outputs'})}")
    result = []
    for side in ("inputs", "outputs"):
        entries = expect(signatures.get(side, {}), (dict,), f"signatures.{side}")
        mapped = {}
        for name, entry in entries.items():
            where = f"signature {side}['{name}']"
            expect(entry, (dict,), where)
            if side == "outputs" and set(entry) == {"op"}:
                op = built.get(expect(entry["op"], (str,), where))
                if op is None:
                    fail(f"{where}: op '{entry['op']}' is not in the graph")
                mapped[name] = op
                continue
            if set(entry) != {"tensor", "dtype", "shape"}:
                fail(f"{where}: expected fields tensor, dtype, shape; found {sorted(entry)}")
            text = expect(entry["tensor"], (str,), where)
            op_name, _, idx = text.rpartition(":")
            op = built.get(op_name)
            if op is None or not idx.isdigit() or int(idx) >= len(op.outputs):
                fail(f"{where}: '{text}' is not a tensor of the graph")
            tensor = op.outputs[int(idx)]
            declared = fmt.decode_shape(entry["shape"], f"{where} shape", limits)
            if entry["dtype"] != tensor.dtype.name or not declared.is_compatible_with(tensor.shape):
                fail(f"{where}: declared {entry['dtype']} {entry['shape']} but '{text}' is "
                     f"{tensor.dtype.name} {fmt.shape_json(tensor.shape)}")
            mapped[name] = tensor
        result.append(mapped)
    return result


def _decode_collections(collections, built, variables, graph):
    expect(collections, (dict,), "graph document field 'collections'")
    by_op = dict(variables)
    for key, items in collections.items():
        expect(items, (list,), f"collection '{key}'")
        for item in items:
            where = f"collection '{key}' item"
            expect(item, (dict,), where)
            if len(item) != 1:
                fail(f"{where}: expected one of variable/tensor/op/value, found {sorted(item)}")
            ((kind, ref),) = item.items()
            if kind == "value":
                graph.add_to_collection(key, expect(ref, (str, int, bool, float), where))
                continue
            expect(ref, (str,), where)
            if kind == "variable":
                op = built.get(ref)
                value = by_op.get(op)
            elif kind == "op":
                value = built.get(ref)
            elif kind == "tensor":
                op = built.get(_name_of(ref))
                idx = ref.rpartition(":")[2]
                value = (op.outputs[int(idx)] if op is not None and idx.isdigit()
                         and int(idx) < len(op.outputs) else None)
            else:
                fail(f"{where}: unknown kind '{fmt._short(kind)}'")
            if value is None:
                fail(f"{where}: {kind} '{ref}' is not in the graph")
            graph.add_to_collection(key, value)


__all__ = ["decode_graph", "check_document", "DecodedGraph"]
