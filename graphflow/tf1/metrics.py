"""`tf.metrics`: streaming metrics as TF1 builds them.

Each metric returns `(value, update_op)`. Its accumulators are float32 (float64 for `mean_iou`'s
confusion matrix) local variables in `GraphKeys.LOCAL_VARIABLES` and `GraphKeys.METRIC_VARIABLES`
under a variable scope named after the metric ('accuracy/total', 'accuracy/count'), initialized by
`tf.local_variables_initializer()`. Running `update_op` adds a batch to the accumulators and
returns the metric over everything seen so far; `value` reads it without updating.
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import GraphKeys, get_default_graph
from graphflow.ops import array_ops, math_ops, shape_ops, state_ops
from graphflow.ops.core_ops import constant, convert_to_tensor, identity
from graphflow.tf1.variable_scope import variable_scope

_F32 = dtypes.float32


def _metric_variable(shape, dtype, name):
    zeros = constant(0, dtype=dtype, shape=shape)
    return state_ops.Variable(zeros, trainable=False, name=name,
                              collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES])


def _collect(metrics_collections, updates_collections, value, update_op):
    graph = get_default_graph()
    for key in metrics_collections or ():
        graph.add_to_collection(key, value)
    for key in updates_collections or ():
        graph.add_to_collection(key, update_op)
    return value, update_op


def _safe_div(numerator, denominator, name):
    """numerator / denominator, 0 where the denominator is 0 (TF's div_no_nan)."""
    positive = math_ops.greater(denominator, 0)
    safe = math_ops.where(positive, denominator, shape_ops.ones_like(denominator))
    return math_ops.where(positive, math_ops.truediv(numerator, safe),
                          shape_ops.zeros_like(numerator), name=name)


def _squeeze_pair(predictions, labels):
    """TF1's `remove_squeezable_dimensions`: drop a trailing size-1 dim of the one whose rank is
    one more than the other's."""
    p_rank, l_rank = predictions.shape.ndims, labels.shape.ndims
    if p_rank is not None and l_rank is not None:
        if l_rank == p_rank + 1 and labels.shape[-1] == 1:
            labels = shape_ops.squeeze(labels, [-1])
        elif p_rank == l_rank + 1 and predictions.shape[-1] == 1:
            predictions = shape_ops.squeeze(predictions, [-1])
    if not predictions.shape.is_compatible_with(labels.shape):
        raise ValueError(f"Shapes {predictions.shape} and {labels.shape} are incompatible "
                         f"(predictions {predictions.name}, labels {labels.name})")
    return predictions, labels


def _inputs(labels, predictions):
    predictions = convert_to_tensor(predictions)
    labels = convert_to_tensor(labels)
    return _squeeze_pair(predictions, labels)


def _weights_like(weights, values):
    weights = math_ops.cast(convert_to_tensor(weights), _F32)
    return math_ops.multiply(weights, shape_ops.ones_like(values))


# ------------------------------------------------------------------------------ mean family
def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) mean of all `values` seen: total / count."""
    with variable_scope(name, default_name="mean"):
        values = math_ops.cast(convert_to_tensor(values), _F32)
        total = _metric_variable([], _F32, "total")
        count = _metric_variable([], _F32, "count")
        if weights is None:
            num_values = math_ops.cast(shape_ops.size(values), _F32)
        else:
            weights = _weights_like(weights, values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.reduce_sum(weights)
        update_total = state_ops.assign_add(total, math_ops.reduce_sum(values))
        update_count = state_ops.assign_add(count, num_values)
        value = _safe_div(total.read_value(), count.read_value(), "value")
        update_op = _safe_div(update_total, update_count, "update_op")
        return _collect(metrics_collections, updates_collections, value, update_op)


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """How often `predictions` equals `labels` (predictions are cast to the labels' dtype)."""
    predictions, labels = _inputs(labels, predictions)
    if labels.dtype != predictions.dtype:
        predictions = math_ops.cast(predictions, labels.dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), _F32)
    return mean(is_correct, weights, metrics_collections, updates_collections,
                name or "accuracy")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    predictions, labels = _inputs(labels, predictions)
    return mean(math_ops.squared_difference(labels, predictions), weights, metrics_collections,
                updates_collections, name or "mean_squared_error")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    predictions, labels = _inputs(labels, predictions)
    return mean(math_ops.abs(math_ops.subtract(predictions, labels)), weights,
                metrics_collections, updates_collections, name or "mean_absolute_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None,
                                         name or "root_mean_squared_error")
    return _collect(metrics_collections, updates_collections, math_ops.sqrt(mse),
                    math_ops.sqrt(update_mse))


