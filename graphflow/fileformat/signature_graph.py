"""The part of a graph a signature (named inputs and outputs) keeps, and that part as inference
sees it.

`subgraph_ops(graph, roots)` is what `graphflow.save` writes and `tf.graph_util` extracts: the
ops some roots need, with the variables they use and their initializers.

`inference_graph(inputs, outputs)` is the graph that a file saved with that signature, or an
ONNX model exported with it, should hold. A `placeholder_with_default` that the outputs read but
that is not among the inputs can never be fed through the signature: its value is its default.
The typical one is a `training` flag (`tf.layers.dropout(h, rate, training=training)` with
`training = tf.placeholder_with_default(False, [])`), and keeping it would keep the training-only
parts of the model: dropout's random numbers, batch normalization's batch statistics, the train
branch of a `tf.cond`. So each such placeholder whose default is known when the graph is built
becomes a constant holding it, and what it decides is simplified with the optimizer's own rules
(`constant_folding.fold_from`: ops computed from it fold and a `tf.cond` on it keeps the branch
it takes; `arithmetic.pick_selects`: a `tf.where` on it becomes the operand it picks); then only
what the signature needs is kept. The work happens on a copy (encoded and decoded like a saved
file, as `tf.graph_util` copies graphs), never on the user's graph.
"""

import numpy as np

from graphflow.fileformat import file_io
from graphflow.fileformat.graph_decoder import decode_graph
from graphflow.fileformat.graph_encoder import encode_graph, python_variables
from graphflow.framework.graph import Graph, Operation, Tensor, needed_ops
from graphflow.ops import registry, static_value
from graphflow.optimizer_passes import arithmetic, constant_folding
from graphflow.optimizer_passes.rewrite import Editor, move_control_outputs, move_output


def subgraph_ops(graph, roots, initializers=True):
    """The ops `roots` need: their ancestors over data and control edges, plus the variables
    (VariableV2 ops) that kept stateful ops name in a string attr (reads, assigns, scatters and
    optimizer updates with their slots), and with `initializers` their initializers (so that
    `global_variables_initializer` still works on the loaded or imported graph)."""
    kept = needed_ops(roots)
    names = {value for op in kept if registry.lookup(op.type).stateful
             and not registry.lookup(op.type).variable
             for value in op.attrs.values() if isinstance(value, str)}
    variables = [op for op in graph.get_operations()
                 if registry.lookup(op.type).variable and op.attrs.get("shared_name") in names]
    kept = needed_ops(kept + variables) if variables else kept
    if not initializers:
        return kept
    return with_initializers(graph, kept, kept)


def with_initializers(graph, ops, variable_ops):
    """`ops` plus the initializers (and what they need) of the Variables among `variable_ops`."""
    variable_ops = set(variable_ops)
    inits = [var.initializer for op, var in python_variables(graph).items()
             if op in variable_ops and var.initializer is not None]
    return needed_ops(list(ops) + inits) if inits else list(ops)


def signature_ops(graph, inputs, outputs):
    """`subgraph_ops` of a signature's elements ({name: Tensor or Operation} each)."""
    roots = [_op_of(e) for e in list(inputs.values()) + list(outputs.values())]
    return subgraph_ops(graph, [op for op in roots if op is not None])


def fixed_defaults(inputs, outputs):
    """The `placeholder_with_default` ops that `outputs` compute from (cut at `inputs`) and that
    are not among `inputs`: nothing fed through the signature reaches them, so each always
    gives its default. In graph order."""
    fed = {_element(e) for e in inputs.values()}
    roots = [_op_of(e) for e in outputs.values()]
    return [op for op in needed_ops([op for op in roots if op is not None], fed)
            if _is_defaulted_input(op) and op.outputs[0] not in fed]


class InferenceGraph:
    """What `inference_graph` made: the new `graph`, the signature's `inputs` and `outputs` in it
    (same names, same order), `ops` (what a file of the signature keeps, `subgraph_ops`) and
    `folded` (names of the placeholders fixed to their defaults)."""

    def __init__(self, graph, inputs, outputs, ops, folded):
        self.graph = graph
        self.inputs = inputs
        self.outputs = outputs
        self.ops = ops
        self.folded = folded

    def __repr__(self):
        return (f"<graphflow InferenceGraph ops={len(self.ops)} inputs={sorted(self.inputs)} "
                f"outputs={sorted(self.outputs)} folded={self.folded}>")


def inference_graph(inputs, outputs, graph=None):
    """A copy of what the signature needs, with every placeholder_with_default the outputs read
    and the inputs do not name fixed to its default and folded (see the module docstring).

    inputs, outputs: {name: Tensor} / {name: Tensor or Operation}. Returns an `InferenceGraph`,
    or None when no such placeholder has a default known when the graph is built (then the graph
    is already as inference sees it). The user's graph is not modified. Raises ValueError as
    `graphflow.save` does for a signature that cannot be saved."""
    fixed = {}
    for op in fixed_defaults(inputs, outputs):
        value = static_value.constant_value(op.inputs[0])
        if value is not None and not op.control_inputs:
            fixed[op.name] = np.asarray(value)
    if not fixed:
        return None
    if graph is None:
        graph = _graph_of(list(outputs.values()) + list(inputs.values()))
    doc, arrays = encode_graph(graph, inputs, outputs, {},
                               ops=signature_ops(graph, inputs, outputs))
    copy = Graph()
    decoded = decode_graph(doc, arrays, copy, file_io.DEFAULT_LIMITS)
    copy.seed = graph.seed
    new_inputs = {name: decoded.inputs[name] for name in inputs}
    new_outputs = {name: decoded.outputs[name] for name in outputs}
    preserve = set(new_inputs.values()) | set(new_outputs.values())
    seeds = _constants_for(copy, preserve, fixed)
    known = constant_folding.fold_from(copy, preserve, seeds)
    arithmetic.pick_selects(copy, preserve, known)
    return InferenceGraph(copy, new_inputs, new_outputs,
                          signature_ops(copy, new_inputs, new_outputs), sorted(fixed))


def _constants_for(graph, preserve, fixed):
    """Replace each op named in `fixed` ({name: value}) by a Const of its value under its name;
    returns the Consts' outputs."""
    editor = Editor(graph, preserve)
    seeds = set()
    for name, value in fixed.items():
        op = graph.get_operation_by_name(name)
        out = op.outputs[0]
        value = np.array(value, dtype=out.dtype.as_numpy_dtype)
        value.flags.writeable = False
        const = editor.add_op("Const", [], {"value": value}, [(out.dtype, out.shape)],
                              anchor=op, name=name, source=op.source, device=op.device)
        move_output(out, const)
        out._shape = out.shape.merge_with(value.shape)
        move_control_outputs(op, const)
        seeds.add(out)
    editor.commit()
    return seeds


def _is_defaulted_input(op):
    """A graph input that computes its value when it is not fed (placeholder_with_default)."""
    op_def = registry.lookup(op.type)
    return op_def.graph_input and not op_def.must_feed and len(op.inputs) == 1


def _element(element):
    as_element = getattr(element, "_as_graph_element", None)
    return as_element() if as_element is not None else element


def _op_of(element):
    element = _element(element)
    if isinstance(element, Tensor):
        return element.op
    return element if isinstance(element, Operation) else None


def _graph_of(elements):
    for e in elements:
        e = _element(e)
        if isinstance(e, (Tensor, Operation)):
            return e.graph
    raise ValueError("inference_graph: the signature has no tensors or operations")


__all__ = ["subgraph_ops", "with_initializers", "signature_ops", "fixed_defaults",
           "inference_graph", "InferenceGraph"]
