"""Schedule hints: op types that ask to run as early, or as late, as their data edges allow.

A plan runs its ops one after another in graph order (`framework.graph.needed_ops`). An op whose
OpDef has `schedule == "early"` is moved to right after the last op of the plan it depends
on (data or control input), or to the front when it depends on none; one with `"late"` is moved to
right before the first op of the plan that depends on it, and stays where it is when none does (a
fetched value). All other ops keep their relative order, so the schedule stays topological.

The split allreduce uses it (`ops/collective_ops.py`): a bucket's start runs as soon as its
gradients exist, its wait just before the first update that reads them, and the backward ops in
between run while the reduction is in flight.

Moving an op earlier only makes its reads earlier. A late op's reads become later, so a late op
must read no buffer that another op might overwrite in place (the wait reads only a token), which
keeps memory plans made in graph order valid. Linear in ops and edges; no recursion.
"""

from graphflow.ops import registry


def apply_schedule_hints(ops):
    """`ops` (a topological order) with the early/late ops moved; the same list when none is."""
    hints = {}
    for op in ops:
        hint = registry.lookup(op.type).schedule
        if hint:
            hints[op] = hint
    if not hints:
        return ops
    return _hoist_early(_sink_late(ops, hints), hints)


def _producers(op):
    return [t.op for t in op.inputs] + list(op.control_inputs)


def _sink_late(ops, hints):
    first_reader = {}
    for op in ops:
        for p in _producers(op):
            if hints.get(p) == "late" and p not in first_reader:
                first_reader[p] = op
    before = {}
    for op in ops:
        if op in first_reader:
            before.setdefault(first_reader[op], []).append(op)
    order = []
    for op in ops:
        if op in first_reader:
            continue  # emitted right before its first reader
        stack = [(op, False)]
        while stack:
            item, expanded = stack.pop()
            if expanded:
                order.append(item)
                continue
            stack.append((item, True))
            stack.extend((late, False) for late in reversed(before.get(item, ())))
    return order


def _hoist_early(ops, hints):
    index = {op: i for i, op in enumerate(ops)}
    after, front = {}, []
    for op in ops:
        if hints.get(op) != "early":
            continue
        anchors = [index[p] for p in _producers(op) if p in index]
        if anchors:
            after.setdefault(ops[max(anchors)], []).append(op)
        else:
            front.append(op)
    moved = {op for op in ops if hints.get(op) == "early"}
    order = []
    for op in front + [op for op in ops if op not in moved]:
        stack = [op]
        while stack:
            item = stack.pop()
            order.append(item)
            stack.extend(reversed(after.get(item, ())))
    return order
