"""Sorting, searching and set ops: `tf.sort` and `tf.argsort` (composed on TopKV2 as TF1 does),
Unique and UniqueWithCounts (`tf.unique`, `tf.unique_with_counts`), ListDiff (`tf.setdiff1d`) and
LowerBound/UpperBound (`tf.searchsorted`).

Unique(x) -> (y, idx): the distinct entries of the 1-D x in order of first occurrence, and for
each entry of x the position of its value in y (count: how often each value occurs). ListDiff(x,
y) -> (out, idx): the entries of x that are not in y, in x's order, and their positions in x.
LowerBound/UpperBound(sorted_inputs, values): for each row of values, the first position in the
same row of sorted_inputs whose entry is >= (LowerBound) or > (UpperBound) the value. These output
lengths depend on the values (`value_dependent_shape`).
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import get_default_graph
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import array_ops, index_ops, math_ops, no_onnx, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_op, make_tensor
from graphflow.ops.shape_ops import INT_INDEX
from graphflow.ops.static_value import scalar_value


# ---------------------------------------------------------------- sort, argsort
def _sort(values, axis, direction, return_argsort, name):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"Unknown direction: {direction}")
    with get_default_graph().name_scope(name):
        values = convert_to_tensor(values)
        axis_value = axis if isinstance(axis, int) else scalar_value(convert_to_tensor(axis))
        if axis_value is None:
            raise ValueError(f"axis must be a constant scalar, got {axis}")
        rank = values.shape.ndims
        if rank is None:
            raise ValueError("sort needs an input of known rank")
        if not -rank <= axis_value < rank:
            raise ValueError(f"axis {axis_value} is out of range for input of rank {rank}")
        axis_value %= rank
        # ascending: the descending order of the negated values (equal values keep index order);
        # unsigned values are negated as int64
        dtype = values.dtype
        if direction == "ASCENDING" and dtype.is_unsigned:
            values = math_ops.cast(values, dtypes.int64)
        keys = math_ops.negative(values) if direction == "ASCENDING" else values
        perm = None
        if axis_value != rank - 1:  # top_k works on the last axis: swap it with `axis`
            perm = list(range(rank))
            perm[axis_value], perm[-1] = rank - 1, axis_value
            keys = array_ops.transpose(keys, perm)
        k = shape_ops.shape(keys)[-1]
        top, indices = index_ops.top_k(keys, k)
        out = indices if return_argsort else top
        if perm is not None:
            out = array_ops.transpose(out, perm)
        if not return_argsort and direction == "ASCENDING":
            out = math_ops.negative(out)
            if out.dtype != dtype:
                out = math_ops.cast(out, dtype)
        return out


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """`tf.sort`: `values` sorted along `axis` ('ASCENDING' or 'DESCENDING')."""
    return _sort(values, axis, direction, False, name or "sort")


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """`tf.argsort`: int32 indices that sort `values` along `axis`; equal values keep their order
    (the sort is stable whatever `stable` says, as TF1's)."""
    return _sort(values, axis, direction, True, name or "argsort")


# ---------------------------------------------------------------- Unique, UniqueWithCounts
def _unique_infer(counts):
    def infer(inputs, attrs):
        (x,) = inputs
        if x.shape.ndims not in (None, 1):
            raise ValueError(f"unique expects a 1-D vector, got shape {x.shape}")
        out_idx = dtypes.as_dtype(attrs["out_idx"])
        if out_idx not in INT_INDEX:
            raise TypeError(f"out_idx must be int32 or int64, got {out_idx.name}")
        outputs = [(x.dtype, TensorShape([None])),
                   (out_idx, x.shape if x.shape.ndims is not None else TensorShape([None]))]
        if counts:
            outputs.append((out_idx, TensorShape([None])))
        return outputs
    return infer


define("Unique", _unique_infer(False), attrs="out_idx:dtype", value_dependent_shape=True,
       onnx={"converter": "unique"})
define("UniqueWithCounts", _unique_infer(True), attrs="out_idx:dtype", value_dependent_shape=True,
       onnx={"converter": "unique"})


def unique(x, out_idx=dtypes.int32, name=None):
    """`tf.unique`: (y, idx) with y the distinct values of the 1-D `x` in order of first
    occurrence and x == gather(y, idx)."""
    op = make_op("Unique", (convert_to_tensor(x),), {"out_idx": dtypes.as_dtype(out_idx).name},
                 name=name or "Unique")
    return tuple(op.outputs)


def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    """`tf.unique_with_counts`: (y, idx, count), `unique`'s results and how often each y occurs."""
    op = make_op("UniqueWithCounts", (convert_to_tensor(x),),
                 {"out_idx": dtypes.as_dtype(out_idx).name}, name=name or "UniqueWithCounts")
    return tuple(op.outputs)


# ---------------------------------------------------------------- ListDiff
def _list_diff_infer(inputs, attrs):
    x, y = inputs
    if x.dtype != y.dtype:
        raise TypeError(f"x ({x.dtype.name}) and y ({y.dtype.name}) must have the same dtype")
    for t, what in ((x, "x"), (y, "y")):
        if t.shape.ndims not in (None, 1):
            raise ValueError(f"{what} must be a 1-D vector, got shape {t.shape}")
    out_idx = dtypes.as_dtype(attrs["out_idx"])
    if out_idx not in INT_INDEX:
        raise TypeError(f"out_idx must be int32 or int64, got {out_idx.name}")
    return [(x.dtype, TensorShape([None])), (out_idx, TensorShape([None]))]


define("ListDiff", _list_diff_infer, attrs="out_idx:dtype", value_dependent_shape=True,
       onnx=no_onnx.none("value-dependent output (set difference): no ONNX op; not mapped yet"))


def setdiff1d(x, y, index_dtype=dtypes.int32, name=None):
    """`tf.setdiff1d`: (out, idx), the entries of x not in y (in x's order) and their positions."""
    x = convert_to_tensor(x)
    y = convert_to_tensor(y, dtype=x.dtype)
    op = make_op("ListDiff", (x, y), {"out_idx": dtypes.as_dtype(index_dtype).name},
                 name=name or "ListDiff")
    return tuple(op.outputs)


# ---------------------------------------------------------------- LowerBound, UpperBound
def _bound_infer(inputs, attrs):
    sorted_inputs, values = inputs
    if sorted_inputs.dtype != values.dtype:
        raise TypeError(f"sorted_sequence ({sorted_inputs.dtype.name}) and values "
                        f"({values.dtype.name}) must have the same dtype")
    out_type = dtypes.as_dtype(attrs["out_type"])
    if out_type not in INT_INDEX:
        raise TypeError(f"out_type must be int32 or int64, got {out_type.name}")
    a, v = sorted_inputs.shape, values.shape
    if a.ndims == 0 or v.ndims == 0:
        raise ValueError("sorted_sequence and values must have rank 1 or more")
    if a.ndims is not None and v.ndims is not None:
        if a.ndims != v.ndims or not a[:-1].is_compatible_with(v[:-1]):
            raise ValueError(f"sorted_sequence {a} and values {v} must have the same leading "
                             "dimensions")
    return [(out_type, v)]


define("LowerBound", _bound_infer, attrs="out_type:dtype", onnx={"converter": "lower_bound"})
define("UpperBound", _bound_infer, attrs="out_type:dtype", onnx={"converter": "upper_bound"})


def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None):
    """`tf.searchsorted`: for each value, the index in its row of `sorted_sequence` (sorted along
    the last axis) where it would be inserted: before equal entries ('left') or after ('right')."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    op_type = "LowerBound" if side == "left" else "UpperBound"
    sorted_sequence = convert_to_tensor(sorted_sequence)
    values = convert_to_tensor(values, dtype=sorted_sequence.dtype)
    return make_tensor(op_type, (sorted_sequence, values),
                       {"out_type": dtypes.as_dtype(out_type).name}, name=name or op_type)


__all__ = ["sort", "argsort", "unique", "unique_with_counts", "setdiff1d", "searchsorted"]
