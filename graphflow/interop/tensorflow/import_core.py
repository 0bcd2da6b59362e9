"""The core of reading a TensorFlow GraphDef: the checks every node list passes before anything
is built (names, inputs that exist, op types graphflow knows, no cycles), the `ImportContext` the
import rules see (attrs read and checked against TensorFlow's signature, with its defaults), and
`build_nodes`, which builds one graphflow op group per node in dependency order through the rule
its record names (`import_rules.py`, `import_functions.py`). Faults are `GraphFormatError`s naming
the node and, when known, the file.
"""

import collections
import re

from graphflow.framework.errors import GraphFormatError
from graphflow.framework.graph import Operation, Tensor
from graphflow.interop.tensorflow import op_table
from graphflow.interop.tensorflow.attr_values import compatible, from_attr_value, kind_of
from graphflow.interop.tensorflow.signatures import signature
from graphflow.interop.tensorflow.tensor_protos import TensorProtoError
from graphflow.ops.registry import OpBuildError

_NODE_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")
_INPUT = re.compile(r"^(\^)?([A-Za-z0-9.][A-Za-z0-9_.\-/>]*)(?::(\d+))?$")
V1_CONTROL_FLOW = frozenset(("Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond",
                             "RefSwitch", "RefMerge", "RefEnter", "RefExit", "RefNextIteration"))

RULES = {}  # import rule name -> rule(ctx, node, inputs, record) -> outputs (import_rules.py ...)


def rule(name):
    """Register an import rule under the name op records give in `import_=`."""
    def register(fn):
        RULES[name] = fn
        return fn
    return register


class ImportContext:
    """What an import rule sees: the graph being built, the node's attrs, names, and the values
    (graphflow tensors) of the TF tensors built so far."""

    def __init__(self, graph, prefix, library, limits, source, depth=0):
        self.graph = graph
        self.prefix = prefix
        self.library = library  # {function name: FunctionDef}
        self.limits = limits
        self.source = source
        self.depth = depth
        self.outputs = {}     # node name -> [graphflow Tensor or None per TF output]
        self.ops = {}         # node name -> graphflow Operation (the node's last op)
        self.variables = {}   # graphflow Tensor of a variable or handle -> its attrs
        self.read = None      # {(node name, output index)} something reads; None: all of them
        self.clear_devices = False  # ignore the nodes' device fields

    def error(self, node, message):
        where = f"{self.source}: " if self.source else ""
        return GraphFormatError(f"{where}node '{node.name}' ({node.op}): {message}")

    def attrs(self, node):
        """The node's attrs as plain values, TensorFlow's defaults filled in, checked against
        the TF signature's declared types."""
        sig = signature(node.op)
        out = {}
        for key, av in node.attr.items():
            if key.startswith("_"):
                continue
            if sig is not None:
                declared = sig.attrs.get(key)
                if declared is None:
                    raise self.error(node, f"attr '{key}' is not an attr of TensorFlow's {node.op}")
                kind = kind_of(av)
                if not compatible(kind, declared.kind):
                    raise self.error(node, f"attr '{key}' holds a {kind or 'empty value'}, "
                                           f"TensorFlow declares {declared.kind}")
            try:
                out[key] = from_attr_value(av, f"attr '{key}'", self.limits)
            except TensorProtoError as exc:
                raise self.error(node, str(exc)) from None
        if sig is not None:
            for key, declared in sig.attrs.items():
                if key not in out:
                    if not declared.has_default:
                        raise self.error(node, f"required attr '{key}' is missing")
                    out[key] = declared.default
                if declared.allowed is not None and declared.kind in ("string", "type") \
                        and out[key] not in declared.allowed:
                    raise self.error(node, f"attr '{key}' = {out[key]!r} is not one of "
                                           f"{declared.allowed}")
        return out

    def output(self, node, src, index, text):
        """Output `index` of the node named `src`, built earlier."""
        outs = self.outputs.get(src)
        if outs is None or index >= len(outs) or outs[index] is None:
            raise self.error(node, f"input {text!r} is not a tensor graphflow has "
                                   f"({'no such output' if outs is not None else 'no value'})")
        return outs[index]

    def op_name(self, node):
        """The exact graphflow name of the op standing for `node` (the trailing '/' tells
        make_op not to add a suffix)."""
        return f"{self.prefix}{node.name}/"


def parse_input(text):
    """(node name, output index, is_control) of a NodeDef input string."""
    m = _INPUT.match(text)
    if m is None:
        return None
    return m.group(2), int(m.group(3) or 0), bool(m.group(1))


