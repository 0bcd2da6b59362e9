"""`tf.summary`: summary ops (graph ops producing serialized TensorBoard `Summary` protos) and
`FileWriter`, which writes TensorBoard event files with the `tensorboard` package's own protos and
record writer (install with `pip install 'graphflow[summary]'`).

    loss_summary = tf.summary.scalar("loss", loss)
    merged = tf.summary.merge_all()
    writer = tf.summary.FileWriter("logs/run1", sess.graph)
    writer.add_summary(sess.run(merged, feed), global_step=step)
"""

from graphflow.tf1.summary.summary_ops import audio, histogram, image, merge, merge_all, scalar, text
from graphflow.tf1.summary.writer import FileWriter, FileWriterCache

_SUMMARY_PROTOS = ("Summary", "SummaryMetadata", "SummaryDescription", "HistogramProto")
PROTO_CLASSES = _SUMMARY_PROTOS + ("Event", "SessionLog", "TaggedRunMetadata")


def __getattr__(name):
    """`tf.summary.Summary` (and `tf.Summary`), `SummaryMetadata`, `SummaryDescription`,
    `HistogramProto`, `Event`, `SessionLog`, `TaggedRunMetadata`: TensorBoard's protocol buffer
    classes (imported on first use: tensorboard is an optional dependency)."""
    if name in PROTO_CLASSES:
        from graphflow.fileformat.summary_encoding import protos
        module = protos()
        return getattr(module.summary_pb2 if name in _SUMMARY_PROTOS else module.event_pb2, name)
    raise AttributeError(f"module 'graphflow.summary' has no attribute '{name}'")


__all__ = ["scalar", "histogram", "image", "audio", "text", "merge", "merge_all", "FileWriter",
           "FileWriterCache", *PROTO_CLASSES]
