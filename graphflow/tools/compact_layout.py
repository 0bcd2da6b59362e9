"""Hints that make a graph picture fit a screen (`viz_dot.to_dot(..., compact=True)`), used by
`graphflow inspect --svg`: which cluster an op is drawn in, which ops sit beside the op they feed,
and which ops form the straight line a model's data flows along.

- An op's *operand scope*: TF1 names the constant operands of an op under the op's own name
  (`Reshape/shape` of `Reshape`, `dense/Add/y`); drawn as a box of their own they cost a cluster
  and a rank each. Here such a scope is drawn as part of the scope the op is in.
- A *source* (an op no drawn op feeds: a variable, a constant) read by exactly one drawn op of
  the same cluster is drawn on that op's rank, beside it: `kernel` beside `Conv2D`.
- The *spine*: the ops with drawn inputs, given one Graphviz `group`, so that the edges between
  them are drawn straight and a chain of layers stays one column instead of a staircase.
"""

import collections


def scope_function(ops):
    """name -> the scope the op of that name is drawn in: its name scope, with every leading part
    that names a drawn op (an operand scope) replaced by that op's own scope."""
    names = {op.name for op in ops}

    def scope_of(name):
        scope = name.rpartition("/")[0]
        while scope in names:  # an operand scope: draw it with its op
            scope = scope.rpartition("/")[0]
        return scope
    return scope_of


def beside(ops, scope_of):
    """{source op: the one op it feeds} for the sources to draw on their reader's rank."""
    chosen = set(ops)
    readers = collections.defaultdict(set)
    for op in ops:
        for t in op.inputs:
            if t.op in chosen:
                readers[t.op].add(op)
        for c in op.control_inputs:
            if c in chosen:
                readers[c].add(op)
    out = {}
    for op in ops:
        fed = any(t.op in chosen for t in op.inputs) or any(c in chosen for c in op.control_inputs)
        if fed or len(readers.get(op, ())) != 1:
            continue
        (reader,) = readers[op]
        if scope_of(op.name) == scope_of(reader.name):
            out[op] = reader
    return out


def spine(ops):
    """The ops that have a drawn input: the path the data takes through the picture."""
    chosen = set(ops)
    return frozenset(op for op in ops if any(t.op in chosen for t in op.inputs))


__all__ = ["scope_function", "beside", "spine"]
