"""Reads before writes: graphflow's run semantics made explicit in an exported GraphDef.

In graphflow, an op reading a variable's own tensor (`w:0`) sees the value the variable had when
the run started, like TF1's `w/read` snapshot, whatever updates the same run makes. TensorFlow's
ref variables give no such promise: `ApplyAdam` updates `w` in place, and an op that reads `w` and
is not ordered before it may see either value (TF1's optimizers avoid the race for the graphs
they build by gating each op's gradients; a graphflow gradient graph has no such gates). So the
exporter gives every op that writes a variable a control input from each op that reads the
variable's tensor and comes before the writer in the graph's (topological) creation order: the
reader then runs first in TensorFlow too, and the numbers are graphflow's. A reader created after
the writer may depend on it, so it is left alone (an edge to it could close a cycle); explicit
fresh reads (`read_value()`, a ReadVariableOp) are ordered by the program's own control inputs.
Linear in the number of (writer, reader) pairs.
"""

from graphflow.interop.tensorflow import op_table


def order_reads_before_writes(ops, nodes):
    """Add '^reader' control inputs to the NodeDefs (`nodes`, by name) of variable writers."""
    position = {op: i for i, op in enumerate(ops)}
    variable_ops = {op.attrs["shared_name"]: op for op in ops if op.op_def.variable}
    by_name = {node.name: node for node in nodes}
    for op in ops:
        record = op_table.for_export(op.type)
        node = by_name.get(op.name)
        if record is None or not record.refs or node is None:
            continue
        present = set(node.input)
        for attr in record.refs:
            variable = variable_ops.get(op.attrs.get(attr))
            if variable is None:
                continue
            for reader in variable.outputs[0].consumers():
                control = f"^{reader.name}"
                if position.get(reader, len(position)) < position[op] \
                        and reader.name in by_name and control not in present \
                        and not reader.op_def.reads_variable:
                    node.input.append(control)
                    present.add(control)
