"""Convolution and pooling ops of `tf.nn`: conv2d (+ its two backprop ops, conv2d_transpose),
max_pool / avg_pool (+ MaxPoolGrad, MaxPoolGradGrad, AvgPoolGrad). 4-D tensors in NHWC (default) or
NCHW; filters HWIO; `strides` / `ksize` / `dilations` are 4-lists in the data format's order (an int
or a 2-list of spatial values is also accepted); padding "SAME" or "VALID" with TF's output sizes:
VALID: ceil((in - (k - 1) * d) / s), SAME: ceil(in / s), SAME padding split with the extra on the end.
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor, name_scope
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import FLOATS, INTEGERS, define, make_tensor, require_dtype, same_dtype
from graphflow.ops.shape_ops import shape_tensor
from graphflow.ops.static_value import shape_vector

_FORMATS = ("NHWC", "NCHW")


# ---------------------------------------------------------------- attribute normalisation
def _data_format(data_format):
    data_format = data_format or "NHWC"
    if data_format not in _FORMATS:
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    return data_format


def _four(value, data_format, what, default=1):
    """An int, 1-, 2- or 4-list of window values -> the 4-list in `data_format` order."""
    if value is None:
        value = default
    if isinstance(value, Tensor):
        raise TypeError(f"{what} must be Python ints, not a Tensor")
    values = [int(value)] if not isinstance(value, (list, tuple)) else [int(v) for v in value]
    if len(values) == 1:
        values = values * 2
    if len(values) == 2:
        h, w = values
        values = [1, h, w, 1] if data_format == "NHWC" else [1, 1, h, w]
    if len(values) != 4:
        raise ValueError(f"{what} must have 1, 2 or 4 elements, got {value}")
    batch, channel = values[0], values[3 if data_format == "NHWC" else 1]
    if batch != 1 or channel != 1:
        raise ValueError(f"{what} {values} must be 1 in the batch and channel dimensions "
                         f"(data_format={data_format})")
    if any(v < 1 for v in values):
        raise ValueError(f"{what} must be positive, got {values}")
    return values


def _padding(padding):
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    return padding.upper()


def spatial(values, data_format):
    """(h, w) of a 4-list or 4-D shape in `data_format` order."""
    return (values[1], values[2]) if data_format == "NHWC" else (values[2], values[3])


def output_size(size, k, s, d, padding):
    """TF's output size along one spatial dim (None when unknown); errors when VALID is too big."""
    if size is None or k is None:
        return None
    effective = (k - 1) * d + 1
    if padding == "SAME":
        return -(-size // s)
    if size < effective:
        raise ValueError(f"the window ({effective}) is larger than the input ({size}) with "
                         "VALID padding: the output size would be negative")
    return (size - effective) // s + 1


def _nhwc(shape, data_format):
    """(n, h, w, c) of a static 4-D shape, or all None when the rank is unknown."""
    if shape.ndims is None:
        return None, None, None, None
    if shape.ndims != 4:
        raise ValueError(f"expected a 4-D tensor, got shape {shape}")
    d = shape.dims
    return (d[0], d[1], d[2], d[3]) if data_format == "NHWC" else (d[0], d[2], d[3], d[1])


def _from_nhwc(n, h, w, c, data_format):
    return TensorShape([n, h, w, c] if data_format == "NHWC" else [n, c, h, w])


def _merge(a, b, what):
    if a is None or b is None or a == b:
        return a if a is not None else b
    raise ValueError(f"{what} do not match: {a} vs {b}")


def _conv_output(in_shape, filter_shape, attrs):
    fmt = attrs["data_format"]
    n, h, w, c = _nhwc(in_shape, fmt)
    if filter_shape.ndims not in (None, 4):
        raise ValueError(f"filter must be 4-D [height, width, in_channels, out_channels], got "
                         f"{filter_shape}")
    kh, kw, ki, ko = filter_shape.dims if filter_shape.ndims == 4 else (None,) * 4
    _merge(c, ki, "input channels and the filter's in_channels")
    (sh, sw), (dh, dw) = spatial(attrs["strides"], fmt), spatial(attrs["dilations"], fmt)
    oh = output_size(h, kh, sh, dh, attrs["padding"])
    ow = output_size(w, kw, sw, dw, attrs["padding"])
    return _from_nhwc(n, oh, ow, ko, fmt)


def _check_backprop(out_shape, expected, what):
    if not out_shape.is_compatible_with(expected):
        raise ValueError(f"out_backprop of shape {out_shape} does not match the {what} output shape "
                         f"{expected}")


# ---------------------------------------------------------------- conv2d
_CONV_ATTRS = ("strides:int>=1|list(int>=1) padding:string data_format:none|string "
               "dilations:int>=1|list(int>=1)")


def _sizes(t, rank=4):
    require_dtype(t, (dtypes.int32, dtypes.int64), "sizes")
    dims = shape_vector(t)
    return TensorShape(dims) if dims is not None else TensorShape([None] * rank)


def convolution_shape_rules(conv_output, rank):
    """The shape rules of a convolution family (2-D here, 3-D in `conv3d_ops.py`) from its output
    shape rule `conv_output(input shape, filter shape, attrs)` and its tensors' rank: the
    convolution, its input backprop (input shape from `sizes`) and its filter backprop (filter
    shape from `sizes`), each backprop checking `out_backprop` against the forward output."""

    def conv_infer(inputs, attrs):
        x, f = inputs
        dt = same_dtype(inputs, "input and filter")
        require_dtype(x, FLOATS, "input")
        return [(dt, conv_output(x.shape, f.shape, attrs))]

    def backprop_input_infer(inputs, attrs):
        sizes, f, g = inputs
        dt = same_dtype([f, g], "filter and out_backprop")
        require_dtype(f, FLOATS, "filter")
        in_shape = _sizes(sizes, rank)
        _check_backprop(g.shape, conv_output(in_shape, f.shape, attrs), "convolution")
        return [(dt, in_shape)]

    def backprop_filter_infer(inputs, attrs):
        x, sizes, g = inputs
        dt = same_dtype([x, g], "input and out_backprop")
        require_dtype(x, FLOATS, "input")
        f_shape = _sizes(sizes, rank)
        _check_backprop(g.shape, conv_output(x.shape, f_shape, attrs), "convolution")
        return [(dt, f_shape)]

    return conv_infer, backprop_input_infer, backprop_filter_infer


_conv2d_infer, _conv2d_backprop_input_infer, _conv2d_backprop_filter_infer = (
    convolution_shape_rules(_conv_output, rank=4))


# The NCHW kernels transpose to NHWC, run the NHWC kernel and transpose back: `layout_attrs`.
define("Conv2D", _conv2d_infer, attrs=_CONV_ATTRS, layout_attrs=("strides", "dilations"),
       fresh_output=True, onnx={"converter": "conv"})
define("Conv2DBackpropInput", _conv2d_backprop_input_infer, attrs=_CONV_ATTRS, fresh_output=True,
       onnx=no_onnx.GRADIENT)
define("Conv2DBackpropFilter", _conv2d_backprop_filter_infer, attrs=_CONV_ATTRS, fresh_output=True,
       onnx=no_onnx.GRADIENT)


def _conv_attrs(strides, padding, data_format, dilations):
    fmt = _data_format(data_format)
    if strides is None:
        raise ValueError("conv2d needs strides (e.g. [1, 1, 1, 1])")
    return {"strides": _four(strides, fmt, "strides"), "padding": _padding(padding),
            "data_format": fmt, "dilations": _four(dilations, fmt, "dilations")}


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,
           data_format="NHWC", dilations=(1, 1, 1, 1), name=None, filters=None):
    """`tf.nn.conv2d`: 2-D cross-correlation of a 4-D `input` with a [kh, kw, in, out] `filter`."""
    filter = filters if filter is None else filter
    if filter is None:
        raise ValueError("conv2d needs a filter")
    x = convert_to_tensor(input)
    f = convert_to_tensor(filter, dtype=x.dtype)
    return make_tensor("Conv2D", (x, f), _conv_attrs(strides, padding, data_format, dilations),
                       name=name or "Conv2D")


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None, padding=None,
                          use_cudnn_on_gpu=True, data_format="NHWC", dilations=(1, 1, 1, 1),
                          name=None, filters=None):
    """`tf.nn.conv2d_backprop_input`: the gradient of conv2d with respect to its input."""
    filter = filters if filter is None else filter
    f = convert_to_tensor(filter)
    g = convert_to_tensor(out_backprop, dtype=f.dtype)
    sizes = shape_tensor(input_sizes)
    return make_tensor("Conv2DBackpropInput", (sizes, f, g),
                       _conv_attrs(strides, padding, data_format, dilations),
                       name=name or "Conv2DBackpropInput")


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,
                           use_cudnn_on_gpu=True, data_format="NHWC", dilations=(1, 1, 1, 1),
                           name=None):
    """`tf.nn.conv2d_backprop_filter`: the gradient of conv2d with respect to its filter."""
    x = convert_to_tensor(input)
    g = convert_to_tensor(out_backprop, dtype=x.dtype)
    sizes = shape_tensor(filter_sizes)
    return make_tensor("Conv2DBackpropFilter", (x, sizes, g),
                       _conv_attrs(strides, padding, data_format, dilations),
                       name=name or "Conv2DBackpropFilter")


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="SAME",
                     data_format="NHWC", name=None, input=None, filters=None, dilations=None):
    """`tf.nn.conv2d_transpose`: the transpose (adjoint) of conv2d; `filter` is [kh, kw, out, in]."""
    value = input if value is None else value
    filter = filters if filter is None else filter
    if value is None or filter is None or output_shape is None:
        raise ValueError("conv2d_transpose needs value, filter and output_shape")
    return conv2d_backprop_input(output_shape, filter, value, strides=strides, padding=padding,
                                 data_format=data_format, dilations=dilations or 1,
                                 name=name or "conv2d_transpose")


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None,
           data_format=None, name=None, input=None, dilations=None):
    """`tf.nn.conv1d`: a [batch, width, in] (NWC) or [batch, in, width] (NCW) signal convolved with
    [kw, in, out] `filters`, as conv2d over a height-1 image."""
    value = input if value is None else value
    if value is None or filters is None or stride is None:
        raise ValueError("conv1d needs value, filters and stride")
    data_format = data_format or "NWC"
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"data_format must be 'NWC' or 'NCW', got {data_format!r}")
    stride = stride[-1 if data_format == "NWC" else 2] if isinstance(stride, (list, tuple)) else stride
    if isinstance(dilations, (list, tuple)):
        dilations = dilations[-1 if data_format == "NWC" else 2]
    x = convert_to_tensor(value)
    f = convert_to_tensor(filters, dtype=x.dtype)
    spatial_axis = 1 if data_format == "NWC" else 2
    fmt = "NHWC" if data_format == "NWC" else "NCHW"
    with name_scope(name, "conv1d", [x, f]):
        image = shape_ops.expand_dims(x, spatial_axis)
        out = conv2d(image, shape_ops.expand_dims(f, 0), strides=[1, int(stride)], padding=padding,
                     data_format=fmt, dilations=[1, int(dilations or 1)])
        return shape_ops.squeeze(out, [spatial_axis])


