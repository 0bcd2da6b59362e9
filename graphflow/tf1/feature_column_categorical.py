"""`tf.feature_column`'s categorical columns and the column base: vocabulary-list, vocabulary-file,
identity, hash-bucket and crossed columns, each giving int64 ids `[batch, n]` (-1 where a value is
absent: '' or -1 in the input, or out of vocabulary without OOV buckets), all as graph ops.

String values are matched against a vocabulary through their 64-bit fingerprints
(`tf.string_to_hash_bucket_fast`); hash buckets use the same op, FarmHash's Fingerprint64 as in
TensorFlow, so a hashed column gives TensorFlow's ids (integers are hashed through their decimal
text, as TensorFlow does). A crossed column gives TensorFlow's buckets too (the `HashCross` op:
FingerprintCat64 of the values' hashes). SparseTensor inputs are densified ('' or -1 filling the
gaps).
"""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor
from graphflow.kernels.cpu.reference.string_kernels import fingerprint64
from graphflow.ops import core_ops, math_ops, shape_ops, sparse_ops, string_ops
from graphflow.ops.sparse_tensor import SparseTensor
from graphflow.tf1 import gfile


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
    if isinstance(value, SparseTensor):
        fill = "" if value.dtype == dtypes.string else -1
        return sparse_ops.sparse_tensor_to_dense(value, default_value=fill)
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
    """Ids = Fingerprint64(value) % hash_bucket_size (integers through their decimal text), the
    ids TensorFlow gives."""
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: "
                         f"{hash_bucket_size}, key: {key}")
    return HashBucketColumn(key, int(hash_bucket_size), dtypes.as_dtype(dtype))


class CrossedColumn(_Column):
    is_categorical = True

    def __init__(self, keys, hash_bucket_size, hash_key):
        self.keys = keys
        self.hash_bucket_size = self.num_buckets = hash_bucket_size
        self.hash_key = hash_key
        self.name = "_X_".join(k if isinstance(k, str) else k.name for k in keys)

    def _leaf_keys(self):
        for key in self.keys:
            if isinstance(key, CrossedColumn):
                yield from key._leaf_keys()
            else:
                yield key

    def _ids(self, features):
        # TensorFlow's order: the sparse inputs (categorical columns' ids, SparseTensor features)
        # first, then the dense features; a dense feature's every value is crossed ('' and -1
        # too), a sparse one's present values only
        sparse, dense = [], []
        for key in self._leaf_keys():
            if isinstance(key, str):
                raw = features.get(key)
                value = _as_2d(_feature(features, key))
                if value.dtype != dtypes.string:
                    value = math_ops.cast(value, dtypes.int64)
                if isinstance(raw, SparseTensor):
                    sparse.append((value, _sparse_present(raw)))
                else:
                    dense.append((value, None))
            else:
                ids = key._ids(features)
                sparse.append((ids, math_ops.greater_equal(ids, np.int64(0))))
        parts = sparse + dense
        ids = string_ops.hash_cross([p for p, _ in parts], self.hash_bucket_size, self.hash_key)
        present = None
        for part, mask in parts:
            if mask is None:
                mask = shape_ops.fill(shape_ops.shape(part), True)
            if present is None:
                present = mask
                continue
            # every (earlier combination, value) pair: [batch, m, 1] x [batch, 1, n] -> [batch, m*n]
            present = shape_ops.reshape(math_ops.logical_and(shape_ops.expand_dims(present, 2),
                                                             shape_ops.expand_dims(mask, 1)),
                                        [shape_ops.shape(part)[0], -1])
        return _absent_as_minus_one(ids, present)


def _sparse_present(sparse):
    """Where a SparseTensor holds a value, as a dense bool [batch, n]."""
    ones = shape_ops.fill(shape_ops.shape(sparse.values), np.int8(1))
    marks = sparse_ops.sparse_tensor_to_dense(
        SparseTensor(sparse.indices, ones, sparse.dense_shape), default_value=np.int8(0))
    return math_ops.greater(_as_2d(marks), np.int8(0))


def crossed_column(keys, hash_bucket_size, hash_key=None):
    """Hashed combinations of every value of each key (a feature name, a categorical column or
    a crossed column): TensorFlow's buckets, FingerprintCat64 of `hash_key` (TensorFlow's
    default 0xDECAFCAFFE) and each value's hash (Fingerprint64 of a string, an integer as
    itself, a categorical column's id)."""
    keys = list(keys)
    if len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: {hash_bucket_size}")
    for k in keys:
        if isinstance(k, HashBucketColumn):
            raise ValueError(f"categorical_column_with_hash_bucket is not supported for crossing. "
                             f"Hashing before crossing will increase probability of collision. "
                             f"Instead, use the feature name as a string. Given: {k}")
        if not isinstance(k, str) and not getattr(k, "is_categorical", False):
            raise ValueError(f"Unsupported key type. All keys must be either string, or "
                             f"categorical column except HashedCategoricalColumn. Given: {k}")
    key = string_ops.DEFAULT_HASH_KEY if hash_key is None else int(hash_key)
    return CrossedColumn(tuple(keys), int(hash_bucket_size), key)


def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                            num_oov_buckets=0, default_value=None,
                                            dtype=dtypes.string):
    """`categorical_column_with_vocabulary_list` over the lines of `vocabulary_file` (the first
    `vocabulary_size` of them when given)."""
    if not vocabulary_file:
        raise ValueError(f"Missing vocabulary_file in {key}.")
    with gfile.GFile(vocabulary_file, "r") as f:
        words = [line.rstrip("\r\n") for line in f]
    if vocabulary_size is not None:
        if vocabulary_size > len(words):
            raise ValueError(f"vocabulary_size {vocabulary_size} exceeds the {len(words)} lines "
                             f"of {vocabulary_file}")
        words = words[:vocabulary_size]
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer:
        words = [int(w) for w in words]
    return categorical_column_with_vocabulary_list(
        key, words, dtype, -1 if default_value is None else default_value, num_oov_buckets)


class WeightedCategoricalColumn(_Column):
    is_categorical = True

    def __init__(self, categorical_column, weight_feature_key, dtype):
        self.categorical_column = categorical_column
        self.weight_feature_key = weight_feature_key
        self.dtype = dtype
        self.num_buckets = categorical_column.num_buckets
        self.name = f"{categorical_column.name}_weighted_by_{weight_feature_key}"

    def _ids(self, features):
        return self.categorical_column._ids(features)

    def _weights(self, features):
        weights = _as_2d(_feature(features, self.weight_feature_key))
        return math_ops.cast(weights, dtypes.float32)


def weighted_categorical_column(categorical_column, weight_feature_key, dtype=dtypes.float32):
    """A categorical column whose every id carries the weight at the same position of
    `features[weight_feature_key]` (indicator: summed weights; embedding / linear: weighted
    combination)."""
    dtype = dtypes.as_dtype(dtype)
    if dtype not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
        raise ValueError(f"dtype {dtype} is not convertible to float.")
    if not getattr(categorical_column, "is_categorical", False):
        raise ValueError(f"categorical_column must be categorical, got {categorical_column}")
    return WeightedCategoricalColumn(categorical_column, weight_feature_key, dtype)
