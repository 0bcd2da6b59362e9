"""Premade estimators: `DNNClassifier`, `DNNRegressor`, `LinearClassifier`, `LinearRegressor`,
`DNNLinearCombinedClassifier`, `DNNLinearCombinedRegressor`, `BaselineClassifier` and
`BaselineRegressor`.

Each is an `Estimator` whose model_fn turns the features into logits with feature columns
(`tf.feature_column.input_layer` then `tf.layers.dense` hidden layers for the DNN, scope 'dnn';
`tf.feature_column.linear_model` for the linear part, scope 'linear') and hands them to a head
(`graphflow.tf1.estimator.head`). Defaults follow TF 1.x: the DNN trains with Adagrad at 0.05,
the linear model with FTRL at min(0.2, 1/sqrt(number of columns)); `optimizer` may be a name
('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD'), an optimizer or a callable returning one; the loss
is reduced by `loss_reduction` (SUM by default, as TF 1.x).
"""

import math

import numpy as np

from graphflow.ops import core_ops, math_ops, shape_ops
from graphflow.ops.core_ops import group
from graphflow.ops.state_ops import assign_add, trainable_variables
from graphflow.tf1 import feature_column, init_ops, layers, losses
from graphflow.tf1.estimator.estimator import Estimator
from graphflow.tf1.estimator.head import RegressionHead, classification_head
from graphflow.tf1.estimator.model_fn import ModeKeys
from graphflow.tf1.ftrl import FtrlOptimizer
from graphflow.tf1.optimizers import (
    AdagradOptimizer,
    AdamOptimizer,
    GradientDescentOptimizer,
    Optimizer,
    RMSPropOptimizer,
)
from graphflow.tf1.variable_scope import get_variable, variable_scope

_OPTIMIZERS = {"Adagrad": AdagradOptimizer, "Adam": AdamOptimizer, "Ftrl": FtrlOptimizer,
               "RMSProp": RMSPropOptimizer, "SGD": GradientDescentOptimizer}
_DNN_LEARNING_RATE = 0.05
_LINEAR_LEARNING_RATE = 0.2
_BASELINE_LEARNING_RATE = 0.3


def _optimizer_fn(optimizer, learning_rate):
    """A function making the optimizer at graph-building time."""
    if isinstance(optimizer, str):
        if optimizer not in _OPTIMIZERS:
            raise ValueError(f"Unsupported optimizer name: {optimizer}. Supported names are: "
                             f"{tuple(sorted(_OPTIMIZERS))}")
        return lambda: _OPTIMIZERS[optimizer](learning_rate)
    if isinstance(optimizer, Optimizer):
        return lambda: optimizer
    if callable(optimizer):
        def make():
            made = optimizer()
            if not isinstance(made, Optimizer):
                raise ValueError(f"The given object is not an Optimizer instance. Given: {made}")
            return made
        return make
    raise ValueError(f"The given object is not an Optimizer instance. Given: {optimizer}")


def _linear_learning_rate(columns):
    return min(_LINEAR_LEARNING_RATE, 1.0 / math.sqrt(len(columns)))


def _check_columns(feature_columns):
    columns = list(feature_columns or [])
    if not columns:
        raise ValueError("feature_columns must be defined.")
    return columns


def _dnn_logits(features, mode, columns, hidden_units, units, activation_fn, dropout,
                batch_norm=False):
    training = mode == ModeKeys.TRAIN
    with variable_scope("dnn"):
        with variable_scope("input_from_feature_columns"):
            net = feature_column.input_layer(features, columns)
        for index, width in enumerate(hidden_units):
            net = layers.dense(net, width, activation=activation_fn,
                               name=f"hiddenlayer_{index}")
            if batch_norm:
                net = layers.batch_normalization(net, training=training,
                                                 name=f"hiddenlayer_{index}/batchnorm_{index}")
            if dropout is not None and training:
                net = layers.dropout(net, rate=dropout, training=True)
        return layers.dense(net, units, name="logits")


def _linear_logits(features, columns, units, sparse_combiner):
    with variable_scope("linear"):
        return feature_column.linear_model(features, columns, units=units,
                                           sparse_combiner=sparse_combiner)


