"""Monitored sessions: `tf.train.Scaffold`, `MonitoredSession`, `SingularMonitoredSession`,
`MonitoredTrainingSession` and the basic `tf.train.Supervisor`, on graphflow's own Session and Saver.

    with tf.train.MonitoredTrainingSession(checkpoint_dir=d, hooks=[tf.train.StopAtStepHook(
            last_step=100)]) as sess:
        while not sess.should_stop():
            sess.run(train_op)

A monitored session initializes the variables (or restores the latest checkpoint of its
`checkpoint_dir`), runs the local initializer, calls every hook around every run (see
`session_hooks`), feeds the graph's input feeders (`input_feeders`, e.g. from `numpy_input_fn`),
and ends quietly on `OutOfRangeError` (the end of the input) when used as a context manager.
The graph's queue runners (`tf.train.shuffle_batch` & co) start with the session, under a
`tf.train.Coordinator`; closing the session stops and joins them. Single process only: there
are no parameter servers.
"""

import logging
import os
import time

from graphflow.engine.session import Session
from graphflow.engine.tracing import RunMetadata, RunOptions
from graphflow.fileformat.checkpoint import Saver, latest_checkpoint, recover_kept_checkpoints
from graphflow.framework.errors import OutOfRangeError
from graphflow.framework.graph import GraphKeys, get_default_graph
from graphflow.ops import state_ops
from graphflow.tf1 import input_feeders
from graphflow.tf1.data.queue_runners import Coordinator, start_queue_runners
from graphflow.tf1.session_hooks import (
    CheckpointSaverHook,
    SessionRunArgs,
    SessionRunContext,
    SessionRunValues,
)
from graphflow.tf1.supervisor_files import SupervisorFiles

_logger = logging.getLogger("graphflow")
USE_DEFAULT = object()


def _merge_options(options, requested):
    """The caller's RunOptions with a hook's: the higher trace level wins (TF's merge)."""
    if requested is None:
        return options
    if options is None:
        return requested
    if requested.trace_level <= options.trace_level:
        return options
    return RunOptions(trace_level=requested.trace_level, timeout_in_ms=options.timeout_in_ms)


def _one_in_collection(graph, key):
    found = graph.get_collection(key)
    return found[0] if found else None


class Scaffold:
    """The pieces a monitored session needs to start: `init_op` (default: initialize the global
    variables), `init_feed_dict`, `init_fn(scaffold, session)`, `local_init_op` (default:
    initialize the local variables, e.g. metric counters) and `saver` (default: a Saver of the
    global variables, registered in `GraphKeys.SAVERS`). `finalize()` fills in the defaults."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None, saver=None,
                 copy_from_scaffold=None):
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._user_init_fn = init_fn
        self._ready_op = ready_op
        self._local_init_op = local_init_op
        self._summary_op = summary_op
        self._saver = saver
        self._finalized = False

    def finalize(self):
        if self._finalized:
            return self
        graph = get_default_graph()
        if self._init_op is None:
            self._init_op = (_one_in_collection(graph, GraphKeys.INIT_OP)
                             or state_ops.global_variables_initializer())
        if self._local_init_op is None:
            self._local_init_op = (_one_in_collection(graph, GraphKeys.LOCAL_INIT_OP)
                                   or state_ops.local_variables_initializer())
        if self._summary_op is None:
            from graphflow.tf1.summary.summary_ops import merge_all
            self._summary_op = merge_all()  # None when the graph has no summaries
        if self._saver is None:
            self._saver = _one_in_collection(graph, GraphKeys.SAVERS)
            if self._saver is None and graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
                self._saver = Saver()
                graph.add_to_collection(GraphKeys.SAVERS, self._saver)
        self._finalized = True
        return self

    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    local_init_op = property(lambda self: self._local_init_op)
    summary_op = property(lambda self: self._summary_op)
    saver = property(lambda self: self._saver)

    @property
    def init_fn(self):
        if self._user_init_fn is None:
            return None
        return lambda session: self._user_init_fn(self, session)


class ChiefSessionCreator:
    """Creates a Session and initializes it: restore the latest checkpoint of `checkpoint_dir`
    (or `checkpoint_filename_with_path`) when there is one, else run the scaffold's init_op and
    init_fn; then run its local_init_op."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._scaffold = scaffold or Scaffold()
        self._config = config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_path = checkpoint_filename_with_path

    @property
    def scaffold(self):
        return self._scaffold

    def create_session(self):
        scaffold = self._scaffold.finalize()
        session = Session(graph=get_default_graph(), config=self._config)
        path = self._checkpoint_path
        if path is None and self._checkpoint_dir:
            path = latest_checkpoint(self._checkpoint_dir)
        if path is not None and scaffold.saver is not None:
            scaffold.saver.restore(session, path)
            if self._checkpoint_path is None:  # the saver keeps deleting the directory's oldest
                recover_kept_checkpoints(scaffold.saver, self._checkpoint_dir)
        else:
            session.run(scaffold.init_op, feed_dict=scaffold.init_feed_dict)
            if scaffold.init_fn is not None:
                scaffold.init_fn(session)
        session.run(scaffold.local_init_op)
        return session


