"""Tests for graphflow/tf1/contrib_metrics.py (`tf.contrib.metrics`): predictions come first,
the values over two batches match TensorFlow's tf.metrics (contrib's streaming metrics were
those with the arguments swapped), and the aggregate helpers."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf_reference import run_in_tensorflow, tf_python

metrics = tf.contrib.metrics


def _batches(np):
    rng = np.random.RandomState(5)
    return [(rng.rand(8).astype(np.float32), rng.randint(0, 2, 8).astype(np.int64))
            for _ in range(2)]


def tf_metrics_program(tf, np):
    """tf.compat.v1.metrics (labels first) over two batches."""
    p = tf.placeholder(tf.float32, [8])
    y = tf.placeholder(tf.int64, [8])
    hard = tf.cast(p > 0.5, tf.int64)
    pairs = {"accuracy": tf.metrics.accuracy(y, hard), "mean": tf.metrics.mean(p),
             "auc": tf.metrics.auc(y, p, num_thresholds=50),
             "precision": tf.metrics.precision(y, hard), "recall": tf.metrics.recall(y, hard),
             "iou": tf.metrics.mean_iou(y, hard, 2),
             "mse": tf.metrics.mean_squared_error(tf.cast(y, tf.float32), p),
             "tp": tf.metrics.true_positives(y, hard)}
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        for values, labels in _batches(np):
            sess.run([u for _, u in pairs.values()], {p: values, y: labels})
        return sess.run({k: v for k, (v, _) in pairs.items()})


# Made by a Python with TensorFlow 2.21 running tf_metrics_program.
TF_VALUES = {"accuracy": 0.4375, "mean": 0.5171949863433838, "auc": 0.3333333730697632,
             "precision": 0.5, "recall": 0.4444444477558136, "iou": 0.2788461446762085,
             "mse": 0.3855056166648865, "tp": 4.0}


def _ours():
    p = tf.placeholder(tf.float32, [8])
    y = tf.placeholder(tf.int64, [8])
    hard = tf.cast(p > 0.5, tf.int64)
    pairs = {"accuracy": metrics.streaming_accuracy(hard, y), "mean": metrics.streaming_mean(p),
             "auc": metrics.streaming_auc(p, y, num_thresholds=50),
             "precision": metrics.streaming_precision(hard, y),
             "recall": metrics.streaming_recall(hard, y),
             "iou": metrics.streaming_mean_iou(hard, y, 2),
             "mse": metrics.streaming_mean_squared_error(p, tf.cast(y, tf.float32)),
             "tp": metrics.streaming_true_positives(hard, y)}
    values, updates = metrics.aggregate_metric_map(pairs)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        for batch_values, labels in _batches(np):
            sess.run(list(updates.values()), {p: batch_values, y: labels})
        return sess.run(values)


def test_streaming_metrics_match_recorded_tensorflow():
    ours = _ours()
    assert set(ours) == set(TF_VALUES)
    for key, value in TF_VALUES.items():
        assert ours[key] == pytest.approx(value, rel=1e-5, abs=1e-6), key


def test_streaming_metrics_match_tensorflow_live():
    if tf_python() is None:
        pytest.skip("TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON to compare with it)")
    theirs = run_in_tensorflow([(None, _batches, None), ("m", tf_metrics_program, {})])["m"]
    ours = _ours()
    for key, value in theirs.items():
        assert ours[key] == pytest.approx(float(value), rel=1e-5, abs=1e-6), key


def test_predictions_come_first_and_aggregate_metrics():
    # precision with predictions first: 1 of the 2 positive predictions is right
    value, update = metrics.streaming_precision(tf.constant([1, 1, 0]), tf.constant([1, 0, 1]))
    values, updates = metrics.aggregate_metrics((value, update), metrics.streaming_mean([2.0]))
    assert values[0] is value and updates[0] is update and len(values) == 2
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        sess.run(updates)
        assert sess.run(values) == [0.5, 2.0]
    with pytest.raises(ValueError, match="at least one"):
        metrics.aggregate_metrics()
