"""Looking at graphs: a text summary, a Theano-style `debugprint` tree, DOT source grouped by name
scope, SVG pictures (through the `graphviz` package and its `dot` program) and a networkx export.

    print(viz.summary(graph))                 # one line per op: name, type, outputs, device, inputs
    print(viz.debugprint(loss))               # the expression tree under `loss`
    viz.render_svg(graph, "model.svg")        # name scopes drawn as nested boxes

Every function takes a Graph, anything with a `.graph` (a `LoadedGraph`), or None for the default
graph, and optionally `fetches` to show only the ops those fetches depend on. All walks are
iterative, so 100k-op graphs work. The text of `summary` and `debugprint` is safe to print: control
and bidirectional-control characters of names are escaped (`cli_text.printable`).
"""

import collections

from graphflow.framework.graph import Graph, Operation, Tensor, get_default_graph, needed_ops
from graphflow.ops import registry
from graphflow.tools.cli_text import printable

_STYLE = {  # op type -> (shape, fill colour) in pictures; other stateful ops are drawn in red
    "Placeholder": ("ellipse", "#cfe2f3"),
    "PlaceholderWithDefault": ("ellipse", "#cfe2f3"),
    "VariableV2": ("box3d", "#ffe599"),
    "Const": ("note", "#eeeeee"),
    "NoOp": ("octagon", "#ffffff"),
}
_STATEFUL_STYLE = ("box", "#f4cccc")
_DEFAULT_STYLE = ("box", "#ffffff")


# ------------------------------------------------------------------------------------ selection
def _graph_of(graph):
    if graph is None:
        return get_default_graph()
    if isinstance(graph, Graph):
        return graph
    inner = getattr(graph, "graph", None)
    if isinstance(inner, Graph):
        return inner
    raise TypeError(f"Expected a Graph (or an object with a .graph, like a loaded model), got "
                    f"{graph!r}")


def _as_elements(fetches):
    if fetches is None:
        return None
    if isinstance(fetches, dict):
        fetches = list(fetches.values())
    elif not isinstance(fetches, (list, tuple)):
        fetches = [fetches]
    out = []
    for f in fetches:
        as_element = getattr(f, "_as_graph_element", None)
        f = as_element() if as_element is not None else f
        if not isinstance(f, (Tensor, Operation)):
            raise TypeError(f"fetches must be Tensors or Operations, got {f!r}")
        out.append(f)
    return out


def select_ops(graph=None, fetches=None):
    """The ops to show, in graph order: all of `graph`, or the ancestors of `fetches`."""
    elements = _as_elements(fetches)
    if elements is None:
        return _graph_of(graph).get_operations()
    return needed_ops([e.op if isinstance(e, Tensor) else e for e in elements])


def _shape_text(shape):
    if shape.dims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.dims) + "]"


def _outputs_text(op):
    return ", ".join(f"{t.dtype.name}{_shape_text(t.shape)}" for t in op.outputs) or "-"


def _inputs_text(op):
    parts = [t.name for t in op.inputs] + [f"^{c.name}" for c in op.control_inputs]
    return ", ".join(parts)


# ------------------------------------------------------------------------------------ text
def summary(graph=None, fetches=None, max_ops=None):
    """A table with one row per op (name, type, output dtypes/shapes, device, inputs; '^name' is a
    control input) under a header counting ops, types and variable parameters."""
    ops = select_ops(graph, fetches)
    counts = collections.Counter(op.type for op in ops)
    variables = [op for op in ops if registry.lookup(op.type).variable]
    params = sum(op.outputs[0].shape.num_elements() or 0 for op in variables)
    top = printable(", ".join(f"{t} {n}" for t, n in counts.most_common(8)))
    more = f", {len(counts) - 8} more types" if len(counts) > 8 else ""
    lines = [f"{len(ops)} ops of {len(counts)} types ({top}{more})",
             f"{len(variables)} variables, {params} parameters"]
    shown = ops if max_ops is None else ops[:max_ops]
    rows = [("name", "type", "outputs", "device", "inputs")]
    rows += [tuple(printable(c) for c in (op.name, op.type, _outputs_text(op), op.device or "-",
                                          _inputs_text(op)))
             for op in shown]
    widths = [min(48, max(len(r[i]) for r in rows)) for i in range(4)]
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4])
    if len(shown) < len(ops):
        lines.append(f"... {len(ops) - len(shown)} more ops")
    return "\n".join(lines)


def _ident(n):
    """A, B, ..., Z, BA, BB, ... (Theano's node ids)."""
    letters = ""
    while True:
        n, r = divmod(n, 26)
        letters = chr(65 + r) + letters
        if n == 0:
            return letters


def debugprint(fetches, max_depth=None):
    """Theano-style tree of what `fetches` compute: one line per op with its type, an id, the
    tensor name, dtype, shape and device; inputs are indented below it ('|'). An op already printed
    is shown again by its id only ('...'); control inputs are marked '^'."""
    elements = _as_elements(fetches)
    ids = {}
    lines = []
    stack = [(e, "", False) for e in reversed(elements)]
    while stack:
        element, prefix, control = stack.pop()
        op = element.op if isinstance(element, Tensor) else element
        seen = op in ids
        if not seen:
            ids[op] = _ident(len(ids))
        name = element.name
        detail = ""
        if isinstance(element, Tensor):
            detail = f" {element.dtype.name} {_shape_text(element.shape)}"
        device = f" {op.device}" if op.device else ""
        mark = "^" if control else ""
        lines.append(printable(f"{prefix}{mark}{op.type} [id {ids[op]}] '{name}'{detail}{device}"
                               + (" ..." if seen and (op.inputs or op.control_inputs) else "")))
        depth = prefix.count("|")
        if seen or (max_depth is not None and depth >= max_depth):
            continue
        child_prefix = prefix + " |"
        children = [(t, child_prefix, False) for t in op.inputs]
        children += [(c, child_prefix, True) for c in op.control_inputs]
        stack.extend(reversed(children))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ pictures
