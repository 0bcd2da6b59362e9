"""Heads of the premade estimators: from logits to predictions, loss, metrics and training op.

A head turns a model's logits into the `EstimatorSpec` of a mode, as TF1's canned heads do:
multi-class (softmax cross-entropy, `n_classes` > 2), binary (sigmoid cross-entropy, one logit)
and regression (squared error, `label_dimension` logits). Predictions, metric names and the loss
follow TF 1.x: the training loss is the weighted per-example loss reduced by `loss_reduction`
(`tf.losses.Reduction.SUM` by default, TF 1.x's default), `average_loss` is the weighted mean
per-example loss, and the Estimator adds `loss` (mean of the batch losses) and `global_step`.
"""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import GraphKeys, Tensor, name_scope
from graphflow.ops import array_ops, core_ops, math_ops, nn_ops, shape_ops, string_ops
from graphflow.tf1 import feature_column, losses, metrics, train
from graphflow.tf1.estimator.model_fn import EstimatorSpec, ModeKeys


def _weights(features, weight_column):
    """`[batch, 1]` float weights from `features` (a feature name or a numeric column)."""
    if weight_column is None:
        return None
    key = weight_column if isinstance(weight_column, str) else weight_column.key
    if key not in features:
        raise ValueError(f"weight_column '{key}' is not in features: {sorted(features)}")
    weights = math_ops.cast(features[key], dtypes.float32)
    return shape_ops.reshape(weights, [-1, 1])


def _single_label(labels):
    if isinstance(labels, dict):
        if len(labels) != 1:
            raise ValueError(f"labels must be a Tensor or a one-entry dict, got {sorted(labels)}")
        labels = next(iter(labels.values()))
    if labels is None:
        raise ValueError("You must provide a labels Tensor. Given: None.")
    return labels if isinstance(labels, Tensor) else core_ops.convert_to_tensor(labels)


def _label_ids(labels, n_classes, label_vocabulary):
    """int64 `[batch, 1]` class ids of the labels (looked up in `label_vocabulary` if given)."""
    labels = shape_ops.reshape(_single_label(labels), [-1, 1])
    if label_vocabulary is None:
        if labels.dtype == dtypes.string:
            raise ValueError("Labels are strings: give label_vocabulary to map them to ids.")
        return math_ops.cast(labels, dtypes.int64)
    # labels outside the vocabulary get id -1 (TensorFlow raises for them)
    column = feature_column.categorical_column_with_vocabulary_list("label", label_vocabulary)
    return column._ids({"label": labels})


def _reduce(unreduced, weights, reduction):
    return losses.compute_weighted_loss(unreduced, 1.0 if weights is None else weights,
                                        reduction=reduction)


def _train_op(optimizer, loss):
    """The optimizer's step, run after the graph's UPDATE_OPS (batch normalization's moving
    averages), as TF1's canned estimators do."""
    with loss.graph.control_dependencies(loss.graph.get_collection(GraphKeys.UPDATE_OPS)):
        return optimizer.minimize(loss, global_step=train.get_global_step())


class _Head:
    """`create_spec(features, mode, logits, labels, optimizer_fn)` for the mode."""

    def __init__(self, logits_dimension, weight_column, loss_reduction):
        if loss_reduction not in losses.Reduction.all() or loss_reduction == "none":
            raise ValueError(f"Invalid loss_reduction: {loss_reduction}")
        self.logits_dimension = logits_dimension
        self.weight_column = weight_column
        self.loss_reduction = loss_reduction

    def create_spec(self, features, mode, logits, labels, optimizer_fn):
        with name_scope("head"):
            predictions = self._predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode, predictions=predictions)
            weights = _weights(features, self.weight_column)
            targets, unreduced = self._unreduced_loss(logits, labels)
            loss = _reduce(unreduced, weights, self.loss_reduction)
        if mode == ModeKeys.TRAIN:
            return EstimatorSpec(mode, predictions=predictions, loss=loss,
                                 train_op=_train_op(optimizer_fn(), loss))
        with name_scope("metrics"):
            eval_metrics = self._metrics(predictions, targets, unreduced, weights)
        return EstimatorSpec(mode, predictions=predictions, loss=loss,
                             eval_metric_ops=eval_metrics)


def _classes(class_ids, label_vocabulary):
    if label_vocabulary is None:
        return string_ops.as_string(class_ids)
    vocabulary = core_ops.constant(np.array([str(v) for v in label_vocabulary], dtype=object))
    return array_ops.gather(vocabulary, class_ids)


