"""Gradient rule for Einsum. For operand i with subscripts s_i and output subscripts o:

    d s_i = einsum('o, s_others -> ...kept', grad, *others)

where `kept` are the letters of s_i found in the output or in another operand. Then, in order:
the ellipsis dims are summed back to operand i's own (numpy broadcasting reversed, SumToShape);
a second einsum puts the axes in s_i's order; and letters summed away by the forward op (found
only in s_i) come back as broadcast axes. A letter repeated within one operand (a diagonal,
'ii->i') has no gradient rule and says so.
"""

from graphflow.framework import dtypes
from graphflow.ops import einsum_ops, gradient_ops, shape_ops
from graphflow.ops.einsum_ops import ELLIPSIS
from graphflow.ops.registry import register_gradient


def _operand_grad(grad, subs, out, i, inputs, equation):
    sub = subs[i]
    letters = sub.replace(ELLIPSIS, "")
    if len(set(letters)) != len(letters):
        raise NotImplementedError(f"einsum {equation!r}: no gradient for operand {i} whose "
                                  f"subscripts {sub!r} repeat a letter (a diagonal)")
    others = [s for j, s in enumerate(subs) if j != i]
    elsewhere = set(out.replace(ELLIPSIS, "")).union(*[set(s.replace(ELLIPSIS, "")) for s in others])
    kept = "".join(c for c in letters if c in elsewhere)
    x = inputs[i]
    front = (ELLIPSIS if ELLIPSIS in out else "") + kept
    lhs = ",".join([out] + others)
    g = einsum_ops.einsum(f"{lhs}->{front}", grad, *[t for j, t in enumerate(inputs) if j != i])
    head, _, tail = sub.partition(ELLIPSIS)
    if ELLIPSIS in out:
        # the ellipsis dims of g are the broadcast ones: sum them down to x's own (none when
        # x has no ellipsis)
        parts = []
        if ELLIPSIS in sub:
            parts.append(shape_ops.shape(x)[len(head):(-len(tail) if tail else None)])
        if kept:
            parts.append(shape_ops.shape(g)[-len(kept):])
        target = shape_ops.concat(parts, axis=0) if len(parts) > 1 else \
            parts[0] if parts else shape_ops.zeros([0], dtypes.int32)
        g = gradient_ops.sum_to_shape(g, target)
    if ELLIPSIS in sub:  # put the kept letters on their side of the ellipsis
        ordered = "".join(c for c in head if c in kept) + ELLIPSIS + \
            "".join(c for c in tail if c in kept)
        if ordered != front:
            g = einsum_ops.einsum(f"{front}->{ordered}", g)
    dropped_head = [head.index(c) for c in head if c not in kept]
    dropped_tail = [tail.index(c) - len(tail) for c in tail if c not in kept]
    for axis in dropped_head:                   # left to right: final positions from the start
        g = shape_ops.expand_dims(g, axis)
    for axis in reversed(dropped_tail):         # right to left: final positions from the end
        g = shape_ops.expand_dims(g, axis)
    if dropped_head or dropped_tail:            # summed away by the forward op: broadcast back
        g = g * shape_ops.ones_like(x)
    return g


@register_gradient("Einsum")
def _einsum_grad(op, grad):
    equation = op.attrs["equation"]
    subs, out = einsum_ops.parse(equation, len(op.inputs))
    inputs = list(op.inputs)
    return tuple(_operand_grad(grad, subs, out, i, inputs, equation) for i in range(len(inputs)))

