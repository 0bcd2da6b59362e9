"""`tf.summary.FileWriter` and `FileWriterCache`: TensorBoard event files in a log directory,
written by the `tensorboard` package's own `EventFileWriter` (its TFRecord framing with CRCs, a
background thread flushing every `flush_secs`).
"""

import threading
import time

import numpy as np

from graphflow.fileformat.summary_encoding import protos
from graphflow.tf1.summary.graph_def import graph_def as to_graph_def


def _event_file_writer(logdir, max_queue, flush_secs, filename_suffix):
    protos()  # the clear "install tensorboard" message when it is missing
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
    return EventFileWriter(logdir, max_queue_size=max_queue, flush_secs=flush_secs,
                           filename_suffix=filename_suffix or "")


def _as_summary(summary):
    """A `Summary` proto from what `sess.run(summary_op)` returns (bytes or a scalar string
    array) or from a `Summary` proto."""
    summary_pb2 = protos().summary_pb2
    if isinstance(summary, summary_pb2.Summary):
        return summary
    if isinstance(summary, np.ndarray):
        if summary.shape != ():
            raise ValueError(f"add_summary needs one serialized Summary, got an array of shape "
                             f"{summary.shape}")
        summary = summary[()]
    if isinstance(summary, (bytes, np.bytes_)):
        return summary_pb2.Summary.FromString(bytes(summary))
    raise TypeError(f"add_summary takes a serialized Summary (the value of a tf.summary op) or a "
                    f"Summary proto, got {type(summary).__name__}")


def session_log(status, checkpoint_path=""):
    """A `SessionLog` event proto: status "START", "STOP" or "CHECKPOINT"."""
    proto = protos().event_pb2.SessionLog
    return proto(status=getattr(proto, status), checkpoint_path=checkpoint_path)


class FileWriter:
    """`tf.summary.FileWriter(logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
    filename_suffix=None, session=None)`: creates `logdir` and an event file in it; `graph` (or
    `graph_def`) is written at once for TensorBoard's Graphs tab."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if session is not None:
            raise NotImplementedError("FileWriter(session=...) (TF's summary-writer resources) is "
                                      "not supported; pass a logdir")
        self._logdir = str(logdir)
        self._options = (max_queue, flush_secs, filename_suffix)
        self._writer = _event_file_writer(self._logdir, *self._options)
        self._closed = False
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def get_logdir(self):
        return self._logdir

    def add_event(self, event):
        """Write one `Event` proto as it is."""
        if self._closed:
            raise RuntimeError(f"FileWriter for {self._logdir} is closed; call reopen() first")
        self._writer.add_event(event)

    def _add(self, global_step, **fields):
        event = protos().event_pb2.Event(wall_time=time.time(), **fields)
        if global_step is not None:
            event.step = int(global_step)
        self.add_event(event)

    def add_summary(self, summary, global_step=None):
        """Write the value of a summary op (or a `Summary` proto) at `global_step`."""
        self._add(global_step, summary=_as_summary(summary))

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Write `graph` (a graphflow Graph) or a `GraphDef` proto for the Graphs tab."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph or graph_def, not both")
        if graph is not None:
            graph_def = to_graph_def(graph)
        if graph_def is None:
            raise ValueError("add_graph needs a graph or a graph_def")
        self._add(global_step, graph_def=graph_def.SerializeToString())

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Write a traced run's step stats (`tf.RunMetadata` after a FULL_TRACE run) under `tag`:
        TensorBoard's Graphs tab then offers this run and colors ops by compute time."""
        proto = protos()
        from tensorboard.compat.proto import config_pb2
        meta = config_pb2.RunMetadata()
        for dev_stats in run_metadata.step_stats.dev_stats:
            device = meta.step_stats.dev_stats.add(device=dev_stats.device)
            for node in dev_stats.node_stats:
                device.node_stats.add(
                    node_name=node.node_name, all_start_micros=node.all_start_micros,
                    op_start_rel_micros=node.op_start_rel_micros,
                    op_end_rel_micros=node.op_end_rel_micros,
                    all_end_rel_micros=node.all_end_rel_micros,
                    timeline_label=node.timeline_label, thread_id=node.thread_id)
        tagged = proto.event_pb2.TaggedRunMetadata(tag=tag, run_metadata=meta.SerializeToString())
        self._add(global_step, tagged_run_metadata=tagged)

    def add_meta_graph(self, meta_graph_def, global_step=None):
        """Write a `MetaGraphDef` proto (TensorBoard reads the graph's collections from it)."""
        self._add(global_step, meta_graph_def=meta_graph_def.SerializeToString())

    def add_session_log(self, session_log, global_step=None):
        self._add(global_step, session_log=session_log)

    def flush(self):
        """Write everything queued to disk now."""
        if not self._closed:
            self._writer.flush()

    def close(self):
        """Flush and close the event file; `reopen()` starts a new one in the same logdir."""
        if not self._closed:
            self._writer.close()
            self._closed = True

    def reopen(self):
        if self._closed:
            self._writer = _event_file_writer(self._logdir, *self._options)
            self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class FileWriterCache:
    """`tf.summary.FileWriterCache`: one shared FileWriter per logdir."""

    _cache = {}
    _lock = threading.Lock()

    @staticmethod
    def get(logdir):
        with FileWriterCache._lock:
            writer = FileWriterCache._cache.get(str(logdir))
            if writer is None:
                writer = FileWriter(logdir)
                FileWriterCache._cache[str(logdir)] = writer
            return writer

    @staticmethod
    def clear():
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache.clear()
