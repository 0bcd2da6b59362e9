"""3-D convolution and pooling ops of `tf.nn`: conv3d (+ Conv3DBackpropInputV2 and
Conv3DBackpropFilterV2), max_pool3d / avg_pool3d (+ MaxPool3DGrad, MaxPool3DGradGrad,
AvgPool3DGrad), under TF1's op names. 5-D tensors in NDHWC (default) or NCDHW; filters
[kd, kh, kw, in, out]; `strides` / `ksize` / `dilations` are 5-lists in the data format's order (an
int or a 3-list of spatial values is also accepted); padding "SAME" or "VALID" with TF's output
sizes (the same per-axis rule as the 2-D ops of `conv_ops.py`).
"""

from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.conv_ops import (
    _CONV_ATTRS,
    _check_backprop,
    _merge,
    _padding,
    _sizes,
    convolution_shape_rules,
    max_pool_grad_infer,
    output_size,
)
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import FLOATS, INTEGERS, define, make_tensor, require_dtype
from graphflow.ops.shape_ops import shape_tensor

_FORMATS = ("NDHWC", "NCDHW")


def _data_format(data_format):
    data_format = data_format or "NDHWC"
    if data_format not in _FORMATS:
        raise ValueError(f"data_format must be 'NDHWC' or 'NCDHW', got {data_format!r}")
    return data_format


def spatial3(values, data_format):
    """(d, h, w) of a 5-list or 5-D shape in `data_format` order."""
    return tuple(values[1:4]) if data_format == "NDHWC" else tuple(values[2:5])


def _five(value, data_format, what, default=1):
    """An int, 1-, 3- or 5-list of window values -> the 5-list in `data_format` order."""
    if value is None:
        value = default
    values = [int(value)] if not isinstance(value, (list, tuple)) else [int(v) for v in value]
    if len(values) == 1:
        values = values * 3
    if len(values) == 3:
        values = [1, *values, 1] if data_format == "NDHWC" else [1, 1, *values]
    if len(values) != 5:
        raise ValueError(f"{what} must have 1, 3 or 5 elements, got {value}")
    channel = values[4 if data_format == "NDHWC" else 1]
    if values[0] != 1 or channel != 1:
        raise ValueError(f"{what} {values} must be 1 in the batch and channel dimensions "
                         f"(data_format={data_format})")
    if any(v < 1 for v in values):
        raise ValueError(f"{what} must be positive, got {values}")
    return values


def _ndhwc(shape, data_format):
    """(n, d, h, w, c) of a static 5-D shape, all None when the rank is unknown."""
    if shape.ndims is None:
        return (None,) * 5
    if shape.ndims != 5:
        raise ValueError(f"expected a 5-D tensor, got shape {shape}")
    d = shape.dims
    return tuple(d) if data_format == "NDHWC" else (d[0], d[2], d[3], d[4], d[1])


def _from_ndhwc(n, spatial, c, data_format):
    return TensorShape([n, *spatial, c] if data_format == "NDHWC" else [n, c, *spatial])


def _conv_output(in_shape, filter_shape, attrs):
    fmt = attrs["data_format"]
    n, d, h, w, c = _ndhwc(in_shape, fmt)
    if filter_shape.ndims not in (None, 5):
        raise ValueError(f"filter must be 5-D [depth, height, width, in_channels, out_channels], "
                         f"got {filter_shape}")
    kd, kh, kw, ki, ko = filter_shape.dims if filter_shape.ndims == 5 else (None,) * 5
    _merge(c, ki, "input channels and the filter's in_channels")
    out = [output_size(size, k, s, dl, attrs["padding"]) for size, k, s, dl in
           zip((d, h, w), (kd, kh, kw), spatial3(attrs["strides"], fmt),
               spatial3(attrs["dilations"], fmt))]
    return _from_ndhwc(n, out, ko, fmt)


# ---------------------------------------------------------------- conv3d


_conv3d_infer, _backprop_input_infer, _backprop_filter_infer = (
    convolution_shape_rules(_conv_output, rank=5))


