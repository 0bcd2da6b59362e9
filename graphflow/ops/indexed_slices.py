"""`tf.IndexedSlices`: TF1's sparse gradient, some rows of a dense tensor (`values`, the rows'
`indices` along the first axis, and the `dense_shape` of the whole), and `IndexedSlicesValue`,
what `Session.run` returns for one (a namedtuple of numpy arrays).

The gradient of `tf.gather` along axis 0 (so of `tf.nn.embedding_lookup`) is one: an embedding
of a whole vocabulary receives the rows a step looked up, not a dense matrix of zeros, and the
optimizers update only those rows (`tf1/optimizers.py`'s `_apply_sparse`). An op that takes it
as an input densifies it (`convert_to_tensor`: UnsortedSegmentSum of the values at the indices,
repeated indices adding up), with TF's warning when the dense tensor would be very large or of
unknown size. `aggregate` sums several gradients as `tf.gradients` does: IndexedSlices only are
concatenated into one IndexedSlices, any dense one makes the sum dense.
"""

import collections
import warnings

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import array_ops, math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.sort_ops import unique
from graphflow.ops.static_value import constant_value

IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue",
                                            ["values", "indices", "dense_shape"])

# TF's bound: densifying more elements than this warns that it may take much memory
LARGE_SPARSE_NUM_ELEMENTS = 100_000_000


class IndexedSlices:
    """`tf.IndexedSlices(values, indices, dense_shape=None)`: the dense tensor `t` of shape
    `dense_shape` with t[indices[i]] = values[i] (summed over repeated indices) and zeros
    elsewhere. values: [N] + dense_shape[1:]; indices: int32/int64 [N]."""

    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape
        for t, what in ((values, "values"), (indices, "indices")):
            if not isinstance(t, Tensor):
                raise TypeError(f"IndexedSlices {what} must be a Tensor, got {t!r}")
        if not indices.dtype.is_integer:
            raise TypeError(f"IndexedSlices indices must be int32 or int64, got "
                            f"{indices.dtype.name}")
        if dense_shape is not None and not isinstance(dense_shape, Tensor):
            raise TypeError(f"IndexedSlices dense_shape must be a Tensor or None, got "
                            f"{dense_shape!r}")

    @property
    def values(self):
        return self._values

    @property
    def indices(self):
        return self._indices

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def name(self):
        return self._values.name

    @property
    def device(self):
        return self._values.device

    @property
    def op(self):
        return self._values.op

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def graph(self):
        return self._values.graph

    @property
    def shape(self):
        """The static shape of the dense tensor: `dense_shape`'s value where known at build
        time, else the values' shape with an unknown first dimension."""
        if self._dense_shape is not None:
            known = constant_value(self._dense_shape)
            if known is not None:
                return TensorShape([int(d) for d in np.reshape(known, [-1])])
        tail = self._values.shape
        if tail.ndims is None:
            return TensorShape(None)
        return TensorShape([None] + list(tail.dims[1:]))

    def get_shape(self):
        return self.shape

    def __str__(self):
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"

    __repr__ = __str__

    def __neg__(self):
        return IndexedSlices(math_ops.negative(self._values), self._indices, self._dense_shape)

    def __tf_tensor__(self, dtype=None, name=None):
        """The dense tensor (`convert_to_tensor`'s protocol)."""
        return to_dense(self, dtype=dtype, name=name)


def to_dense(value, dtype=None, name=None, warn=True):
    """The dense tensor of the IndexedSlices `value`: UnsortedSegmentSum of its values at its
    indices, `dense_shape[0]` rows. Warns (as TF does) when the result has at least
    LARGE_SPARSE_NUM_ELEMENTS elements or a size unknown when the graph is built."""
    if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
        raise ValueError(f"Incompatible tensor conversion requested to dtype "
                         f"{dtypes.as_dtype(dtype).name} for IndexedSlices ({value}) with dtype "
                         f"{value.dtype.name}")
    if value.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: "
                         f"{value}")
    if warn:
        known = constant_value(value.dense_shape)
        if known is None:
            warnings.warn(f"Converting sparse IndexedSlices({value}) to a dense Tensor of unknown "
                          "shape. This may consume a large amount of memory.", stacklevel=3)
        elif int(np.prod(known, dtype=np.int64)) >= LARGE_SPARSE_NUM_ELEMENTS:
            warnings.warn(f"Converting sparse IndexedSlices to a dense Tensor with "
                          f"{int(np.prod(known, dtype=np.int64))} elements. This may consume a "
                          "large amount of memory.", stacklevel=3)
    return array_ops.unsorted_segment_sum(value.values, value.indices, value.dense_shape[0],
                                          name=name or "UnsortedSegmentSum")


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    """`tf.convert_to_tensor_or_indexed_slices`: an IndexedSlices as it is (its dtype checked),
    anything else through `convert_to_tensor`."""
    if isinstance(value, IndexedSlices):
        if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} "
                             f"for IndexedSlices with dtype {value.dtype.name}: {value}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def aggregate(grads):
    """The sum of several gradients of one tensor as `tf.gradients` forms it: dense when any is
    a Tensor (AddN, IndexedSlices densified), else one IndexedSlices of the concatenated values
    and indices (indices as int64 when their dtypes differ)."""
    grads = [g for g in grads if g is not None]
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    if any(not isinstance(g, IndexedSlices) for g in grads):
        return math_ops.add_n([to_dense(g) if isinstance(g, IndexedSlices) else g for g in grads])
    if len({g.indices.dtype for g in grads}) > 1:
        grads = [IndexedSlices(g.values, math_ops.cast(g.indices, dtypes.int64), g.dense_shape)
                 for g in grads]
    return IndexedSlices(shape_ops.concat([g.values for g in grads], 0),
                         shape_ops.concat([g.indices for g in grads], 0), grads[0].dense_shape)


def deduplicate(grad):
    """The IndexedSlices `grad` with each index once, its values summed (TF1's
    `Optimizer._deduplicate_indexed_slices`: Unique, then UnsortedSegmentSum)."""
    unique_indices, positions = unique(grad.indices)
    summed = array_ops.unsorted_segment_sum(grad.values, positions,
                                            shape_ops.shape(unique_indices)[0])
    return IndexedSlices(summed, unique_indices, grad.dense_shape)


__all__ = ["IndexedSlices", "IndexedSlicesValue", "convert_to_tensor_or_indexed_slices"]
