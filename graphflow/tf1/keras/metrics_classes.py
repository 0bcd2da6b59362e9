"""`tf.keras.metrics`' metric classes (Keras 2) in graph mode: each keeps its state in
non-trainable variables (initialized by the backend session), `update_state(...)` returns the op
that accumulates a batch, `result()` the tensor of the value so far, `reset_states()` zeroes the
state, and calling the metric updates and returns the result. `model.compile(metrics=[...])`
takes them: `fit`/`evaluate` reset them at each epoch and report their last result.

Mean-style metrics (Mean, Accuracy, BinaryAccuracy, CategoricalAccuracy,
SparseCategoricalAccuracy, TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy,
MeanSquaredError, MeanAbsoluteError) keep a weighted total and count. Precision and Recall
count true/false positives (negatives) above each threshold (`y_pred > threshold`, 0.5 by
default). AUC counts the confusion matrix at `num_thresholds` thresholds evenly spaced in [0, 1]
(with -epsilon and 1 + epsilon at the ends) and sums the ROC or PR curve (interpolation: the
trapezoid for ROC, Davis & Goadrich's interpolation for PR; or minoring / majoring)."""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import get_default_graph
from graphflow.ops import math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor, group
from graphflow.ops.index_ops import in_top_k
from graphflow.ops.state_ops import Variable
from graphflow.tf1.keras import backend
from graphflow.tf1.keras import losses as keras_losses
from graphflow.tf1.keras.base_layer import snake_case


def _div_no_nan(a, b):
    safe = math_ops.where(math_ops.equal(b, 0.0), shape_ops.ones_like(b), b)
    return math_ops.where(math_ops.equal(b, 0.0), shape_ops.zeros_like(a), a / safe)


class Metric:
    """Base class: subclasses make their state with `add_weight` and define `update_state` and
    `result`."""

    def __init__(self, name=None, dtype=None):
        self.name = name or snake_case(type(self).__name__)
        self.dtype = dtypes.as_dtype(dtype or backend.floatx())
        self._variables = []
        self.stateful = True

    def add_weight(self, name, shape=()):
        shape = [int(d) for d in shape]
        with get_default_graph().name_scope(None):
            variable = Variable(lambda: shape_ops.zeros(shape, self.dtype), trainable=False,
                                name=f"{self.name}/{name}", dtype=self.dtype)
        backend.track_variable(variable)
        self._variables.append(variable)
        return variable

    @property
    def variables(self):
        return list(self._variables)

    weights = variables

    def reset_states(self):
        backend.batch_set_value([(v, np.zeros(v.shape.as_list(), v.dtype.as_numpy_dtype))
                                 for v in self._variables])

    reset_state = reset_states

    def __call__(self, *args, **kwargs):
        graph = get_default_graph()
        with graph.name_scope(self.name):
            update = self.update_state(*args, **kwargs)
            with graph.control_dependencies([update]):
                return self.result()

    def update_state(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}.update_state")

    def result(self):
        raise NotImplementedError(f"{type(self).__name__}.result")

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _weighted(values, sample_weight, dtype):
    """(values * weight, the weight broadcast to the values) or (values, None)."""
    values = math_ops.cast(convert_to_tensor(values), dtype)
    if sample_weight is None:
        return values, None
    weight = math_ops.cast(convert_to_tensor(sample_weight), dtype)
    vr, wr = values.shape.ndims, weight.shape.ndims
    if vr is not None and wr is not None:
        if wr == vr + 1 and weight.shape.as_list()[-1] == 1:
            weight = shape_ops.squeeze(weight, [-1])
        while weight.shape.ndims < vr:
            weight = shape_ops.expand_dims(weight, -1)
    weight = weight * shape_ops.ones_like(values)
    return values * weight, weight


class Mean(Metric):
    """`Mean()`: the (weighted) mean of all values seen."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name, dtype)
        self.total = self.add_weight("total")
        self.count = self.add_weight("count")

    def update_state(self, values, sample_weight=None):
        values, weight = _weighted(values, sample_weight, self.dtype)
        number = math_ops.cast(shape_ops.size(values), self.dtype) if weight is None else \
            math_ops.reduce_sum(weight)
        return group(self.total.assign_add(math_ops.reduce_sum(values)),
                     self.count.assign_add(number))

    def result(self):
        return _div_no_nan(self.total.read_value(), self.count.read_value())


class MeanMetricWrapper(Mean):
    """The mean of `fn(y_true, y_pred, **kwargs)` over all samples."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name or getattr(fn, "__name__", "mean"), dtype)
        self._fn, self._fn_kwargs = fn, kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        return super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)

    def get_config(self):
        return {**self._fn_kwargs, **super().get_config()}