define("Conv3D", _conv3d_infer, attrs=_CONV_ATTRS, onnx={"converter": "conv"})
define("Conv3DBackpropInputV2", _backprop_input_infer, attrs=_CONV_ATTRS, onnx=no_onnx.GRADIENT)
define("Conv3DBackpropFilterV2", _backprop_filter_infer, attrs=_CONV_ATTRS, onnx=no_onnx.GRADIENT)


def _conv_attrs(strides, padding, data_format, dilations):
    fmt = _data_format(data_format)
    if strides is None:
        raise ValueError("conv3d needs strides (e.g. [1, 1, 1, 1, 1])")
    return {"strides": _five(strides, fmt, "strides"), "padding": _padding(padding),
            "data_format": fmt, "dilations": _five(dilations, fmt, "dilations")}


def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC",
           dilations=(1, 1, 1, 1, 1), name=None, filters=None):
    """`tf.nn.conv3d`: 3-D cross-correlation of a 5-D `input` with a [kd, kh, kw, in, out]
    `filter`."""
    filter = filters if filter is None else filter
    if filter is None:
        raise ValueError("conv3d needs a filter")
    x = convert_to_tensor(input)
    f = convert_to_tensor(filter, dtype=x.dtype)
    return make_tensor("Conv3D", (x, f), _conv_attrs(strides, padding, data_format, dilations),
                       name=name or "Conv3D")


def conv3d_backprop_input_v2(input_sizes, filter, out_backprop, strides, padding,
                             data_format="NDHWC", dilations=(1, 1, 1, 1, 1), name=None):
    """The gradient of conv3d with respect to its input (TF's Conv3DBackpropInputV2)."""
    f = convert_to_tensor(filter)
    g = convert_to_tensor(out_backprop, dtype=f.dtype)
    return make_tensor("Conv3DBackpropInputV2", (shape_tensor(input_sizes), f, g),
                       _conv_attrs(strides, padding, data_format, dilations),
                       name=name or "Conv3DBackpropInputV2")


def conv3d_backprop_filter_v2(input, filter_sizes, out_backprop, strides, padding,
                              data_format="NDHWC", dilations=(1, 1, 1, 1, 1), name=None):
    """The gradient of conv3d with respect to its filter (TF's Conv3DBackpropFilterV2)."""
    x = convert_to_tensor(input)
    g = convert_to_tensor(out_backprop, dtype=x.dtype)
    return make_tensor("Conv3DBackpropFilterV2", (x, shape_tensor(filter_sizes), g),
                       _conv_attrs(strides, padding, data_format, dilations),
                       name=name or "Conv3DBackpropFilterV2")


def conv3d_transpose(value, filter=None, output_shape=None, strides=None, padding="SAME",
                     data_format="NDHWC", name=None, input=None, filters=None, dilations=None):
    """`tf.nn.conv3d_transpose`: the adjoint of conv3d; `filter` is [kd, kh, kw, out, in]."""
    value = input if value is None else value
    filter = filters if filter is None else filter
    if value is None or filter is None or output_shape is None:
        raise ValueError("conv3d_transpose needs value, filter and output_shape")
    return conv3d_backprop_input_v2(output_shape, filter, value, strides, padding,
                                    data_format=data_format, dilations=dilations or 1,
                                    name=name or "conv3d_transpose")


# ---------------------------------------------------------------- pooling
_POOL_ATTRS = ("ksize:int>=1|list(int>=1) strides:int>=1|list(int>=1) padding:string "
               "data_format:none|string")


def _pool_output(shape, attrs):
    fmt = attrs["data_format"]
    n, d, h, w, c = _ndhwc(shape, fmt)
    out = [output_size(size, k, s, 1, attrs["padding"]) for size, k, s in
           zip((d, h, w), spatial3(attrs["ksize"], fmt), spatial3(attrs["strides"], fmt))]
    return _from_ndhwc(n, out, c, fmt)


def _pool_infer(allowed):
    def infer(inputs, attrs):
        (x,) = inputs
        require_dtype(x, allowed, "input")
        return [(x.dtype, _pool_output(x.shape, attrs))]
    return infer


