"""`tf.estimator.ModeKeys` and `tf.estimator.EstimatorSpec`: what a model_fn returns."""

import collections

from graphflow.framework.graph import Operation, Tensor


class ModeKeys:
    """The mode a model_fn is called in."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


_SPEC_FIELDS = ["mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs",
                "training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks",
                "prediction_hooks"]


def _is_tensor(x):
    return isinstance(x, (Tensor, Operation)) or hasattr(x, "_as_graph_element")


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _SPEC_FIELDS)):
    """`EstimatorSpec(mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None, ...)`:
    TRAIN needs `loss` and `train_op`, EVAL needs `loss`, PREDICT needs `predictions` (a tensor or
    a dict of tensors). `eval_metric_ops` maps names to `(value, update_op)` pairs from
    `tf.metrics`."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                export_outputs=None, training_chief_hooks=None, training_hooks=None,
                scaffold=None, evaluation_hooks=None, prediction_hooks=None):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError(f"mode={mode!r} is not one of ModeKeys.TRAIN/EVAL/PREDICT")
        if mode == ModeKeys.TRAIN and train_op is None:
            raise ValueError("Missing train_op.")
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL) and loss is None:
            raise ValueError("Missing loss.")
        if mode == ModeKeys.PREDICT and predictions is None:
            raise ValueError("Missing predictions.")
        if loss is not None and not _is_tensor(loss):
            raise TypeError(f"loss must be a Tensor, got {loss!r}")
        if isinstance(predictions, dict):
            bad = [k for k, v in predictions.items() if not _is_tensor(v)]
            if bad:
                raise TypeError(f"predictions[{bad[0]!r}] must be a Tensor")
        elif predictions is not None and not _is_tensor(predictions):
            raise TypeError(f"predictions must be a Tensor or a dict of Tensors, got {predictions!r}")
        eval_metric_ops = dict(eval_metric_ops or {})
        for key, pair in eval_metric_ops.items():
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise TypeError(f"eval_metric_ops[{key!r}] must be a (value, update_op) tuple, "
                                f"got {pair!r}")
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metric_ops,
                               export_outputs, tuple(training_chief_hooks or ()),
                               tuple(training_hooks or ()), scaffold,
                               tuple(evaluation_hooks or ()), tuple(prediction_hooks or ()))
