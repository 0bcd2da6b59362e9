"""The gradient rule of MaxPoolWithArgmax (`pool_argmax_ops.py`): each pooled value's gradient
goes to the input element its argmax names (summed where windows overlap on one element), built
from ordinary ops (an unsorted segment sum over the flattened input), so it has gradients of its
own. The argmax output, an index, has none."""

from graphflow.framework import dtypes
from graphflow.ops import array_ops, math_ops, shape_ops
from graphflow.ops.registry import register_gradient


@register_gradient("MaxPoolWithArgmax")
def _max_pool_with_argmax_grad(op, grad, _unused_argmax_grad):
    if grad is None:
        return (None,)
    x = op.inputs[0]
    index = math_ops.cast(op.outputs[1], dtypes.int64)
    if not op.attrs.get("include_batch_in_index", False):
        # the argmax counts within one image: add each image's offset in the flattened batch
        shape = shape_ops.shape(x, out_type=dtypes.int64)
        per_image = math_ops.reduce_prod(shape[1:])
        batch = array_ops.range(shape[0]) * per_image
        index = index + shape_ops.reshape(batch, [-1, 1, 1, 1])
    flat = array_ops.unsorted_segment_sum(shape_ops.reshape(grad, [-1]), shape_ops.reshape(index, [-1]),
                                shape_ops.size(x, out_type=dtypes.int64))
    return (shape_ops.reshape(flat, shape_ops.shape(x)),)
