"""Gradient of ExtractImagePatches, composed as TF composes it: the patches of an image of pixel
numbers (1 + row * cols + col; 0 marks padding) say where each patch value came from, and
unsorted_segment_sum adds the incoming gradient back onto those pixels (padding's sum dropped)."""

from graphflow.ops import array_ops, patches_ops, shape_ops
from graphflow.ops.registry import register_gradient


@register_gradient("ExtractImagePatches")
def _extract_image_patches_grad(op, grad):
    attrs = op.attrs
    shape = shape_ops.shape(op.inputs[0])
    batch, rows, cols, channels = shape[0], shape[1], shape[2], shape[3]
    pixels = rows * cols
    numbers = shape_ops.reshape(array_ops.range(1, pixels + 1), shape_ops.stack([1, rows, cols, 1]))
    source = patches_ops.extract_image_patches(numbers, attrs["ksizes"], attrs["strides"],
                                               attrs["rates"], attrs["padding"])  # [1, r, c, kk]
    out_shape = shape_ops.shape(grad)
    taps = attrs["ksizes"][1] * attrs["ksizes"][2]
    # grad [b, r, c, kk * ch] -> [r * c * kk, b * ch], rows in the order of `source`'s entries
    g = shape_ops.reshape(grad, shape_ops.stack([batch, out_shape[1], out_shape[2], taps,
                                                 channels]))
    g = shape_ops.reshape(array_ops.transpose(g, [1, 2, 3, 0, 4]),
                          shape_ops.stack([-1, batch * channels]))
    summed = array_ops.unsorted_segment_sum(g, shape_ops.reshape(source, [-1]), pixels + 1)
    image_grad = shape_ops.reshape(summed[1:], shape_ops.stack([rows, cols, batch, channels]))
    return array_ops.transpose(image_grad, [2, 0, 1, 3])
