"""`tf.contrib.losses` and `tf.contrib.slim.losses`: TF1's older loss functions, whose arguments
come in another order than `tf.losses`' (predictions or logits first, labels second:
`softmax_cross_entropy(logits, onehot_labels)`, `mean_squared_error(predictions, labels)`), with
contrib's reduction: the weighted sum divided by the number of non-zero weights, where `weights`
may also be of shape [batch] (or any leading part of the losses' shape), as contrib allows.
`hinge_loss` returns the unreduced losses, as contrib's does. The collection helpers are
`tf.losses`'.
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.ops import math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1 import losses as _core
from graphflow.tf1.losses import add_loss, get_losses, get_regularization_losses, get_total_loss

_NONE = _core.Reduction.NONE


def _num_present(losses, weights):
    """contrib's count: non-zero weights times the number of losses each weight covers."""
    with name_scope(None, "num_present"):
        nonzero = math_ops.cast(math_ops.not_equal(weights, 0.0), dtypes.float32)
        if weights.shape.ndims == 0:
            return nonzero * math_ops.cast(shape_ops.size(losses), dtypes.float32)
        rank = weights.shape.ndims
        per_row = math_ops.reduce_sum(nonzero, axis=list(range(1, rank))) if rank > 1 else nonzero
        covered = math_ops.reduce_prod(shape_ops.shape(losses)[rank:])
        return math_ops.reduce_sum(per_row * math_ops.cast(covered, dtypes.float32))


def compute_weighted_loss(losses, weights=1.0, scope=None):
    """contrib's weighted mean: sum(losses * weights) / number of non-zero weights (0 when none),
    computed in float32, added to the LOSSES collection."""
    with name_scope(scope, "weighted_loss"):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype
        losses = math_ops.cast(losses, dtypes.float32)
        weights = math_ops.cast(convert_to_tensor(weights), dtypes.float32)
        if losses.shape.ndims is None:
            raise ValueError("losses.get_shape().ndims cannot be None")
        if weights.shape.ndims is None:
            raise ValueError("weights.get_shape().ndims cannot be None")
        if weights.shape.ndims > 1 and weights.shape.dims[-1] in (None, 1):
            weights = shape_ops.squeeze(weights, [-1])
        start = max(0, weights.shape.ndims)
        axes = list(range(start, losses.shape.ndims))
        per_weight = math_ops.reduce_sum(losses, axis=axes) if axes else losses
        total = math_ops.reduce_sum(per_weight * weights)
        mean = _core._div_no_nan(total, _num_present(losses, weights), name="value")
        mean = math_ops.cast(mean, input_dtype) if input_dtype != dtypes.float32 else mean
        add_loss(mean)
        return mean


def _elementwise(fn, *args, **kwargs):
    return fn(*args, weights=1.0, loss_collection=None, reduction=_NONE, **kwargs)


def absolute_difference(predictions, labels=None, weights=1.0, scope=None):
    with name_scope(scope, "absolute_difference") as sc:
        losses = _elementwise(_core.absolute_difference, labels, predictions)
        return compute_weighted_loss(losses, weights, scope=sc)


def mean_squared_error(predictions, labels=None, weights=1.0, scope=None):
    with name_scope(scope, "mean_squared_error") as sc:
        losses = _elementwise(_core.mean_squared_error, labels, predictions)
        return compute_weighted_loss(losses, weights, scope=sc)


def log_loss(predictions, labels=None, weights=1.0, epsilon=1e-7, scope=None):
    with name_scope(scope, "log_loss") as sc:
        losses = _elementwise(_core.log_loss, labels, predictions, epsilon=epsilon)
        return compute_weighted_loss(losses, weights, scope=sc)


def cosine_distance(predictions, labels=None, axis=None, weights=1.0, scope=None, dim=None):
    """1 - sum(predictions * labels) over `axis` (that axis removed, as in contrib)."""
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    with name_scope(scope, "cosine_distance_loss") as sc:
        labels, predictions = _core._pair(labels, predictions)
        losses = 1 - math_ops.reduce_sum(predictions * labels, axis=[axis])
        return compute_weighted_loss(losses, weights, scope=sc)


def hinge_loss(logits, labels=None, scope=None):
    """The unreduced hinge losses max(0, 1 - (2 labels - 1) logits), not added to a collection
    (contrib's hinge_loss)."""
    with name_scope(scope, "hinge_loss"):
        logits = convert_to_tensor(logits)
        if not logits.shape.is_compatible_with(convert_to_tensor(labels).shape):
            raise ValueError(f"Shapes {logits.shape} and {convert_to_tensor(labels).shape} are "
                             f"incompatible")
        labels = math_ops.cast(labels, dtypes.float32)
        ones = shape_ops.ones_like(labels)
        return math_ops.relu(ones - (2 * labels - ones) * logits)


def sigmoid_cross_entropy(logits, multi_class_labels, weights=1.0, label_smoothing=0, scope=None):
    with name_scope(scope, "sigmoid_cross_entropy_loss") as sc:
        losses = _elementwise(_core.sigmoid_cross_entropy, multi_class_labels, logits,
                              label_smoothing=label_smoothing)
        return compute_weighted_loss(losses, weights, scope=sc)


def softmax_cross_entropy(logits, onehot_labels, weights=1.0, label_smoothing=0, scope=None):
    with name_scope(scope, "softmax_cross_entropy_loss") as sc:
        losses = _elementwise(_core.softmax_cross_entropy, onehot_labels, logits,
                              label_smoothing=label_smoothing)
        return compute_weighted_loss(losses, weights, scope=sc)


def sparse_softmax_cross_entropy(logits, labels, weights=1.0, scope=None):
    with name_scope(scope, "sparse_softmax_cross_entropy_loss") as sc:
        labels = shape_ops.reshape(labels, [-1])
        losses = _elementwise(_core.sparse_softmax_cross_entropy, labels, logits)
        return compute_weighted_loss(losses, weights, scope=sc)


__all__ = ["absolute_difference", "add_loss", "compute_weighted_loss", "cosine_distance",
           "get_losses", "get_regularization_losses", "get_total_loss", "hinge_loss", "log_loss",
           "mean_squared_error", "sigmoid_cross_entropy", "softmax_cross_entropy",
           "sparse_softmax_cross_entropy"]
