"""`tf.estimator.train_and_evaluate` with `TrainSpec` and `EvalSpec`, in one process.

TF1's local mode trains and evaluates whenever a new checkpoint appears (no more often than
`throttle_secs`). graphflow runs in one process with no evaluator task: it trains to
`train_spec.max_steps` in rounds of `RunConfig.save_checkpoints_steps` steps when that is set
(evaluating after each round, as an evaluator would see each checkpoint), else in one go, and
evaluates at the end. Exporters are not run (graphflow does not write SavedModels).
"""

import collections

from graphflow.tf1.estimator.estimator import Estimator


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks"])):
    """`TrainSpec(input_fn, max_steps=None, hooks=None)`."""

    def __new__(cls, input_fn, max_steps=None, hooks=None):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        return super().__new__(cls, input_fn, max_steps, tuple(hooks or ()))


class EvalSpec(collections.namedtuple("EvalSpec", [
        "input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs",
        "throttle_secs"])):
    """`EvalSpec(input_fn, steps=100, name=None, hooks=None, exporters=None,
    start_delay_secs=120, throttle_secs=600)`."""

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        return super().__new__(cls, input_fn, steps, name, tuple(hooks or ()),
                               tuple(exporters or ()), start_delay_secs, throttle_secs)


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Train `estimator` as `train_spec` says and evaluate as `eval_spec` says; returns
    `(last evaluation's metrics, [])` (no exports)."""
    if not isinstance(estimator, Estimator):
        raise TypeError(f"`estimator` must have type `tf.estimator.Estimator`. Got: "
                        f"{type(estimator)}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: "
                        f"{type(train_spec)}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: "
                        f"{type(eval_spec)}")

    def evaluate():
        return estimator.evaluate(eval_spec.input_fn, steps=eval_spec.steps,
                                  hooks=list(eval_spec.hooks), name=eval_spec.name)

    every = estimator.config.save_checkpoints_steps
    result = None
    if train_spec.max_steps is not None and every:
        while estimator._checkpoint_step() < train_spec.max_steps:
            target = min(train_spec.max_steps, estimator._checkpoint_step() + every)
            estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks), max_steps=target)
            result = evaluate()
    else:
        estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks),
                        max_steps=train_spec.max_steps)
    if result is None or result["global_step"] != estimator._checkpoint_step():
        result = evaluate()
    return result, []


__all__ = ["TrainSpec", "EvalSpec", "train_and_evaluate"]
