"""What a `tf.train.Supervisor` writes in its logdir besides checkpoints, as TensorFlow's does.

When its session is ready, a chief Supervisor with a logdir writes `graph.pbtxt` (the graph's
GraphDef as protobuf text, with `_output_shapes`, `tf.train.write_graph`'s form) and, unless it
was given `summary_writer=None`, an events file (`events.out.tfevents.*`) holding the file
version, the graph, the meta graph and a `SessionLog` START at the global step. After that the
events file gets the summary op's value (the default: every summary of the graph) when the
session starts and every `save_summaries_secs` (unless 0 or `summary_op=None`), with
`global_step/sec`; a `SessionLog` CHECKPOINT at each checkpoint; a `SessionLog` STOP when the
Supervisor stops. graphflow runs no service threads: the periodic summaries are written as
`should_stop()` finds the interval elapsed.

A graph holding ops with no TensorFlow GraphDef form (graphflow's own ops) still gets
`graph.pbtxt` with every op that can be written (those ops and the ops reading them are left out)
and its events file without the meta graph; one warning names what was left out.
"""

import os
import time
import warnings

from google.protobuf import text_format

from graphflow.fileformat import file_io

GRAPH_FILE = "graph.pbtxt"


def _describe(skipped, limit=5):
    names = ", ".join(f"{op.type} '{op.name}' ({why})" for op, why in skipped[:limit])
    more = f" and {len(skipped) - limit} more" if len(skipped) > limit else ""
    return names + more


class SupervisorFiles:
    """The graph file and the events file of one Supervisor's logdir."""

    def __init__(self, logdir, graph, saver, summary_op, summary_writer, save_summaries_secs,
                 global_step):
        self._logdir = logdir
        self._graph = graph
        self._saver = saver
        self._summary_op = summary_op
        self._writer = summary_writer  # USE_DEFAULT-resolved: None, a FileWriter, or "default"
        self._summary_secs = save_summaries_secs
        self._global_step = global_step
        self._graph_added = False
        self._last_summary = None
        self._last_step = None

    @property
    def summary_writer(self):
        if self._writer == "default":
            from graphflow.tf1.summary.writer import FileWriter
            self._writer = FileWriter(self._logdir)
        return self._writer

    def _step(self, session):
        if self._global_step is None:
            return 0
        return int(session.run(self._global_step))

    # ---------------------------------------------------------------- the graph
    def write_graph(self):
        """graph.pbtxt, and the graph and meta graph in the events file (once)."""
        graph_def, skipped = self._graph._writable_graph_def(add_shapes=True)
        if skipped:
            warnings.warn(f"Supervisor: {len(skipped)} op(s) have no TensorFlow GraphDef form and "
                          f"are left out of {GRAPH_FILE} and the events file's graph: "
                          f"{_describe(skipped)}", stacklevel=4)
        with file_io.atomic_write(os.path.join(self._logdir, GRAPH_FILE)) as f:
            f.write(text_format.MessageToString(graph_def).encode("utf-8"))
        writer = self.summary_writer
        if writer is None or self._graph_added:
            return
        writer.add_graph(None, graph_def=graph_def)
        if not skipped:
            writer.add_meta_graph(self._meta_graph_def())
        self._graph_added = True

    def _meta_graph_def(self):
        from graphflow.fileformat.tf_meta_graph import meta_graph_def
        saver = self._saver
        pairs = [(s.key, s.op) for s in saver._saveables] if saver is not None else None
        return meta_graph_def(self._graph, saver=pairs)

    # ---------------------------------------------------------------- the events
    def start(self, session):
        """SessionLog START at the global step; the summaries once."""
        writer = self.summary_writer
        if writer is None:
            return
        from graphflow.tf1.summary.writer import session_log
        step = self._step(session)
        writer.add_session_log(session_log("START"), step)
        self._last_step, self._last_summary = step, time.time()
        if self._summary_op is not None and self._summary_secs:
            writer.add_summary(session.run(self._summary_op), step)

    def maybe_summaries(self, session):
        """The summaries and global_step/sec, when `save_summaries_secs` have elapsed."""
        writer = self.summary_writer
        if (writer is None or not self._summary_secs or self._last_summary is None
                or time.time() - self._last_summary < self._summary_secs):
            return
        now, step = time.time(), self._step(session)
        if self._global_step is not None:
            rate = (step - self._last_step) / max(now - self._last_summary, 1e-9)
            writer.add_summary(_scalar_summary("global_step/sec", rate), step)
        if self._summary_op is not None:
            writer.add_summary(session.run(self._summary_op), step)
        self._last_step, self._last_summary = step, now

    def checkpoint(self, path, step):
        writer = self.summary_writer
        if writer is not None:
            from graphflow.tf1.summary.writer import session_log
            writer.add_session_log(session_log("CHECKPOINT", path), step)

    def stop(self, close_summary_writer=True):
        writer = self.summary_writer if self._graph_added else None
        if writer is None:
            return
        from graphflow.tf1.summary.writer import session_log
        writer.add_session_log(session_log("STOP"))
        writer.flush()
        if close_summary_writer:
            writer.close()


def _scalar_summary(tag, value):
    from graphflow.fileformat.summary_encoding import protos
    summary = protos().summary_pb2.Summary()
    summary.value.add(tag=tag, simple_value=float(value))
    return summary
