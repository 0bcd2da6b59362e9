"""Common-subexpression elimination: ops of the same type, on the same inputs, with the same attrs,
control inputs, device and output dtypes compute the same values, so one of them is enough.

One walk in schedule (topological) order with a hash table: when an op is visited its inputs are
already canonical, so chains of duplicates collapse in a single pass. Inputs of commutative binary
ops (OpDef `commutative`: `Add`, `Mul`, ...) are compared as a set (IEEE addition and
multiplication are commutative; `AddN` is not merged out of order, since summation order changes
rounding). Attr values compare by
type and value; numpy arrays (Const values) by dtype, shape and bytes, so `-0.0` and `0.0` differ
and identical NaN payloads match.

Never merged: stateful or random ops, placeholders, and ops whose outputs are fetched or fed (they
may still be the survivor others merge into).
"""

import zlib

import numpy as np

from graphflow.ops import registry
from graphflow.optimizer_passes.rewrite import Editor, move_control_outputs, replace_uses
from graphflow.optimizer_passes.stats import PassStats, Timer

NAME = "cse"

def run(graph, preserve):
    stats = PassStats(NAME)
    with Timer(stats, graph):
        table = {}
        merged = 0
        for op in graph.get_operations():
            if not _eligible(op):
                continue
            key = _key(op)
            if key is None:
                continue
            canon = table.get(key)
            if canon is None:
                table[key] = op
                continue
            if op in preserve or any(t in preserve for t in op.outputs):
                continue
            for t, c in zip(op.outputs, canon.outputs):
                replace_uses(t, c)
            move_control_outputs(op, canon)
            merged += 1
        Editor(graph, preserve).commit()
        stats.rewrites = merged
    return stats


_ELIGIBLE = {}


def _eligible(op):
    flag = _ELIGIBLE.get(op.type)
    if flag is None:
        flag = _ELIGIBLE[op.type] = registry.lookup(op.type).foldable
    return flag


def _key(op):
    inputs = op.inputs
    if len(inputs) == 2 and id(inputs[1]) < id(inputs[0]) and registry.lookup(op.type).commutative:
        inputs = (inputs[1], inputs[0])
    try:
        attrs = freeze(op.attrs) if op.attrs else ()
        controls = tuple(sorted(map(id, op.control_inputs))) if op.control_inputs else ()
        key = (op.type, tuple(map(id, inputs)), attrs, controls, op.device,
               tuple(t.dtype.name for t in op.outputs))
        hash(key)
    except TypeError:  # an attr we cannot compare: never merged
        return None
    return key


def freeze(value):
    """A hashable stand-in for an attr value that compares equal exactly when values are the same."""
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, freeze(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(freeze(v) for v in value))
    if isinstance(value, np.ndarray):
        return ArrayKey(value)
    if isinstance(value, np.generic):
        return ArrayKey(np.asarray(value))
    if isinstance(value, float) and value != value:  # NaN never equals itself: compare by repr
        return ("float", "nan")
    if isinstance(value, float) and value == 0.0:
        return ("float", repr(value))  # keep -0.0 apart from 0.0
    hash(value)
    return (type(value).__name__, value)


class ArrayKey:
    """Hashable wrapper of a numpy array compared by dtype, shape and raw bytes."""

    __slots__ = ("array", "_hash")

    def __init__(self, array):
        self.array = array
        raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)  # (makes 0-d arrays 1-d)
        self._hash = hash((array.dtype.str, array.shape, zlib.crc32(raw)))

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        if not isinstance(other, ArrayKey) or self._hash != other._hash:
            return False
        a, b = self.array, other.array
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
