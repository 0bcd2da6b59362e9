"""Graph surgery shared by the passes: rewire consumers, put new ops in the place of old ones, sweep
dead ops and restore a topological op order. Passes only ever edit a plan's private copy of the
user's graph (see `subgraph.py`), so this module may touch the graph's internals directly.

A pass collects its edits in an `Editor` and calls `commit()` once: new ops take the schedule
position of the op they replace (their "anchor"), ops no root needs any more are removed, and the
order is checked to be topological (a Kahn sort repairs it otherwise). Everything is iterative and
linear or n log n in the number of ops.
"""

import heapq

from graphflow.framework.graph import Operation, Tensor
from graphflow.ops import registry


def roots(graph, preserve):
    """The ops a plan must keep: producers of preserved tensors, preserved ops, and stateful ops."""
    stateful = {}
    out = []
    for op in graph._ops:
        flag = stateful.get(op.type)
        if flag is None:
            flag = stateful[op.type] = registry.lookup(op.type).stateful
        if flag or op in preserve:
            out.append(op)
    for x in preserve:
        out.append(x if isinstance(x, Operation) else x.op)
    return out


def live_ops(graph, preserve):
    """Ancestors (data and control edges) of `roots`: what a run needs."""
    live = set()
    stack = roots(graph, preserve)
    while stack:
        op = stack.pop()
        if op in live:
            continue
        live.add(op)
        for t in op.inputs:
            if t.op not in live:
                stack.append(t.op)
        for c in op.control_inputs:
            if c not in live:
                stack.append(c)
    return live


def replace_uses(old, new):
    """Every op reading tensor `old` reads `new` instead."""
    if old is new or not old._consumers:
        return
    for c in dict.fromkeys(old._consumers):
        c.inputs = tuple(new if t is old else t for t in c.inputs)
    new._consumers.extend(old._consumers)
    old._consumers = []


def move_control_outputs(old_op, new_op):
    """Ops that had to run after `old_op` run after `new_op` instead (None: drop the edges).

    Placeholders never run (they are fed), so an edge to one is dropped too."""
    if not old_op._control_outputs:
        return
    keep = new_op is not None and not registry.lookup(new_op.type).must_feed
    for d in dict.fromkeys(old_op._control_outputs):
        ctl = [c for c in d.control_inputs if c is not old_op]
        if keep and new_op not in ctl:
            ctl.append(new_op)
            new_op._add_control_output(d)
        d.control_inputs = tuple(ctl)
    old_op._control_outputs = []


def move_output(tensor, new_op, index=0):
    """Make `tensor` (its identity, consumers and preserved status) the `index`-th output of
    `new_op`, dropping the fresh Tensor that `new_op` was created with."""
    old_op = tensor.op
    old_op.outputs = [t if t is not tensor else _orphan(old_op, t) for t in old_op.outputs]
    tensor.op = new_op
    tensor.value_index = index
    new_op.outputs[index] = tensor


def _orphan(op, t):
    return Tensor(op, t.value_index, t.dtype, t.shape)


def append_op(graph, op_type, inputs, attrs, specs, name, control_inputs=(), device="",
              source=None):
    """`Graph.add_op(..., use_scopes=False)` without its checks, for ops copied or rebuilt from ops
    that were already validated: the name must be unused, inputs from `graph`."""
    op = Operation(graph, op_type, name, inputs, control_inputs, attrs, device, source)
    op.outputs = [Tensor(op, i, dt, sh) for i, (dt, sh) in enumerate(specs)]
    op._id = len(graph._ops)
    graph._ops.append(op)
    graph._ops_by_name[name] = op
    graph._names_in_use[name.lower()] = 1
    for t in op.inputs:
        t._consumers.append(op)
    for c in op.control_inputs:
        c._add_control_output(op)
    graph.version += 1
    return op


