"""`tf.contrib.metrics`: the streaming metrics of TF1's contrib, which take predictions first
(`streaming_accuracy(predictions, labels, ...)`) and are otherwise `tf.metrics` (same variables,
scopes and update ops: graphflow/tf1/metrics.py), plus `aggregate_metrics` and
`aggregate_metric_map`, which split (value, update_op) pairs into values and update ops.
"""

from graphflow.tf1 import metrics as _metrics


def streaming_accuracy(predictions, labels, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    return _metrics.accuracy(labels, predictions, weights, metrics_collections,
                             updates_collections, name)


def streaming_mean(values, weights=None, metrics_collections=None, updates_collections=None,
                   name=None):
    return _metrics.mean(values, weights, metrics_collections, updates_collections, name)


def streaming_auc(predictions, labels, weights=None, num_thresholds=200,
                  metrics_collections=None, updates_collections=None, curve="ROC", name=None,
                  summation_method="trapezoidal"):
    return _metrics.auc(labels, predictions, weights, num_thresholds, metrics_collections,
                        updates_collections, curve, name, summation_method)


def streaming_precision(predictions, labels, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    return _metrics.precision(labels, predictions, weights, metrics_collections,
                              updates_collections, name)


def streaming_recall(predictions, labels, weights=None, metrics_collections=None,
                     updates_collections=None, name=None):
    return _metrics.recall(labels, predictions, weights, metrics_collections,
                           updates_collections, name)


def streaming_mean_iou(predictions, labels, num_classes, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    return _metrics.mean_iou(labels, predictions, num_classes, weights, metrics_collections,
                             updates_collections, name)


def streaming_mean_squared_error(predictions, labels, weights=None, metrics_collections=None,
                                 updates_collections=None, name=None):
    return _metrics.mean_squared_error(labels, predictions, weights, metrics_collections,
                                       updates_collections, name)


def streaming_mean_absolute_error(predictions, labels, weights=None, metrics_collections=None,
                                  updates_collections=None, name=None):
    return _metrics.mean_absolute_error(labels, predictions, weights, metrics_collections,
                                        updates_collections, name)


def streaming_root_mean_squared_error(predictions, labels, weights=None,
                                      metrics_collections=None, updates_collections=None,
                                      name=None):
    return _metrics.root_mean_squared_error(labels, predictions, weights, metrics_collections,
                                            updates_collections, name)


def _streaming_counter(metric, doc):
    def counter(predictions, labels, weights=None, metrics_collections=None,
                updates_collections=None, name=None):
        return metric(labels, predictions, weights, metrics_collections, updates_collections,
                      name)
    counter.__name__ = counter.__qualname__ = "streaming_" + metric.__name__
    counter.__doc__ = doc
    return counter


streaming_true_positives = _streaming_counter(_metrics.true_positives,
                                              "tf.metrics.true_positives, predictions first.")
streaming_false_positives = _streaming_counter(_metrics.false_positives,
                                               "tf.metrics.false_positives, predictions first.")
streaming_true_negatives = _streaming_counter(_metrics.true_negatives,
                                              "tf.metrics.true_negatives, predictions first.")
streaming_false_negatives = _streaming_counter(_metrics.false_negatives,
                                               "tf.metrics.false_negatives, predictions first.")


def aggregate_metrics(*value_update_tuples):
    """([value, ...], [update_op, ...]) from (value, update_op) pairs."""
    if not value_update_tuples:
        raise ValueError("Expected at least one value_tensor/update_op pair")
    values, updates = zip(*value_update_tuples)
    return list(values), list(updates)


def aggregate_metric_map(names_to_tuples):
    """({name: value}, {name: update_op}) from {name: (value, update_op)}."""
    names = list(names_to_tuples)
    values, updates = aggregate_metrics(*[names_to_tuples[n] for n in names])
    return dict(zip(names, values)), dict(zip(names, updates))


__all__ = ["streaming_accuracy", "streaming_mean", "streaming_auc", "streaming_precision",
           "streaming_recall", "streaming_mean_iou", "streaming_mean_squared_error",
           "streaming_mean_absolute_error", "streaming_root_mean_squared_error",
           "streaming_true_positives", "streaming_false_positives", "streaming_true_negatives",
           "streaming_false_negatives", "aggregate_metrics", "aggregate_metric_map"]
