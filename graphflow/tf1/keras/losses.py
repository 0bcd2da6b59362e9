"""`tf.keras.losses` and `tf.keras.metrics`: Keras's per-sample losses (a value per example,
averaged over the batch by the model) and accuracy metrics, resolved from strings as Keras does.

As TF1 Keras did, the cross-entropies on probabilities clip them to [epsilon, 1 - epsilon], except
when the probabilities are the output of Keras's softmax/sigmoid activation: then the loss is
computed from the logits before it (recorded by `activations`), which is exact and stable.
"""

from graphflow.framework import dtypes
from graphflow.ops import math_ops, nn_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.keras import activations, backend


def _eps(dtype):
    return convert_to_tensor(backend.epsilon(), dtype=dtype)


def categorical_crossentropy(y_true, y_pred, from_logits=False):
    y_pred = convert_to_tensor(y_pred)
    y_true = math_ops.cast(convert_to_tensor(y_true), y_pred.dtype)
    if not from_logits:
        logits = activations.logits_of(y_pred, "softmax")
        if logits is None:
            p = y_pred / math_ops.reduce_sum(y_pred, -1, keepdims=True)
            p = math_ops.clip_by_value(p, _eps(p.dtype), 1.0 - _eps(p.dtype))
            return -math_ops.reduce_sum(y_true * math_ops.log(p), -1)
        y_pred = logits
    return nn_ops.softmax_cross_entropy_with_logits_v2(labels=y_true, logits=y_pred)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False):
    y_pred = convert_to_tensor(y_pred)
    logits = y_pred if from_logits else activations.logits_of(y_pred, "softmax")
    if logits is None:
        p = math_ops.clip_by_value(y_pred, _eps(y_pred.dtype), 1.0 - _eps(y_pred.dtype))
        logits = math_ops.log(p)
    y_true = convert_to_tensor(y_true)
    labels = math_ops.cast(shape_ops.reshape(y_true, [-1]), dtypes.int64)
    depth = logits.shape.as_list()[-1]
    flat = shape_ops.reshape(logits, [-1, depth])
    losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=flat)
    if logits.shape.ndims == 2:
        return losses
    return shape_ops.reshape(losses, shape_ops.shape(logits)[:-1])


def binary_crossentropy(y_true, y_pred, from_logits=False):
    y_pred = convert_to_tensor(y_pred)
    y_true = math_ops.cast(convert_to_tensor(y_true), y_pred.dtype)
    logits = y_pred if from_logits else activations.logits_of(y_pred, "sigmoid")
    if logits is None:
        p = math_ops.clip_by_value(y_pred, _eps(y_pred.dtype), 1.0 - _eps(y_pred.dtype))
        logits = math_ops.log(p / (1.0 - p))
    return math_ops.reduce_mean(
        nn_ops.sigmoid_cross_entropy_with_logits(labels=y_true, logits=logits), -1)


def mean_squared_error(y_true, y_pred):
    y_pred = convert_to_tensor(y_pred)
    y_true = math_ops.cast(convert_to_tensor(y_true), y_pred.dtype)
    return math_ops.reduce_mean(math_ops.square(y_pred - y_true), -1)


def mean_absolute_error(y_true, y_pred):
    y_pred = convert_to_tensor(y_pred)
    y_true = math_ops.cast(convert_to_tensor(y_true), y_pred.dtype)
    return math_ops.reduce_mean(math_ops.abs(y_pred - y_true), -1)


def hinge(y_true, y_pred):
    """mean(max(1 - y_true * y_pred, 0)); 0/1 labels count as -1/1 (Keras 2)."""
    y_pred = convert_to_tensor(y_pred)
    y_true = math_ops.cast(convert_to_tensor(y_true), y_pred.dtype)
    binary = math_ops.reduce_all(math_ops.logical_or(math_ops.equal(y_true, 0.0),
                                                     math_ops.equal(y_true, 1.0)))
    y_true = math_ops.where(binary, 2.0 * y_true - 1.0, y_true)
    return math_ops.reduce_mean(math_ops.maximum(1.0 - y_true * y_pred, 0.0), -1)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error