def accuracy(y_true, y_pred):
    y_pred, y_true = convert_to_tensor(y_pred), convert_to_tensor(y_true)
    if y_true.dtype != y_pred.dtype:
        y_pred = math_ops.cast(y_pred, y_true.dtype)
    return math_ops.cast(math_ops.equal(y_true, y_pred), backend.floatx())


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    labels = math_ops.cast(math_ops.argmax(y_true, -1), dtypes.int32)
    return math_ops.cast(in_top_k(y_pred, labels, k), backend.floatx())


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    labels = math_ops.cast(shape_ops.reshape(convert_to_tensor(y_true), [-1]), dtypes.int32)
    return math_ops.cast(in_top_k(y_pred, labels, k), backend.floatx())


def _mean_class(class_name, fn, default_name, doc, **defaults):
    def __init__(self, name=default_name, dtype=None, **kwargs):
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{class_name}: unexpected arguments {sorted(unknown)}")
        MeanMetricWrapper.__init__(self, fn, name, dtype, **{**defaults, **kwargs})
    cls = type(class_name, (MeanMetricWrapper,), {"__init__": __init__, "__doc__": doc})
    cls.__module__ = __name__
    return cls


Accuracy = _mean_class("Accuracy", accuracy, "accuracy", "How often y_pred equals y_true.")
BinaryAccuracy = _mean_class("BinaryAccuracy", keras_losses.binary_accuracy, "binary_accuracy",
                             "`BinaryAccuracy(threshold=0.5)`.", threshold=0.5)
CategoricalAccuracy = _mean_class("CategoricalAccuracy", keras_losses.categorical_accuracy,
                                  "categorical_accuracy", "argmax(y_pred) == argmax(y_true).")
SparseCategoricalAccuracy = _mean_class(
    "SparseCategoricalAccuracy", keras_losses.sparse_categorical_accuracy,
    "sparse_categorical_accuracy", "argmax(y_pred) == y_true (integer labels).")
TopKCategoricalAccuracy = _mean_class(
    "TopKCategoricalAccuracy", top_k_categorical_accuracy, "top_k_categorical_accuracy",
    "`TopKCategoricalAccuracy(k=5)`: argmax(y_true) among the k largest of y_pred.", k=5)
SparseTopKCategoricalAccuracy = _mean_class(
    "SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy",
    "`SparseTopKCategoricalAccuracy(k=5)`: y_true among the k largest of y_pred.", k=5)
MeanSquaredError = _mean_class("MeanSquaredError", keras_losses.mean_squared_error,
                               "mean_squared_error", "The mean of the squared errors.")
MeanAbsoluteError = _mean_class("MeanAbsoluteError", keras_losses.mean_absolute_error,
                                "mean_absolute_error", "The mean of the absolute errors.")


# ------------------------------------------------------------------ confusion-matrix metrics
class _Confusion(Metric):
    """Counts of true/false positives/negatives at each threshold."""

    _counts = ()

    def _setup(self, thresholds, class_id):
        self.thresholds = thresholds
        self.class_id = class_id
        n = len(thresholds)
        for count in self._counts:
            setattr(self, count, self.add_weight(count, [n]))

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = math_ops.cast(convert_to_tensor(y_pred), self.dtype)
        y_true = math_ops.cast(convert_to_tensor(y_true), dtypes.bool_)
        if self.class_id is not None:
            y_pred, y_true = y_pred[..., self.class_id], y_true[..., self.class_id]
        weight = None
        if sample_weight is not None:
            _, weight = _weighted(y_pred, sample_weight, self.dtype)
            weight = shape_ops.reshape(weight, [1, -1])
        pred = shape_ops.reshape(y_pred, [1, -1])
        label = shape_ops.reshape(y_true, [1, -1])
        thresholds = convert_to_tensor(np.array(self.thresholds, self.dtype.as_numpy_dtype)
                                       .reshape(-1, 1))
        above = math_ops.greater(pred, thresholds)                      # [T, N]
        cases = {"true_positives": math_ops.logical_and(above, label),
                 "false_positives": math_ops.logical_and(above, math_ops.logical_not(label)),
                 "true_negatives": math_ops.logical_and(math_ops.logical_not(above),
                                                        math_ops.logical_not(label)),
                 "false_negatives": math_ops.logical_and(math_ops.logical_not(above), label)}
        updates = []
        for count in self._counts:
            hits = math_ops.cast(cases[count], self.dtype)
            if weight is not None:
                hits = hits * weight
            updates.append(getattr(self, count).assign_add(math_ops.reduce_sum(hits, 1)))
        return group(*updates)

    def _single(self, value):
        return value[0] if len(self.thresholds) == 1 else value


