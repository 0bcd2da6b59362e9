"""`tf.contrib.slim.learning`: TF-Slim's training loop.

    train_op = slim.learning.create_train_op(total_loss, optimizer)
    final_loss = slim.learning.train(train_op, logdir, number_of_steps=1000,
                                     save_summaries_secs=60, save_interval_secs=600)

`create_train_op` computes the gradients of the loss (after the UPDATE_OPS), optionally
multiplies them per variable, clips each by norm and summarizes them, applies them (incrementing
the global step) and returns the loss made to depend on the update, checked for NaN/Inf.
`train` runs it under a `tf.train.Supervisor` as TF-Slim does: the supervisor restores the
latest checkpoint of `logdir` or initializes the variables (then calls `init_fn(sess)`), writes
summaries every `save_summaries_secs` and checkpoints every `save_interval_secs`; the loop stops
once the global step reaches `number_of_steps` (or the input ends), logs every
`log_every_n_steps`, writes a chrome trace 'tf_trace-<step>.json' every `trace_every_n_steps`,
saves a final checkpoint and returns the last loss.
"""

import logging
import os
import time

from graphflow.engine.tracing import RunMetadata, RunOptions
from graphflow.framework.errors import OutOfRangeError
from graphflow.framework.graph import GraphKeys, get_default_graph
from graphflow.ops import math_ops, state_ops
from graphflow.ops.core_ops import constant, convert_to_tensor, group, identity
from graphflow.ops.logging_ops import check_numerics
from graphflow.tf1.clip_ops import clip_by_norm, global_norm
from graphflow.tf1.summary.summary_ops import histogram, merge_all, scalar

_logger = logging.getLogger("graphflow")
_USE_GLOBAL_STEP = 0
_USE_DEFAULT = 0


def clip_gradient_norms(gradients_to_variables, max_norm):
    """Each gradient clipped to norm `max_norm` (tf.clip_by_norm)."""
    return [(None if g is None else clip_by_norm(g, max_norm), v)
            for g, v in gradients_to_variables]


def multiply_gradients(grads_and_vars, gradient_multipliers):
    """Gradients of the variables named in `gradient_multipliers` (by variable or op name)
    multiplied by their coefficient."""
    if not isinstance(grads_and_vars, list):
        raise ValueError("`grads_and_vars` must be a list.")
    if not gradient_multipliers:
        raise ValueError("`gradient_multipliers` is empty.")
    if not isinstance(gradient_multipliers, dict):
        raise ValueError("`gradient_multipliers` must be a dict.")
    out = []
    for grad, var in grads_and_vars:
        key = var if var in gradient_multipliers else \
            var.op.name if var.op.name in gradient_multipliers else None
        if key is not None:
            if grad is None:
                raise ValueError("Requested multiple of `None` gradient.")
            grad = grad * convert_to_tensor(gradient_multipliers[key], dtype=grad.dtype)
        out.append((grad, var))
    return out


def add_gradients_summaries(grads_and_vars):
    """A histogram '<var>/gradient' and a scalar '<var>/gradient_norm' per gradient."""
    summaries = []
    for grad, var in grads_and_vars:
        if grad is not None:
            summaries.append(histogram(var.op.name + "/gradient", grad))
            summaries.append(scalar(var.op.name + "/gradient_norm", global_norm([grad])))
        else:
            _logger.info("Var %s has no gradient", var.op.name)
    return summaries