class _Canned(Estimator):
    def __init__(self, model_fn, model_dir, config, warm_start_from):
        super().__init__(model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


def _dnn_model_fn(head, hidden_units, feature_columns, optimizer, activation_fn, dropout,
                  batch_norm):
    columns = _check_columns(feature_columns)
    make_optimizer = _optimizer_fn(optimizer, _DNN_LEARNING_RATE)

    def model_fn(features, labels, mode):
        logits = _dnn_logits(features, mode, columns, list(hidden_units), head.logits_dimension,
                             activation_fn, dropout, batch_norm)
        return head.create_spec(features, mode, logits, labels, make_optimizer)
    return model_fn


def _linear_model_fn(head, feature_columns, optimizer, sparse_combiner):
    columns = _check_columns(feature_columns)
    make_optimizer = _optimizer_fn(optimizer, _linear_learning_rate(columns))

    def model_fn(features, labels, mode):
        logits = _linear_logits(features, columns, head.logits_dimension, sparse_combiner)
        return head.create_spec(features, mode, logits, labels, make_optimizer)
    return model_fn


class DNNClassifier(_Canned):
    """A feed-forward classifier over feature columns (TF1's `tf.estimator.DNNClassifier`)."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, optimizer="Adagrad",
                 activation_fn=math_ops.relu, dropout=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction=losses.Reduction.SUM,
                 batch_norm=False):
        head = classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        model_fn = _dnn_model_fn(head, hidden_units, feature_columns, optimizer, activation_fn,
                                 dropout, batch_norm)
        super().__init__(model_fn, model_dir, config, warm_start_from)


class DNNRegressor(_Canned):
    """A feed-forward regressor over feature columns (TF1's `tf.estimator.DNNRegressor`)."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Adagrad", activation_fn=math_ops.relu,
                 dropout=None, input_layer_partitioner=None, config=None, warm_start_from=None,
                 loss_reduction=losses.Reduction.SUM, batch_norm=False):
        head = RegressionHead(label_dimension, weight_column, loss_reduction)
        model_fn = _dnn_model_fn(head, hidden_units, feature_columns, optimizer, activation_fn,
                                 dropout, batch_norm)
        super().__init__(model_fn, model_dir, config, warm_start_from)


class LinearClassifier(_Canned):
    """A linear classifier over feature columns (TF1's `tf.estimator.LinearClassifier`)."""

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Ftrl", config=None, partitioner=None,
                 warm_start_from=None, loss_reduction=losses.Reduction.SUM,
                 sparse_combiner="sum"):
        head = classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        model_fn = _linear_model_fn(head, feature_columns, optimizer, sparse_combiner)
        super().__init__(model_fn, model_dir, config, warm_start_from)


class LinearRegressor(_Canned):
    """A linear regressor over feature columns (TF1's `tf.estimator.LinearRegressor`)."""

    def __init__(self, feature_columns, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Ftrl", config=None, partitioner=None, warm_start_from=None,
                 loss_reduction=losses.Reduction.SUM, sparse_combiner="sum"):
        head = RegressionHead(label_dimension, weight_column, loss_reduction)
        model_fn = _linear_model_fn(head, feature_columns, optimizer, sparse_combiner)
        super().__init__(model_fn, model_dir, config, warm_start_from)


class _CombinedOptimizer(Optimizer):
    """Minimizes with the linear optimizer over 'linear/' variables and the DNN optimizer over
    'dnn/' variables, incrementing the global step once."""

    def __init__(self, linear, dnn):
        super().__init__(False, "combined")
        self._linear, self._dnn = linear, dnn

    def minimize(self, loss, global_step=None, **kwargs):
        ops = []
        for prefix, optimizer in (("linear/", self._linear), ("dnn/", self._dnn)):
            variables = [v for v in trainable_variables() if v.name.startswith(prefix)]
            if variables and optimizer is not None:
                ops.append(optimizer.minimize(loss, var_list=variables))
        with loss.graph.control_dependencies(ops):
            return group(assign_add(global_step, 1)) if global_step is not None else group(*ops)


