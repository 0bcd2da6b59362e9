"""Segment reductions and bincount: `tf.segment_sum`, `tf.segment_mean`, `tf.segment_max`,
`tf.segment_min` (sorted 1-D segment ids; the output has ids[-1] + 1 rows, an empty segment gives
0), `tf.unsorted_segment_max` / `tf.unsorted_segment_min` (any ids, `num_segments` rows, an empty
segment gives the dtype's lowest / highest value, negative ids are dropped) and
`tf.math.bincount` (op type Bincount: counts, or sums of weights, of non-negative integers).
`tf.unsorted_segment_sum` lives in array_ops. Gradients are in segment_grad.py."""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.array_ops import INT_INDEX, _segment_sum_infer
from graphflow.ops.core_ops import constant, convert_to_tensor
from graphflow.ops.cumulative_ops import static_axis
from graphflow.ops.registry import NUMERIC, define, make_tensor, require_dtype
from graphflow.ops.shape_ops import is_tensor_like

SORTED_SEGMENT_OPS = ("SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin")
UNSORTED_SEGMENT_OPS = ("UnsortedSegmentMax", "UnsortedSegmentMin")


def _sorted_segment_infer(inputs, attrs):
    data, ids = inputs
    require_dtype(data, NUMERIC, "data")
    if ids.dtype not in INT_INDEX:
        raise TypeError(f"segment_ids must be int32 or int64, got {ids.dtype.name}")
    if ids.shape.ndims not in (None, 1):
        raise ValueError(f"segment_ids must be a vector, got shape {ids.shape}")
    if data.shape.ndims is None:
        return [(data.dtype, TensorShape(None))]
    if data.shape.ndims < 1:
        raise ValueError(f"data must have rank >= 1, got shape {data.shape}")
    rows = data.shape.dims[0]
    n_ids = ids.shape.dims[0] if ids.shape.ndims == 1 else None
    if rows is not None and n_ids is not None and rows != n_ids:
        raise ValueError(f"segment_ids of shape {ids.shape} do not match the first dimension "
                         f"of data {data.shape}")
    return [(data.dtype, TensorShape([None] + list(data.shape.dims[1:])))]


def _unsorted_infer(inputs, attrs):
    require_dtype(inputs[0], NUMERIC, "data")
    return _segment_sum_infer(inputs, attrs)


for _type in SORTED_SEGMENT_OPS:
    define(_type, _sorted_segment_infer, value_dependent_shape=True,
           onnx=no_onnx.none("sorted segment ids give a number of rows read from the ids' values "
                             "(ids[-1] + 1); not mapped yet"))
for _type in UNSORTED_SEGMENT_OPS:
    define(_type, _unsorted_infer, onnx=no_onnx.none(
        "ONNX ScatterND's max/min reductions need opset 18 and run-time lowest/highest fills; "
        "not mapped yet"))


def _sorted(op_type, default_name):
    def op(data, segment_ids, name=None):
        return make_tensor(op_type, (convert_to_tensor(data), convert_to_tensor(segment_ids)),
                           name=name or op_type)
    op.__name__ = op.__qualname__ = default_name
    op.__doc__ = (f"`tf.{default_name}` over the rows of `data`: segment_ids is a sorted vector "
                  "with one id per row; the output has ids[-1] + 1 rows (an empty segment "
                  "gives 0).")
    return op


def _unsorted(op_type, default_name):
    def op(data, segment_ids, num_segments, name=None):
        data = convert_to_tensor(data)
        ids = convert_to_tensor(segment_ids)
        num = convert_to_tensor(num_segments,
                                dtype=None if is_tensor_like(num_segments) else ids.dtype)
        return make_tensor(op_type, (data, ids, num), name=name or op_type)
    op.__name__ = op.__qualname__ = default_name
    op.__doc__ = (f"`tf.{default_name}`: out[i] reduces the data[j...] with segment_ids[j...] "
                  "== i over `num_segments` rows; negative ids are dropped, an empty segment "
                  "gives the dtype's lowest (max) or highest (min) value.")
    return op


segment_sum = _sorted("SegmentSum", "segment_sum")
segment_mean = _sorted("SegmentMean", "segment_mean")
segment_max = _sorted("SegmentMax", "segment_max")
segment_min = _sorted("SegmentMin", "segment_min")
unsorted_segment_max = _unsorted("UnsortedSegmentMax", "unsorted_segment_max")
unsorted_segment_min = _unsorted("UnsortedSegmentMin", "unsorted_segment_min")


# ---------------------------------------------------------------- bincount
def _bincount_infer(inputs, attrs):
    arr, weights = inputs
    if arr.dtype != dtypes.int32:
        raise TypeError(f"bincount: arr must be int32, got {arr.dtype.name}")
    require_dtype(weights, NUMERIC, "weights")
    low, high = attrs["minlength"], attrs["maxlength"]
    return [(weights.dtype, TensorShape([high if low >= high >= 0 else None]))]


# The length max(arr) + 1, clipped to [minlength, maxlength] (-1: no bound), is found by the
# kernel itself (TF1's Python computes it into a `size` input), so no value computed on a device
# has to come back to the host before the counting starts.
define("Bincount", _bincount_infer, attrs="minlength:int maxlength:int", value_dependent_shape=True,
       onnx=no_onnx.none("a length read from the values (max + 1) and a scatter-add of counts; "
                         "not mapped yet"))


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32, name=None):
    """`tf.math.bincount`: out[i] = how many times i occurs in `arr` (or the sum of the `weights`
    at those places); the length is max(arr) + 1 (0 for an empty arr), at least `minlength`
    and at most `maxlength` (values beyond it are ignored; both known when the graph is built).
    arr must be non-negative."""
    arr = convert_to_tensor(arr, dtype=None if is_tensor_like(arr) else dtypes.int32)
    if arr.dtype != dtypes.int32:
        raise TypeError(f"bincount: arr must be int32, got {arr.dtype.name}")
    attrs = {"minlength": -1 if minlength is None else max(static_axis(minlength, "minlength"), 0),
             "maxlength": -1 if maxlength is None else max(static_axis(maxlength, "maxlength"), 0)}
    if weights is None:
        weights = constant(np.zeros([0], dtypes.as_dtype(dtype).as_numpy_dtype))
    else:
        weights = convert_to_tensor(weights)
    return make_tensor("Bincount", (arr, weights), attrs, name=name or "bincount")


__all__ = ["segment_sum", "segment_mean", "segment_max", "segment_min", "unsorted_segment_max",
           "unsorted_segment_min", "bincount"]