class _MonitoredSessionBase:
    def __init__(self, session_creator, hooks, stop_grace_period_secs=120):
        self._graph = get_default_graph()
        self._grace = stop_grace_period_secs
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._creator = session_creator or ChiefSessionCreator()
        self._sess = self._creator.create_session()
        self._feeders = input_feeders.graph_feeders(self._graph)
        for feeder in self._feeders:
            feeder.reset()
        self._stop = False
        self._closed = False
        self._coord = Coordinator()
        self._threads = start_queue_runners(self._sess, self._coord)
        for hook in self._hooks:
            hook.after_create_session(self._sess, self._coord)

    @property
    def graph(self):
        return self._graph

    def raw_session(self):
        """The underlying Session (runs without hooks or input feeding)."""
        return self._sess

    def should_stop(self):
        return self._stop or self._closed or self._coord.should_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Run `fetches` together with every hook's `before_run` fetches and feeds."""
        if self._closed:
            raise RuntimeError("Run called on a closed MonitoredSession.")
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), self._sess)
        feeds = dict(feed_dict or {})
        hook_fetches = []
        for hook in self._hooks:
            request = hook.before_run(context)
            if request is None:
                continue
            options = _merge_options(options, request.options)
            if request.fetches is not None:
                hook_fetches.append((hook, request.fetches))
            for key, value in (request.feed_dict or {}).items():
                if key in feeds:
                    raise RuntimeError(f"Same tensor is fed by two hooks (or a hook and the "
                                       f"caller): {getattr(key, 'name', key)}")
                feeds[key] = value
        try:
            feeds.update(input_feeders.feeds_of(self._feeders))
            if run_metadata is None and options is not None and options.traced:
                run_metadata = RunMetadata()  # as TF, for the hooks that asked for a trace
            results = self._sess.run([fetches] + [f for _, f in hook_fetches],
                                     feed_dict=feeds or None, options=options,
                                     run_metadata=run_metadata)
        except OutOfRangeError:
            self._stop = True
            raise
        except Exception:
            self._coord.raise_requested_exception()  # a queue runner's error explains this one
            raise
        hook_results = {id(hook): result for (hook, _), result in zip(hook_fetches, results[1:])}
        for hook in self._hooks:
            hook.after_run(context, SessionRunValues(hook_results.get(id(hook)), options,
                                                     run_metadata))
        self._stop = self._stop or context.stop_requested
        return results[0]

    def run_step_fn(self, step_fn):
        """`step_fn(step_context)` with `step_context.session` and `request_stop()`."""
        context = SessionRunContext(None, self)
        value = step_fn(context)
        self._stop = self._stop or context.stop_requested
        return value

    def close(self):
        self._close(run_end_hooks=True)

    def _close(self, run_end_hooks):
        if self._closed:
            return
        try:
            if run_end_hooks:
                for hook in self._hooks:
                    hook.end(self._sess)
        finally:
            self._closed = True
            self._coord.request_stop()
            try:
                self._coord.join(self._threads, stop_grace_period_secs=self._grace,
                                 ignore_live_threads=True)
            finally:
                self._sess.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        clean = exc_type is None or issubclass(exc_type, (OutOfRangeError, StopIteration))
        self._close(run_end_hooks=clean)
        return exc_type is not None and clean