# ------------------------------------------------------------------------------ counts
def _count_condition(condition, weights, metrics_collections, updates_collections):
    count = _metric_variable([], _F32, "count")
    values = math_ops.cast(condition, _F32)
    if weights is not None:
        values = math_ops.multiply(values, _weights_like(weights, values))
    update_op = state_ops.assign_add(count, math_ops.reduce_sum(values))
    return _collect(metrics_collections, updates_collections, identity(count.read_value()),
                    update_op)


def _bool_inputs(labels, predictions):
    predictions, labels = _inputs(labels, predictions)
    return math_ops.cast(labels, dtypes.bool_), math_ops.cast(predictions, dtypes.bool_)


def _counter(default_name, label_true, prediction_true):
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope(name, default_name=default_name):
            labels, predictions = _bool_inputs(labels, predictions)
            is_label = labels if label_true else math_ops.logical_not(labels)
            is_prediction = predictions if prediction_true else math_ops.logical_not(predictions)
            return _count_condition(math_ops.logical_and(is_label, is_prediction), weights,
                                    metrics_collections, updates_collections)
    metric.__name__ = default_name
    metric.__doc__ = (f"The (weighted) number of {default_name.replace('_', ' ')} "
                      "(labels and predictions are cast to bool).")
    return metric


true_positives = _counter("true_positives", True, True)
false_positives = _counter("false_positives", False, True)
false_negatives = _counter("false_negatives", True, False)
true_negatives = _counter("true_negatives", False, False)


def _ratio(default_name, numerator_metric, other_metric):
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope(name, default_name=default_name):
            labels, predictions = _bool_inputs(labels, predictions)
            tp, tp_update = numerator_metric(labels, predictions, weights)
            other, other_update = other_metric(labels, predictions, weights)

            def compute(a, b, op_name):
                total = math_ops.add(a, b)
                return _safe_div(a, total, op_name)
            return _collect(metrics_collections, updates_collections,
                            compute(tp, other, "value"), compute(tp_update, other_update,
                                                                 "update_op"))
    metric.__name__ = default_name
    return metric


precision = _ratio("precision", true_positives, false_positives)
precision.__doc__ = "true_positives / (true_positives + false_positives), 0 when undefined."
recall = _ratio("recall", true_positives, false_negatives)
recall.__doc__ = "true_positives / (true_positives + false_negatives), 0 when undefined."


