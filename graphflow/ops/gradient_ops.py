"""Ops that exist for differentiation: `StopGradient` and the small shape helpers gradient rules use.

* `StopGradient` (`tf.stop_gradient`): the identity in the forward pass; `tf.gradients` treats its
  output as a constant (its record is marked `no_gradient`, see `graphflow/ops/math_grad.py`).
* `SumToShape(x, shape)`: sums `x` over the axes it was broadcast along so that it has `shape` —
  the run-time half of `grad_util.unbroadcast` (TF's BroadcastGradientArgs + Sum + Reshape in one
  op). When `x` already has that shape the kernel returns it unchanged.
* `ReducedShape(shape)`: `shape` with the reduced `axis` entries set to 1 (the shape a reduction's
  output would have with keepdims=True); used by reduction gradients when the rank is unknown.
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_tensor
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


__all__ = ["stop_gradient"]
