"""Sparse variable updates: `tf.scatter_update`, `tf.scatter_add`, `tf.scatter_sub`.

Like the assign ops, they name the variable by its `shared_name` attr and output the variable's
new value. ref[indices[i...], ...] = / += / -= updates[i..., ...]; `updates` has the shape
indices.shape + ref.shape[1:]. Repeated indices: add and sub accumulate every update; for update
the last one wins (TF leaves the order undefined). An index outside [0, ref.shape[0]) is an error
and, as for every failed run, leaves the variable unchanged.
"""

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape, as_shape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_tensor, no_gradient
from graphflow.ops.shape_ops import INT_INDEX
from graphflow.ops.state_ops import _VAR_ATTRS, _var_attrs, _variable_of


def _scatter_infer(inputs, attrs):
    indices, updates = inputs
    var_dtype = dtypes.as_dtype(attrs["dtype"])
    name = attrs["shared_name"]
    if indices.dtype not in INT_INDEX:
        raise TypeError(f"indices must be int32 or int64, got {indices.dtype.name}")
    if updates.dtype != var_dtype:
        raise TypeError(f"updates of dtype {updates.dtype.name} do not match variable '{name}' "
                        f"of dtype {var_dtype.name}")
    var_shape = as_shape(attrs["shape"])
    if var_shape.ndims == 0:
        raise ValueError(f"variable '{name}' is a scalar: scatter needs rank >= 1")
    if var_shape.ndims is not None and indices.shape.ndims is not None:
        expected = TensorShape(list(indices.shape.dims) + list(var_shape.dims[1:]))
        if not expected.is_compatible_with(updates.shape):
            raise ValueError(f"updates of shape {updates.shape} must have shape {expected} "
                             f"(indices.shape + the shape of variable '{name}' without its first "
                             "dimension)")
    return [(var_dtype, var_shape)]


_OPS = {"ScatterUpdate": "scatter_update", "ScatterAdd": "scatter_add", "ScatterSub": "scatter_sub"}
for _op_type in _OPS:
    define(_op_type, _scatter_infer, stateful=True, returns_state=True, attrs=_VAR_ATTRS,
           onnx=no_onnx.STATE)
no_gradient(*_OPS)


def _scatter(op_type, ref, indices, updates, name):
    var = _variable_of(ref)
    indices = convert_to_tensor(indices)
    updates = convert_to_tensor(updates, dtype=var.dtype)
    return make_tensor(op_type, (indices, updates), _var_attrs(var), name=name or op_type)


def scatter_update(ref, indices, updates, use_locking=True, name=None):
    """`tf.scatter_update`: ref[indices] = updates; returns the new value."""
    return _scatter("ScatterUpdate", ref, indices, updates, name)


def scatter_add(ref, indices, updates, use_locking=False, name=None):
    """`tf.scatter_add`: ref[indices] += updates (repeated indices add up); returns the new value."""
    return _scatter("ScatterAdd", ref, indices, updates, name)


def scatter_sub(ref, indices, updates, use_locking=False, name=None):
    """`tf.scatter_sub`: ref[indices] -= updates (repeated indices add up); returns the new value."""
    return _scatter("ScatterSub", ref, indices, updates, name)


__all__ = ["scatter_update", "scatter_add", "scatter_sub"]
