"""DynamicPartition and DynamicStitch (TF1's `tf.dynamic_partition`, `tf.dynamic_stitch`).

DynamicPartition(data, partitions) -> num_partitions outputs: output i holds the slices
data[j...] with partitions[j...] == i, in order; each has shape [n_i] + data.shape[partitions.ndim:].
DynamicStitch(indices_0..N-1, data_0..N-1) -> merged with merged[indices_m[j...]] = data_m[j...]
(later entries win on repeated indices) and shape [max index + 1] + data_0.shape[indices_0.ndim:].
Both output lengths depend on the values (`value_dependent_shape`).
"""

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import consumer_scope, convert_to_tensor
from graphflow.ops.registry import define, make_op, make_tensor, require_dtype


def _partition_infer(inputs, attrs):
    data, partitions = inputs
    require_dtype(partitions, (dtypes.int32,), "partitions")
    n = attrs["num_partitions"]
    if n < 1:
        raise ValueError(f"num_partitions must be at least 1, got {n}")
    p = partitions.shape
    if p.ndims is None or data.shape.ndims is None:
        return [(data.dtype, TensorShape(None))] * n
    if data.shape.ndims < p.ndims or not data.shape[:p.ndims].is_compatible_with(p):
        raise ValueError(f"partitions {p} must be a prefix of the shape of data {data.shape}")
    return [(data.dtype, TensorShape([None]).concatenate(data.shape[p.ndims:]))] * n


define("DynamicPartition", _partition_infer, attrs="num_partitions:int",
       value_dependent_shape=True,
       onnx=no_onnx.none("a variable number of value-dependent outputs: no ONNX op; not mapped yet"))


def dynamic_partition(data, partitions, num_partitions, name=None):
    """`tf.dynamic_partition`: split `data` into `num_partitions` tensors by `partitions`."""
    data = convert_to_tensor(data)
    partitions = convert_to_tensor(partitions, dtype=dtypes.int32)
    with consumer_scope(name, "DynamicPartition", (data,)) as op_name:
        op = make_op("DynamicPartition", (data, partitions),
                     {"num_partitions": int(num_partitions)}, name=op_name)
    return list(op.outputs)


def _stitch_infer(inputs, attrs):
    n = attrs["N"]
    if len(inputs) != 2 * n or n < 1:
        raise ValueError(f"expected {n} index tensors and {n} data tensors, got {len(inputs)} "
                         "inputs")
    indices, data = inputs[:n], inputs[n:]
    dtype = data[0].dtype
    constant = None
    for i, (ix, d) in enumerate(zip(indices, data)):
        require_dtype(ix, (dtypes.int32,), f"indices[{i}]")
        if d.dtype != dtype:
            raise TypeError(f"data[{i}] has dtype {d.dtype.name}, data[0] has {dtype.name}")
        if ix.shape.ndims is None or d.shape.ndims is None:
            continue
        if d.shape.ndims < ix.shape.ndims or not d.shape[:ix.shape.ndims].is_compatible_with(
                ix.shape):
            raise ValueError(f"data[{i}] {d.shape} must start with the shape of indices[{i}] "
                             f"{ix.shape}")
        rest = d.shape[ix.shape.ndims:]
        if constant is not None and not constant.is_compatible_with(rest):
            raise ValueError(f"data[{i}] {d.shape} does not match the other data's trailing "
                             f"shape {constant}")
        constant = rest if constant is None else constant.merge_with(rest)
    if constant is None:
        return [(dtype, TensorShape(None))]
    return [(dtype, TensorShape([None]).concatenate(constant))]


define("DynamicStitch", _stitch_infer, attrs="N:int", value_dependent_shape=True,
       onnx=no_onnx.none("value-dependent output (ScatterND into a size read from the indices); "
                         "not mapped yet"))


def dynamic_stitch(indices, data, name=None):
    """`tf.dynamic_stitch`: interleave the `data` tensors into one by their `indices`."""
    indices = [convert_to_tensor(i, dtype=dtypes.int32) for i in indices]
    data = [convert_to_tensor(d) for d in data]
    if len(indices) != len(data):
        raise ValueError(f"dynamic_stitch needs as many data tensors ({len(data)}) as index "
                         f"tensors ({len(indices)})")
    with consumer_scope(name, "DynamicStitch", data) as op_name:
        return make_tensor("DynamicStitch", indices + data, {"N": len(data)}, name=op_name)


parallel_dynamic_stitch = dynamic_stitch

__all__ = ["dynamic_partition", "dynamic_stitch"]
