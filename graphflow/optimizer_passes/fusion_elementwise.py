"""The fusion pass's elementwise groups (`fusion.py` runs `fuse_elementwise` last): maximal
groups of elementwise ops become one `FusedElementwise` whose program (`ops/elementwise_program.py`)
the kernels evaluate in cache-sized chunks. `fusion.py`'s docstring says which ops join a group.
"""

import numpy as np

from graphflow.ops import fused_ops, registry
from graphflow.optimizer_passes.rewrite import Editor, plain, replace_root

# Upper bound on the ops one FusedElementwise replaces (keeps generated device kernels small).
MAX_GROUP_OPS = 64
# An elementwise op alone becomes a FusedElementwise of one instruction from this many output
# elements: the fused kernel runs it on the intra-op threads in cache-sized chunks, numpy's kernel
# on one thread, and slowly where an operand broadcasts over a short last axis (a batch norm's
# squared_difference(x, mean) on [64, 32, 32, 16]: numpy 0.78 ms, fused 0.41 ms; a one-off script).
SINGLE_OP_MIN_ELEMENTS = 1 << 16

def _fusible(op):
    if not fused_ops.is_instruction(op) or len(op.outputs) != 1:
        return False
    op_def = registry.lookup(op.type)
    # strings (Equal, NotEqual of them) stay numpy's object-array ufuncs: the fused kernels
    # compute in number dtypes
    strings = any(t.dtype.as_numpy_dtype == np.object_ for t in op.inputs)
    return op_def.elementwise and not op_def.stateful and not op_def.random and not strings


def fuse_elementwise(graph, preserve):
    ops = graph.get_operations()
    group_of = {}
    groups = []
    for root in reversed(ops):
        if root in group_of or not _fusible(root) or root.control_inputs or root in preserve:
            continue
        members = {root}
        group_of[root] = root
        shape = root.outputs[0].shape
        stack = [t.op for t in root.inputs]
        while stack and len(members) < MAX_GROUP_OPS:
            p = stack.pop()
            if (p in group_of or not _fusible(p) or not plain(p, preserve)
                    or p.device != root.device or p.outputs[0].shape.dims != shape.dims):
                continue
            if any(group_of.get(c) is not root for c in p.outputs[0]._consumers):
                continue  # read outside the group (for now: a later member may still claim it)
            members.add(p)
            group_of[p] = root
            stack.extend(t.op for t in p.inputs)
        if len(members) < 2 and not _large(root):
            del group_of[root]
            continue
        groups.append((root, sorted(members, key=lambda o: o._id)))
    editor = Editor(graph, preserve)
    fused_count = 0
    made = 0
    for root, members in groups:
        built = _build_program(members, root)
        if built is None:
            continue
        inputs, program = built
        attrs = {"program": program, **fused_ops._provenance(members)}
        replace_root(editor, root, "FusedElementwise", inputs, attrs)
        fused_count += len(members)
        made += 1
    editor.commit()
    return made, fused_count


def _large(op):
    """An op of at least SINGLE_OP_MIN_ELEMENTS static output elements: a group of its own."""
    size = op.outputs[0].shape.num_elements()
    return size is not None and size >= SINGLE_OP_MIN_ELEMENTS


def _inlinable(t, other_ranks):
    """A size-1 constant that can become a "Const" instruction without changing the output shape."""
    value = registry.constant_value_of(t)
    if value is None or value.size != 1:
        return False
    return value.ndim == 0 or (other_ranks is not None and value.ndim <= other_ranks)


def _scalar_constant(t):
    value = registry.constant_value_of(t)
    return value is not None and value.size == 1


