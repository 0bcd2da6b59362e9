"""`tf.keras.losses`' loss classes (Keras 2): each computes a per-sample loss, weights it by
`sample_weight` and reduces it by `reduction` ('auto' and 'sum_over_batch_size': the weighted sum
over the number of loss elements; 'sum'; 'none'). Also the per-sample functions the classes wrap
that losses.py lacks (Huber, KL divergence, cosine similarity, log-cosh, Poisson, MAPE, MSLE,
squared and categorical hinge), and `Reduction`.

As Keras does, the hinge losses turn 0/1 labels into -1/1, label smoothing mixes the labels with
the uniform distribution (binary: towards 0.5), and the cosine similarity is negated (a loss to
minimize)."""

import math

from graphflow.ops import math_ops, nn_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.keras import backend, backend_nn
from graphflow.tf1.keras import losses as keras_losses


class Reduction:
    """How a loss class reduces its weighted per-sample losses."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f'Invalid Reduction Key: {key}. Expected keys are "{cls.all()}"')


def _pair(y_true, y_pred):
    y_pred = convert_to_tensor(y_pred)
    return math_ops.cast(convert_to_tensor(y_true), y_pred.dtype), y_pred


def _eps(dtype):
    return convert_to_tensor(backend.epsilon(), dtype=dtype)


def _signed_labels(y_true):
    """0/1 labels -> -1/1 (labels already in -1/1 pass unchanged)."""
    binary = math_ops.reduce_all(math_ops.logical_or(math_ops.equal(y_true, 0.0),
                                                     math_ops.equal(y_true, 1.0)))
    return math_ops.where(binary, 2.0 * y_true - 1.0, y_true)


# ------------------------------------------------------------------ per-sample functions
def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    diff = math_ops.abs((y_true - y_pred) / math_ops.maximum(math_ops.abs(y_true),
                                                             _eps(y_pred.dtype)))
    return 100.0 * math_ops.reduce_mean(diff, -1)


def mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    eps = _eps(y_pred.dtype)
    first = math_ops.log(math_ops.maximum(y_pred, eps) + 1.0)
    second = math_ops.log(math_ops.maximum(y_true, eps) + 1.0)
    return math_ops.reduce_mean(math_ops.square(first - second), -1)


def squared_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _signed_labels(y_true)
    return math_ops.reduce_mean(math_ops.square(math_ops.maximum(1.0 - y_true * y_pred, 0.0)),
                                -1)


def categorical_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    pos = math_ops.reduce_sum(y_true * y_pred, -1)
    neg = math_ops.reduce_max((1.0 - y_true) * y_pred, -1)
    return math_ops.maximum(neg - pos + 1.0, 0.0)


def huber(y_true, y_pred, delta=1.0):
    y_true, y_pred = _pair(y_true, y_pred)
    delta = convert_to_tensor(float(delta), dtype=y_pred.dtype)
    error = y_pred - y_true
    abs_error = math_ops.abs(error)
    quadratic = 0.5 * math_ops.square(error)
    linear = delta * abs_error - 0.5 * math_ops.square(delta)
    return math_ops.reduce_mean(math_ops.where(abs_error <= delta, quadratic, linear), -1)


def kl_divergence(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    one = convert_to_tensor(1.0, dtype=y_pred.dtype)
    y_true = math_ops.clip_by_value(y_true, _eps(y_pred.dtype), one)
    y_pred = math_ops.clip_by_value(y_pred, _eps(y_pred.dtype), one)
    return math_ops.reduce_sum(y_true * math_ops.log(y_true / y_pred), -1)


def poisson(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return math_ops.reduce_mean(y_pred - y_true * math_ops.log(y_pred + _eps(y_pred.dtype)), -1)


def log_cosh(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    x = y_pred - y_true
    return math_ops.reduce_mean(x + math_ops.softplus(-2.0 * x) - math.log(2.0), -1)


def cosine_similarity(y_true, y_pred, axis=-1):
    y_true, y_pred = _pair(y_true, y_pred)
    return -math_ops.reduce_sum(nn_ops.l2_normalize(y_true, axis=axis) *
                                nn_ops.l2_normalize(y_pred, axis=axis), axis)


def _categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        classes = math_ops.cast(shape_ops.shape(y_true)[-1], y_pred.dtype)
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    return backend_nn.categorical_crossentropy(y_true, y_pred, from_logits, axis)


def _binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return math_ops.reduce_mean(
        backend_nn.binary_crossentropy(y_true, y_pred, from_logits), axis)


def _sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    return backend_nn.sparse_categorical_crossentropy(y_true, y_pred, from_logits, axis)


kld = KLD = kullback_leibler_divergence = kl_divergence
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
logcosh = log_cosh


# ------------------------------------------------------------------ classes
def _reduce(losses, sample_weight, reduction):
    losses = convert_to_tensor(losses)
    if sample_weight is not None:
        weight = math_ops.cast(convert_to_tensor(sample_weight), losses.dtype)
        lr, wr = losses.shape.ndims, weight.shape.ndims
        if lr is not None and wr is not None:
            if wr == lr + 1 and weight.shape.as_list()[-1] == 1:
                weight = shape_ops.squeeze(weight, [-1])
            elif lr == wr + 1 and losses.shape.as_list()[-1] == 1:
                losses = shape_ops.squeeze(losses, [-1])
        losses = losses * weight
    if reduction == Reduction.NONE:
        return losses
    total = math_ops.reduce_sum(losses)
    if reduction == Reduction.SUM:
        return total
    return total / math_ops.cast(shape_ops.size(losses), losses.dtype)


class Loss:
    """Base class: subclasses define `call(y_true, y_pred)` (per-sample losses)."""

    def __init__(self, reduction=Reduction.AUTO, name=None):
        Reduction.validate(reduction)
        self.reduction, self.name = reduction, name

    def __call__(self, y_true, y_pred, sample_weight=None):
        from graphflow.framework.graph import get_default_graph
        with get_default_graph().name_scope(self.name or type(self).__name__):
            return _reduce(self.call(y_true, y_pred), sample_weight, self.reduction)

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"{type(self).__name__}.call")

    def get_config(self):
        return {"reduction": self.reduction, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class LossFunctionWrapper(Loss):
    """A loss class over a per-sample function `fn(y_true, y_pred, **kwargs)`."""

    def __init__(self, fn, reduction=Reduction.AUTO, name=None, **kwargs):
        super().__init__(reduction, name)
        self.fn, self._fn_kwargs = fn, kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return {**self._fn_kwargs, **super().get_config()}


def _wrapper(class_name, fn, default_name, doc, **defaults):
    def __init__(self, reduction=Reduction.AUTO, name=default_name, **kwargs):
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{class_name}: unexpected arguments {sorted(unknown)}")
        LossFunctionWrapper.__init__(self, fn, reduction, name, **{**defaults, **kwargs})
    return type(class_name, (LossFunctionWrapper,), {"__init__": __init__, "__doc__": doc})


MeanSquaredError = _wrapper("MeanSquaredError", keras_losses.mean_squared_error,
                            "mean_squared_error", "mean((y_pred - y_true)^2) per sample.")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", keras_losses.mean_absolute_error,
                             "mean_absolute_error", "mean(|y_pred - y_true|) per sample.")
MeanAbsolutePercentageError = _wrapper(
    "MeanAbsolutePercentageError", mean_absolute_percentage_error,
    "mean_absolute_percentage_error", "100 * mean(|(y_true - y_pred) / y_true|) per sample.")
MeanSquaredLogarithmicError = _wrapper(
    "MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error", "mean((log(y_pred + 1) - log(y_true + 1))^2).")
Hinge = _wrapper("Hinge", keras_losses.hinge, "hinge", "mean(max(1 - y_true * y_pred, 0)).")
SquaredHinge = _wrapper("SquaredHinge", squared_hinge, "squared_hinge",
                        "mean(max(1 - y_true * y_pred, 0)^2).")
CategoricalHinge = _wrapper("CategoricalHinge", categorical_hinge, "categorical_hinge",
                            "max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0).")
KLDivergence = _wrapper("KLDivergence", kl_divergence, "kl_divergence",
                        "sum(y_true * log(y_true / y_pred)) per sample.")
Poisson = _wrapper("Poisson", poisson, "poisson", "mean(y_pred - y_true * log(y_pred)).")
LogCosh = _wrapper("LogCosh", log_cosh, "log_cosh", "mean(log(cosh(y_pred - y_true))).")
Huber = _wrapper("Huber", huber, "huber_loss", "`Huber(delta=1.0)`.", delta=1.0)
CosineSimilarity = _wrapper("CosineSimilarity", cosine_similarity, "cosine_similarity",
                            "`CosineSimilarity(axis=-1)`: -cos(y_true, y_pred).", axis=-1)
CategoricalCrossentropy = _wrapper(
    "CategoricalCrossentropy", _categorical_crossentropy, "categorical_crossentropy",
    "`CategoricalCrossentropy(from_logits=False, label_smoothing=0.0, axis=-1)`.",
    from_logits=False, label_smoothing=0.0, axis=-1)
BinaryCrossentropy = _wrapper(
    "BinaryCrossentropy", _binary_crossentropy, "binary_crossentropy",
    "`BinaryCrossentropy(from_logits=False, label_smoothing=0.0, axis=-1)`.",
    from_logits=False, label_smoothing=0.0, axis=-1)
SparseCategoricalCrossentropy = _wrapper(
    "SparseCategoricalCrossentropy", _sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy", "`SparseCategoricalCrossentropy(from_logits=False)`.",
    from_logits=False)
for _cls in (MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
             MeanSquaredLogarithmicError, Hinge, SquaredHinge, CategoricalHinge, KLDivergence,
             Poisson, LogCosh, Huber, CosineSimilarity, CategoricalCrossentropy,
             BinaryCrossentropy, SparseCategoricalCrossentropy):
    _cls.__module__ = __name__


def is_sparse_loss(fn):
    """True for the sparse categorical cross-entropy (function or class)."""
    return fn is keras_losses.sparse_categorical_crossentropy or \
        isinstance(fn, SparseCategoricalCrossentropy)


def is_binary_loss(fn):
    return fn is keras_losses.binary_crossentropy or isinstance(fn, BinaryCrossentropy)


__all__ = ["Loss", "MeanSquaredError", "MeanAbsoluteError",
           "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "Hinge", "SquaredHinge",
           "CategoricalHinge", "KLDivergence", "Poisson", "LogCosh", "Huber", "CosineSimilarity",
           "CategoricalCrossentropy", "BinaryCrossentropy", "SparseCategoricalCrossentropy",
           "mean_absolute_percentage_error", "mean_squared_logarithmic_error", "squared_hinge",
           "categorical_hinge", "kl_divergence", "poisson", "log_cosh",
           "cosine_similarity", "kld", "KLD", "kullback_leibler_divergence", "mape", "MAPE",
           "msle", "MSLE", "logcosh"]
