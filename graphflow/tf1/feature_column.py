"""`tf.feature_column`: TF1's feature columns over dense inputs, `input_layer` and `linear_model`.

A feature column says how one entry of a features dict becomes model input. Dense columns
(`numeric_column`, `bucketized_column`, `indicator_column`, `embedding_column`) give a float32
`[batch, d]` block; categorical columns (`categorical_column_with_vocabulary_list`,
`..._with_identity`, `..._with_hash_bucket`, `crossed_column`, and `bucketized_column` used as
one) give integer ids `[batch, n]` in `[0, num_buckets)`, -1 marking an absent value (an empty
string or -1 input, or an out-of-vocabulary value without OOV buckets), which contributes nothing.
`input_layer(features, columns)` concatenates the dense blocks in TF1's order (columns sorted by
name); `linear_model` is the weighted sum of every column (one weight row per bucket).

The categorical columns live in `feature_column_categorical.py`. Differences from TensorFlow:
categorical inputs are dense tensors (`[batch]` or `[batch, n]`; a SparseTensor is densified);
hash buckets come from `tf.string_to_hash_bucket_fast` (FarmHash's Fingerprint64, as TensorFlow),
so a hashed column gives TensorFlow's ids, and a crossed column TensorFlow's buckets (the
`HashCross` op, FarmHash fingerprints combined with FingerprintCat64).
"""

import math

import numpy as np

from graphflow.framework import dtypes
from graphflow.ops import array_ops, core_ops, math_ops, shape_ops
from graphflow.ops.parsing_ops import FixedLenFeature, VarLenFeature
from graphflow.tf1 import init_ops
from graphflow.tf1.feature_column_categorical import (  # noqa: F401 (re-exported)
    CrossedColumn,
    IdentityColumn,
    WeightedCategoricalColumn,
    _Column,
    _feature,
    categorical_column_with_hash_bucket,
    categorical_column_with_identity,
    categorical_column_with_vocabulary_file,
    categorical_column_with_vocabulary_list,
    crossed_column,
    weighted_categorical_column,
)
from graphflow.tf1.variable_scope import get_variable, variable_scope


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


# ------------------------------------------------------------------------------ dense of ids
def _multi_hot(ids, num_buckets, weights=None):
    one_hot = array_ops.one_hot(ids, num_buckets, dtype=dtypes.float32)
    if weights is not None:
        one_hot = one_hot * shape_ops.expand_dims(weights, -1)
    return math_ops.reduce_sum(one_hot, axis=1)


def _id_weights(column, features):
    """A weighted categorical column's float `[batch, n]` weights, else None."""
    return column._weights(features) if isinstance(column, WeightedCategoricalColumn) else None


class IndicatorColumn(_Column):
    is_dense = True

    def __init__(self, categorical_column):
        self.categorical_column = categorical_column
        self.name = f"{categorical_column.name}_indicator"
        self.dimension = categorical_column.num_buckets

    def _dense(self, features):
        column = self.categorical_column
        return _multi_hot(column._ids(features), self.dimension, _id_weights(column, features))


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
        return _combine(rows, ids, self.combiner,
                        _id_weights(self.categorical_column, features))


def _combine(rows, ids, combiner, weights=None):
    """Combine `[batch, n, d]` rows of ids `[batch, n]` (-1 ignored), each weighted by
    `weights` `[batch, n]` (or 1): sum, mean (/ sum of weights) or sqrtn (/ sqrt of the sum of
    squared weights)."""
    present = math_ops.cast(math_ops.greater_equal(ids, np.int64(0)), dtypes.float32)
    if weights is not None:
        present = present * weights
    total = math_ops.reduce_sum(rows * shape_ops.expand_dims(present, -1), axis=1)
    if combiner == "sum":
        return total
    if combiner == "sqrtn":
        count = math_ops.sqrt(math_ops.reduce_sum(math_ops.square(present), axis=1,
                                                  keepdims=True))
    else:
        count = math_ops.reduce_sum(present, axis=1, keepdims=True)
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
                    part = _combine(rows, ids, sparse_combiner, _id_weights(column, features))
                else:
                    weights = get_variable("weights", [column.dimension, units],
                                           initializer=init_ops.zeros_initializer(),
                                           trainable=trainable)
                    part = math_ops.matmul(column._dense(features), weights)
                total = part if total is None else total + part
        bias = get_variable("bias_weights", [units], initializer=init_ops.zeros_initializer(),
                            trainable=trainable)
        return total + bias


def _parse_specs(column):
    if isinstance(column, NumericColumn):
        default = column.default_value
        if default is not None and not isinstance(default, (list, tuple)):
            default = [default] * column.dimension
        return {column.key: FixedLenFeature(column.shape, column.dtype, default)}
    if isinstance(column, BucketizedColumn):
        return _parse_specs(column.source_column)
    if isinstance(column, (IndicatorColumn, EmbeddingColumn)):
        return _parse_specs(column.categorical_column)
    if isinstance(column, CrossedColumn):
        specs = {}
        for key in column.keys:
            specs.update({key: VarLenFeature(dtypes.string)} if isinstance(key, str)
                         else _parse_specs(key))
        return specs
    if isinstance(column, WeightedCategoricalColumn):
        return {**_parse_specs(column.categorical_column),
                column.weight_feature_key: VarLenFeature(column.dtype)}
    if isinstance(column, IdentityColumn):
        return {column.key: VarLenFeature(dtypes.int64)}
    return {column.key: VarLenFeature(column.dtype)}


def make_parse_example_spec(feature_columns):
    """The `tf.parse_example` features dict the columns read: FixedLenFeature for numeric
    columns, VarLenFeature for categorical ones (their SparseTensors are densified)."""
    specs = {}
    for column in feature_columns:
        if not isinstance(column, _Column):
            raise ValueError(f"All feature_columns must be _FeatureColumn instances. Given: "
                             f"{column}")
        for key, spec in _parse_specs(column).items():
            if key in specs and specs[key] != spec:
                raise ValueError(f"feature_columns contain different parse_spec for key {key}. "
                                 f"Given {spec} and {specs[key]}")
            specs[key] = spec
    return specs


__all__ = ["make_parse_example_spec", "numeric_column", "bucketized_column",
           "categorical_column_with_vocabulary_list",
           "categorical_column_with_vocabulary_file",
           "categorical_column_with_identity", "categorical_column_with_hash_bucket",
           "crossed_column", "weighted_categorical_column", "indicator_column", "embedding_column",
           "input_layer",
           "linear_model"]