def _avg_pool_grad_infer(inputs, attrs):
    sizes, g = inputs
    require_dtype(g, FLOATS, "grad")
    in_shape = _sizes(sizes, rank=5)
    _check_backprop(g.shape, _pool_output(in_shape, attrs), "pooling")
    return [(g.dtype, in_shape)]


define("MaxPool3D", _pool_infer(FLOATS + INTEGERS), attrs=_POOL_ATTRS,
       onnx={"converter": "pool", "op": "MaxPool"})
define("AvgPool3D", _pool_infer(FLOATS), attrs=_POOL_ATTRS, onnx={"converter": "pool", "op": "AveragePool"})
define("MaxPool3DGrad", max_pool_grad_infer(True, 5, _pool_output), attrs=_POOL_ATTRS, onnx=no_onnx.GRADIENT)
define("MaxPool3DGradGrad", max_pool_grad_infer(False, 5, _pool_output),
       attrs=_POOL_ATTRS, onnx=no_onnx.GRADIENT)
define("AvgPool3DGrad", _avg_pool_grad_infer, attrs=_POOL_ATTRS, onnx=no_onnx.GRADIENT)


def _pool_attrs(ksize, strides, padding, data_format):
    fmt = _data_format(data_format)
    if ksize is None or strides is None:
        raise ValueError("3-D pooling needs ksize and strides (e.g. [1, 2, 2, 2, 1])")
    return {"ksize": _five(ksize, fmt, "ksize"), "strides": _five(strides, fmt, "strides"),
            "padding": _padding(padding), "data_format": fmt}


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """`tf.nn.max_pool3d`: the maximum over each ksize window (SAME pads with -inf)."""
    return make_tensor("MaxPool3D", (convert_to_tensor(input),),
                       _pool_attrs(ksize, strides, padding, data_format), name=name or "MaxPool3D")


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """`tf.nn.avg_pool3d`: the mean over each window; SAME windows average only real elements."""
    return make_tensor("AvgPool3D", (convert_to_tensor(input),),
                       _pool_attrs(ksize, strides, padding, data_format), name=name or "AvgPool3D")


def _max_pool_grad_op(op_type, orig_input, orig_output, grad, ksize, strides, padding,
                      data_format, name):
    x = convert_to_tensor(orig_input)
    y = convert_to_tensor(orig_output, dtype=x.dtype)
    g = convert_to_tensor(grad, dtype=x.dtype)
    return make_tensor(op_type, (x, y, g), _pool_attrs(ksize, strides, padding, data_format),
                       name=name or op_type)


def max_pool3d_grad(orig_input, orig_output, grad, ksize, strides, padding, data_format="NDHWC",
                    name=None):
    """The gradient of max_pool3d: `grad` routed to the (first) maximum of each window."""
    return _max_pool_grad_op("MaxPool3DGrad", orig_input, orig_output, grad, ksize, strides,
                             padding, data_format, name)


def max_pool3d_grad_grad(orig_input, orig_output, grad, ksize, strides, padding,
                         data_format="NDHWC", name=None):
    """The gradient of MaxPool3DGrad w.r.t. its grad: input-shaped `grad` gathered at each
    window's (first) maximum, a pooled-shape tensor."""
    return _max_pool_grad_op("MaxPool3DGradGrad", orig_input, orig_output, grad, ksize, strides,
                             padding, data_format, name)


def avg_pool3d_grad(orig_input_shape, grad, ksize, strides, padding, data_format="NDHWC",
                    name=None):
    """The gradient of avg_pool3d: each window's gradient spread evenly over its real elements."""
    return make_tensor("AvgPool3DGrad", (shape_tensor(orig_input_shape), convert_to_tensor(grad)),
                       _pool_attrs(ksize, strides, padding, data_format),
                       name=name or "AvgPool3DGrad")


__all__ = ["conv3d", "conv3d_backprop_filter_v2", "conv3d_backprop_input_v2", "conv3d_transpose",
           "max_pool3d", "avg_pool3d"]
