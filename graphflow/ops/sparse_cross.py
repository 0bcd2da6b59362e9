"""`tf.sparse.cross`: the feature crosses of SparseTensors and dense [batch, k] tensors of strings
or integers, built from ordinary ops. Row r of the result holds every combination of row r's
values, one from each input (the first input varying slowest, each input's values in their
order), joined with "_X_"; the dense shape is [batch, the most crosses of any row]. An input
row without values leaves its row of the result empty, as TF1's SparseCross does."""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.ops import array_ops, core_ops, cumulative_ops, math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.sort_ops import searchsorted
from graphflow.ops.sparse_tensor import SparseTensor, SparseTensorValue
from graphflow.ops.string_ops import as_string, string_join

_INT64 = dtypes.int64


def _rows_and_values(value):
    """(row of each value [n] int64, the values as strings [n], batch size) of one input."""
    if isinstance(value, (SparseTensor, SparseTensorValue)):
        sp = SparseTensor.from_value(value)
        rows = math_ops.cast(array_ops.gather(sp.indices, 0, axis=1), _INT64)
        values, batch = sp.values, math_ops.cast(sp.dense_shape, _INT64)[0]
    else:
        dense = convert_to_tensor(value)
        if dense.shape.ndims not in (None, 2):
            raise ValueError(f"sparse.cross: a dense input must be [batch, k], got shape "
                             f"{dense.shape}")
        shape = shape_ops.shape(dense, out_type=_INT64)
        batch = shape[0]
        rows = shape_ops.reshape(array_ops.tile(array_ops.expand_dims(
            array_ops.range(batch), 1), core_ops.stack([np.int64(1), shape[1]])), [-1])
        values = shape_ops.reshape(dense, [-1])
    if values.dtype == dtypes.string:
        return rows, values, batch
    if values.dtype not in (dtypes.int64, dtypes.int32):
        raise TypeError(f"sparse.cross: inputs must hold strings or integers, got "
                        f"{values.dtype.name}")
    return rows, as_string(values), batch


def sparse_cross(inputs, name=None, separator=None):
    """`tf.sparse.cross`: a SparseTensor of strings, the crosses of each row's values over
    `inputs` (SparseTensors in row-major order, or dense [batch, k] tensors), joined with
    `separator` ("_X_")."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("sparse.cross: inputs must be a non-empty list of SparseTensors or "
                        "tensors")
    separator = "_X_" if separator is None else separator
    with name_scope(name, "SparseCross"):
        parts = [_rows_and_values(v) for v in inputs]
        batch = parts[0][2]
        counts, starts = [], []
        for rows, _, _ in parts:
            count = array_ops.unsorted_segment_sum(shape_ops.ones_like(rows), rows, batch)
            counts.append(count)
            starts.append(cumulative_ops.cumsum(count, exclusive=True))
        crosses = counts[0]
        for count in counts[1:]:
            crosses = crosses * count
        ends = cumulative_ops.cumsum(crosses)
        total = math_ops.reduce_sum(crosses)
        positions = array_ops.range(total)
        # the row of each cross, and its place among the row's crosses
        row = searchsorted(ends, positions, side="right", out_type=_INT64)
        place = positions - array_ops.gather(ends - crosses, row)
        rest, picked = place, [None] * len(parts)
        for i in range(len(parts) - 1, -1, -1):  # mixed radix: the last input varies fastest
            count = array_ops.gather(counts[i], row)
            picked[i] = array_ops.gather(parts[i][1], array_ops.gather(starts[i], row)
                                         + math_ops.floormod(rest, count))
            rest = math_ops.floordiv(rest, count)
        values = picked[0] if len(picked) == 1 else string_join(picked, separator=separator)
        indices = core_ops.stack([row, place], axis=1)
        width = math_ops.reduce_max(shape_ops.concat([crosses, np.zeros(1, np.int64)], 0))
        return SparseTensor(indices, values, core_ops.stack([batch, width]))


__all__ = ["sparse_cross"]