# ---------------------------------------------------------------- pooling
_POOL_ATTRS = ("ksize:int>=1|list(int>=1) strides:int>=1|list(int>=1) padding:string "
               "data_format:none|string")


def _pool_output(shape, attrs):
    fmt = attrs["data_format"]
    n, h, w, c = _nhwc(shape, fmt)
    (kh, kw), (sh, sw) = spatial(attrs["ksize"], fmt), spatial(attrs["strides"], fmt)
    oh = output_size(h, kh, sh, 1, attrs["padding"])
    ow = output_size(w, kw, sw, 1, attrs["padding"])
    return _from_nhwc(n, oh, ow, c, fmt)


def _pool_infer(allowed):
    def infer(inputs, attrs):
        (x,) = inputs
        require_dtype(x, allowed, "input")
        return [(x.dtype, _pool_output(x.shape, attrs))]
    return infer


def max_pool_grad_infer(output_is_input_shaped, rank=4, pool_output=None):
    """MaxPoolGrad: grad is pooled-shaped, the result input-shaped; MaxPoolGradGrad: the reverse.
    `rank` and `pool_output` (the pooled shape of an input shape and the attrs) serve the 3-D
    ops too (conv3d_ops)."""
    pooled = pool_output or _pool_output

    def infer(inputs, attrs):
        x, y, g = inputs
        dt = same_dtype(inputs, "orig_input, orig_output and grad")
        require_dtype(x, FLOATS, "orig_input")
        in_shape = x.shape if x.shape.ndims is not None else TensorShape([None] * rank)
        out = pooled(in_shape, attrs)
        if not y.shape.is_compatible_with(out):
            raise ValueError(f"orig_output of shape {y.shape} does not match the pooled shape {out}")
        out = out.merge_with(y.shape)
        grad_shape, result = (out, in_shape) if output_is_input_shaped else (in_shape, out)
        if not g.shape.is_compatible_with(grad_shape):
            raise ValueError(f"grad of shape {g.shape} does not match the expected {grad_shape}")
        return [(dt, result)]
    return infer


