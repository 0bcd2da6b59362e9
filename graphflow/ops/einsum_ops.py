"""`tf.einsum`: one Einsum op for any Einstein-summation equation over N operands.

The equation is normalized when the op is built: spaces removed and the implicit output made
explicit ("ij,jk" becomes "ij,jk->ik": the ellipsis first, then the letters used once, in
alphabetical order), so the op's `equation` attr always holds '->'. An ellipsis stands for the
same broadcast batch dimensions in every operand (numpy broadcasting, size-1 dimensions stretch).
The shape rule works letter by letter; the kernel is numpy's einsum; the gradient of each operand
is another einsum (see einsum_grad.py).
"""

import string

from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import NUMERIC, broadcast_static, define, make_tensor, require_dtype, same_dtype

ELLIPSIS = "..."


def parse(equation, count):
    """(list of input subscripts, output subscripts) of an explicit or implicit equation; each
    subscript is a string of letters with at most one '...'."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != count:
        raise ValueError(f"einsum equation {equation!r} names {len(inputs)} operands, got {count}")
    for sub in inputs + ([out] if arrow else []):
        if sub.count(ELLIPSIS) > 1 or any(c not in string.ascii_letters
                                          for c in sub.replace(ELLIPSIS, "")):
            raise ValueError(f"einsum equation {equation!r}: subscripts must be letters with at "
                             f"most one '...', got {sub!r}")
    letters = "".join(s.replace(ELLIPSIS, "") for s in inputs)
    if not arrow:
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        out = (ELLIPSIS if any(ELLIPSIS in s for s in inputs) else "") + "".join(once)
    for c in out.replace(ELLIPSIS, ""):
        if c not in letters:
            raise ValueError(f"einsum equation {equation!r}: output letter {c!r} appears in no "
                             "input")
        if out.count(c) > 1:
            raise ValueError(f"einsum equation {equation!r}: output letter {c!r} is repeated")
    if (ELLIPSIS in out) != any(ELLIPSIS in s for s in inputs):
        raise ValueError(f"einsum equation {equation!r}: '...' must appear in the output exactly "
                         "when it appears in an input")
    return inputs, out


def split_dims(sub, shape):
    """(dims of the letters before '...', the ellipsis dims, dims after) of one operand, or None
    when its rank is unknown."""
    if shape.ndims is None:
        return None
    dims = list(shape.dims)
    head, _, tail = sub.partition(ELLIPSIS)
    if ELLIPSIS not in sub:
        if len(dims) != len(sub):
            raise ValueError(f"subscripts {sub!r} need an operand of rank {len(sub)}, got shape "
                             f"{shape}")
        return dims, [], []
    if len(dims) < len(head) + len(tail):
        raise ValueError(f"subscripts {sub!r} need an operand of rank >= {len(head) + len(tail)}, "
                         f"got shape {shape}")
    return dims[:len(head)], dims[len(head):len(dims) - len(tail)], dims[len(dims) - len(tail):]


def _einsum_infer(inputs, attrs):
    dt = same_dtype(inputs, "einsum operands")
    for t in inputs:
        require_dtype(t, NUMERIC, "einsum operand")
    subs, out = parse(attrs["equation"], len(inputs))
    sizes, ellipsis, rank_known = {}, TensorShape([]), True
    for sub, t in zip(subs, inputs):
        parts = split_dims(sub, t.shape)
        if parts is None:
            rank_known = False
            continue
        head, middle, tail = parts
        ellipsis = broadcast_static(ellipsis, TensorShape(middle))
        head_sub, _, tail_sub = sub.partition(ELLIPSIS)
        for c, d in zip(head_sub + tail_sub, head + tail):
            known = sizes.get(c)
            if d is not None and known is not None and d != known:
                raise ValueError(f"einsum {attrs['equation']!r}: letter {c!r} has sizes {known} "
                                 f"and {d}")
            if known is None:
                sizes[c] = d
    if not rank_known and ELLIPSIS in out:
        return [(dt, TensorShape(None))]
    head_sub, _, tail_sub = out.partition(ELLIPSIS)
    dims = [sizes.get(c) for c in head_sub]
    if ELLIPSIS in out:
        dims += list(ellipsis.dims)
    dims += [sizes.get(c) for c in tail_sub]
    return [(dt, TensorShape(dims))]


define("Einsum", _einsum_infer, attrs="equation:string", onnx={"converter": "einsum"})


def einsum(equation, *inputs, **kwargs):
    """`tf.einsum`: Einstein summation, e.g. einsum('ij,jk->ik', a, b) is a matmul,
    einsum('...ij,...jk->...ik', a, b) a batched one, einsum('ii->', a) the trace."""
    name = kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"einsum got unexpected keyword arguments {sorted(kwargs)}")
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    if not inputs:
        raise ValueError("einsum needs at least one operand")
    tensors = [convert_to_tensor(inputs[0])]
    tensors += [convert_to_tensor(t, dtype=tensors[0].dtype) for t in inputs[1:]]
    subs, out = parse(str(equation), len(tensors))
    return make_tensor("Einsum", tensors, {"equation": ",".join(subs) + "->" + out},
                       name=name or "einsum")


__all__ = ["einsum"]