def create_train_op(total_loss, optimizer, global_step=_USE_GLOBAL_STEP, update_ops=None,
                    variables_to_train=None, clip_gradient_norm=0, summarize_gradients=False,
                    gate_gradients=1, aggregation_method=None, colocate_gradients_with_ops=False,
                    gradient_multipliers=None, check_numerics=True):
    """The loss tensor that, when run, applies one step of `optimizer` (and increments
    `global_step`, by default the graph's, created if missing); added to TRAIN_OP."""
    from graphflow.tf1.train import get_or_create_global_step
    graph = get_default_graph()
    if global_step is _USE_GLOBAL_STEP:
        global_step = get_or_create_global_step()
    collected = set(graph.get_collection(GraphKeys.UPDATE_OPS))
    update_ops = collected if update_ops is None else set(update_ops)
    if not collected.issubset(update_ops):
        _logger.warning("update_ops in create_train_op does not contain all the update_ops in "
                        "GraphKeys.UPDATE_OPS")
    total_loss = convert_to_tensor(total_loss)
    if update_ops:
        with graph.control_dependencies(list(update_ops)):
            barrier = group(name="update_barrier")
        with graph.control_dependencies([barrier]):
            total_loss = identity(total_loss)
    trainable = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
    if variables_to_train is None:
        variables_to_train = trainable
    if not variables_to_train:
        raise ValueError("create_train_op: there are no variables to train")
    grads = optimizer.compute_gradients(total_loss, variables_to_train,
                                        gate_gradients=gate_gradients,
                                        aggregation_method=aggregation_method,
                                        colocate_gradients_with_ops=colocate_gradients_with_ops)
    if gradient_multipliers:
        with graph.name_scope("multiply_grads"):
            grads = multiply_gradients(grads, gradient_multipliers)
    if clip_gradient_norm > 0:
        with graph.name_scope("clip_grads"):
            grads = clip_gradient_norms(grads, clip_gradient_norm)
    if summarize_gradients:
        with graph.name_scope("summarize_grads"):
            add_gradients_summaries(grads)
    grad_updates = optimizer.apply_gradients(grads, global_step=global_step)
    with graph.name_scope("train_op"):
        if check_numerics:
            total_loss = _check_numerics(total_loss)
        with graph.control_dependencies([grad_updates]):
            train_op = identity(total_loss)
    train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
    if train_op not in train_ops:
        train_ops.append(train_op)
    return train_op


def _check_numerics(loss):
    return check_numerics(loss, "LossTensor is inf or nan")


def train_step(sess, train_op, global_step, train_step_kwargs):
    """One step: run `train_op` and read the global step; trace, log and ask whether to stop as
    `train_step_kwargs` says. Returns (loss, should_stop)."""
    start = time.time()
    options = metadata = None
    if "should_trace" in train_step_kwargs:
        if "logdir" not in train_step_kwargs:
            raise ValueError("logdir must be present in train_step_kwargs when should_trace is "
                             "present")
        if sess.run(train_step_kwargs["should_trace"]):
            options, metadata = RunOptions(trace_level=RunOptions.FULL_TRACE), RunMetadata()
    total_loss, step = sess.run([train_op, global_step], options=options, run_metadata=metadata)
    elapsed = time.time() - start
    if metadata is not None:
        from graphflow.fileformat.timeline import Timeline
        path = os.path.join(train_step_kwargs["logdir"], f"tf_trace-{int(step)}.json")
        _logger.info("Writing trace to %s", path)
        with open(path, "w") as f:
            f.write(Timeline(metadata.step_stats).generate_chrome_trace_format())
        if train_step_kwargs.get("summary_writer") is not None:
            train_step_kwargs["summary_writer"].add_run_metadata(metadata,
                                                                 f"run_metadata-{int(step)}")
    if "should_log" in train_step_kwargs and sess.run(train_step_kwargs["should_log"]):
        _logger.info("global step %d: loss = %.4f (%.3f sec/step)", step, total_loss, elapsed)
    should_stop = bool(sess.run(train_step_kwargs["should_stop"])) \
        if "should_stop" in train_step_kwargs else False
    return total_loss, should_stop


def _step_kwargs(global_step, number_of_steps, log_every_n_steps, trace_every_n_steps, is_chief,
                 logdir):
    kwargs = {"should_stop": math_ops.greater_equal(global_step, number_of_steps)
              if number_of_steps else constant(False)}
    if log_every_n_steps > 0:
        kwargs["should_log"] = math_ops.equal(math_ops.mod(global_step, log_every_n_steps), 0)
    if is_chief and trace_every_n_steps is not None:
        kwargs["should_trace"] = math_ops.equal(math_ops.mod(global_step, trace_every_n_steps), 0)
        kwargs["logdir"] = logdir
    return kwargs