def _avg_pool_grad_infer(inputs, attrs):
    sizes, g = inputs
    require_dtype(g, FLOATS, "grad")
    in_shape = _sizes(sizes)
    _check_backprop(g.shape, _pool_output(in_shape, attrs), "pooling")
    return [(g.dtype, in_shape)]


define("MaxPool", _pool_infer(FLOATS + INTEGERS), attrs=_POOL_ATTRS,
       layout_attrs=("ksize", "strides"), fresh_output=True, onnx={"converter": "pool", "op": "MaxPool"})
define("AvgPool", _pool_infer(FLOATS), attrs=_POOL_ATTRS, layout_attrs=("ksize", "strides"),
       fresh_output=True, onnx={"converter": "pool", "op": "AveragePool"})
define("MaxPoolGrad", max_pool_grad_infer(True), attrs=_POOL_ATTRS, fresh_output=True, onnx=no_onnx.GRADIENT)
define("MaxPoolGradGrad", max_pool_grad_infer(False), attrs=_POOL_ATTRS, fresh_output=True,
       onnx=no_onnx.GRADIENT)
define("AvgPoolGrad", _avg_pool_grad_infer, attrs=_POOL_ATTRS, fresh_output=True, onnx=no_onnx.GRADIENT)


def _pool_attrs(ksize, strides, padding, data_format):
    fmt = _data_format(data_format)
    if ksize is None or strides is None:
        raise ValueError("pooling needs ksize and strides (e.g. [1, 2, 2, 1])")
    return {"ksize": _four(ksize, fmt, "ksize"), "strides": _four(strides, fmt, "strides"),
            "padding": _padding(padding), "data_format": fmt}


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):
    """`tf.nn.max_pool`: the maximum over each ksize window (SAME pads with -inf)."""
    value = input if value is None else value
    return make_tensor("MaxPool", (convert_to_tensor(value),),
                       _pool_attrs(ksize, strides, padding, data_format), name=name or "MaxPool")


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):
    """`tf.nn.avg_pool`: the mean over each window; SAME windows average only real elements."""
    value = input if value is None else value
    return make_tensor("AvgPool", (convert_to_tensor(value),),
                       _pool_attrs(ksize, strides, padding, data_format), name=name or "AvgPool")


