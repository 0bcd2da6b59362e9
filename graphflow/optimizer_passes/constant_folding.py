"""Constant folding: ops whose inputs are all constants are evaluated once, at plan-compile time, with
the CPU kernels, and replaced by a `Const` holding the result.

Ops that read only their inputs' shapes (Shape, Size, Rank) fold when those shapes are static,
whatever the inputs' values. A `tf.cond` on a constant predicate is replaced by the ops of the
branch it takes. An unfed
`placeholder_with_default` counts as its default value here (e.g. tf.layers' `training` flag).

Never folded: stateful or random ops and placeholders (`OpDef.foldable`), ops with control inputs
(their ordering would be lost), and ops whose result would be much bigger than their inputs
(`max(FOLD_MIN_BYTES, FOLD_GROWTH * input bytes)`), so folding never turns a small `fill` into a
huge constant. An op whose kernel fails, or returns something other than what its static dtype and
shape promise, is left for the run to report. Only the frontier is materialized: a folded value
becomes a `Const` when a non-folded op, a fetch or a control edge uses it; folded values used only by
other folded ops disappear.
"""

import warnings

import numpy as np

from graphflow.framework.tensor_shape import TensorShape
from graphflow.kernels import KernelNode, SessionState
from graphflow.kernels import cpu as cpu_kernels
from graphflow.ops import registry
from graphflow.optimizer_passes import control_edges
from graphflow.optimizer_passes.rewrite import Editor, move_control_outputs, move_output
from graphflow.optimizer_passes.stats import PassStats, Timer
from graphflow.optimizer_passes.subgraph import refine_shapes

NAME = "constant_folding"

# A folded result may always take this many bytes ...
FOLD_MIN_BYTES = 1 << 20
# ... or this multiple of the bytes of the op's inputs, whichever is larger.
FOLD_GROWTH = 2
# An op reading only its inputs' static shapes folds when its result is at most this big (a
# shape vector, a size; not a zeros_like of a whole activation).
SHAPE_ONLY_MAX_BYTES = 1 << 12


def run(graph, preserve):
    stats = PassStats(NAME)
    with Timer(stats, graph):
        folded, pruned = _fold_and_prune(graph, preserve, stats)
    stats.details["folded_ops"] = folded
    stats.details["pruned_conds"] = pruned
    return stats


def fold_from(graph, preserve, seeds):
    """Fold only what the constant tensors `seeds` decide (a graph input fixed to its value):
    ops with some input computed from them and the rest constant, and each `If` whose predicate
    is computed from them (replaced by the branch it takes). Constant subgraphs that do not read
    a seed stay as they are. Edits `graph` in place like the pass; returns the tensors now known
    (the seeds and every folded value computed from them)."""
    derived = set(seeds)
    while _fold_and_prune(graph, preserve, PassStats(NAME), derived)[1]:
        pass  # a cond inlined from a taken branch may hold another cond on the same seed
    return derived


def _fold_and_prune(graph, preserve, stats, derived=None):
    """The pass's body; with `derived` (a set of tensors, grown in place) only what they decide.
    Returns (ops folded, conds pruned)."""
    state = SessionState()
    folded, values = _fold(graph, state, derived)
    stats.rewrites = _materialize(graph, preserve, folded, values)
    if derived is not None:
        values = {t: v for t, v in values.items() if t in derived}
    pruned, fenced = _prune_constant_conds(graph, preserve, values)
    stats.rewrites += pruned
    if pruned:  # the branches, traced with unknown shapes, may now sit on known ones: the
        # shapes ops read fold too
        stats.details["shapes_refined"] = refine_shapes(graph)
        more, values = _fold(graph, state, derived)
        stats.rewrites += _materialize(graph, preserve, more, values)
        folded += more
    if fenced:  # the inlined conds' control inputs move on from pure copies
        stats.details["control_inputs_moved"] = control_edges.move_control_inputs(graph,
                                                                                  preserve)
    return len(folded), pruned


