"""Looking at graphs: a text summary, a Theano-style `debugprint` tree, DOT source grouped by name
scope, SVG pictures (through the `graphviz` package and its `dot` program) and a networkx export.

    print(viz.summary(graph))                 # one line per op: name, type, outputs, device, inputs
    print(viz.debugprint(loss))               # the expression tree under `loss`
    viz.render_svg(graph, "model.svg")        # name scopes drawn as nested boxes

Every function takes a Graph, anything with a `.graph` (a `LoadedGraph`), or None for the default
graph, and optionally `fetches` to show only the ops those fetches depend on (and `inputs` to cut
them where values are fed: `viz_select`). The pictures are drawn by `viz_dot`. All walks are
iterative, so 100k-op graphs work. The text of `summary` and `debugprint` is safe to print: control
and bidirectional-control characters of names are escaped (`cli_text.printable`).
"""

import collections

from graphflow.framework.graph import Tensor
from graphflow.ops import registry
from graphflow.tools.cli_text import printable
from graphflow.tools.viz_dot import render_svg, to_dot
from graphflow.tools.viz_select import as_elements as _as_elements
from graphflow.tools.viz_select import outputs_text as _outputs_text
from graphflow.tools.viz_select import select_ops
from graphflow.tools.viz_select import shape_text as _shape_text


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
