"""Convolutions of `tf.nn` built from conv2d: `conv3d`, `depthwise_conv2d` and `separable_conv2d`.

They are compositions of existing ops (pad, strided slices, reshapes, Conv2D), so their gradients
are those of the parts and no kernel is duplicated:
- conv3d (NDHWC, filter [kd, kh, kw, in, out]): for each filter depth tap `i`, the input depth
  slices `i, i + sd, ...` are folded into the batch and convolved with `filter[i]` by conv2d; the
  taps are summed. Needs static depth sizes.
- depthwise_conv2d (filter [kh, kw, in, multiplier]): one conv2d with a block-diagonal filter
  [kh, kw, in, in * multiplier], output channel `c * multiplier + m` as in TF.
- separable_conv2d: depthwise_conv2d, then a 1x1 conv2d with the pointwise filter.
"""

from graphflow.framework.graph import name_scope
from graphflow.ops import array_ops, conv_ops, math_ops, shape_ops
from graphflow.ops.core_ops import constant, convert_to_tensor


def _five(value, what):
    values = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)] * 3
    if len(values) == 3:
        values = [1] + values + [1]
    if len(values) != 5 or values[0] != 1 or values[4] != 1:
        raise ValueError(f"{what} must be 5 values [1, d, h, w, 1] (NDHWC), got {value}")
    return values


def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC",
           dilations=(1, 1, 1, 1, 1), name=None, filters=None):
    """`tf.nn.conv3d`: 3-D cross-correlation of [batch, depth, height, width, in] with
    [kd, kh, kw, in, out]; `strides` [1, sd, sh, sw, 1]; padding 'SAME' or 'VALID'."""
    filter = filters if filter is None else filter
    if data_format != "NDHWC":
        raise ValueError(f"conv3d supports data_format='NDHWC' only, got {data_format!r}")
    if strides is None or padding is None or filter is None:
        raise ValueError("conv3d needs filter, strides and padding")
    strides = _five(strides, "strides")
    if _five(dilations, "dilations") != [1, 1, 1, 1, 1]:
        raise ValueError("conv3d: dilations other than 1 are not supported")
    padding = str(padding).upper()
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    with name_scope(name, "Conv3D", [input, filter]) as scope:
        x = convert_to_tensor(input)
        f = convert_to_tensor(filter, dtype=x.dtype)
        if x.shape.ndims != 5 or f.shape.ndims != 5:
            raise ValueError(f"conv3d needs a 5-D input and filter, got {x.shape} and {f.shape}")
        depth, height, width, channels = x.shape.dims[1:]
        kd = f.shape[0]
        if depth is None or kd is None or height is None or width is None or channels is None:
            raise ValueError(f"conv3d needs static depth, height, width and channels, got input "
                             f"{x.shape} and filter {f.shape}")
        sd = strides[1]
        if padding == "SAME":
            out_depth = -(-depth // sd)
            total = max((out_depth - 1) * sd + kd - depth, 0)
            x = array_ops.pad(x, [[0, 0], [total // 2, total - total // 2], [0, 0], [0, 0],
                                  [0, 0]])
        else:
            if depth < kd:
                raise ValueError(f"conv3d: the filter depth ({kd}) is larger than the input depth "
                                 f"({depth}) with VALID padding")
            out_depth = (depth - kd) // sd + 1
        total = None
        for tap in range(kd):
            slab = x[:, tap:tap + (out_depth - 1) * sd + 1:sd]
            images = shape_ops.reshape(slab, [-1, height, width, channels])
            out = conv_ops.conv2d(images, f[tap], strides=[1, strides[2], strides[3], 1],
                                  padding=padding)
            total = out if total is None else math_ops.add(total, out)
        out_h, out_w, out_c = total.shape.dims[1:]
        return shape_ops.reshape(total, [-1, out_depth, out_h, out_w, out_c], name=scope)


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None, data_format=None,
                     dilations=None):
    """`tf.nn.depthwise_conv2d`: each input channel convolved with its own `multiplier` filters
    ([kh, kw, in, multiplier]); output channel `c * multiplier + m`."""
    with name_scope(name, "depthwise", [input, filter]) as scope:
        x = convert_to_tensor(input)
        f = convert_to_tensor(filter, dtype=x.dtype)
        if f.shape.ndims != 4 or any(d is None for d in f.shape.dims):
            raise ValueError(f"depthwise_conv2d needs a static 4-D filter, got {f.shape}")
        kh, kw, channels, multiplier = f.shape.dims
        eye = constant([[1.0 if i == j else 0.0 for j in range(channels)]
                        for i in range(channels)], dtype=x.dtype)
        block = math_ops.multiply(shape_ops.reshape(f, [kh, kw, channels, 1, multiplier]),
                                  shape_ops.reshape(eye, [1, 1, channels, channels, 1]))
        full = shape_ops.reshape(block, [kh, kw, channels, channels * multiplier])
        rate = dilations if rate is None else rate
        return conv_ops.conv2d(x, full, strides=strides, padding=padding,
                               data_format=data_format or "NHWC", dilations=rate or 1,
                               name=scope)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None,
                     name=None, data_format=None, dilations=None):
    """`tf.nn.separable_conv2d`: depthwise_conv2d, then a 1x1 conv2d with `pointwise_filter`
    [1, 1, in * multiplier, out]."""
    with name_scope(name, "separable_conv2d", [input, depthwise_filter, pointwise_filter]) as scope:
        depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, rate=rate,
                                     data_format=data_format, dilations=dilations)
        return conv_ops.conv2d(depthwise, convert_to_tensor(pointwise_filter, dtype=depthwise.dtype),
                               strides=[1, 1, 1, 1], padding="VALID",
                               data_format=data_format or "NHWC", name=scope)


__all__ = ["conv3d", "depthwise_conv2d", "separable_conv2d"]
