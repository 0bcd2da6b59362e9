"""Graph pictures: Graphviz DOT source and SVG drawn by Graphviz's `dot` program.

    dot = to_dot(graph)                               # every op; name scopes as nested boxes
    svg = render_svg(fetches=probs, inputs=[x])       # what probs needs when x is fed

One node per op (its short name, its type, its outputs' dtypes and shapes), data edges labelled
with the shapes they carry, dashed control edges; every name scope is a cluster, nested like the
scopes. A `While` or `If` op is drawn as a box holding its node and its functions (a loop's
`cond` and `body`, a conditional's branches) as clusters of their own ops, nested loops inside;
their gradient functions, which only training runs, are left out. Names are quoted as DOT
requires; the walk over the graph is iterative (100k-op graphs work) and nesting of functions
deeper than `MAX_FUNCTION_DEPTH` is drawn as plain boxes.
"""

import collections

from graphflow.framework.graph import Graph
from graphflow.ops import registry
from graphflow.tools import compact_layout
from graphflow.tools.viz_select import outputs_text, select_ops, shape_text

MAX_FUNCTION_DEPTH = 8  # loops in loops drawn open; deeper ones are boxes

_STYLE = {  # op type -> (shape, fill colour) in pictures; other stateful ops are drawn in red
    "Placeholder": ("ellipse", "#cfe2f3"),
    "PlaceholderWithDefault": ("ellipse", "#cfe2f3"),
    "VariableV2": ("box3d", "#ffe599"),
    "Const": ("note", "#eeeeee"),
    "NoOp": ("octagon", "#ffffff"),
}
_STATEFUL_STYLE = ("box", "#f4cccc")
_DEFAULT_STYLE = ("box", "#ffffff")
_FUNCTION_STYLE = "labelloc=t; style=rounded; color=\"#6d9eeb\";"


def _quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _scope_of(name):
    return name.rpartition("/")[0]


def _functions(op):
    """(attr name, FuncGraph) of `op` to draw inside it: its forward functions, in attr order."""
    return [(k, v) for k, v in op.attrs.items()
            if isinstance(v, Graph) and "grad" not in k]


class _Writer:
    """Lines of DOT source for ops of one graph or function, and the ids their nodes have."""

    def __init__(self, show_shapes, edge_shapes, bodies):
        self.show_shapes, self.edge_shapes, self.bodies = show_shapes, edge_shapes, bodies
        self.lines = []
        self.groups = frozenset()  # ops drawn on one straight line where they follow each other

    def node(self, op, node_id, pad, depth):
        functions = _functions(op) if self.bodies and depth < MAX_FUNCTION_DEPTH else []
        if not functions:
            group = op in self.groups
            self.lines.append(pad + _node_line(op, node_id, self.show_shapes, group))
            return
        self.lines.append(f"{pad}subgraph {_quote('cluster_op:' + node_id)} {{")
        short = op.name.rpartition("/")[2]
        title = op.type if short == op.type else f"{op.type} {short}"
        self.lines.append(f"{pad}  label={_quote(title)}; {_FUNCTION_STYLE}")
        self.lines.append(pad + "  " + _node_line(op, node_id, self.show_shapes))
        for attr, function in functions:
            prefix = f"{node_id}::{attr}::"
            self.lines.append(f"{pad}  subgraph {_quote('cluster_fn:' + prefix)} {{")
            self.lines.append(f"{pad}    label={_quote(attr)}; {_FUNCTION_STYLE}")
            inner = function.get_operations()
            for inner_op in inner:
                self.node(inner_op, prefix + inner_op.name, pad + "    ", depth + 1)
            self.lines.append(pad + "  }")
            # the op hands its values to the function's arguments and captured tensors
            fed = [t.op for t in getattr(function, "inputs", ())]
            fed += [p.op for _, p in getattr(function, "captures", ())]
            for arg in dict.fromkeys(fed):
                self.lines.append(f"{pad}  {_quote(node_id)} -> {_quote(prefix + arg.name)} "
                                  "[style=dotted, arrowhead=none];")
            self.edges(inner, set(inner), lambda o, p=prefix: p + o.name, pad + "  ")
        self.lines.append(pad + "}")

    def edges(self, ops, selected, ident, pad="  "):
        for op in ops:
            for t in op.inputs:
                if t.op in selected:
                    label = f" [label={_quote(shape_text(t.shape))}]" if self.edge_shapes else ""
                    self.lines.append(f"{pad}{_quote(ident(t.op))} -> {_quote(ident(op))}{label};")
            for c in op.control_inputs:
                if c in selected:
                    self.lines.append(f"{pad}{_quote(ident(c))} -> {_quote(ident(op))} "
                                      "[style=dashed];")