class Editor:
    """Collects one pass's edits on `graph`; `commit()` applies ordering, renames and the sweep."""

    def __init__(self, graph, preserve):
        self.graph = graph
        self.preserve = preserve
        self.anchors = {}
        self.renames = []
        self.created = 0

    def add_op(self, op_type, inputs, attrs, specs, anchor, name=None, source=None, device="",
               control_inputs=()):
        """A new op that will sit at `anchor`'s position in the schedule. It gets a temporary name;
        `name` (usually the replaced op's) is taken over at commit once that op is gone."""
        tmp = self.graph.unique_name(f"{name or op_type}/_new")
        op = append_op(self.graph, op_type, list(inputs), attrs, specs, tmp,
                       list(control_inputs), device, source if source is not None else anchor.source)
        self.anchors[op] = anchor
        if name:
            self.renames.append((op, name))
        self.created += 1
        return op

    def commit(self):
        """Remove dead ops, order the rest topologically, give new ops their names. Returns the
        number of ops removed."""
        graph = self.graph
        live = live_ops(graph, self.preserve)
        old = graph._ops
        dead = [op for op in old if op not in live]
        for op in dead:
            for t in op.inputs:
                if t.op in live:
                    t._consumers = [c for c in t._consumers if c in live]
            for c in op.control_inputs:
                if c in live:
                    c._control_outputs = [d for d in c._control_outputs if d in live]
            if graph._ops_by_name.get(op.name) is op:
                del graph._ops_by_name[op.name]
        ops = [op for op in old if op in live]
        if self.anchors:
            seq = {op: i for i, op in enumerate(old)}
            ops.sort(key=lambda op: (seq[self.anchors.get(op, op)], op not in self.anchors,
                                     seq[op]))
            if not _is_topological(ops):
                ops = _kahn(ops, seq, self.anchors)
        for i, op in enumerate(ops):
            op._id = i
        graph._ops = ops
        for op, name in self.renames:
            if op in live and name not in graph._ops_by_name:
                del graph._ops_by_name[op.name]
                op.name = name
                graph._ops_by_name[name] = op
        graph.version += 1
        self.anchors = {}
        self.renames = []
        return len(dead)


def _is_topological(ops):
    pos = {op: i for i, op in enumerate(ops)}
    for i, op in enumerate(ops):
        for t in op.inputs:
            if pos.get(t.op, -1) >= i:
                return False
        for c in op.control_inputs:
            if pos.get(c, -1) >= i:
                return False
    return True


def _kahn(ops, seq, anchors):
    """Topological order of `ops`, preferring each op's anchor position among the ready ones."""
    members = set(ops)
    indegree = {op: 0 for op in ops}
    succ = {op: [] for op in ops}
    for op in ops:
        for p in {t.op for t in op.inputs} | set(op.control_inputs):
            if p in members:
                indegree[op] += 1
                succ[p].append(op)

    def key(op):
        return (seq[anchors.get(op, op)], seq[op])

    ready = [(key(op), id(op), op) for op in ops if indegree[op] == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        _, _, op = heapq.heappop(ready)
        out.append(op)
        for s in succ[op]:
            indegree[s] -= 1
            if indegree[s] == 0:
                heapq.heappush(ready, (key(s), id(s), s))
    if len(out) != len(ops):
        raise RuntimeError("graph rewrite created a cycle")  # a pass bug, never user input
    return out


def replace_root(editor, root, fused_type, inputs, attrs):
    """Put a `fused_type` op in place of `root`, the last op of a matched group: same name,
    source line and device, scheduled where root was; root's output Tensor (its readers, fetches)
    and control outputs move to it. The group's other members go when nothing reads them."""
    out = root.outputs[0]
    fused = editor.add_op(fused_type, inputs, attrs, [(out.dtype, out.shape)], anchor=root,
                          name=root.name, source=root.source, device=root.device)
    move_output(out, fused)
    move_control_outputs(root, fused)


def plain(op, preserve):
    """No control edges and no fetched/fed output: an op that may disappear into a fused op."""
    if op.control_inputs or op._control_outputs or op in preserve:
        return False
    return not any(t in preserve for t in op.outputs)
