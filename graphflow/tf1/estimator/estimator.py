"""`tf.estimator.Estimator`: train / evaluate / predict a `model_fn` with checkpoints in `model_dir`.

Each call builds a fresh Graph: the global step, the input_fn's features and labels, then the
model_fn's `EstimatorSpec` for the mode. Training runs a `MonitoredTrainingSession` that restores
the latest checkpoint of `model_dir` (so a second `train` continues from the saved global step)
and saves checkpoints as the `RunConfig` says; evaluation and prediction restore the latest
checkpoint into a new session. An input_fn may return `(features, labels)`, features alone, or a
`tf.data.Dataset` of either.
"""

import inspect
import logging
import os
import tempfile

import numpy as np

from graphflow.fileformat.checkpoint import Saver, latest_checkpoint
from graphflow.fileformat.checkpoint_files import open_checkpoint
from graphflow.framework.errors import OutOfRangeError
from graphflow.framework.graph import Graph, GraphKeys
from graphflow.tf1 import metrics, session_hooks, train
from graphflow.tf1.estimator.model_fn import EstimatorSpec, ModeKeys
from graphflow.tf1.estimator.run_config import RunConfig
from graphflow.tf1.training_session import ChiefSessionCreator, MonitoredSession, Scaffold

_logger = logging.getLogger("graphflow")


def _accepted_args(fn):
    return set(inspect.signature(fn).parameters)


def read_checkpoint(path):
    """{variable name: array} of the checkpoint `path` (a prefix, or a directory's latest)."""
    if os.path.isdir(path):
        found = latest_checkpoint(path)
        if found is None:
            raise ValueError(f"No checkpoint found in {path}")
        path = found
    reader = open_checkpoint(path)
    if reader is None:
        raise ValueError(f"The passed save_path is not a valid checkpoint: {path}")
    with reader:
        return {name: reader.get_tensor(name) for name in reader.names()}


