"""Which ops a view of a graph shows, and how their outputs are written: shared by the text views
(`viz.summary`, `viz.debugprint`), the networkx export and the pictures (`viz_dot`).

A view shows a whole graph, the ancestors of some fetches, or the ancestors of some fetches cut at
the tensors a caller feeds (`inputs`): what running those fetches from those inputs needs, as
`Session.run` prunes it. Cut that way, a saved model's view is its inference path: the variables'
initializers, an input pipeline behind a fed `placeholder_with_default`, and ops no output needs
are left out; each fed tensor's op is shown as the input it is.
"""

from graphflow.framework.graph import Graph, Operation, Tensor, get_default_graph, needed_ops


def graph_of(graph):
    """The Graph of `graph`: itself, its `.graph` (a loaded model), or the default graph for None."""
    if graph is None:
        return get_default_graph()
    if isinstance(graph, Graph):
        return graph
    inner = getattr(graph, "graph", None)
    if isinstance(inner, Graph):
        return inner
    raise TypeError(f"Expected a Graph (or an object with a .graph, like a loaded model), got "
                    f"{graph!r}")


def as_elements(fetches):
    """`fetches` (one element, a list, tuple or dict of them) as a list of Tensors and Operations,
    or None for None."""
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


def select_ops(graph=None, fetches=None, inputs=None):
    """The ops to show, in graph order: all of `graph`, or the ancestors of `fetches` over data and
    control edges; with `inputs` (tensors, as `fetches`), cut at those tensors, whose ops are shown
    where an op shown reads them (what the fetches need when the inputs are fed)."""
    elements = as_elements(fetches)
    if elements is None:
        return graph_of(graph).get_operations()
    fed = frozenset(t for t in as_elements(inputs) or () if isinstance(t, Tensor))
    ops = needed_ops([e.op if isinstance(e, Tensor) else e for e in elements], fed)
    if not fed:
        return ops
    chosen = set(ops)
    read = {t.op for op in ops for t in op.inputs if t in fed and t.op not in chosen}
    return sorted(chosen | read, key=lambda o: o._id)


def shape_text(shape):
    """`[?,4]`: a static shape, `?` for an unknown dimension, `<unknown>` for an unknown rank."""
    if shape.dims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.dims) + "]"


def outputs_text(op):
    """The dtype and shape of each output of `op` (`float32[?,4], int64[?]`), or `-`."""
    return ", ".join(f"{t.dtype.name}{shape_text(t.shape)}" for t in op.outputs) or "-"


__all__ = ["graph_of", "as_elements", "select_ops", "shape_text", "outputs_text"]
