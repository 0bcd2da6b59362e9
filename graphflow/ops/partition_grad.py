"""Gradient rules for DynamicPartition and DynamicStitch (TF1's): a partition's gradient stitches
the outputs' gradients back to where their slices came from (partitioning the positions the same
way); a stitch's gradient gathers each data tensor's slices from the merged gradient."""

from graphflow.framework import dtypes
from graphflow.ops import array_ops, math_ops, partition_ops, shape_ops
from graphflow.ops.registry import register_gradient


@register_gradient("DynamicPartition")
def _dynamic_partition_grad(op, *grads):
    data, partitions = op.inputs
    prefix = shape_ops.shape(partitions)
    positions = shape_ops.reshape(
        array_ops.range(0, math_ops.reduce_prod(prefix), 1, dtype=dtypes.int32), prefix)
    parts = partition_ops.dynamic_partition(positions, partitions, op.attrs["num_partitions"])
    stitched = partition_ops.dynamic_stitch(parts, list(grads))
    return shape_ops.reshape(stitched, shape_ops.shape(data)), None


@register_gradient("DynamicStitch")
def _dynamic_stitch_grad(op, grad):
    n = op.attrs["N"]
    indices = op.inputs[:n]
    return [None] * n + [array_ops.gather(grad, ix) for ix in indices]
