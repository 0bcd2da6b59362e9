"""`tf.estimator`: Estimator, EstimatorSpec, ModeKeys, RunConfig, the session hooks and
`inputs.numpy_input_fn`, on graphflow's own Graph, Session and Saver, and the premade estimators
(DNN, linear, combined) over `tf.feature_column`s."""

from graphflow.tf1.estimator import inputs
from graphflow.tf1.estimator.canned import (
                                            BaselineClassifier,
                                            BaselineRegressor,
                                            DNNClassifier,
                                            DNNLinearCombinedClassifier,
                                            DNNLinearCombinedRegressor,
                                            DNNRegressor,
                                            LinearClassifier,
                                            LinearRegressor,
)
from graphflow.tf1.estimator.estimator import Estimator
from graphflow.tf1.estimator.model_fn import EstimatorSpec, ModeKeys
from graphflow.tf1.estimator.run_config import RunConfig
from graphflow.tf1.estimator.training import EvalSpec, TrainSpec, train_and_evaluate
from graphflow.tf1.session_hooks import (
                                         CheckpointSaverHook,
                                         FeedFnHook,
                                         LoggingTensorHook,
                                         NanLossDuringTrainingError,
                                         NanTensorHook,
                                         SessionRunArgs,
                                         SessionRunContext,
                                         SessionRunHook,
                                         SessionRunValues,
                                         StopAtStepHook,
)

__all__ = ["Estimator", "EstimatorSpec", "ModeKeys", "RunConfig", "inputs", "SessionRunHook",
           "SessionRunArgs", "SessionRunContext", "SessionRunValues", "LoggingTensorHook",
           "StopAtStepHook", "CheckpointSaverHook", "NanTensorHook", "NanLossDuringTrainingError",
           "FeedFnHook", "DNNClassifier", "DNNRegressor", "LinearClassifier", "LinearRegressor",
           "DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor", "BaselineClassifier",
           "BaselineRegressor", "TrainSpec", "EvalSpec", "train_and_evaluate"]