class Estimator:
    """`tf.estimator.Estimator(model_fn, model_dir=None, config=None, params=None,
    warm_start_from=None)`. `model_fn(features, labels, mode, params, config)` (any subset of
    these arguments, by name) returns an `EstimatorSpec`."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
        if not callable(model_fn):
            raise ValueError(f"model_fn must be callable, got {model_fn!r}")
        args = _accepted_args(model_fn)
        if "features" not in args:
            raise ValueError("model_fn must accept a 'features' argument")
        if config is not None and not isinstance(config, RunConfig):
            raise ValueError(f"config must be a tf.estimator.RunConfig, got {config!r}")
        config = config or RunConfig()
        if model_dir and config.model_dir and os.fspath(model_dir) != config.model_dir:
            raise ValueError(f"model_dir are set both in constructor and RunConfig, but with "
                             f"different values. In constructor: '{model_dir}', in RunConfig: "
                             f"'{config.model_dir}'")
        model_dir = model_dir or config.model_dir
        if model_dir is None:
            model_dir = tempfile.mkdtemp()
            _logger.warning("Using temporary folder as model directory: %s", model_dir)
        self._model_dir = os.fspath(model_dir)
        self._config = config.replace(model_dir=self._model_dir)
        self._params = dict(params or {})
        self._model_fn = model_fn
        self._model_fn_args = args
        self._warm_start_from = warm_start_from

    model_dir = property(lambda self: self._model_dir)
    config = property(lambda self: self._config)
    params = property(lambda self: dict(self._params))
    model_fn = property(lambda self: self._model_fn)

    # ------------------------------------------------------------------ checkpoints
    def latest_checkpoint(self):
        return latest_checkpoint(self._model_dir)

    def get_variable_names(self):
        path = self._require_checkpoint()
        return sorted(read_checkpoint(path))

    def get_variable_value(self, name):
        values = read_checkpoint(self._require_checkpoint())
        if name not in values:
            raise ValueError(f"Variable {name!r} is not in the checkpoint")
        return values[name]

    def _require_checkpoint(self):
        path = self.latest_checkpoint()
        if path is None:
            raise ValueError(f"Could not find trained model in model_dir: {self._model_dir}.")
        return path

    def _checkpoint_step(self):
        path = self.latest_checkpoint()
        if path is None:
            return 0
        return int(read_checkpoint(path).get("global_step", 0))

    # ------------------------------------------------------------------ graph building
    def _build(self, input_fn, mode):
        """A new graph holding the global step, the inputs and the model's spec for `mode`."""
        graph = Graph()
        with graph.as_default():
            if self._config.tf_random_seed is not None:
                graph.seed = self._config.tf_random_seed
            global_step = train.create_global_step(graph)
            features, labels = self._call_input_fn(input_fn, mode)
            spec = self._call_model_fn(features, labels, mode)
        return graph, global_step, spec

    def _call_input_fn(self, input_fn, mode):
        args = _accepted_args(input_fn)
        kwargs = {}
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = self._config
        result = input_fn(**kwargs)
        if hasattr(result, "make_one_shot_iterator") or hasattr(result, "element_spec"):
            result = _dataset_next(result)
        if isinstance(result, (tuple, list)):
            if len(result) != 2:
                raise ValueError(f"input_fn must return features or (features, labels), got a "
                                 f"{len(result)}-tuple")
            return result[0], result[1]
        return result, None

    def _call_model_fn(self, features, labels, mode):
        kwargs = {}
        if "labels" in self._model_fn_args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in self._model_fn_args:
            kwargs["mode"] = mode
        if "params" in self._model_fn_args:
            kwargs["params"] = self.params
        if "config" in self._model_fn_args:
            kwargs["config"] = self._config
        spec = self._model_fn(features=features, **kwargs)
        if not isinstance(spec, EstimatorSpec):
            raise ValueError(f"model_fn should return an EstimatorSpec, got {spec!r}")
        return spec

    def _scaffold(self, spec, graph):
        scaffold = spec.scaffold or Scaffold()
        if scaffold.saver is None and not graph.get_collection(GraphKeys.SAVERS):
            with graph.as_default():
                graph.add_to_collection(GraphKeys.SAVERS, Saver(
                    max_to_keep=self._config.keep_checkpoint_max,
                    keep_checkpoint_every_n_hours=self._config.keep_checkpoint_every_n_hours))
        return scaffold

    # ------------------------------------------------------------------ train
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Train until the input ends, `steps` more steps, or the global step reaches
        `max_steps`; returns self."""
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if max_steps is not None and self._checkpoint_step() >= max_steps:
            _logger.info("Skipping training since max_steps has already saved.")
            return self
        graph, global_step, spec = self._build(input_fn, ModeKeys.TRAIN)
        with graph.as_default():
            all_hooks = [session_hooks.NanTensorHook(spec.loss)]
            if self._config.log_step_count_steps:
                all_hooks.append(session_hooks.LoggingTensorHook(
                    {"loss": spec.loss, "step": global_step},
                    every_n_iter=self._config.log_step_count_steps))
            if steps is not None or max_steps is not None:
                all_hooks.append(session_hooks.StopAtStepHook(steps, max_steps))
            all_hooks += list(spec.training_hooks) + list(spec.training_chief_hooks)
            all_hooks += list(hooks or [])
            scaffold = self._scaffold(spec, graph)
            if self._warm_start_from is not None and self.latest_checkpoint() is None:
                scaffold = _warm_start_scaffold(scaffold, self._warm_start_from)
            if self._config.save_checkpoints_steps or self._config.save_checkpoints_secs:
                all_hooks.append(session_hooks.CheckpointSaverHook(
                    self._model_dir, save_secs=self._config.save_checkpoints_secs,
                    save_steps=self._config.save_checkpoints_steps, scaffold=scaffold,
                    listeners=saving_listeners))
            creator = ChiefSessionCreator(scaffold, config=self._config.session_config,
                                          checkpoint_dir=self._model_dir)
            loss = None
            with MonitoredSession(creator, all_hooks) as session:
                while not session.should_stop():
                    _, loss = session.run([spec.train_op, spec.loss])
            _logger.info("Loss for final step: %s.", loss)
        return self

    # ------------------------------------------------------------------ evaluate
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Run the EVAL spec's metric update ops over the input (or `steps` batches) and return
        {metric name: value, 'loss': mean loss, 'global_step': step of the checkpoint}."""
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        graph, global_step, spec = self._build(input_fn, ModeKeys.EVAL)
        with graph.as_default():
            metric_ops = dict(spec.eval_metric_ops)
            if "loss" not in metric_ops:
                metric_ops["loss"] = metrics.mean(spec.loss)
            values = {k: v for k, (v, _) in metric_ops.items()}
            updates = [u for _, u in metric_ops.values()]
            all_hooks = list(spec.evaluation_hooks) + list(hooks or [])
            if steps is not None:
                all_hooks.append(_StopAfterRunsHook(steps))
            session = self._restored_session(graph, spec, checkpoint_path, all_hooks)
            try:
                while not session.should_stop():
                    try:
                        session.run(updates)
                    except OutOfRangeError:
                        break
                results = {k: np.asarray(v)[()] for k, v in session.raw_session().run(values).items()}
                results["global_step"] = np.int64(session.raw_session().run(global_step))
            finally:
                session.close()
        return results

    # ------------------------------------------------------------------ predict
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yield predictions (a dict per example when the model's predictions are a dict, else
        an array per example; whole batches when `yield_single_examples` is False)."""
        graph, _, spec = self._build(input_fn, ModeKeys.PREDICT)
        predictions = spec.predictions
        if isinstance(predictions, dict) and predict_keys is not None:
            keys = [predict_keys] if isinstance(predict_keys, str) else list(predict_keys)
            missing = [k for k in keys if k not in predictions]
            if missing:
                raise ValueError(f"Expected to run at least one output from {sorted(predictions)}, "
                                 f"provided {missing}.")
            predictions = {k: predictions[k] for k in keys}
        with graph.as_default():
            with self._restored_session(graph, spec, checkpoint_path,
                                        list(spec.prediction_hooks) + list(hooks or [])) as session:
                while not session.should_stop():
                    batch = session.run(predictions)
                    if not yield_single_examples:
                        yield batch
                    elif isinstance(batch, dict):
                        size = len(next(iter(batch.values())))
                        for i in range(size):
                            yield {k: v[i] for k, v in batch.items()}
                    else:
                        yield from batch

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn, *args, **kwargs):
        """Not provided: TensorFlow's SavedModel format is not graphflow's. Build the PREDICT
        graph, restore the checkpoint into a Session and write it with `graphflow.save`."""
        raise NotImplementedError("Estimator.export_saved_model: graphflow does not write "
                                  "TensorFlow SavedModels; restore the latest checkpoint into a "
                                  "Session and use graphflow.save(path, inputs, outputs, "
                                  "session=session) instead")

    export_savedmodel = export_saved_model

    def _restored_session(self, graph, spec, checkpoint_path, hooks):
        path = checkpoint_path or self.latest_checkpoint()
        if path is None:
            _logger.info("Could not find trained model in model_dir: %s, running initialization "
                         "to evaluate.", self._model_dir)
        scaffold = self._scaffold(spec, graph)
        creator = ChiefSessionCreator(scaffold, config=self._config.session_config,
                                      checkpoint_filename_with_path=path)
        return MonitoredSession(creator, hooks)


class _StopAfterRunsHook(session_hooks.SessionRunHook):
    def __init__(self, num_runs):
        self._num_runs = num_runs
        self._count = 0

    def after_run(self, run_context, run_values):
        self._count += 1
        if self._count >= self._num_runs:
            run_context.request_stop()


def _warm_start_scaffold(scaffold, warm_start_from):
    """Wrap `scaffold` so that, after initialization, variables found in `warm_start_from` (a
    checkpoint prefix or directory) take their saved values."""
    path = getattr(warm_start_from, "ckpt_to_initialize_from", warm_start_from)
    user_init_fn = scaffold._user_init_fn

    def init_fn(scaffold_, session):
        if user_init_fn is not None:
            user_init_fn(scaffold_, session)
        saved = read_checkpoint(os.fspath(path))
        updates = {}
        for variable in session.graph.get_collection(GraphKeys.TRAINABLE_VARIABLES):
            name = variable.op.name
            if name in saved:
                value = saved[name]
                if tuple(value.shape) != tuple(variable.shape.as_list()):
                    raise ValueError(f"warm start: '{name}' has shape {variable.shape} but the "
                                     f"checkpoint holds {list(value.shape)}")
                updates[variable.op.attrs["shared_name"]] = np.asarray(value)
        session.set_variable_values(updates)

    scaffold._user_init_fn = init_fn
    return scaffold


def _dataset_next(dataset):
    """The next-element tensors of a tf.data Dataset, through a one-shot iterator."""
    make = getattr(dataset, "make_one_shot_iterator", None)
    if make is None:
        raise ValueError(f"input_fn returned {dataset!r}, which has no one-shot iterator")
    return make().get_next()


__all__ = ["Estimator", "read_checkpoint"]
