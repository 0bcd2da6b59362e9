"""The TensorBoard hooks of `tf.train`: `SummarySaverHook` (runs the summary ops every N steps or
seconds and writes them), `StepCounterHook` ('global_step/sec' summaries) and `ProfilerHook`
(traces a run every N steps or seconds and writes its chrome-trace timeline,
'timeline-<step>.json', with graphflow's timeline tool). They work as TF1's do with a
`MonitoredSession` / `MonitoredTrainingSession` (which adds the first two when it has a
summary or checkpoint directory): the summaries go to `FileWriterCache.get(output_dir)`.
"""

import logging
import os

from graphflow.engine.tracing import RunOptions
from graphflow.framework.graph import get_default_graph
from graphflow.tf1.session_hooks import (
    SecondOrStepTimer,
    SessionRunArgs,
    SessionRunHook,
    _global_step_read,
)

_logger = logging.getLogger("graphflow")


def _writer(summary_writer, output_dir):
    if summary_writer is not None:
        return summary_writer
    if output_dir is None:
        return None
    from graphflow.tf1.summary.writer import FileWriterCache
    return FileWriterCache.get(output_dir)


def _global_step(hook_name):
    step = _global_step_read(get_default_graph())
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return step


def _step_after(run_context, global_step_tensor):
    """The global step after the run, read by a run of its own: a read fetched with the training
    op may see the value before or after the op's increment (TF's hooks take 'that value + 1',
    the value before the run, which is how TF's runs mostly order it)."""
    return int(run_context.session.run(global_step_tensor))


class SummarySaverHook(SessionRunHook):
    """Write the summaries of `summary_op` (one op or a list) or of `scaffold.summary_op`
    every `save_steps` steps or `save_secs` seconds (exactly one of each pair)."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op should be set.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        self._summary_writer = _writer(self._summary_writer, self._output_dir)
        self._next_step = None
        self._global_step_tensor = _global_step("SummarySaverHook")

    def _summary_ops(self):
        op = self._scaffold.summary_op if self._scaffold is not None else self._summary_op
        if op is None:
            return None
        return list(op) if isinstance(op, (list, tuple)) else [op]

    def before_run(self, run_context):
        self._request_summary = (self._next_step is None
                                 or self._timer.should_trigger_for_step(self._next_step))
        ops = self._summary_ops()
        return SessionRunArgs({"summary": ops} if self._request_summary and ops else {})

    def after_run(self, run_context, run_values):
        if self._summary_writer is None:
            return
        global_step = _step_after(run_context, self._global_step_tensor)
        if self._next_step is None:
            from graphflow.tf1.summary.writer import session_log
            self._summary_writer.add_session_log(session_log("START"), global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session=None):
        if self._summary_writer is not None:
            self._summary_writer.flush()


class StepCounterHook(SessionRunHook):
    """Write '<global step name>/sec' (steps per second) every `every_n_steps` steps or
    `every_n_secs` seconds, and log it."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._last_global_step = None

    def begin(self):
        self._summary_writer = _writer(self._summary_writer, self._output_dir)
        self._global_step_tensor = _global_step("StepCounterHook")
        from graphflow.tf1.train import get_global_step
        self._summary_tag = get_global_step().op.name + "/sec"


    def _log_and_record(self, elapsed_steps, elapsed_time, global_step):
        steps_per_sec = elapsed_steps / elapsed_time
        if self._summary_writer is not None:
            from graphflow.fileformat.summary_encoding import protos
            summary = protos().summary_pb2.Summary()
            summary.value.add(tag=self._summary_tag, simple_value=steps_per_sec)
            self._summary_writer.add_summary(summary, global_step)
        _logger.info("%s: %g", self._summary_tag, steps_per_sec)

    def after_run(self, run_context, run_values):
        global_step = _step_after(run_context, self._global_step_tensor)
        if self._timer.should_trigger_for_step(global_step):
            elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
            if elapsed_time is not None and elapsed_time > 0:
                self._log_and_record(elapsed_steps, elapsed_time, global_step)
        if global_step == self._last_global_step:
            _logger.warning("It seems that global step (tf.train.get_global_step) has not been "
                            "increased. Current value (could be stable): %s vs previous value: "
                            "%s.", global_step, self._last_global_step)
        self._last_global_step = global_step


class ProfilerHook(SessionRunHook):
    """Trace one run every `save_steps` steps or `save_secs` seconds and write its chrome trace
    to `output_dir`/timeline-<global step>.json (open it in chrome://tracing), and the run's
    step stats to the events file."""

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True,
                 show_memory=False):
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._output_dir = output_dir
        self._file_writer = None
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        self._next_step = None
        self._global_step_tensor = _global_step("ProfilerHook")
        self._file_writer = _writer(None, self._output_dir or None)

    def before_run(self, run_context):
        self._request_summary = (self._next_step is not None
                                 and self._timer.should_trigger_for_step(self._next_step))
        options = RunOptions(trace_level=RunOptions.FULL_TRACE) if self._request_summary \
            else None
        return SessionRunArgs(None, options=options)

    def after_run(self, run_context, run_values):
        global_step = _step_after(run_context, self._global_step_tensor)
        if self._next_step is None:
            self._timer.update_last_triggered_step(global_step - 1)  # no trace of step 1
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            self._save(self._output_file.format(global_step), run_values.run_metadata)
            if self._file_writer is not None:
                self._file_writer.add_run_metadata(run_values.run_metadata,
                                                   f"step_{global_step}")
        self._next_step = global_step + 1

    def _save(self, path, run_metadata):
        from graphflow.fileformat.timeline import Timeline
        _logger.info("Saving timeline for %s into '%s'.", self._next_step, path)
        if self._output_dir:
            os.makedirs(self._output_dir, exist_ok=True)
        trace = Timeline(run_metadata.step_stats).generate_chrome_trace_format(
            show_dataflow=self._show_dataflow, show_memory=self._show_memory)
        with open(path, "w") as f:
            f.write(trace)

    def end(self, session=None):
        if self._file_writer is not None:
            self._file_writer.flush()


__all__ = ["SummarySaverHook", "StepCounterHook", "ProfilerHook"]
