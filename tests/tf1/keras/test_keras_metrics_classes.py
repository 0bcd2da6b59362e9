"""tf.keras.metrics' classes: update_state / result / reset_states in graph mode, with sample
weights, thresholds and class ids, and as metric objects in compile/fit/evaluate, against TF1-style
tf_keras (recorded numbers; live where TensorFlow is available)."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1.keras import keras_loss_programs as programs
from tests.tf1.keras.keras_comparison import assert_matches_live, assert_matches_recorded, ours
from tests.tf1.keras.keras_loss_recorded import RECORDED

PROGRAM = "keras_metrics_program"
CASES = ["mean", "accuracy", "binary_accuracy", "categorical_accuracy",
         "sparse_categorical_accuracy", "top_k", "sparse_top_k", "mse", "mae", "precision",
         "precision_thresholds", "precision_class", "recall", "recall_thresholds", "auc",
         "auc_50", "auc_majoring", "auc_pr", "auc_pr_minoring", "fit", "evaluate"]


@pytest.mark.parametrize("case", CASES)
def test_metric_classes_match_recorded_tf_keras(case):
    assert_matches_recorded(ours(programs, PROGRAM), RECORDED[PROGRAM], prefix=case, rtol=1e-5,
                            atol=1e-6)


def test_metric_classes_match_tf_keras_live():
    assert_matches_live(programs, PROGRAM, ours(programs, PROGRAM))


def test_auc_of_separable_scores_is_one_and_arguments_are_checked():
    auc = tf.keras.metrics.AUC()
    value = auc(tf.constant([0.0, 0.0, 1.0, 1.0]), tf.constant([0.1, 0.3, 0.6, 0.9]))
    assert tf.keras.backend.get_value(value) == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(ValueError, match="curve"):
        tf.keras.metrics.AUC(curve="DET")
    with pytest.raises(ValueError, match="threshold values"):
        tf.keras.metrics.Precision(thresholds=[1.5])
    with pytest.raises(NotImplementedError, match="top_k"):
        tf.keras.metrics.Recall(top_k=2)


def test_metric_state_is_not_a_model_weight():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    model.compile("sgd", "mse", metrics=[tf.keras.metrics.MeanAbsoluteError()])
    model.fit(np.ones((4, 2)), np.zeros((4, 1)), verbose=0)
    assert len(model.get_weights()) == 2
    assert model.metrics_names == ["loss", "mean_absolute_error"]
    assert not any("mean_absolute_error" in v.name for v in tf.trainable_variables())
