"""`tf.sparse`: TF1's sparse namespace, the SparseTensor functions of `ops/sparse_*.py` under
their short names (`tf.sparse.reduce_sum` is `tf.sparse_reduce_sum`, `tf.sparse.matmul` and
`tf.sparse.sparse_dense_matmul` are `tf.sparse_tensor_dense_matmul`, ...)."""

from graphflow.ops import sparse_cross as _cross
from graphflow.ops import sparse_index as _index
from graphflow.ops import sparse_math as _math
from graphflow.ops import sparse_reshape as _reshape
from graphflow.ops import sparse_segment as _segment
from graphflow.ops.sparse_ops import sparse_tensor_to_dense as to_dense
from graphflow.ops.sparse_tensor import SparseTensor

add = _math.sparse_add
concat = _reshape.sparse_concat
expand_dims = _reshape.sparse_expand_dims
cross = _cross.sparse_cross
eye = _reshape.sparse_eye
fill_empty_rows = _reshape.sparse_fill_empty_rows
from_dense = _index.from_dense
matmul = _math.sparse_tensor_dense_matmul
sparse_dense_matmul = _math.sparse_tensor_dense_matmul
maximum = _math.sparse_maximum
merge = _index.sparse_merge
minimum = _math.sparse_minimum
placeholder = _index.sparse_placeholder
reduce_max = _math.sparse_reduce_max
reduce_max_sparse = _math.sparse_reduce_max_sparse
reduce_sum = _math.sparse_reduce_sum
reduce_sum_sparse = _math.sparse_reduce_sum_sparse
reorder = _index.sparse_reorder
reset_shape = _reshape.sparse_reset_shape
reshape = _reshape.sparse_reshape
retain = _index.sparse_retain
segment_mean = _segment.sparse_segment_mean
segment_sqrt_n = _segment.sparse_segment_sqrt_n
segment_sum = _segment.sparse_segment_sum
slice = _reshape.sparse_slice  # noqa: A001 - TF1 name
softmax = _math.sparse_softmax
split = _reshape.sparse_split
to_indicator = _reshape.sparse_to_indicator
transpose = _reshape.sparse_transpose

__all__ = ["SparseTensor", "add", "concat", "cross", "expand_dims", "eye", "fill_empty_rows", "from_dense",
           "matmul", "maximum", "merge", "minimum", "placeholder", "reduce_max", "reduce_max_sparse",
           "reduce_sum", "reduce_sum_sparse", "reorder", "reset_shape", "reshape", "retain", "segment_mean",
           "segment_sqrt_n", "segment_sum", "slice", "softmax", "sparse_dense_matmul", "split",
           "to_dense", "to_indicator", "transpose"]