def to_dot(graph=None, fetches=None, show_shapes=True, rankdir="TB", name="graphflow", *,
           inputs=None, edge_shapes=None, bodies=True, caption=None, compact=False):
    """Graphviz DOT source: one node per op, data edges (labelled with shapes) and dashed control
    edges; every name scope is a cluster, nested like the scopes.

    `fetches`: draw only what they need; `inputs`: cut that at these fed tensors (their ops are
    drawn as inputs). `edge_shapes`: label edges with shapes (default: `show_shapes`); `bodies`:
    draw `While`/`If` functions inside their op; `caption`: a line of text under the picture.
    `compact`: a denser drawing for screens (`compact_layout`): no shapes on edges (each node
    shows its own), an op's operand scope (`Reshape/shape` under `Reshape`) drawn with the op, a
    variable or constant read by one op beside that op, the path through the ops kept straight."""
    ops = select_ops(graph, fetches, inputs)
    selected = set(ops)
    if edge_shapes is None:
        edge_shapes = show_shapes and not compact
    writer = _Writer(show_shapes, edge_shapes, bodies)
    scope_of = compact_layout.scope_function(ops) if compact else _scope_of
    beside = compact_layout.beside(ops, scope_of) if compact else {}
    writer.groups = compact_layout.spine(ops) if compact else frozenset()
    scope_ops = collections.defaultdict(list)
    scope_children = collections.defaultdict(set)
    for op in ops:
        scope = scope_of(op.name)
        scope_ops[scope].append(op)
        while scope:  # register every enclosing scope
            parent = scope_of(scope)
            scope_children[parent].add(scope)
            scope = parent
    extra = ", ranksep=0.25, nodesep=0.25" if compact else ""
    node_extra = ', height=0.3, margin="0.08,0.03"' if compact else ""
    if caption:
        extra += f", label={_quote(caption)}, labelloc=b, labeljust=l"
    lines = writer.lines
    lines += [f"digraph {_quote(name)} {{",
              f"  graph [rankdir={rankdir}, fontname=Helvetica, fontsize=11{extra}];",
              f"  node [fontname=Helvetica, fontsize=10, style=filled{node_extra}];",
              "  edge [fontname=Helvetica, fontsize=8, color=\"#555555\"];"]
    stack = [("enter", "", 1, "")]
    while stack:
        event, scope, depth, parent = stack.pop()
        pad = "  " * depth
        if event == "exit":
            lines.append(pad[:-2] + "}")
            continue
        if scope:
            lines.append(f"{pad[:-2]}subgraph {_quote('cluster_' + scope)} {{")
            label = scope[len(parent) + 1:] if parent else scope  # "kernel/Initializer"
            lines.append(f"{pad}label={_quote(label)}; labelloc=t; "
                         "style=rounded; color=\"#999999\";")
        for op in scope_ops.get(scope, ()):
            writer.node(op, op.name, pad, 0)
            if op in beside:
                lines.append(f"{pad}{{rank=same; {_quote(op.name)}; {_quote(beside[op].name)};}}")
        if scope:
            stack.append(("exit", scope, depth, parent))
        for child in sorted(scope_children.get(scope, ()), reverse=True):
            stack.append(("enter", child, depth + 1, scope))
    writer.edges(ops, selected, lambda o: o.name)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node_line(op, node_id, show_shapes, group=False):
    style = _STYLE.get(op.type)
    if style is None:
        stateful = registry.lookup(op.type).stateful
        style = _STATEFUL_STYLE if stateful else _DEFAULT_STYLE
    short = op.name.rpartition("/")[2]
    label = short if short == op.type else f"{short}\n{op.type}"
    if show_shapes and op.outputs:
        label += "\n" + outputs_text(op)
    tooltip = f"{op.name} ({op.type})" + (f" on {op.device}" if op.device else "")
    return (f"{_quote(node_id)} [label={_quote(label)}, shape={style[0]}, "
            f"fillcolor={_quote(style[1])}, tooltip={_quote(tooltip)}"
            + (", group=spine" if group else "") + "];")


def render_svg(graph=None, path=None, fetches=None, **dot_options):
    """The graph as SVG text (written to `path` too, if given), drawn by Graphviz's `dot`; the
    options are `to_dot`'s."""
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


__all__ = ["to_dot", "render_svg", "MAX_FUNCTION_DEPTH"]
