"""`tf.graph_util` on TensorFlow GraphDefs, as TF1 programs call it: `sess.graph_def` in, a
GraphDef out (`convert_variables_to_constants`, `extract_sub_graph`, `remove_training_nodes`).

Given a graphflow `Graph` (or a Session) instead, the first two keep their graphflow form
(`graphflow/tf1/graph_util.py`: a new Graph, copied through graphflow's own file document).
"""

import collections

import numpy as np

from graphflow.fileformat import tf_protos as pb
from graphflow.framework.graph import Graph
from graphflow.interop.tensorflow import tensor_protos
from graphflow.interop.tensorflow.import_core import parse_input
from graphflow.tf1 import graph_util as graph_forms


def _is_graph_def(value):
    return isinstance(value, pb.GraphDef) or (
        hasattr(value, "node") and hasattr(value, "SerializeToString")
        and not isinstance(value, Graph))


def _as_graph_def(value):
    if isinstance(value, pb.GraphDef):
        return value
    return pb.GraphDef.FromString(value.SerializeToString())


def _node_names(dest_nodes, what):
    if isinstance(dest_nodes, str) or not isinstance(dest_nodes, (list, tuple, set)):
        raise TypeError(f"{what}: dest_nodes must be a list of node names, got {dest_nodes!r}")
    names = []
    for name in dest_nodes:
        if not isinstance(name, str):
            raise TypeError(f"{what}: node names must be strings, got {name!r}")
        if ":" in name:
            raise ValueError(f"{what}: '{name}' is a tensor name; pass the op name "
                             f"'{name.rpartition(':')[0]}'")
        names.append(name)
    return names


def _needed(graph_def, names, what):
    by_name = {n.name: n for n in graph_def.node}
    for name in names:
        if name not in by_name:
            raise ValueError(f"{what}: '{name}' is not in graph")
    keep, stack = set(), list(names)
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        for text in by_name[name].input:
            parsed = parse_input(text)
            if parsed is not None and parsed[0] in by_name and parsed[0] not in keep:
                stack.append(parsed[0])
    return keep


def extract_sub_graph(graph_def, dest_nodes):
    """`tf.graph_util.extract_sub_graph`: the nodes `dest_nodes` need (inputs and control
    inputs), in the original order; a GraphDef for a GraphDef, a Graph for a Graph."""
    if not _is_graph_def(graph_def):
        return graph_forms.extract_sub_graph(graph_def, dest_nodes)
    graph_def = _as_graph_def(graph_def)
    keep = _needed(graph_def, _node_names(dest_nodes, "extract_sub_graph"), "extract_sub_graph")
    out = pb.GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    out.node.extend(n for n in graph_def.node if n.name in keep)
    return out


_VARIABLE_OPS = ("VariableV2", "Variable", "VarHandleOp")


def convert_variables_to_constants(sess, input_graph_def, output_node_names,
                                   variable_names_whitelist=None, variable_names_blacklist=None):
    """`tf.graph_util.convert_variables_to_constants`: the subgraph the outputs need, each
    variable replaced by a Const holding its value in `sess` (resource reads become Identity of
    it), under the same names. Takes and returns a GraphDef (or, given a Graph, a Graph)."""
    if not _is_graph_def(input_graph_def):
        return graph_forms.convert_variables_to_constants(
            sess, input_graph_def, output_node_names, variable_names_whitelist,
            variable_names_blacklist)
    graph_def = extract_sub_graph(input_graph_def, output_node_names)
    values = sess.variable_values()
    graph = sess.graph
    chosen = {}
    for node in graph_def.node:
        if node.op not in _VARIABLE_OPS:
            continue
        if variable_names_whitelist is not None and node.name not in variable_names_whitelist:
            continue
        if variable_names_blacklist is not None and node.name in variable_names_blacklist:
            continue
        try:
            op = graph.get_operation_by_name(node.name)
        except KeyError:
            raise ValueError(f"convert_variables_to_constants: variable '{node.name}' is not an "
                             "op of the session's graph") from None
        shared = op.attrs.get("shared_name", node.name)
        if shared not in values:
            raise ValueError(f"convert_variables_to_constants: variable '{node.name}' is not "
                             "initialized in the session")
        chosen[node.name] = np.asarray(values[shared])
    out = pb.GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    for node in graph_def.node:
        if node.name in chosen:
            value = chosen[node.name]
            const = out.node.add(name=node.name, op="Const", device=node.device)
            proto = tensor_protos.from_array(value)
            const.attr["value"].tensor.CopyFrom(proto)
            const.attr["dtype"].type = proto.dtype
            continue
        new = out.node.add()
        new.CopyFrom(node)
        sources = [parse_input(t) for t in node.input]
        if node.op == "ReadVariableOp" and sources and sources[0][0] in chosen:
            new.op = "Identity"
            dtype = new.attr["dtype"].type
            del new.attr["dtype"]
            new.attr["T"].type = dtype
        elif node.op in ("Assign", "AssignVariableOp", "AssignAdd", "AssignSub") and sources \
                and sources[0][0] in chosen:
            raise ValueError(f"convert_variables_to_constants: node '{node.name}' ({node.op}) "
                             f"updates variable '{sources[0][0]}', which would become a constant")
    return out


def remove_training_nodes(input_graph, protected_nodes=None):
    """`tf.graph_util.remove_training_nodes`: the GraphDef without CheckNumerics and Identity
    nodes (not in `protected_nodes`), each reader wired to what the removed node read."""
    if isinstance(input_graph, Graph):
        input_graph = input_graph.as_graph_def()
    graph_def = _as_graph_def(input_graph)
    protected = set(protected_nodes or ())
    controlled = collections.Counter()
    for node in graph_def.node:
        for text in node.input:
            if text.startswith("^"):
                controlled[text[1:]] += 1
    removed = {}
    for node in graph_def.node:
        if node.op in ("Identity", "CheckNumerics") and node.name not in protected \
                and not controlled[node.name] and len(node.input) == 1 \
                and not node.input[0].startswith("^"):
            removed[node.name] = node.input[0]

    def source(text):
        name, index, control = parse_input(text)
        seen = 0
        while name in removed and index == 0 and seen < len(removed) + 1:
            text = removed[name]
            name, index, _ = parse_input(text)
            seen += 1
        return ("^" if control else "") + (name if index == 0 else f"{name}:{index}")

    out = pb.GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    for node in graph_def.node:
        if node.name in removed:
            continue
        new = out.node.add()
        new.CopyFrom(node)
        del new.input[:]
        new.input.extend(source(t) for t in node.input)
    return out


__all__ = ["convert_variables_to_constants", "extract_sub_graph", "remove_training_nodes"]
