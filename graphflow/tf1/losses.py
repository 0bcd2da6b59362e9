"""`tf.losses`: TF1's loss functions with per-element `weights` and a `reduction`, added to the
LOSSES collection; and the collection helpers (`get_losses`, `get_total_loss`, ...).

Each loss computes elementwise losses from ordinary ops, multiplies them by `weights` (a scalar,
or a tensor of the losses' rank whose dimensions are 1 or equal to the losses'), and reduces them:
by default SUM_BY_NONZERO_WEIGHTS, the weighted sum divided by the number of non-zero weights
(0 when there are none). Unlike TF1, which computes in float32, a loss keeps the dtype of its
inputs (float64 inputs give a float64 loss). A float16 loss is reduced in float32 (the weighted
sum, the count and their quotient) and rounded to float16 once: its sum may exceed float16's
largest value (65504) where the mean does not.
"""

import numbers

from graphflow.framework import dtypes
from graphflow.framework.graph import GraphKeys, get_default_graph, name_scope
from graphflow.ops import math_ops, nn_ops, shape_ops
from graphflow.ops.core_ops import constant, convert_to_tensor
from graphflow.ops.gradient_ops import stop_gradient


class Reduction:
    """How `compute_weighted_loss` reduces the weighted losses."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_OVER_NONZERO_WEIGHTS,
                cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}.")


# ------------------------------------------------------------------------------ collections
def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    """Add `loss` to `loss_collection` (nothing when the collection is None)."""
    if loss_collection:
        get_default_graph().add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    """The losses in `loss_collection` whose names match the regex `scope`."""
    return get_default_graph().get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    """The REGULARIZATION_LOSSES (from `regularizer=` of get_variable and the layers)."""
    return get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum of the regularization losses (a 0.0 constant when there are none)."""
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return constant(0.0, name=name)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of the LOSSES (and, by default, the regularization losses)."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError("get_total_loss: no losses in the LOSSES or REGULARIZATION_LOSSES "
                         "collections (build a tf.losses loss or call tf.losses.add_loss first)")
    return math_ops.add_n(losses, name=name)


# ------------------------------------------------------------------------------ reduction
def _float(x, dtype=None, name=None):
    """`x` as a floating tensor: integer inputs become `dtype` (float32 by default)."""
    x = convert_to_tensor(x, name=name) if dtype is None or _is_tensor(x) else \
        convert_to_tensor(x, dtype=dtype, name=name)
    if not x.dtype.is_floating:
        x = math_ops.cast(x, dtype or dtypes.float32)
    return x


def _is_tensor(x):
    return hasattr(x, "_as_graph_element") or hasattr(x, "op")


def _check_broadcastable(weights, losses):
    """TF1's rule: weights are a scalar, or of the losses' rank with each dim 1 or equal."""
    w, v = weights.shape, losses.shape
    if w.ndims is None or v.ndims is None or w.ndims == 0:
        return
    bad = w.ndims != v.ndims or any(a is not None and b is not None and a != 1 and a != b
                                    for a, b in zip(w.dims, v.dims))
    if bad:
        raise ValueError(f"weights can not be broadcast to values. values.rank={v.ndims}. "
                         f"weights.rank={w.ndims}. values.shape={v}. weights.shape={w}.")


def _div_no_nan(numerator, denominator, name):
    """numerator / denominator, and 0 where the denominator is 0 (gradients stay finite)."""
    zero = math_ops.equal(denominator, 0.0)
    safe = math_ops.where(zero, shape_ops.ones_like(denominator), denominator)
    return math_ops.where(zero, shape_ops.zeros_like(numerator), numerator / safe, name=name)


def _num_present(losses, weights):
    """The number of losses with a non-zero weight (weights broadcast to the losses' shape)."""
    with name_scope(None, "num_present"):
        present = math_ops.where(math_ops.equal(weights, 0.0), shape_ops.zeros_like(weights),
                                 shape_ops.ones_like(weights))
        present = present * shape_ops.ones_like(losses)
        return math_ops.reduce_sum(present)


