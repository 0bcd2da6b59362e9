"""Sparse-to-dense conversion: `tf.sparse_to_dense`, `tf.sparse_tensor_to_dense` and
`tf.sparse.to_dense` (the SparseToDense op), so a `tf.string_split` result becomes a dense tensor."""

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_tensor, require_dtype, same_dtype
from graphflow.ops.sparse_tensor import SparseTensor
from graphflow.ops.static_value import shape_vector


def _sparse_to_dense_infer(inputs, attrs):
    indices, output_shape, values, default = inputs
    require_dtype(indices, (dtypes.int32, dtypes.int64), "sparse_indices")
    require_dtype(output_shape, (dtypes.int32, dtypes.int64), "output_shape")
    same_dtype([values, default], "sparse_values and default_value")
    if default.shape.ndims not in (None, 0):
        raise ValueError(f"default_value must be a scalar, got shape {default.shape}")
    if indices.shape.ndims not in (None, 0, 1, 2):
        raise ValueError(f"sparse_indices must have rank <= 2, got shape {indices.shape}")
    if values.shape.ndims not in (None, 0, 1):
        raise ValueError(f"sparse_values must be a scalar or a vector, got shape {values.shape}")
    dims = shape_vector(output_shape)
    if dims is not None:
        return [(values.dtype, TensorShape(list(dims)))]
    rank = output_shape.shape.dims[0] if output_shape.shape.ndims == 1 else None
    return [(values.dtype, TensorShape(None if rank is None else [None] * rank))]


define("SparseToDense", _sparse_to_dense_infer, attrs="validate_indices:bool",
       value_dependent_shape=True,
       onnx=no_onnx.none("value-dependent output shape with validation of the indices; not mapped yet"))


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices=True, name=None):
    """A dense tensor of `output_shape` holding `sparse_values` at `sparse_indices` ([N, rank], or
    [N] for a vector) and `default_value` elsewhere. With `validate_indices`, indices must be in
    bounds, in row-major order and unique, as TF1 requires."""
    values = convert_to_tensor(sparse_values)
    default = convert_to_tensor(default_value, dtype=values.dtype)
    indices = convert_to_tensor(sparse_indices)
    shape = convert_to_tensor(output_shape, dtype=indices.dtype)
    return make_tensor("SparseToDense", (indices, shape, values, default),
                       {"validate_indices": bool(validate_indices)}, name=name or "SparseToDense")


def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense form of a `SparseTensor` (default_value: 0, or b'' for strings)."""
    sp = SparseTensor.from_value(sp_input)
    if default_value is None:
        default_value = b"" if sp.dtype == dtypes.string else 0
    return sparse_to_dense(sp.indices, sp.dense_shape, sp.values, default_value,
                           validate_indices=validate_indices, name=name or "SparseToDense")


to_dense = sparse_tensor_to_dense

__all__ = ["sparse_to_dense", "sparse_tensor_to_dense"]