def _fold(graph, state, derived=None):
    """(the ops that fold, {tensor: value} of every constant and folded output). With `derived`
    (a set of tensors), an op folds only when one of its inputs is in it, and its outputs join it;
    placeholder_with_default ops are then left as they are (the caller fixed the ones it meant)."""
    values = {}
    folded = []
    for op in graph.get_operations():
        op_def = registry.lookup(op.type)
        if op_def.constant:
            values[op.outputs[0]] = op.attrs["value"]
            continue
        if derived is not None:
            if not (_candidate(op, values) and any(t in derived for t in op.inputs)):
                continue
            results = _evaluate(op, [values[t] for t in op.inputs], state)
            if results is not None:
                derived.update(op.outputs)
        elif (op_def.graph_input and not op_def.must_feed and op.inputs
                and op.inputs[0] in values and not op.control_inputs):
            # an unfed placeholder_with_default (a plan's graph has fed ones as Placeholders)
            # is its default: readers fold, a cond on it keeps one branch; it stays an op
            values[op.outputs[0]] = values[op.inputs[0]]
            continue
        elif _candidate(op, values):
            results = _evaluate(op, [values[t] for t in op.inputs], state)
        elif _shape_only_candidate(op, op_def):
            results = _evaluate(op, [_stand_in_value(t) for t in op.inputs], state,
                                cap=SHAPE_ONLY_MAX_BYTES)
        else:
            continue
        if results is None:
            continue
        for t, v in zip(op.outputs, results):
            values[t] = v
        folded.append(op)
    return folded, values


def _remove_replaced(graph, op):
    """Take `op` (all its outputs moved to other ops, no control edges) out of `graph`."""
    for t in op.inputs:
        t._consumers = [c for c in t._consumers if c is not op]
    graph._ops.remove(op)
    if graph._ops_by_name.get(op.name) is op:
        del graph._ops_by_name[op.name]
    for i, other in enumerate(graph._ops):
        other._id = i
    graph.version += 1


def _prune_constant_conds(graph, preserve, values):
    """An `If` whose predicate is constant is replaced by the ops of the branch it takes (copied
    into the plan's graph, reading the If's inputs; the If's control inputs on the copies that read
    no other copy, so every copy still runs after them); the other branch disappears from the plan.
    Values the untaken branch would have kept for a gradient become zero scalars, as the If
    kernel makes them (only the gradient branch that cannot run reads them)."""
    conds = [op for op in graph.get_operations()
             if registry.lookup(op.type).conditional and op.inputs[0] in values
             and not op._control_outputs]
    if not conds:
        return 0, False
    editor = Editor(graph, preserve)
    for op in conds:
        taken = "then" if bool(values[op.inputs[0]]) else "else"
        branch = op.attrs[f"{taken}_branch"]
        first = 1 if taken == "then" else 1 + len(op.attrs["then_branch"].captures)
        mapping = {ph: op.inputs[first + j] for j, (_, ph) in enumerate(branch.captures)}
        copied, inner_values = {}, set()
        for inner in branch.get_operations():
            if registry.lookup(inner.type).must_feed and inner.outputs[0] in mapping:
                continue
            controls = [copied[c] for c in inner.control_inputs]
            if not any(t in inner_values for t in inner.inputs):  # the If's control inputs go
                controls += op.control_inputs                        # to the branch's first ops
            new = editor.add_op(inner.type, [mapping[t] for t in inner.inputs], dict(inner.attrs),
                                [(t.dtype, t.shape) for t in inner.outputs], anchor=op,
                                name=f"{op.name}/{inner.name}", source=inner.source,
                                device=inner.device or op.device, control_inputs=controls)
            inner_values.update(inner.outputs)
            copied[inner] = new
            mapping.update(zip(inner.outputs, new.outputs))
        kept = {"then": [], "else": []}
        for side in kept:
            kept[side] = [op.attrs[f"{side}_branch"].get_tensor_by_name(n)
                          for n in op.attrs[f"{side}_saved"]]
        results = list(branch.outputs) + kept["then"] + kept["else"]
        n_out = len(branch.outputs)
        for k, (t, inner_t) in enumerate(zip(list(op.outputs), results)):
            own = k < n_out or (k < n_out + len(kept["then"])) == (taken == "then")
            if own:
                passed = [] if inner_t in inner_values else op.control_inputs  # an input as is
                value_op = editor.add_op("Identity", [mapping[inner_t]], {},
                                         [(t.dtype, t.shape)], anchor=op, source=op.source,
                                         device=op.device, control_inputs=passed)
            else:
                zero = np.zeros((), t.dtype.as_numpy_dtype)
                zero.flags.writeable = False
                value_op = editor.add_op("Const", [], {"value": zero}, [(t.dtype, t.shape)],
                                         anchor=op, source=op.source, device=op.device)
            move_output(t, value_op)
    editor.commit()
    for op in conds:
        _remove_replaced(graph, op)  # stateful, so the sweep alone would keep it
    return len(conds), any(op.control_inputs for op in conds)