class MonitoredSession(_MonitoredSessionBase):
    """`tf.train.MonitoredSession(session_creator=None, hooks=None)`."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSessionBase):
    """`tf.train.SingularMonitoredSession(hooks, scaffold, checkpoint_dir, ...)`; `raw_session()`
    gives the underlying Session."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, config=config,
                                      checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, stop_grace_period_secs)


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None,
                             hooks=None, chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT, save_summaries_secs=USE_DEFAULT,
                             config=None, stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None):
    """A MonitoredSession for training: restores from / saves checkpoints to `checkpoint_dir`
    (every `save_checkpoint_steps` steps, else every `save_checkpoint_secs` seconds, 600 by
    default; None for both turns saving off). With a `summary_dir` (default: `checkpoint_dir`)
    it also writes global_step/sec every `log_step_count_steps` steps (StepCounterHook) and the
    graph's merged summaries every `save_summaries_steps` steps, 100 by default, or
    `save_summaries_secs` seconds (SummarySaverHook), as TF does."""
    if not is_chief:
        raise NotImplementedError("MonitoredTrainingSession: graphflow runs a single process, "
                                  "is_chief must be True")
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    scaffold = scaffold or Scaffold()
    all_hooks = list(chief_only_hooks or []) + list(hooks or [])
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:  # as TF: steps/sec and the graph's summaries to the summary directory
        from graphflow.tf1.summary_hooks import StepCounterHook, SummarySaverHook
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(output_dir=summary_dir,
                                             every_n_steps=log_step_count_steps))
        if (save_summaries_steps and save_summaries_steps > 0) or \
                (save_summaries_secs and save_summaries_secs > 0):
            all_hooks.append(SummarySaverHook(scaffold=scaffold, save_steps=save_summaries_steps,
                                              save_secs=save_summaries_secs,
                                              output_dir=summary_dir))
    if checkpoint_dir and (save_checkpoint_steps or save_checkpoint_secs):
        all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_secs=save_checkpoint_secs,
                                             save_steps=save_checkpoint_steps, scaffold=scaffold))
    creator = ChiefSessionCreator(scaffold=scaffold, config=config, checkpoint_dir=checkpoint_dir)
    return MonitoredSession(session_creator=creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs)