def train(train_op, logdir, train_step_fn=train_step, train_step_kwargs=_USE_DEFAULT,
          log_every_n_steps=1, graph=None, master="", is_chief=True, global_step=None,
          number_of_steps=None, init_op=_USE_DEFAULT, init_feed_dict=None,
          local_init_op=_USE_DEFAULT, init_fn=None, ready_op=_USE_DEFAULT,
          summary_op=_USE_DEFAULT, save_summaries_secs=600, summary_writer=_USE_DEFAULT,
          startup_delay_steps=0, saver=None, save_interval_secs=600, sync_optimizer=None,
          session_config=None, session_wrapper=None, trace_every_n_steps=None,
          ignore_live_threads=False):
    """Run `train_op` until the global step reaches `number_of_steps` (or `train_step_fn` says
    stop, or the input ends), under a Supervisor over `logdir`; returns the last loss."""
    from graphflow.fileformat.checkpoint import Saver
    from graphflow.tf1.train import Supervisor, get_or_create_global_step
    if train_op is None:
        raise ValueError("train_op cannot be None.")
    if logdir is None:
        if summary_op is not _USE_DEFAULT:
            raise ValueError("Cannot provide summary_op because logdir=None")
        if saver is not None:
            raise ValueError("Cannot provide saver because logdir=None")
        if trace_every_n_steps is not None:
            raise ValueError("Cannot provide trace_every_n_steps because logdir=None")
    if sync_optimizer is not None:
        raise NotImplementedError("slim.learning.train: sync_optimizer (replicated training) is "
                                  "not available in graphflow, which trains in one process")
    if number_of_steps is not None and number_of_steps <= 0:
        raise ValueError("`number_of_steps` must be either None or a positive number.")
    graph = graph or get_default_graph()
    with graph.as_default():
        if global_step is None:
            global_step = get_or_create_global_step()
        saver = saver or Saver()
        with graph.name_scope("init_ops"):
            if init_op is _USE_DEFAULT:
                init_op = state_ops.global_variables_initializer()
            if local_init_op is _USE_DEFAULT:
                local_init_op = state_ops.local_variables_initializer()
        if summary_op is _USE_DEFAULT:
            summary_op = merge_all()
        if train_step_kwargs is _USE_DEFAULT:
            with graph.name_scope("train_step"):
                train_step_kwargs = _step_kwargs(global_step, number_of_steps, log_every_n_steps,
                                                 trace_every_n_steps, is_chief, logdir)
    supervisor_kwargs = {} if summary_writer is _USE_DEFAULT else {"summary_writer":
                                                                    summary_writer}
    sv = Supervisor(graph=graph, is_chief=is_chief, logdir=logdir, init_op=init_op,
                    init_feed_dict=init_feed_dict, local_init_op=local_init_op,
                    summary_op=summary_op, global_step=global_step, saver=saver,
                    save_summaries_secs=save_summaries_secs,
                    save_model_secs=save_interval_secs if logdir else 0, init_fn=init_fn,
                    **supervisor_kwargs)
    if summary_writer is not None:
        train_step_kwargs["summary_writer"] = sv.summary_writer
    total_loss = None
    with sv.managed_session(master, config=session_config) as sess:
        _logger.info("Starting Session.")
        if session_wrapper is not None:
            sess = session_wrapper(sess)
        if not is_chief and startup_delay_steps > 0:
            _logger.info("startup_delay_steps has no effect in a single process")
        try:
            while not sv.should_stop():
                total_loss, should_stop = train_step_fn(sess, train_op, global_step,
                                                        train_step_kwargs)
                if should_stop:
                    _logger.info("Stopping Training.")
                    sv.request_stop()
                    break
        except OutOfRangeError as exc:
            _logger.info("Caught OutOfRangeError. Stopping Training. %s", exc)
        if logdir and is_chief and not save_interval_secs:
            _logger.info("Finished training! Saving model to disk.")
            sv.save()
    return total_loss


__all__ = ["train", "train_step", "create_train_op", "clip_gradient_norms", "multiply_gradients",
           "add_gradients_summaries"]
