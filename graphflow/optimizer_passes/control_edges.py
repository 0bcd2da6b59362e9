"""Control edges moved to where they matter: a pure op's control inputs pass to its readers.

TF1 programs put whole backward passes under `tf.control_dependencies(...)`:

    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)

and every gradient op built inside the block gets the batch norms' moving-average updates as
control inputs. The rewrite rules and fusion leave ops with control edges alone (removing one
would drop an ordering), so such a step ran its ReLU gradients as unfused selects over arrays of
zeros. But a control edge only changes what an op computes when the op reads state at the moment
it runs: the value of a variable, or a view of one. For an op that reads only values computed by
other ops (`pure` below), the edge means "the readers of my output start after these ops", and it
says the same thing attached to the readers. So, visiting ops in schedule order, a pure op's
control inputs are added to the ops that read its outputs and removed from it; they come to rest
on ops whose timing matters (stateful ops, readers of variables, fetched ops, ops others wait for).

Every op that ran before still runs (the control inputs stay in the graph, on the readers), and
nothing that waited for them runs sooner. An op is moved past only when it is:
- not stateful, random, a graph input, conditional or a control-only op;
- not fetched (nor its outputs), waited for by no op (no control outputs), read by some op;
- reading no tensor that may alias state: a stateful, variable or variable-reading op's output,
  or a view of one (`may_alias_input`: reshape, identity, slices, ...). An op computing a new
  array from a variable (a matmul, a batch norm of its scale) is not a view: its readers move.
"""

from graphflow.ops import registry
from graphflow.optimizer_passes.stats import PassStats, Timer

NAME = "control_edges"


def _state_alias_flags(op_def):
    """(its outputs are state, its outputs may be views of its inputs)"""
    state = (op_def.stateful or op_def.variable or op_def.reads_variable
             or (op_def.returns_state and not op_def.constant))
    return state, op_def.may_alias_input


def _movable_kind(op_def):
    return not (op_def.stateful or op_def.random or op_def.graph_input or op_def.conditional
                or op_def.control_only)


def run(graph, preserve):
    stats = PassStats(NAME)
    with Timer(stats, graph):
        stats.rewrites = move_control_inputs(graph, preserve)
    return stats


def move_control_inputs(graph, preserve):
    """Move the control inputs of every pure op to its readers (see the module docstring); returns
    the number of ops freed. Also used by constant folding after it inlines a cond that had
    control inputs (they go to the branch's first ops, which are usually pure)."""
    preserved_ops = {x if not hasattr(x, "value_index") else x.op for x in preserve}
    flags = {}
    aliases_state = set()  # tensors that are state or may be a view of it
    dropped = {}  # control input -> ops it no longer has as a control output
    moved = 0
    for op in graph.get_operations():  # schedule order: producers before their readers
        f = flags.get(op.type)
        if f is None:
            op_def = registry.lookup(op.type)
            f = flags[op.type] = (*_state_alias_flags(op_def), _movable_kind(op_def))
        is_state, retains, movable_kind = f
        reads_state = any(t in aliases_state for t in op.inputs)
        if is_state or (retains and reads_state):
            aliases_state.update(op.outputs)
        if (not op.control_inputs or not movable_kind or reads_state or op._control_outputs
                or op in preserved_ops):
            continue
        readers = dict.fromkeys(c for t in op.outputs for c in t._consumers)
        if not readers:
            continue
        for reader in readers:
            have = set(reader.control_inputs)
            added = tuple(c for c in op.control_inputs if c not in have)
            if added:
                reader.control_inputs += added
                for c in added:
                    c._add_control_output(reader)
        for c in op.control_inputs:
            dropped.setdefault(c, set()).add(op)
        op.control_inputs = ()
        moved += 1
    for c, ops in dropped.items():  # one pass per control input (its lists can be long)
        c._control_outputs = [d for d in c._control_outputs if d not in ops]
    if moved:
        graph.version += 1
    return moved