class Supervisor:
    """`tf.train.Supervisor` (basic, single process): `managed_session()` creates a session that
    restores the latest checkpoint of `logdir` or initializes the variables and starts the
    graph's queue runners under `coord`; `should_stop()` / `request_stop()` / `stop()` (which joins
    the queue-runner threads); `saver`, `global_step`, `summary_writer`. Without a saver thread,
    the checkpoint is saved (when `logdir` and `save_model_secs` are set) as `should_stop()` finds
    `save_model_secs` elapsed and when the managed session ends. The logdir also gets TensorFlow's
    `graph.pbtxt` and events file (graph, session logs, summaries: `supervisor_files`)."""

    def __init__(self, graph=None, ready_op=USE_DEFAULT, is_chief=True, init_op=USE_DEFAULT,
                 init_feed_dict=None, local_init_op=USE_DEFAULT, logdir=None,
                 summary_op=USE_DEFAULT, saver=USE_DEFAULT, global_step=USE_DEFAULT,
                 save_summaries_secs=120, save_model_secs=600, recovery_wait_secs=30,
                 stop_grace_secs=120, checkpoint_basename="model.ckpt", session_manager=None,
                 summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        from graphflow.tf1.train import get_global_step
        self._graph = graph or get_default_graph()
        with self._graph.as_default():
            self._init_op = (state_ops.global_variables_initializer() if init_op is USE_DEFAULT
                             else init_op)
            self._local_init_op = (state_ops.local_variables_initializer()
                                   if local_init_op is USE_DEFAULT else local_init_op)
            if saver is USE_DEFAULT:
                saver = _one_in_collection(self._graph, GraphKeys.SAVERS)
                if saver is None and self._graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
                    saver = Saver()
                    self._graph.add_to_collection(GraphKeys.SAVERS, saver)
            self._global_step = (get_global_step(self._graph) if global_step is USE_DEFAULT
                                 else global_step)
        self._saver = saver
        if logdir and is_chief:
            os.makedirs(logdir, exist_ok=True)
        if summary_op is USE_DEFAULT:
            from graphflow.tf1.summary.summary_ops import merge_all
            with self._graph.as_default():
                summary_op = merge_all()
        if summary_writer is USE_DEFAULT:
            summary_writer = "default" if logdir and is_chief else None
        self._files = SupervisorFiles(logdir, self._graph, saver, summary_op, summary_writer,
                                      save_summaries_secs, self._global_step) \
            if logdir and is_chief else None
        self._init_feed_dict = init_feed_dict
        self._init_fn = init_fn
        self._logdir = logdir
        self._save_model_secs = save_model_secs
        self._save_path = os.path.join(logdir, checkpoint_basename) if logdir else None
        self._coord = Coordinator()
        self._threads = []
        self._stop_grace_secs = stop_grace_secs
        self._session = None

    saver = property(lambda self: self._saver)
    global_step = property(lambda self: self._global_step)
    init_op = property(lambda self: self._init_op)
    save_path = property(lambda self: self._save_path)
    coord = property(lambda self: self._coord)
    summary_writer = property(lambda self: self._files.summary_writer if self._files else None)

    def prepare_or_wait_for_session(self, master="", config=None, start_standard_services=True,
                                    **_unused):
        session = Session(graph=self._graph, config=config)
        path = latest_checkpoint(self._logdir) if self._logdir else None
        if path is not None and self._saver is not None:
            self._saver.restore(session, path)
            recover_kept_checkpoints(self._saver, self._logdir)
        else:
            if self._init_op is not None:
                session.run(self._init_op, feed_dict=self._init_feed_dict)
            if self._init_fn is not None:
                self._init_fn(session)
        if self._local_init_op is not None:
            session.run(self._local_init_op)
        self._session = session
        self._last_save = time.time()
        if start_standard_services:  # as TF: the queue runners first, so summaries can run
            self.start_queue_runners(session)
        if self._files is not None:
            self._files.write_graph()
            if start_standard_services:
                self._files.start(session)
        return session

    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        return _ManagedSession(self, config, start_standard_services, close_summary_writer)

    def start_queue_runners(self, sess, queue_runners=None):
        """Start the graph's queue runners (or `queue_runners`) under the supervisor's
        coordinator; returns their threads."""
        if queue_runners is None:
            threads = start_queue_runners(sess, self._coord)
        else:
            threads = [t for qr in queue_runners
                       for t in qr.create_threads(sess, coord=self._coord, daemon=True,
                                                  start=True)]
        self._threads.extend(threads)
        return threads

    def should_stop(self):
        if (self._session is not None and self._save_model_secs and self._save_path
                and time.time() - self._last_save >= self._save_model_secs):
            self.save()
        if self._session is not None and self._files is not None:
            self._files.maybe_summaries(self._session)
        return self._coord.should_stop()

    def request_stop(self, ex=None):
        self._coord.request_stop(ex)

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Request a stop and join the queue-runner threads (and `threads`)."""
        self._coord.request_stop()
        try:
            self._coord.join(list(threads or []) + self._threads,
                             stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            self._threads = []
            if self._files is not None:
                self._files.stop(close_summary_writer)

    def save(self):
        if self._saver is None or self._save_path is None or self._session is None:
            return None
        os.makedirs(self._logdir, exist_ok=True)
        self._last_save = time.time()
        path = self._saver.save(self._session, self._save_path, global_step=self._global_step)
        if self._files is not None:
            self._files.checkpoint(path, self._files._step(self._session))
        return path


class _ManagedSession:
    def __init__(self, supervisor, config, start_services, close_summary_writer):
        self._supervisor = supervisor
        self._config = config
        self._start_services = start_services
        self._close_writer = close_summary_writer

    def __enter__(self):
        self._session = self._supervisor.prepare_or_wait_for_session(
            config=self._config, start_standard_services=self._start_services)
        return self._session

    def __exit__(self, exc_type, exc, tb):
        clean = exc_type is None or issubclass(exc_type, (OutOfRangeError, StopIteration))
        try:
            if clean and self._supervisor._save_model_secs:
                self._supervisor.save()
        finally:
            try:
                self._supervisor.stop(close_summary_writer=self._close_writer,
                                      ignore_live_threads=True)
            finally:
                self._session.close()
        return exc_type is not None and clean


__all__ = ["Scaffold", "ChiefSessionCreator", "MonitoredSession", "SingularMonitoredSession",
           "MonitoredTrainingSession", "Supervisor"]