# ------------------------------------------------------------------------------ auc
def _thresholds(num_thresholds):
    epsilon = 1e-7
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - epsilon] + inner + [1.0 + epsilon]


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal",
        thresholds=None):
    """Area under the ROC or PR curve from confusion counts at `num_thresholds` thresholds
    (TF1's Riemann sum: 'trapezoidal' (default), 'minoring' or 'majoring'). `predictions` must
    lie in [0, 1]."""
    if curve not in ("ROC", "PR"):
        raise ValueError(f"curve must be either ROC or PR, {curve} unknown")
    if summation_method not in ("trapezoidal", "minoring", "majoring"):
        raise NotImplementedError(f"auc: summation_method={summation_method!r} is not provided "
                                  "by graphflow; use 'trapezoidal', 'minoring' or 'majoring'")
    if thresholds is not None:
        num_thresholds = len(thresholds) + 2
        thresh = [0.0 - 1e-7] + list(thresholds) + [1.0 + 1e-7]
    else:
        if num_thresholds < 2:
            raise ValueError("num_thresholds must be > 1.")
        thresh = _thresholds(num_thresholds)
    with variable_scope(name, default_name="auc"):
        predictions, labels = _inputs(labels, predictions)
        predictions = math_ops.cast(predictions, _F32)
        pred_row = shape_ops.reshape(predictions, [1, -1])
        label_row = shape_ops.reshape(math_ops.cast(labels, dtypes.bool_), [1, -1])
        thresh_col = constant(thresh, dtype=_F32, shape=[num_thresholds, 1])
        pred_is_pos = math_ops.greater(pred_row, thresh_col)
        pred_is_neg = math_ops.logical_not(pred_is_pos)
        label_is_neg = math_ops.logical_not(label_row)
        weight_row = None
        if weights is not None:
            weight_row = shape_ops.reshape(_weights_like(weights, predictions), [1, -1])
        counts, updates = {}, {}
        for key, label_side, pred_side in (("tp", label_row, pred_is_pos),
                                           ("fn", label_row, pred_is_neg),
                                           ("tn", label_is_neg, pred_is_neg),
                                           ("fp", label_is_neg, pred_is_pos)):
            var = _metric_variable([num_thresholds], _F32, {
                "tp": "true_positives", "fn": "false_negatives", "tn": "true_negatives",
                "fp": "false_positives"}[key])
            hits = math_ops.cast(math_ops.logical_and(label_side, pred_side), _F32)
            if weight_row is not None:
                hits = math_ops.multiply(hits, weight_row)
            updates[key] = state_ops.assign_add(var, math_ops.reduce_sum(hits, axis=1))
            counts[key] = var.read_value()

        def compute_auc(c, op_name):
            epsilon = 1.0e-6
            rec = math_ops.truediv(c["tp"] + epsilon, c["tp"] + c["fn"] + epsilon)
            if curve == "ROC":
                x, y = math_ops.truediv(c["fp"], c["fp"] + c["tn"] + epsilon), rec
            else:
                x, y = rec, math_ops.truediv(c["tp"] + epsilon, c["tp"] + c["fp"] + epsilon)
            dx = x[:num_thresholds - 1] - x[1:]
            if summation_method == "trapezoidal":
                height = (y[:num_thresholds - 1] + y[1:]) / 2.0
            elif summation_method == "minoring":
                height = math_ops.minimum(y[:num_thresholds - 1], y[1:])
            else:
                height = math_ops.maximum(y[:num_thresholds - 1], y[1:])
            return math_ops.reduce_sum(math_ops.multiply(dx, height), name=op_name)

        return _collect(metrics_collections, updates_collections, compute_auc(counts, "value"),
                        compute_auc(updates, "update_op"))


# ------------------------------------------------------------------------------ mean_iou
def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """The mean over classes of intersection / union, from a streaming float64 confusion matrix
    (rows: labels, columns: predictions); classes that never occur are left out of the mean.
    The update op returns the updated confusion matrix, as in TF1."""
    num_classes = int(num_classes)
    with variable_scope(name, default_name="mean_iou"):
        predictions, labels = _inputs(labels, predictions)
        total_cm = _metric_variable([num_classes, num_classes], dtypes.float64,
                                    "total_confusion_matrix")
        flat_labels = math_ops.cast(shape_ops.reshape(labels, [-1]), dtypes.int64)
        flat_predictions = math_ops.cast(shape_ops.reshape(predictions, [-1]), dtypes.int64)
        cells = math_ops.add(math_ops.multiply(flat_labels, num_classes), flat_predictions)
        if weights is None:
            counts = math_ops.cast(shape_ops.ones_like(flat_labels), dtypes.float64)
        else:
            counts = shape_ops.reshape(math_ops.cast(_weights_like(weights, predictions),
                                                     dtypes.float64), [-1])
        current = shape_ops.reshape(
            array_ops.unsorted_segment_sum(counts, cells, num_classes * num_classes),
            [num_classes, num_classes])
        update_op = state_ops.assign_add(total_cm, current)
        cm = total_cm.read_value()
        eye = constant([[1.0 if i == j else 0.0 for j in range(num_classes)]
                        for i in range(num_classes)], dtype=dtypes.float64)
        sum_over_row = math_ops.cast(math_ops.reduce_sum(cm, 0), _F32)
        sum_over_col = math_ops.cast(math_ops.reduce_sum(cm, 1), _F32)
        diag = math_ops.cast(math_ops.reduce_sum(math_ops.multiply(cm, eye), 1), _F32)
        denominator = sum_over_row + sum_over_col - diag
        num_valid = math_ops.reduce_sum(math_ops.cast(math_ops.not_equal(denominator, 0), _F32))
        denominator = math_ops.where(math_ops.greater(denominator, 0), denominator,
                                     shape_ops.ones_like(denominator))
        iou = math_ops.truediv(diag, denominator)
        value = _safe_div(math_ops.reduce_sum(iou), num_valid, "value")
        return _collect(metrics_collections, updates_collections, value, update_op)


__all__ = ["accuracy", "auc", "false_negatives", "false_positives", "mean", "mean_absolute_error",
           "mean_iou", "mean_squared_error", "precision", "recall", "root_mean_squared_error",
           "true_negatives", "true_positives"]
