"""`SparseTensor`: TF1's sparse value of three dense tensors (indices, values, dense_shape), and
`SparseTensorValue`, what `Session.run` returns for one (a namedtuple of numpy arrays)."""

import collections

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape, as_shape
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.static_value import constant_value

SparseTensorValue = collections.namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])


class SparseTensor:
    """`tf.SparseTensor(indices, values, dense_shape)`: `indices` int64 [N, rank], `values` [N],
    `dense_shape` int64 [rank]. Fetching one gives a `SparseTensorValue`."""

    _dense_shape_default = None  # a static shape known beyond dense_shape's value (sparse_placeholder)

    def __init__(self, indices, values, dense_shape):
        self.indices = convert_to_tensor(indices, dtype=dtypes.int64, name="indices")
        self.values = convert_to_tensor(values, name="values")
        self.dense_shape = convert_to_tensor(dense_shape, dtype=dtypes.int64, name="dense_shape")

    @classmethod
    def from_value(cls, value):
        if isinstance(value, SparseTensor):
            return value
        return cls(value.indices, value.values, value.dense_shape)

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def graph(self):
        return self.values.graph

    @property
    def op(self):
        return self.values.op

    def get_shape(self):
        if self._dense_shape_default is not None:
            return self._dense_shape_default
        known = constant_value(self.dense_shape)
        if known is not None:
            return TensorShape([int(d) for d in known])
        rank = self.dense_shape.shape.dims[0] if self.dense_shape.shape.ndims == 1 else None
        return TensorShape(None if rank is None else [None] * rank)

    @property
    def shape(self):
        return self.get_shape()

    def set_shape(self, shape):
        """Refine the static dense shape (TF's `SparseTensor.set_shape`): merged with what is
        already known; an incompatible shape is a ValueError."""
        self._dense_shape_default = self.get_shape().merge_with(as_shape(shape))

    def eval(self, feed_dict=None, session=None):
        from graphflow.framework.default_session import get_default_session_or_error
        return (session or get_default_session_or_error()).run(self, feed_dict)

    def __repr__(self):
        return (f"SparseTensor(indices={self.indices!r}, values={self.values!r}, "
                f"dense_shape={self.dense_shape!r})")


def is_sparse(value):
    return isinstance(value, (SparseTensor, SparseTensorValue))


__all__ = ["SparseTensor", "SparseTensorValue"]
