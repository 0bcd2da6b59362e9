"""Cumulative sums and products along one axis: `tf.cumsum`, `tf.cumprod` (op types Cumsum,
Cumprod), with TF1's `exclusive` (each element leaves itself out) and `reverse` (accumulate from
the end). The axis is an attr: a Python int, or an integer scalar tensor whose value is known
when the graph is built."""

import numpy as np

from graphflow.framework.graph import Tensor
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import NUMERIC, define, make_tensor, normalize_axis, require_dtype
from graphflow.ops.static_value import constant_value


def _cumulative_infer(inputs, attrs):
    (x,) = inputs
    require_dtype(x, NUMERIC, "input")
    if x.shape.ndims is not None:
        if x.shape.ndims == 0:
            raise ValueError("a cumulative sum or product needs an input of rank >= 1, got a scalar")
        normalize_axis(attrs["axis"], x.shape.ndims)
    return [(x.dtype, x.shape)]


for _type in ("Cumsum", "Cumprod"):
    define(_type, _cumulative_infer, attrs="axis:int exclusive:bool reverse:bool", fresh_output=True)


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
    attrs = {"axis": static_axis(axis), "exclusive": bool(exclusive), "reverse": bool(reverse)}
    return make_tensor(op_type, (x,), attrs, name=name or op_type)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """`tf.cumsum`: running sums along `axis`; `exclusive` leaves each element out of its own sum
    (the first is 0), `reverse` sums from the end."""
    return _cumulative("Cumsum", x, axis, exclusive, reverse, name)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """`tf.cumprod`: running products along `axis` (`exclusive`: the first is 1; `reverse`)."""
    return _cumulative("Cumprod", x, axis, exclusive, reverse, name)


__all__ = ["cumsum", "cumprod"]
