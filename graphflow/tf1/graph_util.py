"""`tf.graph_util`: cutting a graph down to what some outputs need, and freezing variables into
constants — what TF1 programs do before shipping an inference model.

These are the graphflow forms, on a `Graph` (or a Session whose graph is used): the result is a
new `Graph`, and the original is left untouched. `tf.graph_util` also takes TensorFlow GraphDefs
(`sess.graph_def`), as TF1 does: `graphflow/interop/tensorflow/graph_util.py` handles those and
hands Graphs to these functions. The copy goes through graphflow's own file document (encode, then decode with
every op rebuilt and re-validated by its OpDef), so op names, attrs, devices and collections carry
over. Save the result with `graphflow.save(path, outputs=..., graph=frozen)`.
"""

import logging

import numpy as np

from graphflow.fileformat import file_io
from graphflow.fileformat import graph_format as fmt
from graphflow.fileformat.graph_decoder import decode_graph
from graphflow.fileformat.graph_encoder import encode_graph
from graphflow.fileformat.signature_graph import subgraph_ops, with_initializers
from graphflow.framework.graph import Graph
from graphflow.ops import registry

logger = logging.getLogger("graphflow")


def _as_graph(graph_or_session, what):
    graph = getattr(graph_or_session, "graph", graph_or_session)
    if not isinstance(graph, Graph):
        raise TypeError(f"{what}: expected a graphflow Graph or a TensorFlow GraphDef (pass "
                        f"tf.get_default_graph() or sess.graph), got {graph_or_session!r}")
    return graph


def _dest_ops(graph, names, what):
    if isinstance(names, str):
        raise TypeError(f"{what}: node names must be a list of op names, got the string {names!r}")
    ops = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{what}: node names must be strings, got {name!r}")
        if ":" in name:
            raise ValueError(f"{what}: '{name}' is a tensor name; pass the op name "
                             f"'{name.rpartition(':')[0]}'")
        try:
            ops.append(graph.get_operation_by_name(name))
        except KeyError:
            raise ValueError(f"{what}: '{name}' is not an op of the graph") from None
    return ops


def _rebuild(graph, doc, arrays):
    new = Graph()
    decode_graph(doc, arrays, new, file_io.DEFAULT_LIMITS)
    new.seed = graph.seed
    return new


def extract_sub_graph(graph_def, dest_nodes):
    """`tf.graph_util.extract_sub_graph`: a new Graph with the ops named in `dest_nodes` and
    everything they need (inputs and control inputs, the variables stateful ops name, and their
    initializers), in the original order and under the original names."""
    graph = _as_graph(graph_def, "extract_sub_graph")
    kept = subgraph_ops(graph, _dest_ops(graph, dest_nodes, "extract_sub_graph"))
    doc, arrays = encode_graph(graph, {}, {}, {}, ops=kept)
    return _rebuild(graph, doc, arrays)


def _holds_variable_value(op_type):
    """Ops of this type output a variable's value (the variable, or a read of it)."""
    op_def = registry.find(op_type)
    return op_def is not None and (op_def.variable or op_def.reads_variable)


def _frozen(entry, value, arrays):
    """The document entry of a Const holding `value`, replacing a variable or variable read."""
    const = {"name": entry["name"], "type": "Const",
             "attrs": {"value": fmt.encode_value(value, f"attrs/{entry['name']}/value", arrays)},
             "outputs": [[entry["outputs"][0][0], list(value.shape)]]}
    for key in ("control_inputs", "device", "source"):
        if key in entry:
            const[key] = entry[key]
    return const


def convert_variables_to_constants(sess, input_graph_def, output_node_names,
                                   variable_names_whitelist=None, variable_names_blacklist=None):
    """`tf.graph_util.convert_variables_to_constants`: the subgraph `output_node_names` need, with
    each variable (and each read of it) replaced by a Const holding its value in `sess`, under the
    same name. Returns a new Graph; variables left out by the white/blacklist stay variables.
    An op that would still update a converted variable (an assign or optimizer step among the
    outputs' needs) is an error: freeze the inference outputs only."""
    graph = _as_graph(input_graph_def, "convert_variables_to_constants")
    roots = _dest_ops(graph, output_node_names, "convert_variables_to_constants")
    needed = subgraph_ops(graph, roots, initializers=False)
    chosen = {}
    for op in needed:
        if not registry.lookup(op.type).variable:
            continue
        if variable_names_whitelist is not None and op.name not in variable_names_whitelist:
            continue
        if variable_names_blacklist is not None and op.name in variable_names_blacklist:
            continue
        chosen[op.attrs["shared_name"]] = op
    values = sess.variable_values() if chosen else {}
    missing = [op.name for name, op in chosen.items() if name not in values]
    if missing:
        raise ValueError(f"convert_variables_to_constants: variables {missing} are not initialized "
                         "in the session")
    for op in needed:
        op_def = registry.lookup(op.type)
        if op_def.variable or op_def.reads_variable or not op_def.stateful:
            continue
        named = [v for v in op.attrs.values() if isinstance(v, str) and v in chosen]
        if named:
            raise ValueError(f"convert_variables_to_constants: op '{op.name}' ({op.type}) updates "
                             f"variable '{chosen[named[0]].name}', which would become a constant; "
                             "pass only inference outputs")
    remaining = [op for op in needed if registry.lookup(op.type).variable
                 and op.attrs["shared_name"] not in chosen]
    keep = with_initializers(graph, needed, remaining)
    doc, arrays = encode_graph(graph, {}, {}, {}, ops=keep)
    for i, entry in enumerate(doc["ops"]):
        shared = (entry.get("attrs") or {}).get("shared_name")
        if shared in chosen and _holds_variable_value(entry["type"]):
            doc["ops"][i] = _frozen(entry, np.asarray(values[shared]), arrays)
    names = {op.name for op in chosen.values()}
    doc["variables"] = [v for v in doc["variables"] if v["op"] not in names]
    collections = {key: [item for item in items if item.get("variable") not in names]
                   for key, items in doc["collections"].items()}
    doc["collections"] = {key: items for key, items in collections.items() if items}
    logger.info("Froze %d variables.", len(chosen))
    return _rebuild(graph, doc, arrays)


__all__ = ["convert_variables_to_constants", "extract_sub_graph"]
