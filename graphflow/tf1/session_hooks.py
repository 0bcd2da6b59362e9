"""Session run hooks (TF1's `tf.train.SessionRunHook` family) used by monitored sessions and the
Estimator: the hook protocol, `SessionRunArgs`/`SessionRunValues`, and the standard hooks
(`LoggingTensorHook`, `StopAtStepHook`, `CheckpointSaverHook`, `NanTensorHook`, `FeedFnHook`).

A hook sees each `MonitoredSession.run`: `before_run(run_context)` may return `SessionRunArgs`
(extra fetches, feeds) that are run in the same `Session.run` as the caller's fetches, and
`after_run(run_context, run_values)` receives their results; `run_context.request_stop()` ends the
training loop.
"""

import collections
import logging
import os
import time

import numpy as np

from graphflow.framework.graph import GraphKeys, get_default_graph

_logger = logging.getLogger("graphflow")


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook adds to one run: `fetches` (any nesting), `feed_dict`, `options`."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunValues(collections.namedtuple("SessionRunValues",
                                              ["results", "options", "run_metadata"])):
    """What a hook gets back: `results` of its `SessionRunArgs.fetches`."""


class SessionRunContext:
    """The run being made: `original_args` (the caller's fetches and feeds), `session`, and
    `request_stop()` for hooks that end training."""

    def __init__(self, original_args, session):
        self.original_args = original_args
        self.session = session
        self._stop_requested = False

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        self._stop_requested = True


class SessionRunHook:
    """Base class: every method is optional and does nothing by default."""

    def begin(self):
        """Called once before the session is created; the graph may still be changed."""

    def after_create_session(self, session, coord):
        """Called once the session exists and its variables are initialized or restored."""

    def before_run(self, run_context):
        """Return `SessionRunArgs` to add fetches/feeds to the coming run, or None."""
        return None

    def after_run(self, run_context, run_values):
        """Called after each run with the results of this hook's fetches."""

    def end(self, session):
        """Called once at the end of the session (not when it ends by an exception)."""


