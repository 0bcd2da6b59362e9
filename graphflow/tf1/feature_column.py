"""`tf.feature_column`: TF1's feature columns over dense inputs, `input_layer` and `linear_model`.

A feature column says how one entry of a features dict becomes model input. Dense columns
(`numeric_column`, `bucketized_column`, `indicator_column`, `embedding_column`) give a float32
`[batch, d]` block; categorical columns (`categorical_column_with_vocabulary_list`,
`..._with_identity`, `..._with_hash_bucket`, `crossed_column`, and `bucketized_column` used as
one) give integer ids `[batch, n]` in `[0, num_buckets)`, -1 marking an absent value (an empty
string or -1 input, or an out-of-vocabulary value without OOV buckets), which contributes nothing.
`input_layer(features, columns)` concatenates the dense blocks in TF1's order (columns sorted by
name); `linear_model` is the weighted sum of every column (one weight row per bucket).

Differences from TensorFlow: inputs are dense tensors (`[batch]` or `[batch, n]`), not
SparseTensors; hash buckets come from `tf.string_to_hash_bucket_fast`, whose fingerprint is
BLAKE2b, not TensorFlow's FarmHash, so the bucket a value lands in differs from TensorFlow's (the
number of buckets and the training behaviour do not); string vocabularies are matched through
64-bit fingerprints of the strings.
"""

import math

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor
from graphflow.kernels.cpu.string_kernels import fingerprint64
from graphflow.ops import array_ops, core_ops, math_ops, shape_ops, string_ops
from graphflow.tf1 import init_ops
from graphflow.tf1.variable_scope import get_variable, variable_scope


class _Column:
    """Base of every feature column: `name`, and `key` for the columns reading one feature."""

    is_dense = False
    is_categorical = False

    def __repr__(self):
        return f"{type(self).__name__}(name={self.name!r})"


def _feature(features, key):
    if key not in features:
        raise ValueError(f"The feature '{key}' is not in features dictionary "
                         f"(keys: {sorted(features)}).")
    value = features[key]
    return value if isinstance(value, Tensor) else core_ops.convert_to_tensor(np.asarray(value))


def _as_2d(tensor):
    """`[batch]` -> `[batch, 1]`; `[batch, ...]` -> `[batch, prod(...)]`."""
    shape = tensor.shape.as_list() if tensor.shape.ndims is not None else None
    if shape is not None and len(shape) == 1:
        return shape_ops.expand_dims(tensor, 1)
    if shape is not None and len(shape) == 2:
        return tensor
    if shape is not None and all(d is not None for d in shape[1:]):
        return shape_ops.reshape(tensor, [-1, int(np.prod(shape[1:]))])
    return shape_ops.reshape(tensor, [shape_ops.shape(tensor)[0], -1])


# ------------------------------------------------------------------------------ dense columns
class NumericColumn(_Column):
    is_dense = True

    def __init__(self, key, shape, default_value, dtype, normalizer_fn):
        self.key = self.name = key
        self.shape = shape
        self.default_value = default_value
        self.dtype = dtype
        self.normalizer_fn = normalizer_fn
        self.dimension = int(np.prod(shape))

    def _values(self, features):
        value = math_ops.cast(_feature(features, self.key), dtypes.float32)
        if self.normalizer_fn is not None:
            value = self.normalizer_fn(value)
        return shape_ops.reshape(value, [-1, self.dimension])

    def _dense(self, features):
        return self._values(features)


