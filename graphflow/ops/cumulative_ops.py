"""Cumulative sums and products along one axis: `tf.cumsum`, `tf.cumprod` (op types Cumsum,
Cumprod), with TF1's `exclusive` (each element leaves itself out) and `reverse` (accumulate from
the end). The axis is an attr when it is known when the graph is built (a Python int, or an
integer scalar tensor of constant value); an axis known only at run time (a placeholder, a
computed tensor), which TF1's Cumsum also takes, is the op's second input, read by the kernel
(the attr is then None). Either way the output has the input's shape."""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import NUMERIC, define, make_tensor, normalize_axis, require_dtype
from graphflow.ops.static_value import constant_value


def _cumulative_infer(inputs, attrs):
    x = inputs[0]
    require_dtype(x, NUMERIC, "input")
    if (len(inputs) == 2) != (attrs["axis"] is None):
        raise ValueError("a cumulative op takes its axis as an attr or as a second input, not both")
    if len(inputs) == 2:
        require_dtype(inputs[1], (dtypes.int32, dtypes.int64), "axis")
        if inputs[1].shape.ndims not in (None, 0):
            raise ValueError(f"axis must be a scalar, got shape {inputs[1].shape}")
    if x.shape.ndims is not None:
        if x.shape.ndims == 0:
            raise ValueError("a cumulative sum or product needs an input of rank >= 1, got a scalar")
        if attrs["axis"] is not None:
            normalize_axis(attrs["axis"], x.shape.ndims)
    return [(x.dtype, x.shape)]


_ONNX = {"Cumsum": {"converter": "cumsum"},
         "Cumprod": no_onnx.none("ONNX has CumProd only from opset 24 on (graphflow exports opsets up "
                                 "to 17 and onnxruntime has no kernel); exp(cumsum(log x)) fails for "
                                 "x <= 0")}
for _type in ("Cumsum", "Cumprod"):
    define(_type, _cumulative_infer, attrs="axis:none|int exclusive:bool reverse:bool",
           fresh_output=True, onnx=_ONNX[_type])


def static_axis(axis, what="axis"):
    """A Python int from an int, a numpy integer, or a scalar tensor known at build time."""
    if isinstance(axis, Tensor):
        value = constant_value(axis)
        if value is None:
            raise ValueError(f"{what} must be known when the graph is built (a Python int or a "
                             f"constant tensor), got {axis.name}, whose value is known only at "
                             "run time")
        axis = value
    value = np.asarray(axis)
    if value.ndim != 0 or value.dtype.kind not in "iu":
        raise TypeError(f"{what} must be an integer scalar, got {axis!r}")
    return int(value)


def _cumulative(op_type, x, axis, exclusive, reverse, name):
    x = convert_to_tensor(x)
    attrs = {"axis": None, "exclusive": bool(exclusive), "reverse": bool(reverse)}
    if isinstance(axis, Tensor) and constant_value(axis) is None:  # known at run time only
        return make_tensor(op_type, (x, axis), attrs, name=name or op_type)
    attrs["axis"] = static_axis(axis)
    return make_tensor(op_type, (x,), attrs, name=name or op_type)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """`tf.cumsum`: running sums along `axis`; `exclusive` leaves each element out of its own sum
    (the first is 0), `reverse` sums from the end."""
    return _cumulative("Cumsum", x, axis, exclusive, reverse, name)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """`tf.cumprod`: running products along `axis` (`exclusive`: the first is 1; `reverse`)."""
    return _cumulative("Cumprod", x, axis, exclusive, reverse, name)


__all__ = ["cumsum", "cumprod"]