class SecondOrStepTimer:
    """Triggers every `every_secs` seconds or every `every_steps` steps (exactly one of them)."""

    def __init__(self, every_secs=None, every_steps=None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("Either every_secs or every_steps should be provided.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self._last_time = None
        self._last_step = None

    def should_trigger_for_step(self, step):
        if self._last_step is None:
            return True
        if self._last_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_time + self._every_secs
        return step >= self._last_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Record a trigger at `step`; returns (seconds, steps) since the previous trigger, or
        (None, None) for the first one (TF's return value)."""
        now = time.time()
        elapsed = (None, None) if self._last_time is None else \
            (now - self._last_time, step - self._last_step)
        self._last_time = now
        self._last_step = step
        return elapsed

    def last_triggered_step(self):
        return self._last_step


def _as_fetch(graph, item):
    """A tensor given as a Tensor, a Variable or a name ('loss' or 'loss:0')."""
    if isinstance(item, str):
        return graph.get_tensor_by_name(item if ":" in item else item + ":0")
    return item


def _global_step_read(graph):
    from graphflow.tf1.train import get_global_step
    step = get_global_step(graph)
    if step is None:
        return None
    as_variable = getattr(step, "read_value", None)
    return as_variable() if as_variable is not None else step


class LoggingTensorHook(SessionRunHook):
    """Logs the values of `tensors` (a dict tag -> tensor/name, or a list) every `every_n_iter`
    runs or `every_n_secs` seconds (and at the end when `at_end`), at INFO level on the
    'graphflow' logger. `formatter(values_dict)` may format the line."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs "
                             "must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            self._tag_order = [t if isinstance(t, str) else t.name for t in tensors]
            tensors = dict(zip(self._tag_order, tensors))
        else:
            self._tag_order = sorted(tensors)
        self._tensors = tensors
        self._timer = None if only_log_at_end else SecondOrStepTimer(every_n_secs, every_n_iter)
        self._log_at_end = at_end
        self._formatter = formatter
        self.logged = []  # the value dicts logged so far, oldest first

    def begin(self):
        graph = get_default_graph()
        self._iter_count = 0
        self._current = {tag: _as_fetch(graph, t) for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = (self._timer is not None
                                and self._timer.should_trigger_for_step(self._iter_count))
        return SessionRunArgs(self._current) if self._should_trigger else None

    def _log(self, values):
        self.logged.append(values)
        if self._formatter is not None:
            _logger.info(self._formatter(values))
        else:
            _logger.info(", ".join(f"{tag} = {values[tag]}" for tag in self._tag_order))

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._timer.update_last_triggered_step(self._iter_count)
            self._log(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log(session.run(self._current))


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches `last_step`, or `num_steps` steps after the
    step the session started at (exactly one of them)."""

    def __init__(self, num_steps=None, last_step=None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and num_steps < 0:
            raise ValueError("Negative num_steps is not allowed.")
        if last_step is not None and last_step < 0:
            raise ValueError("Negative last_step is not allowed.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._step_tensor = _global_step_read(get_default_graph())
        if self._step_tensor is None:
            raise RuntimeError("Global step should be created to use StopAtStepHook.")

    def after_create_session(self, session, coord):
        step = int(session.run(self._step_tensor))
        if self._last_step is None:
            self._last_step = step + self._num_steps
        if step >= self._last_step:
            self._stop_at_start = True

    def before_run(self, run_context):
        if getattr(self, "_stop_at_start", False):
            run_context.request_stop()
        return None

    def after_run(self, run_context, run_values):
        if int(run_context.session.run(self._step_tensor)) >= self._last_step:
            run_context.request_stop()


class CheckpointSaverHook(SessionRunHook):
    """Saves `<checkpoint_dir>/<checkpoint_basename>-<global step>` every `save_steps` steps or
    `save_secs` seconds, after the session is created and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._dir = checkpoint_dir
        self._path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._saver = saver
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(save_secs, save_steps)
        self._listeners = list(listeners or [])

    def begin(self):
        self._step_tensor = _global_step_read(get_default_graph())
        if self._step_tensor is None:
            raise RuntimeError("Global step should be created to use CheckpointSaverHook.")
        for listener in self._listeners:
            listener.begin()

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None and self._scaffold.saver is not None:
            return self._scaffold.saver
        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError("No items in collection savers: pass a saver or a scaffold.")
        return savers[0]

    def after_create_session(self, session, coord):
        os.makedirs(self._dir, exist_ok=True)
        from graphflow.fileformat.checkpoint import recover_kept_checkpoints

        # a saver that keeps no checkpoint yet adopts those the directory's state file lists, so
        # a restarted program keeps deleting the oldest beyond max_to_keep
        recover_kept_checkpoints(self._get_saver(), self._dir)
        step = int(session.run(self._step_tensor))
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def after_run(self, run_context, run_values):
        step = int(run_context.session.run(self._step_tensor))
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            self._save(run_context.session, step)

    def end(self, session):
        step = int(session.run(self._step_tensor))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _save(self, session, step):
        for listener in self._listeners:
            listener.before_save(session, step)
        _logger.info("Saving checkpoints for %d into %s.", step, self._path)
        self._get_saver().save(session, self._path, global_step=step)
        for listener in self._listeners:
            listener.after_save(session, step)


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Stops training (or raises `NanLossDuringTrainingError` when `fail_on_nan_loss`) when
    `loss_tensor` is NaN."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss = loss_tensor
        self._fail = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            if self._fail:
                raise NanLossDuringTrainingError
            _logger.error("Model diverged with loss = NaN.")
            run_context.request_stop()


class FeedFnHook(SessionRunHook):
    """Adds `feed_fn()`'s feed dict to every run."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


__all__ = ["SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues",
           "SecondOrStepTimer", "LoggingTensorHook", "StopAtStepHook", "CheckpointSaverHook",
           "NanTensorHook", "NanLossDuringTrainingError", "FeedFnHook"]