def numeric_column(key, shape=(1,), default_value=None, dtype=dtypes.float32, normalizer_fn=None):
    """A real-valued feature read from `features[key]`, reshaped to `[batch, prod(shape)]`."""
    shape = (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating and not dtype.is_integer:
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    return NumericColumn(key, shape, default_value, dtype, normalizer_fn)


class BucketizedColumn(_Column):
    is_dense = True
    is_categorical = True

    def __init__(self, source_column, boundaries):
        self.source_column = source_column
        self.boundaries = boundaries
        self.name = f"{source_column.name}_bucketized"
        self._per_value = len(boundaries) + 1
        self.num_buckets = source_column.dimension * self._per_value
        self.dimension = self.num_buckets

    def _bucket(self, features):
        values = self.source_column._values(features)
        ids = math_ops.cast(math_ops.greater_equal(values, self.boundaries[0]), dtypes.int64)
        for b in self.boundaries[1:]:
            ids = ids + math_ops.cast(math_ops.greater_equal(values, b), dtypes.int64)
        return ids

    def _ids(self, features):
        offsets = np.arange(self.source_column.dimension, dtype=np.int64) * self._per_value
        return self._bucket(features) + core_ops.constant(offsets)

    def _dense(self, features):
        one_hot = array_ops.one_hot(self._bucket(features), self._per_value, dtype=dtypes.float32)
        return shape_ops.reshape(one_hot, [-1, self.dimension])


def bucketized_column(source_column, boundaries):
    """One-hot buckets of a numeric column: bucket i holds boundaries[i-1] <= x < boundaries[i]."""
    if not isinstance(source_column, NumericColumn):
        raise ValueError(f"source_column must be a column generated with numeric_column(). "
                         f"Given: {source_column}")
    boundaries = [float(b) for b in boundaries]
    if not boundaries or any(b >= c for b, c in zip(boundaries, boundaries[1:])):
        raise ValueError("boundaries must be a sorted list.")
    return BucketizedColumn(source_column, boundaries)


# ------------------------------------------------------------------------------ categorical
_KEY_SPACE = 2 ** 63 - 1  # string keys: 64-bit fingerprints compared as int64


def _strings(tensor):
    """The 2-D string form of a categorical input (integers through `as_string`)."""
    tensor = _as_2d(tensor)
    return tensor if tensor.dtype == dtypes.string else string_ops.as_string(tensor)


def _present(tensor):
    """Where a categorical input holds a value: not '' (strings) and not -1 (integers)."""
    tensor = _as_2d(tensor)
    if tensor.dtype == dtypes.string:
        return math_ops.greater(string_ops.length(tensor), 0)
    return math_ops.not_equal(math_ops.cast(tensor, dtypes.int64), np.int64(-1))


def _absent_as_minus_one(ids, present):
    return math_ops.where(present, ids, shape_ops.fill(shape_ops.shape(ids), np.int64(-1)))


def _hash(strings, buckets):
    return string_ops.string_to_hash_bucket_fast(strings, buckets)


def _text(value):
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8")


class VocabularyListColumn(_Column):
    is_categorical = True

    def __init__(self, key, vocabulary_list, dtype, default_value, num_oov_buckets):
        self.key = self.name = key
        self.vocabulary_list = vocabulary_list
        self.dtype = dtype
        self.default_value = default_value
        self.num_oov_buckets = num_oov_buckets
        self.num_buckets = len(vocabulary_list) + num_oov_buckets
        self._strings = isinstance(vocabulary_list[0], (str, bytes))
        if self._strings:
            keys = [fingerprint64(_text(v)) % _KEY_SPACE for v in vocabulary_list]
        else:
            keys = [int(v) for v in vocabulary_list]
        self._keys = np.array(keys, np.int64)

    def _ids(self, features):
        value = _as_2d(_feature(features, self.key))
        if (value.dtype == dtypes.string) != self._strings:
            raise ValueError(f"Column dtype and SparseTensors dtype must be compatible. "
                             f"key: {self.key}, column dtype: {self.dtype}, tensor dtype: "
                             f"{value.dtype}")
        keys = (_hash(value, _KEY_SPACE) if self._strings
                else math_ops.cast(value, dtypes.int64))
        matches = math_ops.equal(shape_ops.expand_dims(keys, -1), core_ops.constant(self._keys))
        found = math_ops.reduce_any(matches, axis=-1)
        positions = core_ops.constant(np.arange(len(self._keys), dtype=np.int64))
        index = math_ops.reduce_sum(math_ops.cast(matches, dtypes.int64) * positions, axis=-1)
        if self.num_oov_buckets:
            other = _hash(_strings(value), self.num_oov_buckets) + np.int64(len(self._keys))
        else:
            other = shape_ops.fill(shape_ops.shape(index), np.int64(self.default_value))
        return _absent_as_minus_one(math_ops.where(found, index, other), _present(value))


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1,
                                            num_oov_buckets=0):
    """Ids by position in `vocabulary_list`; other values get `default_value` or, with
    `num_oov_buckets`, one of that many buckets after the vocabulary (by hash)."""
    vocabulary_list = list(vocabulary_list)
    if not vocabulary_list:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, column_name: {key}")
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, "
                         f"column_name: {key}")
    if num_oov_buckets < 0:
        raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets}.")
    if default_value != -1 and num_oov_buckets:
        raise ValueError(f"Can't specify both default_value {default_value} and num_oov_buckets "
                         f"{num_oov_buckets}.")
    if dtype is None:
        dtype = dtypes.string if isinstance(vocabulary_list[0], (str, bytes)) else dtypes.int64
    return VocabularyListColumn(key, tuple(vocabulary_list), dtypes.as_dtype(dtype),
                                int(default_value), int(num_oov_buckets))