class MultiClassHead(_Head):
    """Softmax cross-entropy over `n_classes` logits."""

    def __init__(self, n_classes, weight_column=None, label_vocabulary=None,
                 loss_reduction=losses.Reduction.SUM):
        super().__init__(n_classes, weight_column, loss_reduction)
        self.n_classes = n_classes
        self.label_vocabulary = label_vocabulary

    def _predictions(self, logits):
        class_ids = shape_ops.expand_dims(math_ops.argmax(logits, 1, output_type=dtypes.int64), 1)
        return {"logits": logits, "probabilities": nn_ops.softmax(logits),
                "class_ids": class_ids, "classes": _classes(class_ids, self.label_vocabulary)}

    def _unreduced_loss(self, logits, labels):
        ids = _label_ids(labels, self.n_classes, self.label_vocabulary)
        per_example = nn_ops.sparse_softmax_cross_entropy_with_logits(
            labels=shape_ops.reshape(ids, [-1]), logits=logits)
        return ids, shape_ops.expand_dims(per_example, 1)

    def _metrics(self, predictions, ids, unreduced, weights):
        return {"accuracy": metrics.accuracy(ids, predictions["class_ids"], weights=weights,
                                             name="accuracy"),
                "average_loss": metrics.mean(unreduced, weights=weights, name="average_loss")}


class BinaryHead(_Head):
    """Sigmoid cross-entropy over one logit."""

    def __init__(self, weight_column=None, label_vocabulary=None,
                 loss_reduction=losses.Reduction.SUM):
        super().__init__(1, weight_column, loss_reduction)
        self.label_vocabulary = label_vocabulary

    def _predictions(self, logits):
        logistic = math_ops.sigmoid(logits)
        class_ids = math_ops.cast(math_ops.greater(logits, 0.0), dtypes.int64)
        return {"logits": logits, "logistic": logistic,
                "probabilities": shape_ops.concat([1.0 - logistic, logistic], 1),
                "class_ids": class_ids, "classes": _classes(class_ids, self.label_vocabulary)}

    def _unreduced_loss(self, logits, labels):
        ids = _label_ids(labels, 2, self.label_vocabulary)
        per_example = nn_ops.sigmoid_cross_entropy_with_logits(
            labels=math_ops.cast(ids, dtypes.float32), logits=logits)
        return ids, per_example

    def _metrics(self, predictions, ids, unreduced, weights):
        labels = math_ops.cast(ids, dtypes.float32)
        logistic = predictions["logistic"]
        label_mean = metrics.mean(labels, weights=weights, name="label/mean")
        baseline = math_ops.maximum(label_mean[0], 1.0 - label_mean[0])
        return {"accuracy": metrics.accuracy(ids, predictions["class_ids"], weights=weights,
                                             name="accuracy"),
                "average_loss": metrics.mean(unreduced, weights=weights, name="average_loss"),
                "prediction/mean": metrics.mean(logistic, weights=weights,
                                                name="prediction/mean"),
                "label/mean": label_mean,
                "accuracy_baseline": (baseline, label_mean[1]),
                "auc": metrics.auc(labels, logistic, weights=weights, name="auc"),
                "auc_precision_recall": metrics.auc(labels, logistic, weights=weights,
                                                    curve="PR", name="auc_precision_recall"),
                "precision": metrics.precision(ids, predictions["class_ids"], weights=weights,
                                               name="precision"),
                "recall": metrics.recall(ids, predictions["class_ids"], weights=weights,
                                         name="recall")}


class RegressionHead(_Head):
    """Squared error over `label_dimension` outputs."""

    def __init__(self, label_dimension=1, weight_column=None,
                 loss_reduction=losses.Reduction.SUM):
        super().__init__(label_dimension, weight_column, loss_reduction)
        self.label_dimension = label_dimension

    def _predictions(self, logits):
        return {"predictions": logits}

    def _unreduced_loss(self, logits, labels):
        labels = shape_ops.reshape(math_ops.cast(_single_label(labels), dtypes.float32),
                                   [-1, self.label_dimension])
        return labels, math_ops.square(logits - labels)

    def _metrics(self, predictions, labels, unreduced, weights):
        return {"average_loss": metrics.mean(unreduced, weights=weights, name="average_loss"),
                "prediction/mean": metrics.mean(predictions["predictions"], weights=weights,
                                                name="prediction/mean"),
                "label/mean": metrics.mean(labels, weights=weights, name="label/mean")}


def classification_head(n_classes, weight_column, label_vocabulary, loss_reduction):
    """The binary head for `n_classes` == 2, the multi-class head above."""
    if n_classes is None or n_classes < 2:
        raise ValueError(f"n_classes must be > 1 for classification: {n_classes}")
    if label_vocabulary is not None:
        if not isinstance(label_vocabulary, (list, tuple)):
            raise ValueError(f"label_vocabulary should be a list or a tuple. Given type: "
                             f"{type(label_vocabulary)}")
        if len(label_vocabulary) != n_classes:
            raise ValueError(f"label_vocabulary has {len(label_vocabulary)} entries for "
                             f"n_classes={n_classes}")
    if n_classes == 2:
        return BinaryHead(weight_column, label_vocabulary, loss_reduction)
    return MultiClassHead(n_classes, weight_column, label_vocabulary, loss_reduction)