def _build_program(members, root):
    """(fused-op inputs, program) for a group, members in schedule order."""
    member_set = set(members)
    external = {}
    for op in members:
        for t in op.inputs:
            if t.op not in member_set:
                external[t] = None
    unbroadcast = _unbroadcast_inputs(external, root)
    external = {unbroadcast.get(t, t): None for t in external}
    tensor_inputs = [t for t in external if not _scalar_constant(t)]
    ranks = [t.shape.ndims for t in tensor_inputs]
    max_rank = None if not ranks or any(r is None for r in ranks) else max(ranks)
    inputs, const_inputs = [], []
    for t in external:
        if _inlinable(t, max_rank) and tensor_inputs:
            const_inputs.append(t)
        else:
            inputs.append(t)
    if not inputs:
        return None
    number = {t: i for i, t in enumerate(inputs)}
    instructions = []
    for t in const_inputs:
        value = t.op.attrs["value"].reshape(())
        number[t] = len(inputs) + len(instructions)
        instructions.append(["Const", [], {"value": value.item()}, t.dtype.name])
    for op in members:
        refs = [number[unbroadcast.get(t, t)] for t in op.inputs]
        attrs = {k: _jsonable(v) for k, v in op.attrs.items()}
        number[op.outputs[0]] = len(inputs) + len(instructions)
        instructions.append([op.type, refs, attrs, op.outputs[0].dtype.name])
    program = {"version": fused_ops.PROGRAM_VERSION, "inputs": [t.dtype.name for t in inputs],
               "instructions": instructions, "output": number[root.outputs[0]]}
    return inputs, program


# x op BroadcastTo(y, shape(x)) -> x op y, inside a group: the kernels broadcast every input to the
# group's shape, so reading y broadcast gives the same elements without writing the broadcast out
# (a reduction's gradient, e.g. tf.nn.moments' in a batch norm: [1, 1, 1, C] -> [N, H, W, C]).
# Only for a BroadcastTo of the group's static shape from a static shape that broadcasts to it,
# and only while some other input of the group has the group's whole shape (then every
# instruction's result still broadcasts to it, also where the kernel computes whole arrays).
def _unbroadcast_inputs(external, root):
    """{BroadcastTo output: its input} for the external inputs of a group read unbroadcast."""
    shape = root.outputs[0].shape
    if not shape.is_fully_defined():
        return {}
    dims = tuple(shape.as_list())
    found = {}
    for t in external:
        op = t.op
        if (not fused_ops.is_broadcast_to(op) or op.control_inputs
                or tuple(t.shape.dims or ()) != dims):
            continue
        y = op.inputs[0]
        if not y.shape.is_fully_defined() or y.dtype != t.dtype:
            continue
        try:
            if np.broadcast_shapes(tuple(y.shape.as_list()), dims) != dims:
                continue
        except ValueError:
            continue
        found[t] = y
    whole = [t for t in external if t not in found and tuple(t.shape.dims or ()) == dims]
    return found if whole else {}


def _jsonable(v):
    if isinstance(v, np.generic):
        return v.item()
    return v


# sum(program(inputs), leading axes) = FusedElementwiseSum(inputs)   (mean likewise)
# A Sum or Mean over the leading axes of a FusedElementwise's value that nothing else reads: the
# kernel sums each block of the value while it is in cache instead of writing it out whole and
# reading it back (a batch norm's mean((x - m)^2) and the sums of its gradient). Not when either op
# has control edges or is fetched as an op, or they sit on different devices.
def fuse_sums(graph, preserve):
    editor = Editor(graph, preserve)
    count = 0
    for op in graph.get_operations():
        reduction = fused_ops.leading_axes_sum(op)
        if reduction is None or op.control_inputs or op._control_outputs or op in preserve:
            continue
        value = op.inputs[0]
        producer = value.op
        if (not fused_ops.is_fused_elementwise(producer) or not plain(producer, preserve)
                or value._consumers != [op] or producer.device != op.device):
            continue
        leading, keepdims, mean = reduction
        attrs = {"program": producer.attrs["program"], "leading_axes": leading,
                 "keepdims": keepdims, "mean": mean,
                 **fused_ops.provenance_with(producer, after=[op])}
        replace_root(editor, op, "FusedElementwiseSum", list(producer.inputs), attrs)
        count += 1
    editor.commit()
    return count
