"""Gradient rules for the reorder ops: each moves entries, so its gradient moves them back
(Roll by the opposite shift; SpaceToDepth and DepthToSpace, SpaceToBatchND and BatchToSpaceND are
each other's gradient)."""

from graphflow.ops import math_ops, reorder_ops
from graphflow.ops.registry import register_gradient


@register_gradient("Roll")
def _roll_grad(op, grad):
    _, shift, axis = op.inputs
    return reorder_ops.roll(grad, math_ops.negative(shift), axis), None, None


@register_gradient("SpaceToDepth")
def _space_to_depth_grad(op, grad):
    return reorder_ops.depth_to_space(grad, op.attrs["block_size"],
                                      data_format=op.attrs.get("data_format", "NHWC"))


@register_gradient("DepthToSpace")
def _depth_to_space_grad(op, grad):
    return reorder_ops.space_to_depth(grad, op.attrs["block_size"],
                                      data_format=op.attrs.get("data_format", "NHWC"))


@register_gradient("SpaceToBatchND")
def _space_to_batch_grad(op, grad):
    _, block_shape, paddings = op.inputs
    return reorder_ops.batch_to_space_nd(grad, block_shape, paddings), None, None


@register_gradient("BatchToSpaceND")
def _batch_to_space_grad(op, grad):
    _, block_shape, crops = op.inputs
    return reorder_ops.space_to_batch_nd(grad, block_shape, crops), None, None
