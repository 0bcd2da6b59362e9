"""TensorFlow `GraphDef` -> ops of a graphflow graph: `tf.import_graph_def`.

`import_graph_def(graph_def, input_map=None, return_elements=None, name=None, op_dict=None,
producer_op_list=None, source=None, limits=DEFAULT_LIMITS)` checks the whole GraphDef as untrusted
input before building anything (node count, names, inputs that exist, attrs of the types
TensorFlow's signature declares, every op type known to graphflow, no cycles), then builds one
ordinary graphflow op group per node in dependency order through `make_op` and the public op
functions, so every op is validated by its OpDef. Ops go under the name scope `name` ("import"
by default, "" for none), as TensorFlow's importer names them. Faults are `GraphFormatError`s
naming the node (and the file, given `source`); all unsupported op types are listed in one error.
Nodes whose graphflow op reaches outside the process (ReadFile, WriteFile, readers, PyFunc, MPI:
`OpDef.touches`), in the graph or its functions, are all listed in one `IOPolicyError` before
anything is built, unless `allow_io=True`: a GraphDef is a program from outside the one running
(usually a file, read by `load_graph_def` or by the caller's own code).

Functional control flow (If/While + FunctionDefLibrary) is read by `import_functions.py`,
TensorFlow 1's dataflow frames (Switch/Merge/Enter/Exit/NextIteration) by
`import_v1_control_flow.py`.
"""

from graphflow.fileformat import io_policy
from graphflow.fileformat import tf_protos as pb
from graphflow.framework.graph import Operation, get_default_graph
from graphflow.interop.tensorflow import (  # noqa: F401 - they register the import rules
    import_gradient_ops,
    import_rules,
    import_sparse_apply,
    import_tensor_arrays,
)
from graphflow.interop.tensorflow.import_core import (
    V1_CONTROL_FLOW,
    ImportContext,
    build_nodes,
    check_nodes,
    check_supported,
    nothing,
    parse_input,
    topological_order,
)
from graphflow.interop.tensorflow.import_functions import (
    check_library,
    graph_reads,
    used_outputs,
)
from graphflow.interop.tensorflow.import_v1_control_flow import lift
from graphflow.interop.tensorflow.op_table import for_import
from graphflow.interop.tensorflow.tensor_protos import DEFAULT_LIMITS


def _resolve_return(graph, prefix, name):
    if ":" in name:
        return graph.get_tensor_by_name(prefix + name)
    return graph.get_operation_by_name(prefix + name)


def _string_attrs(node):
    """A node's string attrs as text: what an `OpDef.touches` rule may read (PrintV2's stream)."""
    return {k: v.s.decode("utf-8", "replace") for k, v in node.attr.items()
            if v.WhichOneof("value") == "s"}


def reaching_nodes(graph_def):
    """[(op type, name, kind)] of the nodes of `graph_def` and of its functions whose graphflow op
    reaches outside the process (`io_policy`); a function's nodes are named 'function/node'."""
    found = []
    groups = [("", graph_def.node)] + [(f"{f.signature.name}/", f.node_def)
                                       for f in graph_def.library.function]
    for prefix, nodes in groups:
        for node in nodes:
            record = for_import(node.op)
            kind = io_policy.kind_of(record.gf, _string_attrs(node)) if record else ""
            if kind:
                found.append((node.op, prefix + node.name, kind))
    return found


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None, op_dict=None,
                     producer_op_list=None, source=None, limits=DEFAULT_LIMITS,
                     clear_devices=False, allow_io=False, how="tf.import_graph_def(graph_def, "
                     "allow_io=True)"):
    """`tf.import_graph_def`: add the GraphDef's nodes to the default graph; returns the ops and
    tensors named in `return_elements` (op names, or tensor names 'op:0'), else None.
    `op_dict` and `producer_op_list` are accepted for TensorFlow's signature and not needed.
    `clear_devices=True` ignores the nodes' device fields, as
    `tf.train.import_meta_graph(clear_devices=True)` does (ops take the enclosing tf.device).
    Nodes that reach outside the process (files, network, Python) are refused, all listed in one
    `IOPolicyError`, unless `allow_io=True`; `how` is the advice the error gives."""
    if not isinstance(graph_def, pb.GraphDef):
        if hasattr(graph_def, "SerializeToString") and hasattr(graph_def, "node"):
            graph_def = pb.GraphDef.FromString(graph_def.SerializeToString())
        else:
            raise TypeError(f"import_graph_def: graph_def must be a GraphDef proto, got "
                            f"{type(graph_def).__name__}")
    input_map = dict(input_map or {})
    for key, value in input_map.items():
        if not isinstance(key, str):
            raise TypeError(f"input_map keys must be tensor names, got {key!r}")
        if key.startswith("^") != isinstance(value, Operation):
            raise TypeError(f"input_map[{key!r}]: a '^name' key maps to an Operation, a tensor "
                            f"name to a Tensor, got {value!r}")
    if return_elements is not None and isinstance(return_elements, str):
        raise TypeError("return_elements must be a list of names")
    graph = get_default_graph()
    nodes = list(graph_def.node)
    by_name = check_nodes(nodes, limits, source)
    returned = [parse_input(t) for t in return_elements or () if isinstance(t, str) and ":" in t]
    reads = graph_reads(nodes) | {p[:2] for p in returned if p is not None}
    library = {f.signature.name: f for f in graph_def.library.function}
    library = check_library(graph_def.library, limits, source,
                            used_outputs(nodes, library, reads)
                            if len(graph_def.library.function) <= limits.max_nodes else None)
    for key in input_map:
        src = parse_input(key)
        if src is None or src[0] not in by_name:
            raise ValueError(f"Attempted to map inputs that were not found in graph_def: [{key}]")
    check_supported(nodes, library, source)
    if not allow_io:
        io_policy.check(reaching_nodes(graph_def), allow_io, source or "the GraphDef", how)
    back_edges = ()
    if any(n.op in V1_CONTROL_FLOW for n in nodes):
        nodes, library = lift(nodes, library, source, limits)
        by_name = {n.name: n for n in nodes}
    order = topological_order(nodes, by_name, source, back_edges)
    scope_name = "import" if name is None else name
    with graph.name_scope(scope_name) if scope_name else nothing() as scope:
        prefix = scope or ""
        ctx = ImportContext(graph, prefix, library, limits, source)
        ctx.read = graph_reads(nodes) | reads
        ctx.clear_devices = bool(clear_devices)
        first_new = graph.num_ops()
        build_nodes(ctx, order, input_map)
    # the nodes were checked through the op table before; the ops the import rules built are
    # checked too, whatever a rule makes of its node
    io_policy.check_ops(graph.get_operations()[first_new:], allow_io, source or "the GraphDef",
                        how)
    if return_elements is None:
        return None
    out = []
    for item in return_elements:
        try:
            out.append(_resolve_return(graph, prefix, item))
        except (KeyError, ValueError):
            raise ValueError(f"Requested return_element {item!r} not found in graph_def.") from None
    return out


__all__ = ["import_graph_def", "reaching_nodes"]