def _num_elements(losses):
    with name_scope(None, "num_elements"):
        return math_ops.cast(shape_ops.size(losses), losses.dtype)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Multiply `losses` by `weights` and reduce them as `reduction` says; the result is added
    to `loss_collection`."""
    Reduction.validate(reduction)
    with name_scope(scope, "weighted_loss"):
        losses = _float(losses)
        weights = _float(weights, losses.dtype, name="weights")
        if weights.dtype != losses.dtype:
            weights = math_ops.cast(weights, losses.dtype)
        _check_broadcastable(weights, losses)
        weighted = math_ops.multiply(losses, weights)
        rounded_to = None
        if reduction != Reduction.NONE and losses.dtype == dtypes.float16:  # reduced in float32
            rounded_to = losses.dtype
            losses, weights = math_ops.cast(losses, dtypes.float32), math_ops.cast(weights, dtypes.float32)
            weighted = math_ops.cast(weighted, dtypes.float32)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            total = math_ops.reduce_sum(weighted)
            if reduction == Reduction.SUM:
                loss = total
            elif reduction == Reduction.MEAN:
                loss = _div_no_nan(total, math_ops.reduce_sum(shape_ops.ones_like(losses) * weights),
                                   name="value")
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _div_no_nan(total, _num_elements(losses), name="value")
            else:
                loss = _div_no_nan(total, _num_present(losses, weights), name="value")
        if rounded_to is not None:
            loss = math_ops.cast(loss, rounded_to)
        add_loss(loss, loss_collection)
        return loss


# ------------------------------------------------------------------------------ losses
def _pair(labels, predictions, what="predictions"):
    if labels is None:
        raise ValueError("labels must not be None.")
    if predictions is None:
        raise ValueError(f"{what} must not be None.")
    predictions = _float(predictions, name=what)
    labels = _float(labels, predictions.dtype, name="labels")
    if labels.dtype != predictions.dtype:
        labels = math_ops.cast(labels, predictions.dtype)
    if not predictions.shape.is_compatible_with(labels.shape):
        raise ValueError(f"Shapes {predictions.shape} and {labels.shape} are incompatible "
                         f"({what} and labels)")
    return labels, predictions


def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """|predictions - labels|, weighted and reduced."""
    with name_scope(scope, "absolute_difference") as sc:
        labels, predictions = _pair(labels, predictions)
        losses = math_ops.abs(predictions - labels)
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """(predictions - labels)**2, weighted and reduced."""
    with name_scope(scope, "mean_squared_error") as sc:
        labels, predictions = _pair(labels, predictions)
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """0.5 * e**2 where |e| <= delta, else delta * (|e| - 0.5 * delta), e = predictions - labels."""
    with name_scope(scope, "huber_loss") as sc:
        labels, predictions = _pair(labels, predictions)
        abs_error = math_ops.abs(predictions - labels)
        quadratic = math_ops.minimum(abs_error, convert_to_tensor(delta, abs_error.dtype))
        linear = abs_error - quadratic
        losses = 0.5 * quadratic * quadratic + delta * linear
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """-labels * log(p + eps) - (1 - labels) * log(1 - p + eps) for probabilities p."""
    with name_scope(scope, "log_loss") as sc:
        labels, predictions = _pair(labels, predictions)
        losses = (-labels * math_ops.log(predictions + epsilon)
                  - (1.0 - labels) * math_ops.log(1.0 - predictions + epsilon))
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """max(0, 1 - (2 * labels - 1) * logits) for labels in {0, 1}."""
    with name_scope(scope, "hinge_loss") as sc:
        labels, logits = _pair(labels, logits, "logits")
        signs = 2.0 * labels - 1.0
        losses = math_ops.relu(1.0 - signs * logits)
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
                    dim=None):
    """1 - sum(labels * predictions, axis) for unit-normalized labels and predictions."""
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    with name_scope(scope, "cosine_distance_loss") as sc:
        labels, predictions = _pair(labels, predictions)
        products = math_ops.multiply(predictions, labels)
        losses = 1.0 - math_ops.reduce_sum(products, axis=axis, keepdims=True)
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Elementwise sigmoid cross-entropy; labels in [0, 1] are smoothed towards 1/2 by
    `label_smoothing`."""
    with name_scope(scope, "sigmoid_cross_entropy_loss") as sc:
        labels, logits = _pair(multi_class_labels, logits, "logits")
        if label_smoothing > 0:
            labels = labels * (1.0 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                          name="xentropy")
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Softmax cross-entropy per example ([batch] losses); with `label_smoothing` the one-hot
    labels become labels * (1 - s) + s / num_classes. No gradient flows into the labels."""
    with name_scope(scope, "softmax_cross_entropy_loss") as sc:
        labels, logits = _pair(onehot_labels, logits, "logits")
        if label_smoothing > 0:
            num_classes = math_ops.cast(shape_ops.shape(labels)[-1], logits.dtype)
            labels = labels * (1.0 - label_smoothing) + label_smoothing / num_classes
        labels = stop_gradient(labels, name="labels_stop_gradient")
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits,
                                                             name="xentropy")
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def _squeeze_last(t, rank):
    """Drop a trailing size-1 dimension from `t` when it has rank `rank` (TF1 accepts [batch, 1]
    labels and weights for [batch, classes] logits)."""
    if t.shape.ndims == rank and t.shape.dims[-1] == 1:
        return shape_ops.squeeze(t, [-1])
    return t


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Softmax cross-entropy with integer class `labels` ([batch] or [batch, 1])."""
    if labels is None:
        raise ValueError("labels must not be None.")
    if logits is None:
        raise ValueError("logits must not be None.")
    with name_scope(scope, "sparse_softmax_cross_entropy_loss") as sc:
        logits = _float(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        if not labels.dtype.is_integer:
            raise TypeError(f"sparse_softmax_cross_entropy: labels must be integers, got "
                            f"{labels.dtype.name}")
        rank = logits.shape.ndims
        if rank is not None:
            labels = _squeeze_last(labels, rank)
            if not isinstance(weights, numbers.Number):
                weights = _squeeze_last(_float(weights, logits.dtype, name="weights"), rank)
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                                 name="xentropy")
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


__all__ = ["Reduction", "add_loss", "get_losses", "get_regularization_losses",
           "get_regularization_loss", "get_total_loss", "compute_weighted_loss",
           "absolute_difference", "mean_squared_error", "huber_loss", "log_loss", "hinge_loss",
           "cosine_distance", "sigmoid_cross_entropy", "softmax_cross_entropy",
           "sparse_softmax_cross_entropy"]
