"""`tf.nn.max_pool_with_argmax`: max pooling that also returns where each maximum came from
(the MaxPoolWithArgmax op, TensorFlow's attrs). NHWC only, as in TF. The argmax of an output is
the flattened index of the input element that won its window, ((b * height + y) * width + x) *
channels + c with `include_batch_in_index`, and (y * width + x) * channels + c without (the
batch left out); the first maximum in row-major window order wins, padding never does. The
gradient (`pool_argmax_grad.py`) flows through the pooled values to those elements."""

from graphflow.framework import dtypes
from graphflow.ops.conv_ops import FLOATS, INTEGERS, _pool_attrs, _pool_output
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_op, require_dtype


def _max_pool_with_argmax_infer(inputs, attrs):
    (x,) = inputs
    require_dtype(x, FLOATS + INTEGERS, "input")
    targmax = dtypes.as_dtype(attrs["Targmax"])
    if targmax not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"Targmax must be int32 or int64, got {targmax.name}")
    shape = _pool_output(x.shape, dict(attrs, data_format="NHWC"))
    return [(x.dtype, shape), (targmax, shape)]


define("MaxPoolWithArgmax", _max_pool_with_argmax_infer,
       attrs="ksize:int>=1|list(int>=1) strides:int>=1|list(int>=1) padding:string "
             "Targmax:dtype include_batch_in_index:bool",
       fresh_output=True,
       onnx={"none": "ONNX MaxPool's Indices flatten the NCHW layout (or a column-major one), "
                     "not TF's NHWC index; not mapped yet"})


def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC", Targmax=None,  # noqa: A002,N803
                         name=None, output_dtype=None, include_batch_in_index=False):
    """`tf.nn.max_pool_with_argmax` (TF1): (the max pool of NHWC `input`, the flattened input
    index of each maximum, of dtype `Targmax`, int64 by default)."""
    if data_format != "NHWC":
        raise ValueError(f"`data_format` values other  than 'NHWC' are not supported. Received: "
                         f"data_format={data_format}")
    if Targmax is not None and output_dtype is not None:
        raise ValueError("Cannot specify both 'output_dtype' and 'Targmax'")
    targmax = dtypes.as_dtype(Targmax or output_dtype or dtypes.int64)
    attrs = _pool_attrs(ksize, strides, padding, "NHWC")
    del attrs["data_format"]
    attrs.update(Targmax=targmax, include_batch_in_index=bool(include_batch_in_index))
    op = make_op("MaxPoolWithArgmax", (convert_to_tensor(input),), attrs,
                 name=name or "MaxPoolWithArgmax")
    return op.outputs[0], op.outputs[1]


__all__ = ["max_pool_with_argmax"]
