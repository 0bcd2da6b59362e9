"""tf.metrics: local variables, update/value semantics, weights, collections and edge cases (the
numbers against TensorFlow are checked in tests/test_tf1_programs.py)."""

import numpy as np
import pytest

import graphflow as tf


def _stream(metric_pairs, batches):
    """Run the update ops over `batches` (lists of feed dicts); returns (updates of the last
    batch, final values)."""
    values = [v for v, _ in metric_pairs]
    updates = [u for _, u in metric_pairs]
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        last = None
        for feed in batches:
            last = sess.run(updates, feed)
        return last, sess.run(values)


def test_metric_variables_are_local_and_named_by_scope():
    labels = tf.placeholder(tf.int64, [None])
    predictions = tf.placeholder(tf.int64, [None])
    tf.metrics.accuracy(labels, predictions)
    tf.metrics.accuracy(labels, predictions)
    tf.metrics.precision(labels, predictions, name="prec")
    names = sorted(v.op.name for v in tf.local_variables())
    assert names == ["accuracy/count", "accuracy/total", "accuracy_1/count", "accuracy_1/total",
                     "prec/false_positives/count", "prec/true_positives/count"]
    assert tf.global_variables() == []
    assert len(tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)) == 6


def test_accuracy_streams_over_batches_and_resets():
    labels = tf.placeholder(tf.int64, [None])
    predictions = tf.placeholder(tf.int64, [None])
    acc, update = tf.metrics.accuracy(labels, predictions)
    batches = [{labels: [1, 0, 1], predictions: [1, 1, 1]}, {labels: [0], predictions: [0]}]
    last, (value,) = _stream([(acc, update)], batches)
    assert last[0] == pytest.approx(3 / 4) and value == pytest.approx(3 / 4)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(acc) == 0.0  # nothing seen: 0, not NaN


def test_weighted_mean_and_collections():
    values = tf.placeholder(tf.float32, [None])
    weights = tf.placeholder(tf.float32, [None])
    mean, update = tf.metrics.mean(values, weights, metrics_collections=["m"],
                                   updates_collections=["u"])
    assert tf.get_collection("m") == [mean] and tf.get_collection("u") == [update]
    _, (value,) = _stream([(mean, update)], [{values: [1.0, 3.0], weights: [1.0, 3.0]},
                                             {values: [5.0], weights: [0.0]}])
    assert value == pytest.approx((1 + 9) / 4)


def test_labels_with_a_trailing_unit_dimension_are_squeezed():
    labels = tf.constant([[1], [0], [1]])
    predictions = tf.constant([1, 0, 0])
    acc, update = tf.metrics.accuracy(labels, predictions)
    _, (value,) = _stream([(acc, update)], [None])
    assert value == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="incompatible"):
        tf.metrics.accuracy(tf.constant([1, 0]), tf.constant([1, 0, 1]))


def test_counts_precision_recall_regression_errors():
    labels = tf.constant([1, 1, 0, 0, 1])
    predictions = tf.constant([1, 0, 1, 0, 1])
    scores = tf.constant([0.9, 0.2, 0.6, 0.1, 0.7])
    metrics = [tf.metrics.true_positives(labels, predictions),
               tf.metrics.false_positives(labels, predictions),
               tf.metrics.false_negatives(labels, predictions),
               tf.metrics.true_negatives(labels, predictions),
               tf.metrics.precision(labels, predictions),
               tf.metrics.recall(labels, predictions),
               tf.metrics.mean_absolute_error(tf.cast(labels, tf.float32), scores),
               tf.metrics.root_mean_squared_error(tf.cast(labels, tf.float32), scores)]
    _, values = _stream(metrics, [None])
    y = np.array([1, 1, 0, 0, 1.0])
    s = np.array([0.9, 0.2, 0.6, 0.1, 0.7])
    np.testing.assert_allclose(values, [2, 1, 1, 1, 2 / 3, 2 / 3, np.mean(np.abs(s - y)),
                                        np.sqrt(np.mean((s - y) ** 2))], rtol=1e-6)


def test_precision_is_zero_without_positive_predictions():
    p, update = tf.metrics.precision(tf.constant([1, 0]), tf.constant([0, 0]))
    _, (value,) = _stream([(p, update)], [None])
    assert value == 0.0


def test_auc_summation_methods_and_errors():
    labels = tf.constant([0, 0, 1, 1])
    scores = tf.constant([0.1, 0.4, 0.35, 0.8])
    pairs = [tf.metrics.auc(labels, scores, num_thresholds=1000),
             tf.metrics.auc(labels, scores, num_thresholds=1000, summation_method="minoring"),
             tf.metrics.auc(labels, scores, num_thresholds=1000, summation_method="majoring")]
    _, (trapezoid, lower, upper) = _stream(pairs, [None])
    assert trapezoid == pytest.approx(0.75, abs=2e-3)  # the exact ROC AUC
    assert lower <= trapezoid <= upper
    with pytest.raises(ValueError, match="curve"):
        tf.metrics.auc(labels, scores, curve="XY")
    with pytest.raises(NotImplementedError, match="careful_interpolation"):
        tf.metrics.auc(labels, scores, curve="PR", summation_method="careful_interpolation")


def test_mean_iou_update_returns_the_confusion_matrix():
    labels = tf.placeholder(tf.int32, [None])
    predictions = tf.placeholder(tf.int32, [None])
    miou, update = tf.metrics.mean_iou(labels, predictions, num_classes=3)
    last, (value,) = _stream([(miou, update)], [{labels: [0, 1, 1], predictions: [0, 1, 0]},
                                                {labels: [1], predictions: [1]}])
    np.testing.assert_array_equal(last[0], [[1, 0, 0], [1, 2, 0], [0, 0, 0]])
    # class 0: 1 / (1 + 2 - 1) = 0.5; class 1: 2 / 3; class 2 never occurs: left out
    assert value == pytest.approx((0.5 + 2 / 3) / 2)