def _thresholds(thresholds, what):
    if thresholds is None:
        return [0.5]
    values = [float(t) for t in (thresholds if isinstance(thresholds, (list, tuple))
                                 else [thresholds])]
    if any(not 0.0 <= t <= 1.0 for t in values):
        raise ValueError(f"{what}: threshold values must be in [0, 1]. Received: {thresholds}")
    return values


class Precision(_Confusion):
    """`Precision(thresholds=None, class_id=None)`: tp / (tp + fp) at each threshold."""

    _counts = ("true_positives", "false_positives")

    def __init__(self, thresholds=None, top_k=None, class_id=None, name="precision",
                 dtype=None):
        if top_k is not None:
            raise NotImplementedError("Precision(top_k=...) is not supported")
        super().__init__(name, dtype)
        self._setup(_thresholds(thresholds, "Precision"), class_id)

    def result(self):
        tp = self.true_positives.read_value()
        return self._single(_div_no_nan(tp, tp + self.false_positives.read_value()))


class Recall(_Confusion):
    """`Recall(thresholds=None, class_id=None)`: tp / (tp + fn) at each threshold."""

    _counts = ("true_positives", "false_negatives")

    def __init__(self, thresholds=None, top_k=None, class_id=None, name="recall", dtype=None):
        if top_k is not None:
            raise NotImplementedError("Recall(top_k=...) is not supported")
        super().__init__(name, dtype)
        self._setup(_thresholds(thresholds, "Recall"), class_id)

    def result(self):
        tp = self.true_positives.read_value()
        return self._single(_div_no_nan(tp, tp + self.false_negatives.read_value()))


class AUC(_Confusion):
    """`AUC(num_thresholds=200, curve='ROC', summation_method='interpolation')`."""

    _counts = ("true_positives", "true_negatives", "false_positives", "false_negatives")

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name="auc", dtype=None, thresholds=None, multi_label=False):
        if multi_label:
            raise NotImplementedError("AUC(multi_label=True) is not supported")
        if curve not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are '
                             "['ROC', 'PR']")
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f'Invalid AUC summation method value: "{summation_method}". '
                             "Expected values are ['interpolation', 'majoring', 'minoring']")
        super().__init__(name, dtype)
        if thresholds is not None:
            inner = sorted(_thresholds(thresholds, "AUC"))
        else:
            if num_thresholds <= 1:
                raise ValueError(f"Argument `num_thresholds` must be an integer > 1. Received: "
                                 f"num_thresholds={num_thresholds}")
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        eps = backend.epsilon()
        self.curve, self.summation_method = curve, summation_method
        self.num_thresholds = len(inner) + 2
        self._setup([0.0 - eps] + inner + [1.0 + eps], None)

    def result(self):
        tp, fp = self.true_positives.read_value(), self.false_positives.read_value()
        tn, fn = self.true_negatives.read_value(), self.false_negatives.read_value()
        n = self.num_thresholds
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolated_pr(tp, fp, fn, n)
        if self.curve == "ROC":
            x, y = _div_no_nan(fp, fp + tn), _div_no_nan(tp, tp + fn)
        else:
            x, y = _div_no_nan(tp, tp + fn), _div_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = math_ops.minimum(y[:n - 1], y[1:])
        else:
            heights = math_ops.maximum(y[:n - 1], y[1:])
        return math_ops.reduce_sum((x[:n - 1] - x[1:]) * heights)

    @staticmethod
    def _interpolated_pr(tp, fp, fn, n):
        """Davis & Goadrich's interpolation of precision between the thresholds."""
        dtp = tp[:n - 1] - tp[1:]
        p = tp + fp
        dp = p[:n - 1] - p[1:]
        slope = _div_no_nan(dtp, math_ops.maximum(dp, 0.0))
        intercept = tp[1:] - slope * p[1:]
        both = math_ops.logical_and(math_ops.greater(p[:n - 1], 0.0),
                                    math_ops.greater(p[1:], 0.0))
        ratio = math_ops.where(both, _div_no_nan(p[:n - 1], math_ops.maximum(p[1:], 0.0)),
                               shape_ops.ones_like(p[1:]))
        increments = _div_no_nan(slope * (dtp + intercept * math_ops.log(ratio)),
                                 math_ops.maximum(tp[1:] + fn[1:], 0.0))
        return math_ops.reduce_sum(increments)


__all__ = ["Metric", "Mean", "MeanMetricWrapper", "Accuracy", "BinaryAccuracy",
           "CategoricalAccuracy", "SparseCategoricalAccuracy", "TopKCategoricalAccuracy",
           "SparseTopKCategoricalAccuracy", "MeanSquaredError", "MeanAbsoluteError", "Precision",
           "Recall", "AUC", "top_k_categorical_accuracy",
           "sparse_top_k_categorical_accuracy"]