class IdentityColumn(_Column):
    is_categorical = True

    def __init__(self, key, num_buckets, default_value):
        self.key = self.name = key
        self.num_buckets = num_buckets
        self.default_value = default_value

    def _ids(self, features):
        ids = math_ops.cast(_as_2d(_feature(features, self.key)), dtypes.int64)
        valid = math_ops.logical_and(math_ops.greater_equal(ids, 0),
                                     math_ops.less(ids, self.num_buckets))
        fallback = -1 if self.default_value is None else self.default_value
        fallback = math_ops.where(math_ops.equal(ids, np.int64(-1)), ids,  # -1: absent
                                  shape_ops.fill(shape_ops.shape(ids), np.int64(fallback)))
        return math_ops.where(valid, ids, fallback)


def categorical_column_with_identity(key, num_buckets, default_value=None):
    """Integer inputs used as ids in `[0, num_buckets)`; others get `default_value` (absent when
    None: TensorFlow raises for them at run time, graphflow ignores them)."""
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and not 0 <= default_value < num_buckets:
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), "
                         f"column_name {key}")
    return IdentityColumn(key, int(num_buckets), default_value)


class HashBucketColumn(_Column):
    is_categorical = True

    def __init__(self, key, hash_bucket_size, dtype):
        self.key = self.name = key
        self.hash_bucket_size = self.num_buckets = hash_bucket_size
        self.dtype = dtype

    def _ids(self, features):
        value = _feature(features, self.key)
        return _absent_as_minus_one(_hash(_strings(value), self.hash_bucket_size),
                                    _present(value))


def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=dtypes.string):
    """Ids = hash(value) % hash_bucket_size (BLAKE2b here, FarmHash in TensorFlow: the buckets
    differ from TensorFlow's)."""
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: "
                         f"{hash_bucket_size}, key: {key}")
    return HashBucketColumn(key, int(hash_bucket_size), dtypes.as_dtype(dtype))