def check_nodes(nodes, limits, source):
    """Names valid and unique, inputs well formed and pointing at nodes; returns {name: node}."""
    where = f"{source}: " if source else ""
    if len(nodes) > limits.max_nodes:
        raise GraphFormatError(f"{where}{len(nodes)} nodes exceed the limit of {limits.max_nodes}")
    by_name = {}
    for node in nodes:
        if not _NODE_NAME.match(node.name):
            raise GraphFormatError(f"{where}node name {node.name!r} is not a valid TensorFlow name")
        if node.name in by_name:
            raise GraphFormatError(f"{where}duplicate node name '{node.name}'")
        if len(node.input) > limits.max_list_length:
            raise GraphFormatError(f"{where}node '{node.name}' has {len(node.input)} inputs")
        by_name[node.name] = node
    for node in nodes:
        seen_control = False
        for text in node.input:
            parsed = parse_input(text)
            if parsed is None:
                raise GraphFormatError(f"{where}node '{node.name}': malformed input {text!r}")
            src, _, control = parsed
            if control:
                seen_control = True
            elif seen_control:
                raise GraphFormatError(f"{where}node '{node.name}': data input {text!r} follows a "
                                       "control input")
            if src not in by_name:
                raise GraphFormatError(f"{where}node '{node.name}' reads {text!r}: no node "
                                       f"'{src}' in the graph")
    return by_name


def check_supported(nodes, library, source):
    """One error listing every node whose op type graphflow cannot import."""
    bad = []
    for node in nodes:
        if node.op in library:
            bad.append((node.op, node.name, "a call of a graph function (use PartitionedCall)"))
        elif op_table.for_import(node.op) is None and node.op not in V1_CONTROL_FLOW:
            bad.append((node.op, node.name, "graphflow has no such op"))
    if bad:
        where = f"{source}: " if source else ""
        lines = "\n".join(f"  {t} '{n}': {why}" for t, n, why in bad[:50])
        more = f"\n  ... and {len(bad) - 50} more" if len(bad) > 50 else ""
        types = sorted({t for t, _, _ in bad})
        raise GraphFormatError(f"{where}{len(bad)} node(s) of op types graphflow cannot import "
                               f"({', '.join(types)}):\n{lines}{more}")


def topological_order(nodes, by_name, source, back_edges=()):
    """Nodes in an order where each follows its inputs; a cycle is a GraphFormatError.
    `back_edges`: (node, input source) pairs to ignore (loop back edges)."""
    skip = set(back_edges)
    indegree = {}
    readers = collections.defaultdict(list)
    for node in nodes:
        sources = {parse_input(t)[0] for t in node.input}
        sources = {s for s in sources if (node.name, s) not in skip}
        indegree[node.name] = len(sources)
        for s in sources:
            readers[s].append(node.name)
    ready = collections.deque(n.name for n in nodes if indegree[n.name] == 0)
    order = []
    while ready:
        name = ready.popleft()
        order.append(by_name[name])
        for reader in readers[name]:
            indegree[reader] -= 1
            if indegree[reader] == 0:
                ready.append(reader)
    if len(order) != len(nodes):
        stuck = [n.name for n in nodes if indegree[n.name] > 0][:10]
        where = f"{source}: " if source else ""
        raise GraphFormatError(f"{where}the graph has a cycle through nodes {stuck}")
    return order


def graph_input(ctx, node, text, input_map):
    """The graphflow value of a GraphDef input string: ("control", Operation) or ("data", Tensor)."""
    src, index, control = parse_input(text)
    if control:
        mapped = input_map.get("^" + src)
        return "control", mapped if mapped is not None else ctx.ops.get(src)
    mapped = input_map.get(f"{src}:{index}")
    if mapped is None and index == 0:
        mapped = input_map.get(src)
    if mapped is not None:
        return "data", mapped
    return "data", ctx.output(node, src, index, text)


def build_nodes(ctx, order, input_map=None, resolve=None):
    """Build graphflow ops for `order` (NodeDefs in dependency order) in ctx.graph; `resolve`
    reads an input string (`graph_input` for a GraphDef, a function body's reader for those)."""
    input_map = input_map or {}
    resolve = resolve or (lambda c, n, t: graph_input(c, n, t, input_map))
    for node in order:
        inputs, controls = [], []
        for text in node.input:
            kind, value = resolve(ctx, node, text)
            if kind == "control":
                if value is not None:
                    controls.append(value)
            else:
                inputs.append(value)
        record = op_table.for_import(node.op)
        build = RULES[record.import_ or "generic"]
        try:
            with ctx.graph.control_dependencies(controls) if controls else nothing():
                with ctx.graph.device(node.device) if node.device and not ctx.clear_devices \
                        else nothing():
                    result = build(ctx, node, inputs, record)
        except GraphFormatError:
            raise
        except (OpBuildError, ValueError, TypeError, KeyError, IndexError, TensorProtoError) as exc:
            raise ctx.error(node, str(exc)) from exc
        outs = list(result) if not isinstance(result, Operation) else []
        ctx.outputs[node.name] = outs
        first = next((t for t in outs if isinstance(t, Tensor)), None)
        ctx.ops[node.name] = result if isinstance(result, Operation) else (
            first.op if first is not None else None)


class nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