def _candidate(op, values):
    if not op.outputs or op.control_inputs:
        return False
    if not registry.lookup(op.type).foldable:
        return False
    return all(t in values for t in op.inputs)


def _byte_cap(inputs):
    return max(FOLD_MIN_BYTES, FOLD_GROWTH * sum(v.nbytes for v in inputs))


def _shape_only_candidate(op, op_def):
    """An op that reads only its inputs' shapes (Shape, Size, Rank, ...), all of them static:
    foldable without their values (a plan made for a feed's shape has such shapes). Not the
    elementwise ones (zeros_like): the rules and fusion take them as they are."""
    return (op_def.reads_shape_only and not op_def.elementwise and op.inputs and op.outputs
            and not op.control_inputs and op_def.foldable
            and all(t.shape.is_fully_defined() for t in op.inputs))


def _stand_in_value(t):
    """An array of t's static shape and dtype that holds no memory (every element the same)."""
    dtype = t.dtype.as_numpy_dtype
    return np.lib.stride_tricks.as_strided(np.zeros(1, dtype), t.shape.as_list(),
                                           [0] * t.shape.ndims, writeable=False)


def _evaluate(op, inputs, state, cap=None):
    """The op's outputs as read-only numpy arrays, or None when it must not be folded."""
    cap = _byte_cap(inputs) if cap is None else cap
    static_bytes = 0
    for t in op.outputs:
        n = t.shape.num_elements()
        if n is not None:
            static_bytes += n * t.dtype.size
    if static_bytes > cap:
        return None
    try:
        build = cpu_kernels.reference_builder(op.type)
        node = KernelNode.describing(op, state)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = build(node)(*inputs)
    except Exception:  # the run will raise it with the op's name and the user's line
        return None
    results = (result,) if len(op.outputs) == 1 else tuple(result)
    if len(results) != len(op.outputs):
        return None
    out = []
    total = 0
    for t, v in zip(op.outputs, results):
        if not isinstance(v, (np.ndarray, np.generic)):
            return None
        v = np.asarray(v)
        if v.dtype != t.dtype.as_numpy_dtype or not t.shape.is_compatible_with(v.shape):
            return None
        total += v.nbytes
        out.append(v)
    if total > cap:
        return None
    return out


def _materialize(graph, preserve, folded, values):
    """Replace each folded output that something outside the folded set uses by a Const."""
    folded_set = set(folded)
    editor = Editor(graph, preserve)
    replaced = 0
    for op in folded:
        needed_outside = bool(op._control_outputs)
        for t in op.outputs:
            if t in preserve or any(c not in folded_set for c in t._consumers):
                needed_outside = True
        if not needed_outside:
            continue
        consts = []
        for t in list(op.outputs):
            value = np.array(values[t], copy=True, order="C")
            value.flags.writeable = False
            name = op.name if len(op.outputs) == 1 else f"{op.name}/folded_{t.value_index}"
            const = editor.add_op("Const", [], {"value": value},
                                  [(t.dtype, TensorShape(value.shape))], anchor=op, name=name,
                                  source=op.source, device=op.device)
            move_output(t, const)
            t._shape = t.shape.merge_with(value.shape)
            consts.append(const)
        move_control_outputs(op, consts[0])  # the op had no control inputs: ordering is moot
        replaced += 1
    editor.commit()
    return replaced
