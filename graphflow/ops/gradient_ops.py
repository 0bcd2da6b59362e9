"""Ops that exist for differentiation: `StopGradient` and the small shape helpers gradient rules use.

* `StopGradient` (`tf.stop_gradient`): the identity in the forward pass; `tf.gradients` treats its
  output as a constant (its record is marked `no_gradient`, see `graphflow/ops/math_grad.py`).
* `SumToShape(x, shape)`: sums `x` over the axes it was broadcast along so that it has `shape` —
  the run-time half of `grad_util.unbroadcast` (TF's BroadcastGradientArgs + Sum + Reshape in one
  op). When `x` already has that shape the kernel returns it unchanged.
* `ReducedShape(shape)`: `shape` with the reduced `axis` entries set to 1 (the shape a reduction's
  output would have with keepdims=True); used by reduction gradients when the rank is unknown.
* `BroadcastGradientArgs(s0, s1) -> (r0, r1)`: TensorFlow's op of that name, which TensorFlow's
  gradient code writes into its graphs: the axes of the broadcast shape of `s0` and `s1` along
  which a gradient must be summed to get back to `s0` (r0) and to `s1` (r1). Equal shapes reduce
  along nothing; an axis where both are 1 is listed in both (as TensorFlow does). graphflow's own
  gradients use `SumToShape`; this op lets TensorFlow's training graphs import as they are.
"""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_op, make_tensor
from graphflow.ops.static_value import shape_vector

INT_INDEX = (dtypes.int32, dtypes.int64)


def _same_as_input(inputs, attrs):
    return [(inputs[0].dtype, inputs[0].shape)]


define("StopGradient", _same_as_input, may_alias_input=True, elementwise=True, onnx="Identity")


def stop_gradient(input, name=None):
    """`tf.stop_gradient`: the value of `input`, seen as a constant by `tf.gradients`."""
    return make_tensor("StopGradient", (convert_to_tensor(input),), name=name or "StopGradient")


def _check_shape_input(t, what):
    if t.dtype not in INT_INDEX:
        raise TypeError(f"{what} must be an int32 or int64 tensor, got {t.name} of dtype "
                        f"{t.dtype.name}")
    if t.shape.ndims not in (None, 1):
        raise ValueError(f"{what} must be a 1-D tensor, got {t.name} of shape {t.shape}")


def _sum_to_shape_infer(inputs, attrs):
    x, s = inputs
    _check_shape_input(s, "shape")
    vector = shape_vector(s)
    target = TensorShape(None) if vector is None else TensorShape(vector)
    xd, td = x.shape.dims, target.dims
    if xd is not None and td is not None:
        if len(td) > len(xd):
            raise ValueError(f"cannot sum a tensor of shape {x.shape} to the higher-rank shape "
                             f"{target}")
        for d, t in zip(xd[len(xd) - len(td):], td):
            if d is not None and t is not None and t != 1 and d != t:
                raise ValueError(f"cannot sum a tensor of shape {x.shape} to shape {target}")
    return [(x.dtype, target)]


define("SumToShape", _sum_to_shape_infer, may_alias_input=True,
       onnx=no_onnx.none("a gradient helper (reduces a broadcast gradient to a shape); not mapped yet"))


def sum_to_shape(x, shape, name=None):
    """Sum `x` over its broadcast axes so that its shape becomes `shape` (a 1-D int tensor)."""
    x = convert_to_tensor(x)
    shape = convert_to_tensor(shape)
    return make_tensor("SumToShape", (x, shape), name=name or "SumToShape")


def _reduced_shape_infer(inputs, attrs):
    s = inputs[0]
    _check_shape_input(s, "shape")
    return [(s.dtype, s.shape if s.shape.ndims == 1 else TensorShape([None]))]


define("ReducedShape", _reduced_shape_infer, attrs="axis:none|int|list(int)",
       onnx=no_onnx.none("a gradient helper (shape arithmetic of reductions); not mapped yet"))


def reduced_shape(shape, axis, name=None):
    """`shape` (1-D int tensor) with the entries at `axis` (None = all; negative counts from the
    end; an int tensor: axes read at run time) set to 1: the keepdims shape of a reduction over
    `axis`."""
    shape = convert_to_tensor(shape)
    if isinstance(axis, Tensor):
        return make_tensor("ReducedShape", (shape, axis), {"axis": None},
                           name=name or "ReducedShape")
    if axis is not None:
        axis = [int(a) for a in axis] if isinstance(axis, (list, tuple)) else int(axis)
    return make_tensor("ReducedShape", (shape,), {"axis": axis}, name=name or "ReducedShape")


def broadcast_gradient_axes(s0, s1):
    """TensorFlow's BroadcastGradientArgs: the axes of the broadcast shape along which each side
    was stretched (or added); equal shapes give none, an axis of 1 on both sides is in both."""
    a = [int(d) for d in np.asarray(s0).reshape(-1)]
    b = [int(d) for d in np.asarray(s1).reshape(-1)]
    dtype = np.asarray(s0).dtype
    if a == b:
        return np.zeros(0, dtype), np.zeros(0, dtype)
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + a
    b = [1] * (n - len(b)) + b
    r0, r1 = [], []
    for i, (x, y) in enumerate(zip(a, b)):
        if x < 0 or y < 0 or (x != y and x != 1 and y != 1):
            raise ValueError(f"Incompatible shapes: {list(np.asarray(s0).reshape(-1))} vs. "
                             f"{list(np.asarray(s1).reshape(-1))}")
        if x == 1:
            r0.append(i)
        if y == 1:
            r1.append(i)
    return np.array(r0, dtype), np.array(r1, dtype)


def _broadcast_gradient_args_infer(inputs, attrs):
    s0, s1 = inputs
    _check_shape_input(s0, "s0")
    _check_shape_input(s1, "s1")
    if s0.dtype != s1.dtype:
        raise TypeError(f"s0 and s1 must have one dtype, got {s0.dtype.name} and {s1.dtype.name}")
    a, b = shape_vector(s0), shape_vector(s1)
    if a is None or b is None or None in a or None in b:
        return [(s0.dtype, TensorShape([None]))] * 2
    return [(s0.dtype, TensorShape([len(r)]))
            for r in broadcast_gradient_axes(np.array(a), np.array(b))]


define("BroadcastGradientArgs", _broadcast_gradient_args_infer, value_dependent_shape=True,
       onnx=no_onnx.none("a gradient helper (reduction axes of a broadcast); not mapped yet"))


def broadcast_gradient_args(s0, s1, name=None):
    """(r0, r1): the axes along which to sum the gradient of a broadcast of shapes `s0` and `s1`
    (1-D int tensors) to get back to each shape, as TensorFlow's BroadcastGradientArgs."""
    s0 = convert_to_tensor(s0)
    s1 = convert_to_tensor(s1)
    return tuple(make_op("BroadcastGradientArgs", (s0, s1), {},
                         name=name or "BroadcastGradientArgs").outputs)


__all__ = ["stop_gradient"]