def _combined_model_fn(head, linear_columns, linear_optimizer, dnn_columns, dnn_optimizer,
                       hidden_units, activation_fn, dropout, sparse_combiner, batch_norm):
    linear_columns, dnn_columns = list(linear_columns or []), list(dnn_columns or [])
    if not linear_columns and not dnn_columns:
        raise ValueError("Either linear_feature_columns or dnn_feature_columns must be defined.")
    if dnn_columns and not hidden_units:
        raise ValueError("dnn_hidden_units must be defined when dnn_feature_columns is given.")
    make_linear = (_optimizer_fn(linear_optimizer, _linear_learning_rate(linear_columns))
                   if linear_columns else lambda: None)
    make_dnn = _optimizer_fn(dnn_optimizer, _DNN_LEARNING_RATE) if dnn_columns else lambda: None

    def model_fn(features, labels, mode):
        logits = None
        if dnn_columns:
            logits = _dnn_logits(features, mode, dnn_columns, list(hidden_units),
                                 head.logits_dimension, activation_fn, dropout, batch_norm)
        if linear_columns:
            linear = _linear_logits(features, linear_columns, head.logits_dimension,
                                    sparse_combiner)
            logits = linear if logits is None else logits + linear
        return head.create_spec(features, mode, logits, labels,
                                lambda: _CombinedOptimizer(make_linear(), make_dnn()))

    return model_fn


class DNNLinearCombinedClassifier(_Canned):
    """Wide (linear) and deep (DNN) logits summed (TF1's `DNNLinearCombinedClassifier`)."""

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=math_ops.relu, dnn_dropout=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction=losses.Reduction.SUM,
                 batch_norm=False, linear_sparse_combiner="sum"):
        head = classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        model_fn = _combined_model_fn(head, linear_feature_columns, linear_optimizer,
                                      dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                                      dnn_activation_fn, dnn_dropout, linear_sparse_combiner,
                                      batch_norm)
        super().__init__(model_fn, model_dir, config, warm_start_from)


class DNNLinearCombinedRegressor(_Canned):
    """Wide (linear) and deep (DNN) outputs summed (TF1's `DNNLinearCombinedRegressor`)."""

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=math_ops.relu, dnn_dropout=None, label_dimension=1,
                 weight_column=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=losses.Reduction.SUM, batch_norm=False,
                 linear_sparse_combiner="sum"):
        head = RegressionHead(label_dimension, weight_column, loss_reduction)
        model_fn = _combined_model_fn(head, linear_feature_columns, linear_optimizer,
                                      dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                                      dnn_activation_fn, dnn_dropout, linear_sparse_combiner,
                                      batch_norm)
        super().__init__(model_fn, model_dir, config, warm_start_from)


def _baseline_model_fn(head, optimizer):
    make_optimizer = _optimizer_fn(optimizer, _BASELINE_LEARNING_RATE)

    def model_fn(features, labels, mode):
        first = features if not isinstance(features, dict) else \
            features[sorted(features)[0]]
        first = core_ops.convert_to_tensor(first)
        batch = shape_ops.shape(first)[0:1]
        with variable_scope("baseline"):
            bias = get_variable("bias", [head.logits_dimension],
                                initializer=init_ops.zeros_initializer())
        ones = shape_ops.ones(shape_ops.concat([batch, core_ops.constant(np.array([1], np.int32))],
                                               0))
        return head.create_spec(features, mode, ones * bias, labels, make_optimizer)

    return model_fn


class BaselineClassifier(_Canned):
    """Predicts the label distribution seen in training, ignoring the features (its logits are
    one trained bias vector)."""

    def __init__(self, model_dir=None, n_classes=2, weight_column=None, label_vocabulary=None,
                 optimizer="Ftrl", config=None, loss_reduction=losses.Reduction.SUM):
        head = classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(_baseline_model_fn(head, optimizer), model_dir, config, None)


class BaselineRegressor(_Canned):
    """Predicts the mean training label, ignoring the features."""

    def __init__(self, model_dir=None, label_dimension=1, weight_column=None, optimizer="Ftrl",
                 config=None, loss_reduction=losses.Reduction.SUM):
        head = RegressionHead(label_dimension, weight_column, loss_reduction)
        super().__init__(_baseline_model_fn(head, optimizer), model_dir, config, None)


__all__ = ["BaselineClassifier", "BaselineRegressor", "DNNClassifier", "DNNRegressor",
           "LinearClassifier", "LinearRegressor",
           "DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor"]
