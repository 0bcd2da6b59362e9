"""The optimizer's input: the part of the user's graph a plan needs, copied into a fresh Graph.

`copy_for_plan(fetches, feeds)` prunes the user's graph to the ancestors of the fetches (data and
control edges, cut at fed tensors) and copies those ops, in order, into a new Graph: same names,
types, attrs, devices and user source lines (so errors in an optimized plan still point at the
user's code). Every fed tensor becomes the output of a `Placeholder` in the copy, so passes see fed
values as opaque inputs, except those whose value the plan is made for (`known`, a session's
scalar bool flags): their stand-in is a `Const` of that value, so passes fold what they decide.
The user's graph is never modified.
"""

import numpy as np

from graphflow.framework.graph import Graph, Tensor, needed_ops
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import registry
from graphflow.optimizer_passes.rewrite import append_op


class PlanGraph:
    """A copy of what a plan needs. `fetches`/`feeds` are the copy's counterparts of the user's
    fetch elements and fed tensors (same order); `origin` maps each copied op and each stand-in
    fed tensor back to the user's; `preserve` is the set passes must keep."""

    def __init__(self, graph, fetches, feeds, origin):
        self.graph = graph
        self.fetches = fetches
        self.feeds = feeds
        self.origin = origin
        self.preserve = {e for e in fetches} | set(feeds)


def copy_for_plan(fetch_elements, feed_tensors, known=None, shapes=None):
    """Prune and copy the user's graph for one (fetches, feeds) signature; returns a PlanGraph.
    `known`: {fed tensor: value} for feeds whose value the plan is made for (one-output graph
    inputs only). `shapes`: {fed tensor: the full shape the plan is made for} (a placeholder
    declared [None, 784] fed [64, 784]): the stand-in has that shape, and every copied op's
    output shapes are inferred again from its inputs' (merged with the declared ones), so that
    passes and kernels see static shapes."""
    known = known or {}
    shapes = shapes or {}
    fed = set(feed_tensors)
    fetch_ops = [e.op if isinstance(e, Tensor) else e for e in fetch_elements
                 if not (isinstance(e, Tensor) and e in fed)]
    ops = needed_ops(fetch_ops, fed)
    source_graph = (fetch_elements[0].graph if fetch_elements else
                    feed_tensors[0].graph if feed_tensors else None)
    copy = Graph()
    copy.seed = getattr(source_graph, "seed", None)
    tmap, omap, origin = {}, {}, {}
    in_copy = set(ops)

    # Stand-ins first (no inputs, so any position is topological): one Placeholder per user op
    # with fed outputs, with all of that op's outputs so tensor names stay the same. A fed output
    # of an op that is itself copied (needed through a control edge) gets a stand-in of its own.
    stand_ins = {}
    for t in dict.fromkeys(feed_tensors):
        if t.op in in_copy:
            if registry.lookup(t.op.type).must_feed:
                continue
            stand_in = _stand_in(copy, t.op, f"{t.op.name}/fed_{t.value_index}", [t])
            tmap[t] = stand_in.outputs[0]
        elif t in known:
            value = np.array(known[t], dtype=t.dtype.as_numpy_dtype)
            value.flags.writeable = False
            stand_in = append_op(copy, "Const", [], {"value": value}, [(t.dtype, t.shape)],
                                 t.op.name, source=t.op.source)
            tmap[t] = stand_in.outputs[0]
        elif t in shapes and len(t.op.outputs) == 1 and t.shape.is_compatible_with(shapes[t]):
            shape = t.shape.merge_with(shapes[t])
            stand_in = append_op(copy, "Placeholder", [], {"dtype": t.dtype.name,
                                                           "shape": shape.dims},
                                 [(t.dtype, shape)], t.op.name, source=t.op.source)
            tmap[t] = stand_in.outputs[0]
        else:
            stand_in = stand_ins.get(t.op)
            if stand_in is None:
                stand_in = stand_ins[t.op] = _stand_in(copy, t.op, t.op.name, t.op.outputs)
            tmap[t] = stand_in.outputs[t.value_index]
        origin[stand_in] = t.op
        origin[tmap[t]] = t
    for op in ops:
        inputs = [tmap[t] for t in op.inputs]
        specs = [(t.dtype, t.shape) for t in op.outputs]
        if shapes and any(n.shape is not t.shape for n, t in zip(inputs, op.inputs)):
            specs = _reinferred(op, inputs, specs)
        new = append_op(copy, op.type, inputs, dict(op.attrs), specs, op.name,
                        [omap[c] for c in op.control_inputs], op.device, op.source)
        omap[op] = new
        origin[new] = op
        for t, nt in zip(op.outputs, new.outputs):
            if t not in tmap:
                tmap[t] = nt
    fetches = [tmap[e] if isinstance(e, Tensor) else omap[e] for e in fetch_elements]
    feeds = [tmap[t] for t in feed_tensors]
    return PlanGraph(copy, fetches, feeds, origin)


def refine_shapes(graph):
    """Infer every op's output shapes again from its inputs' (in schedule order) and merge them
    into the outputs' shapes: after a pass put ops with more specific shapes in the graph (the
    branch of an inlined cond, traced before its inputs' shapes were known), what follows them
    learns those shapes too. Returns the number of outputs whose shape became more specific."""
    refined = 0
    for op in graph.get_operations():
        if not op.inputs or all(t.shape.is_fully_defined() for t in op.outputs):
            continue
        specs = [(t.dtype, t.shape) for t in op.outputs]
        for t, (_, shape) in zip(op.outputs, _reinferred(op, op.inputs, specs)):
            if shape.dims != t.shape.dims:
                t._shape = shape
                refined += 1
    return refined


def _reinferred(op, inputs, specs):
    """`specs` with the shapes `op`'s shape rule gives for `inputs` merged in (the declared ones
    where the rule fails or disagrees: the run reports that)."""
    try:
        inferred = registry.lookup(op.type).infer(inputs, op.attrs)
    except Exception:  # (a rule that needs what only the user's graph had: keep the declared)
        return specs
    if len(inferred) != len(specs):
        return specs
    out = []
    for (dtype, shape), (_, new) in zip(specs, inferred):
        new = TensorShape(new) if not isinstance(new, TensorShape) else new
        out.append((dtype, shape.merge_with(new) if shape.is_compatible_with(new) else shape))
    return out


def _stand_in(copy, op, name, outputs):
    t = outputs[0]
    return append_op(copy, "Placeholder", [], {"dtype": t.dtype.name, "shape": t.shape.dims},
                     [(o.dtype, o.shape) for o in outputs], name, source=op.source)