def max_pool_grad(orig_input, orig_output, grad, ksize, strides, padding, data_format="NHWC",
                  name=None):
    """The gradient of max_pool: `grad` routed to the (first) maximum of each window."""
    x = convert_to_tensor(orig_input)
    y = convert_to_tensor(orig_output, dtype=x.dtype)
    g = convert_to_tensor(grad, dtype=x.dtype)
    return make_tensor("MaxPoolGrad", (x, y, g), _pool_attrs(ksize, strides, padding, data_format),
                       name=name or "MaxPoolGrad")


def max_pool_grad_grad(orig_input, orig_output, grad, ksize, strides, padding, data_format="NHWC",
                       name=None):
    """The gradient of MaxPoolGrad w.r.t. its grad: gathers input-shaped `grad` at each window's
    (first) maximum, giving a pooled-shape tensor."""
    x = convert_to_tensor(orig_input)
    y = convert_to_tensor(orig_output, dtype=x.dtype)
    g = convert_to_tensor(grad, dtype=x.dtype)
    return make_tensor("MaxPoolGradGrad", (x, y, g),
                       _pool_attrs(ksize, strides, padding, data_format),
                       name=name or "MaxPoolGradGrad")


def avg_pool_grad(orig_input_shape, grad, ksize, strides, padding, data_format="NHWC", name=None):
    """The gradient of avg_pool: each window's gradient spread evenly over its real elements."""
    g = convert_to_tensor(grad)
    return make_tensor("AvgPoolGrad", (shape_tensor(orig_input_shape), g),
                       _pool_attrs(ksize, strides, padding, data_format), name=name or "AvgPoolGrad")


max_pool2d = max_pool
avg_pool2d = avg_pool

__all__ = ["conv1d", "conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "conv2d_transpose",
           "max_pool", "avg_pool", "max_pool2d", "avg_pool2d"]
