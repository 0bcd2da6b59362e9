"""Schedule hints: op types that ask to run as early, or as late, as their data edges allow.

A plan runs its ops one after another in graph order (`framework.graph.needed_ops`). An op whose
OpDef has `schedule == "early"` is moved to right after the last op of the plan it depends
on (data or control input), or to the front when it depends on none; one with `"late"` is moved to
right before the first op of the plan that depends on it, and stays where it is when none does (a
fetched value). All other ops keep their relative order, so the schedule stays topological.

The split allreduce uses it (`ops/collective_ops.py`): a bucket's start runs as soon as its
gradients exist, its wait just before the first update that reads them, and the backward ops in
between run while the reduction is in flight.

`sink_last_update` then moves one optimizer update (an op whose OpDef has `updates_in_place`, the
largest variable's) to the very end when no later op needs it: no later op reads its output,
touches one of its variables (by `shared_name` or a slot attr `*_name`) or is stateful in a way
the schedule cannot see (no variable names: a py_func, a While or If whose sub-graphs may read
any). Ops that only depend on it by a control edge (TF1 Adam's beta-power updates, the `minimize`
group) then run before it: the values are the same (those ops read no variable it writes), and the
update, last, may write in place (nothing after it can fail: `kernels/cpu/numba/update_kernels.py`).

Moving an op earlier only makes its reads earlier. A late op's reads become later, so a late op
must read no buffer that another op might overwrite in place (the wait reads only a token), which
keeps memory plans made in graph order valid. Linear in ops and edges; no recursion.
"""

from graphflow.framework.tensor_shape import TensorShape
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


def _variable_names(op):
    """The variables `op` names (`shared_name` and slot attrs `*_name`), or None when it is
    stateful (or random) without naming them: it may touch any variable (a py_func; a While or If,
    whose sub-graphs may read variables, is stateful)."""
    names = {v for k, v in op.attrs.items()
             if isinstance(v, str) and (k == "shared_name" or k.endswith("_name"))}
    opdef = registry.lookup(op.type)
    if (opdef.stateful or opdef.random) and not names and not opdef.control_only:
        return None
    return names


def _size(update):
    """Elements of the variable `update` writes (-1 when its shape is not fully known)."""
    return TensorShape(update.attrs.get("shape")).num_elements() or -1


def sink_last_update(ops):
    """`ops` with one update moved to the end (see the module docstring), or `ops` as they were.
    Linear in ops and edges (one backward sweep), no recursion."""
    candidates = [i for i, op in enumerate(ops) if registry.lookup(op.type).updates_in_place]
    if not candidates:
        return ops
    # walking backwards, the variables touched by the ops after each position
    touched_after, blocked = set(), False
    readers_after = set()  # ops whose outputs some later op reads
    movable = []
    at = len(ops)
    for i in reversed(candidates):
        while at > i + 1:
            at -= 1
            later = ops[at]
            names = _variable_names(later)
            if names is None:
                blocked = True
            else:
                touched_after |= names
            readers_after.update(t.op for t in later.inputs)
        op = ops[i]
        if blocked:
            break
        mine = _variable_names(op)
        if mine and not (mine & touched_after) and op not in readers_after:
            movable.append(op)
        # this candidate's own names and inputs count for the candidates before it
        touched_after |= mine or set()
        readers_after.update(t.op for t in op.inputs)
        at = i
    if not movable:
        return ops
    last = max(movable, key=_size)
    return [op for op in ops if op is not last] + [last]