_BY_NAME = {"categorical_crossentropy": categorical_crossentropy,
            "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
            "binary_crossentropy": binary_crossentropy, "mean_squared_error": mean_squared_error,
            "mse": mean_squared_error, "MSE": mean_squared_error,
            "mean_absolute_error": mean_absolute_error, "mae": mean_absolute_error,
            "MAE": mean_absolute_error, "hinge": hinge}


def get(identifier):
    """The loss function named `identifier`, or a callable `loss(y_true, y_pred)` as is."""
    if callable(identifier):
        return identifier
    known = {**_BY_NAME, **_more_by_name()}
    if isinstance(identifier, str) and identifier in known:
        return known[identifier]
    raise ValueError(f"Unknown loss function: {identifier!r}; graphflow's tf.keras knows "
                     f"{sorted(known)} or a callable loss(y_true, y_pred)")


def _more_by_name():
    from graphflow.tf1.keras import losses_classes as more
    return {name: getattr(more, name) for name in (
        "mean_absolute_percentage_error", "mape", "MAPE", "mean_squared_logarithmic_error",
        "msle", "MSLE", "squared_hinge", "categorical_hinge", "kl_divergence", "kld", "KLD",
        "kullback_leibler_divergence", "poisson", "log_cosh", "logcosh", "cosine_similarity",
        "huber")}


# ------------------------------------------------------------------ metrics
def _matches(a, b):
    return math_ops.cast(math_ops.equal(a, b), backend.floatx())


def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_pred = convert_to_tensor(y_pred)
    y_true = math_ops.cast(convert_to_tensor(y_true), y_pred.dtype)
    predicted = math_ops.cast(math_ops.greater(y_pred, threshold), y_pred.dtype)
    return math_ops.reduce_mean(_matches(y_true, predicted), -1)


def categorical_accuracy(y_true, y_pred):
    return _matches(math_ops.argmax(y_true, -1), math_ops.argmax(y_pred, -1))


def sparse_categorical_accuracy(y_true, y_pred):
    y_pred = convert_to_tensor(y_pred)
    labels = math_ops.cast(shape_ops.reshape(convert_to_tensor(y_true), [-1]), dtypes.int64)
    predicted = shape_ops.reshape(math_ops.argmax(y_pred, -1), [-1])
    return _matches(labels, math_ops.cast(predicted, dtypes.int64))


_METRICS = {"binary_accuracy": binary_accuracy, "categorical_accuracy": categorical_accuracy,
            "sparse_categorical_accuracy": sparse_categorical_accuracy,
            "mse": mean_squared_error, "mean_squared_error": mean_squared_error,
            "mae": mean_absolute_error, "mean_absolute_error": mean_absolute_error,
            "binary_crossentropy": binary_crossentropy,
            "categorical_crossentropy": categorical_crossentropy,
            "sparse_categorical_crossentropy": sparse_categorical_crossentropy}


def get_metric(identifier, loss_fn, output_shape):
    """A metric function; 'accuracy'/'acc' resolve as Keras does: binary when the output has one
    unit or the loss is binary cross-entropy, sparse with the sparse loss, categorical otherwise."""
    if callable(identifier):
        return identifier
    if identifier in ("accuracy", "acc"):
        from graphflow.tf1.keras.losses_classes import is_binary_loss, is_sparse_loss
        if output_shape[-1] == 1 or is_binary_loss(loss_fn):
            return binary_accuracy
        if is_sparse_loss(loss_fn):
            return sparse_categorical_accuracy
        return categorical_accuracy
    if identifier in _METRICS:
        return _METRICS[identifier]
    raise ValueError(f"Unknown metric function: {identifier!r}; graphflow's tf.keras knows "
                     f"'accuracy', 'acc', {sorted(_METRICS)} or a callable")


__all__ = ["categorical_crossentropy", "sparse_categorical_crossentropy", "binary_crossentropy",
           "mean_squared_error", "mean_absolute_error", "hinge", "mse", "mae", "MSE", "MAE",
           "get"]
METRICS_ALL = ["binary_accuracy", "categorical_accuracy", "sparse_categorical_accuracy",
               "mean_squared_error", "mean_absolute_error", "mse", "mae",
               "binary_crossentropy", "categorical_crossentropy",
               "sparse_categorical_crossentropy"]