class CrossedColumn(_Column):
    is_categorical = True

    def __init__(self, keys, hash_bucket_size):
        self.keys = keys
        self.hash_bucket_size = self.num_buckets = hash_bucket_size
        self.name = "_X_".join(k if isinstance(k, str) else k.name for k in keys)

    def _ids(self, features):
        strings, present = None, None
        for key in self.keys:
            if isinstance(key, str):
                value = _feature(features, key)
                part, mask = _strings(value), _present(value)
            else:
                ids = key._ids(features)
                part = string_ops.as_string(ids)
                mask = math_ops.greater_equal(ids, np.int64(0))
            if strings is None:
                strings, present = part, mask
                continue
            # every (earlier combination, value) pair: [batch, m, 1] x [batch, 1, n] -> [batch, m*n]
            width = shape_ops.shape(part)[1:2]
            before = shape_ops.shape(strings)[1:2]
            ones = core_ops.constant(np.array([1], np.int32))
            left = array_ops.tile(shape_ops.expand_dims(strings, 2),
                                  shape_ops.concat([ones, ones, width], 0))
            right = array_ops.tile(shape_ops.expand_dims(part, 1),
                                   shape_ops.concat([ones, before, ones], 0))
            strings = shape_ops.reshape(string_ops.string_join([left, right], separator="_X_"),
                                        [shape_ops.shape(part)[0], -1])
            present = shape_ops.reshape(math_ops.logical_and(shape_ops.expand_dims(present, 2),
                                                             shape_ops.expand_dims(mask, 1)),
                                        [shape_ops.shape(part)[0], -1])
        return _absent_as_minus_one(_hash(strings, self.hash_bucket_size), present)


def crossed_column(keys, hash_bucket_size, hash_key=None):
    """Hashed combinations of every value of each key (a feature name or a categorical column);
    BLAKE2b of the joined text, so the buckets differ from TensorFlow's."""
    keys = list(keys)
    if len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: {hash_bucket_size}")
    for k in keys:
        if not isinstance(k, str) and not getattr(k, "is_categorical", False):
            raise ValueError(f"Unsupported key type. All keys must be either string, or "
                             f"categorical column except HashedCategoricalColumn. Given: {k}")
    return CrossedColumn(tuple(keys), int(hash_bucket_size))


# ------------------------------------------------------------------------------ dense of ids
def _multi_hot(ids, num_buckets):
    return math_ops.reduce_sum(array_ops.one_hot(ids, num_buckets, dtype=dtypes.float32), axis=1)


class IndicatorColumn(_Column):
    is_dense = True

    def __init__(self, categorical_column):
        self.categorical_column = categorical_column
        self.name = f"{categorical_column.name}_indicator"
        self.dimension = categorical_column.num_buckets

    def _dense(self, features):
        return _multi_hot(self.categorical_column._ids(features), self.dimension)


def indicator_column(categorical_column):
    """Multi-hot `[batch, num_buckets]` counts of a categorical column's ids."""
    if not getattr(categorical_column, "is_categorical", False):
        raise ValueError(f"indicator_column needs a categorical column, got {categorical_column}")
    return IndicatorColumn(categorical_column)


class EmbeddingColumn(_Column):
    is_dense = True

    def __init__(self, categorical_column, dimension, combiner, initializer, max_norm, trainable):
        self.categorical_column = categorical_column
        self.dimension = dimension
        self.combiner = combiner
        self.initializer = initializer
        self.max_norm = max_norm
        self.trainable = trainable
        self.name = f"{categorical_column.name}_embedding"

    def _dense(self, features):
        ids = self.categorical_column._ids(features)
        weights = get_variable("embedding_weights", [self.categorical_column.num_buckets,
                                                     self.dimension], dtype=dtypes.float32,
                               initializer=self.initializer, trainable=self.trainable)
        rows = array_ops.gather(weights, math_ops.maximum(ids, np.int64(0)))
        if self.max_norm is not None:
            norms = math_ops.sqrt(math_ops.reduce_sum(math_ops.square(rows), -1, keepdims=True))
            rows = rows * math_ops.minimum(1.0, self.max_norm / math_ops.maximum(norms, 1e-12))
        return _combine(rows, ids, self.combiner)