def _quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _scope_of(name):
    return name.rpartition("/")[0]


def to_dot(graph=None, fetches=None, show_shapes=True, rankdir="TB", name="graphflow"):
    """Graphviz DOT source: one node per op, data edges (labelled with shapes) and dashed control
    edges; every name scope is a cluster, nested like the scopes."""
    ops = select_ops(graph, fetches)
    selected = set(ops)
    scope_ops = collections.defaultdict(list)
    scope_children = collections.defaultdict(set)
    for op in ops:
        scope = _scope_of(op.name)
        scope_ops[scope].append(op)
        while scope:  # register every enclosing scope
            parent = _scope_of(scope)
            scope_children[parent].add(scope)
            scope = parent
    lines = [f"digraph {_quote(name)} {{",
             f"  graph [rankdir={rankdir}, fontname=Helvetica, fontsize=11];",
             "  node [fontname=Helvetica, fontsize=10, style=filled];",
             "  edge [fontname=Helvetica, fontsize=8, color=\"#555555\"];"]
    stack = [("enter", "", 1)]
    while stack:
        event, scope, depth = stack.pop()
        pad = "  " * depth
        if event == "exit":
            lines.append(pad[:-2] + "}")
            continue
        if scope:
            lines.append(f"{pad[:-2]}subgraph {_quote('cluster_' + scope)} {{")
            lines.append(f"{pad}label={_quote(scope.rpartition('/')[2])}; style=rounded; "
                         "color=\"#999999\";")
        for op in scope_ops.get(scope, ()):
            lines.append(pad + _node_line(op, show_shapes))
        if scope:
            stack.append(("exit", scope, depth))
        for child in sorted(scope_children.get(scope, ()), reverse=True):
            stack.append(("enter", child, depth + 1))
    for op in ops:
        for t in op.inputs:
            if t.op in selected:
                label = f" [label={_quote(_shape_text(t.shape))}]" if show_shapes else ""
                lines.append(f"  {_quote(t.op.name)} -> {_quote(op.name)}{label};")
        for c in op.control_inputs:
            if c in selected:
                lines.append(f"  {_quote(c.name)} -> {_quote(op.name)} [style=dashed];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node_line(op, show_shapes):
    style = _STYLE.get(op.type)
    if style is None:
        stateful = registry.lookup(op.type).stateful
        style = _STATEFUL_STYLE if stateful else _DEFAULT_STYLE
    short = op.name.rpartition("/")[2]
    label = short if short == op.type else f"{short}\n{op.type}"
    if show_shapes and op.outputs:
        label += "\n" + _outputs_text(op)
    tooltip = f"{op.name} ({op.type})" + (f" on {op.device}" if op.device else "")
    return (f"{_quote(op.name)} [label={_quote(label)}, shape={style[0]}, "
            f"fillcolor={_quote(style[1])}, tooltip={_quote(tooltip)}];")


def render_svg(graph=None, path=None, fetches=None, **dot_options):
    """The graph as SVG text (written to `path` too, if given), drawn by Graphviz's `dot`."""
    try:
        import graphviz
    except ImportError:
        raise ImportError("SVG rendering needs the graphviz Python package: "
                          "pip install 'graphflow[viz]'") from None
    source = to_dot(graph, fetches=fetches, **dot_options)
    try:
        svg = graphviz.Source(source).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        raise RuntimeError("SVG rendering needs Graphviz's `dot` program on PATH (e.g. "
                           "`apt-get install graphviz` or `brew install graphviz`)") from None
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(svg)
    return svg


# ------------------------------------------------------------------------------------ networkx
def to_networkx(graph=None, fetches=None):
    """A `networkx.DiGraph` with one node per op (attributes: type, device, outputs as
    [(dtype, dims)], attrs, source) and one edge per connected pair of ops (attributes: `tensors`,
    the (output index, input index) pairs it carries, and `control`)."""
    import networkx as nx
    ops = select_ops(graph, fetches)
    selected = set(ops)
    edges = {}
    for op in ops:
        for i, t in enumerate(op.inputs):
            if t.op in selected:
                edge = edges.get((t.op.name, op.name))
                if edge is None:
                    edge = edges[t.op.name, op.name] = {"tensors": [], "control": False}
                edge["tensors"].append((t.value_index, i))
        for c in op.control_inputs:
            if c in selected:
                edges.setdefault((c.name, op.name), {"tensors": [], "control": False})[
                    "control"] = True
    g = nx.DiGraph()
    g.add_nodes_from((op.name, {"type": op.type, "device": op.device,
                                "outputs": [(t.dtype.name, t.shape.dims) for t in op.outputs],
                                "attrs": {k: _attr_summary(v) for k, v in op.attrs.items()},
                                "source": str(op.source) if op.source is not None else None})
                     for op in ops)
    g.add_edges_from((u, v, data) for (u, v), data in edges.items())
    return g


def _attr_summary(value):
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None and hasattr(value, "tobytes"):
        return f"array {dtype}{list(shape)}"
    return value


__all__ = ["summary", "debugprint", "to_dot", "render_svg", "to_networkx", "select_ops"]
