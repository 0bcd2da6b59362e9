"""Function graphs: the sub-graphs that control-flow ops (`If`, `While`) hold as attrs.

A `FuncGraph` is a `Graph` built by calling a Python function (a branch of `tf.cond`, the body of
`tf.while_loop`) on placeholders. It has `inputs` (its own placeholders, in argument order),
`outputs` (the tensors the function returned) and `captures`: when an op built inside uses a tensor
of an enclosing graph, the tensor is *captured*, i.e. replaced by a new placeholder of this graph,
and the pair (outer tensor, placeholder) is recorded so that the control-flow op can pass the outer
value in as an ordinary input. Nested function graphs capture through each level. The user's outer
graph gains only the control-flow op itself; the function graph is never changed once it is built.
"""

import contextlib

from graphflow.framework.graph import Graph, get_default_graph


class FuncGraph(Graph):
    """A graph built from a Python function; `outer_graph` is the graph it was built inside."""

    def __init__(self, name, outer_graph):
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        self.inputs = []        # placeholders for the function's arguments
        self.outputs = []       # what the function returned (flattened)
        self.captures = []      # [(outer tensor, placeholder in this graph)]
        self._captured = {}     # outer tensor -> placeholder
        self.seed = outer_graph.seed if outer_graph is not None else None
        self.error = None       # set on a gradient graph that could not be built: why

    # --- capture -------------------------------------------------------------------------------
    def is_nested_in(self, graph):
        """True if `graph` is this graph or encloses it."""
        g = self
        while g is not None:
            if g is graph:
                return True
            g = getattr(g, "outer_graph", None)
        return False

    def capture(self, tensor):
        """The placeholder of this graph standing for `tensor` of an enclosing graph."""
        if tensor.graph is self:
            return tensor
        found = self._captured.get(tensor)
        if found is not None:
            return found
        if not self.is_nested_in(tensor.graph):
            raise ValueError(f"Tensor {tensor.name} used inside '{self.name}' is from a graph that "
                             "does not enclose it")
        outer_value = tensor
        if tensor.graph is not self.outer_graph:
            outer_value = self.outer_graph.capture(tensor)  # capture through every level
        placeholder = self.add_placeholder(tensor.dtype, tensor.shape, "capture")
        self.captures.append((outer_value, placeholder))
        self._captured[tensor] = placeholder
        return placeholder

    def add_placeholder(self, dtype, shape, name):
        attrs = {"dtype": dtype.name, "shape": shape.dims}
        with self.control_dependencies(None):
            op = super().add_op("Placeholder", [], attrs, [(dtype, shape)],
                                name=self.unique_name(name), use_scopes=False)
        return op.outputs[0]

    def add_op(self, op_type, inputs, attrs, output_specs, name=None, control_inputs=(),
               source=None, device=None, use_scopes=True):
        inputs = [t if t.op.graph is self else self.capture(t) for t in inputs]
        return super().add_op(op_type, inputs, attrs, output_specs, name=name,
                              control_inputs=control_inputs, source=source, device=device,
                              use_scopes=use_scopes)

    @property
    def captured_inputs(self):
        """The outer tensors captured, in the order of their placeholders."""
        return [outer for outer, _ in self.captures]

    @property
    def all_inputs(self):
        """Argument placeholders, then capture placeholders: the order the op's kernel feeds."""
        return list(self.inputs) + [ph for _, ph in self.captures]

    def __repr__(self):
        return f"<graphflow.FuncGraph '{self.name}' ops={self.num_ops()}>"


def outermost_graph(graph):
    """The user's graph a (possibly nested) function graph is built in."""
    while isinstance(graph, FuncGraph):
        graph = graph.outer_graph
    return graph


def graph_for_inputs(inputs):
    """Which graph a new op on `inputs` goes into: the default graph when it is a function graph
    built inside the inputs' graph (the op is then built in the function and captures its inputs),
    otherwise the graph of the first input."""
    default = get_default_graph()
    if not inputs:
        return default
    first = inputs[0].graph
    if isinstance(default, FuncGraph) and default.is_nested_in(first):
        return default
    return first


@contextlib.contextmanager
def init_scope():
    """Build in the outermost (user's) graph: variables created inside a loop body or a branch
    are created once, in the graph their initializers run in (TF1's `init_scope`)."""
    graph = outermost_graph(get_default_graph())
    with graph.as_default(), graph.control_dependencies(None):
        yield graph


__all__ = ["FuncGraph", "outermost_graph", "graph_for_inputs", "init_scope"]