def _combine(rows, ids, combiner):
    """Combine `[batch, n, d]` rows of ids `[batch, n]` (-1 ignored) by sum, mean or sqrtn."""
    present = math_ops.cast(math_ops.greater_equal(ids, np.int64(0)), dtypes.float32)
    total = math_ops.reduce_sum(rows * shape_ops.expand_dims(present, -1), axis=1)
    if combiner == "sum":
        return total
    count = math_ops.reduce_sum(present, axis=1, keepdims=True)
    if combiner == "sqrtn":
        count = math_ops.sqrt(count)
    return total / math_ops.maximum(count, 1e-12) * math_ops.cast(
        math_ops.greater(count, 0.0), dtypes.float32)


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True):
    """A trainable `[num_buckets, dimension]` table; each example's ids' rows combined by
    `combiner` ('mean', 'sum' or 'sqrtn'). Default initializer: truncated normal, stddev
    1/sqrt(dimension), as TensorFlow's."""
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn', 'sum', got {combiner}")
    if ckpt_to_load_from is not None or tensor_name_in_ckpt is not None:
        raise NotImplementedError("embedding_column(ckpt_to_load_from=...): use the "
                                  "Estimator's warm_start_from instead")
    if initializer is None:
        initializer = init_ops.truncated_normal_initializer(stddev=1.0 / math.sqrt(dimension))
    return EmbeddingColumn(categorical_column, int(dimension), combiner, initializer, max_norm,
                           trainable)


# ------------------------------------------------------------------------------ models
def _sorted_columns(feature_columns):
    if isinstance(feature_columns, _Column):
        feature_columns = [feature_columns]
    columns = list(feature_columns)
    if not columns:
        raise ValueError("feature_columns must not be empty.")
    for column in columns:
        if not isinstance(column, _Column):
            raise ValueError(f"Items of feature_columns must be a _FeatureColumn. Given: {column}")
    names = [c.name for c in columns]
    if len(set(names)) != len(names):
        raise ValueError(f"Duplicate feature column name found: {names}")
    return sorted(columns, key=lambda c: c.name)


def input_layer(features, feature_columns, weight_collections=None, trainable=True,
                cols_to_vars=None):
    """The float32 `[batch, sum of dimensions]` tensor of dense columns, sorted by name."""
    columns = _sorted_columns(feature_columns)
    for column in columns:
        if not column.is_dense:
            raise ValueError(f"Items of feature_columns must be a _DenseColumn. You can wrap a "
                             f"categorical column with an embedding_column or indicator_column. "
                             f"Given: {column}")
    blocks = []
    with variable_scope(None, default_name="input_layer"):
        for column in columns:
            with variable_scope(None, default_name=column.name):
                blocks.append(column._dense(features))
    return shape_ops.concat(blocks, 1) if len(blocks) > 1 else blocks[0]


def linear_model(features, feature_columns, units=1, sparse_combiner="sum",
                 weight_collections=None, trainable=True, cols_to_vars=None):
    """`bias + sum over columns of input @ weights`: dense columns multiply a `[d, units]`
    weight matrix, categorical ones combine their ids' rows of `[num_buckets, units]`."""
    columns = _sorted_columns(feature_columns)
    total = None
    with variable_scope(None, default_name="linear_model"):
        for column in columns:
            with variable_scope(None, default_name=column.name):
                if column.is_categorical:
                    ids = column._ids(features)
                    weights = get_variable("weights", [column.num_buckets, units],
                                           initializer=init_ops.zeros_initializer(),
                                           trainable=trainable)
                    rows = array_ops.gather(weights, math_ops.maximum(ids, np.int64(0)))
                    part = _combine(rows, ids, sparse_combiner)
                else:
                    weights = get_variable("weights", [column.dimension, units],
                                           initializer=init_ops.zeros_initializer(),
                                           trainable=trainable)
                    part = math_ops.matmul(column._dense(features), weights)
                total = part if total is None else total + part
        bias = get_variable("bias_weights", [units], initializer=init_ops.zeros_initializer(),
                            trainable=trainable)
        return total + bias


__all__ = ["numeric_column", "bucketized_column", "categorical_column_with_vocabulary_list",
           "categorical_column_with_identity", "categorical_column_with_hash_bucket",
           "crossed_column", "indicator_column", "embedding_column", "input_layer",
           "linear_model"]
