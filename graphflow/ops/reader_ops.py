"""TF1's readers: `tf.WholeFileReader`, `tf.TextLineReader`, `tf.FixedLengthRecordReader` and
`tf.TFRecordReader`, which read records of the files whose names they dequeue from a queue.

A reader is a session resource (`kernels/cpu/reference/reader_kernels.py`) made by its creation op
(`WholeFileReaderV2`, `TextLineReaderV2`, `FixedLengthRecordReaderV2`, `TFRecordReaderV2`, output:
the reader's handle, a `variant` scalar). `ReaderReadV2(reader, queue)` returns the next record as
(key, value) scalar strings, dequeuing the next file name from `queue` when the current file ends
(past the last file: OutOfRangeError, from the queue); `ReaderReadUpToV2` returns up to
`num_records` of them as two vectors. Keys are TF1's: the file name for a whole file,
"name:line" for a line (counted from 1, header lines included), "name:index" for a fixed-length
record (from 0) and "name:offset" for a TFRecord (the record's byte offset).
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import get_default_graph
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_op, no_gradient


def _handle_infer(inputs, attrs):
    return [(dtypes.variant, TensorShape([]))]


def _require_handles(inputs, count):
    for t in inputs[:count]:
        if t.dtype != dtypes.variant:
            raise TypeError(f"a reader op takes a reader handle and a queue handle (variant), got "
                            f"{t.name} of dtype {t.dtype.name}")


def _read_infer(inputs, attrs):
    _require_handles(inputs, 2)
    return [(dtypes.string, TensorShape([])), (dtypes.string, TensorShape([]))]


def _read_up_to_infer(inputs, attrs):
    _require_handles(inputs, 2)
    n = inputs[2]
    if not n.dtype.is_integer or n.shape.ndims not in (None, 0):
        raise TypeError(f"num_records must be an integer scalar, got {n.dtype.name} {n.shape}")
    return [(dtypes.string, TensorShape([None])), (dtypes.string, TensorShape([None]))]


def _count_infer(inputs, attrs):
    _require_handles(inputs, 1)
    return [(dtypes.int64, TensorShape([]))]


def _reset_infer(inputs, attrs):
    _require_handles(inputs, 1)
    return []


# schedule="early" (as the queue ops): a run reads its record before it touches any variable.
# touches="files": a reader opens the files named by its queue (its creation op says how it reads
# them, its read ops open them); counting and resetting open nothing.
_EARLY = {"stateful": True, "schedule": "early"}
_READS = {**_EARLY, "touches": "files"}
define("WholeFileReaderV2", _handle_infer, attrs="shared_name:string", **_READS, onnx=no_onnx.QUEUE)
define("TextLineReaderV2", _handle_infer, attrs="shared_name:string skip_header_lines:int>=0",
       **_READS, onnx=no_onnx.QUEUE)
define("FixedLengthRecordReaderV2", _handle_infer, **_READS,
       attrs="shared_name:string record_bytes:int>=1 header_bytes:int>=0 footer_bytes:int>=0 "
             "hop_bytes:int>=0 encoding:string", onnx=no_onnx.QUEUE)
define("TFRecordReaderV2", _handle_infer, attrs="shared_name:string compression_type:string",
       **_READS, onnx=no_onnx.QUEUE)
define("ReaderReadV2", _read_infer, **_READS, onnx=no_onnx.QUEUE)
define("ReaderReadUpToV2", _read_up_to_infer, value_dependent_shape=True, **_READS,
       onnx=no_onnx.QUEUE)
define("ReaderNumRecordsProducedV2", _count_infer, stateful=True, onnx=no_onnx.QUEUE)
define("ReaderNumWorkUnitsCompletedV2", _count_infer, stateful=True, onnx=no_onnx.QUEUE)
define("ReaderResetV2", _reset_infer, stateful=True, onnx=no_onnx.QUEUE)
no_gradient("WholeFileReaderV2", "TextLineReaderV2", "FixedLengthRecordReaderV2",
            "TFRecordReaderV2", "ReaderReadV2", "ReaderReadUpToV2", "ReaderNumRecordsProducedV2",
            "ReaderNumWorkUnitsCompletedV2")


def _queue_ref(queue):
    return queue.queue_ref if hasattr(queue, "queue_ref") else queue


class ReaderBase:
    """`tf.ReaderBase`: `read(queue)`, `read_up_to(queue, num_records)`, `num_records_produced()`,
    `num_work_units_completed()`, `reset()`; `reader_ref` is the reader's handle."""

    _create_type = None

    def __init__(self, name, attrs):
        graph = get_default_graph()
        with graph.control_dependencies(None):
            op_name = graph.unique_name(name or self._create_type)
            attrs = dict(attrs, shared_name=op_name)
            self._reader_op = make_op(self._create_type, (), attrs, name=op_name + "/")
        self._reader_ref = self._reader_op.outputs[0]

    reader_ref = property(lambda self: self._reader_ref)
    supports_serialize = False

    def read(self, queue, name=None):
        """(key, value): the next record, from the next file of `queue` when this one ends."""
        op = make_op("ReaderReadV2", (self._reader_ref, _queue_ref(queue)),
                     name=name or "ReaderReadV2")
        return op.outputs[0], op.outputs[1]

    def read_up_to(self, queue, num_records, name=None):
        """(keys, values): up to `num_records` records, as vectors (fewer at the end)."""
        n = convert_to_tensor(num_records, dtype=dtypes.int64, name="num_records")
        op = make_op("ReaderReadUpToV2", (self._reader_ref, _queue_ref(queue), n),
                     name=name or "ReaderReadUpToV2")
        return op.outputs[0], op.outputs[1]

    def num_records_produced(self, name=None):
        return make_op("ReaderNumRecordsProducedV2", (self._reader_ref,),
                       name=name or "ReaderNumRecordsProducedV2").outputs[0]

    def num_work_units_completed(self, name=None):
        return make_op("ReaderNumWorkUnitsCompletedV2", (self._reader_ref,),
                       name=name or "ReaderNumWorkUnitsCompletedV2").outputs[0]

    def reset(self, name=None):
        return make_op("ReaderResetV2", (self._reader_ref,), name=name or "ReaderResetV2")


class WholeFileReader(ReaderBase):
    """`tf.WholeFileReader()`: each file is one record (key: the file name)."""

    _create_type = "WholeFileReaderV2"

    def __init__(self, name=None):
        super().__init__(name, {})


class TextLineReader(ReaderBase):
    """`tf.TextLineReader(skip_header_lines=None)`: each line is one record, without its line
    ending; the first `skip_header_lines` lines of each file are skipped."""

    _create_type = "TextLineReaderV2"

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(name, {"skip_header_lines": int(skip_header_lines or 0)})


class FixedLengthRecordReader(ReaderBase):
    """`tf.FixedLengthRecordReader(record_bytes, header_bytes=None, footer_bytes=None,
    hop_bytes=None)`: records of `record_bytes` bytes between a header and a footer (a trailing
    partial record is ignored); `hop_bytes` > 0 starts a record every `hop_bytes` bytes."""

    _create_type = "FixedLengthRecordReaderV2"

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        if encoding:
            raise ValueError("FixedLengthRecordReader: compressed files (encoding) are not "
                             "available; decompress them first")
        super().__init__(name, {"record_bytes": int(record_bytes),
                                "header_bytes": int(header_bytes or 0),
                                "footer_bytes": int(footer_bytes or 0),
                                "hop_bytes": int(hop_bytes or 0), "encoding": ""})


class TFRecordReader(ReaderBase):
    """`tf.TFRecordReader(options=None)`: each record of TFRecord files (checked as
    `tf.data.TFRecordDataset` checks them; compression from `options`)."""

    _create_type = "TFRecordReaderV2"

    def __init__(self, name=None, options=None):
        compression = ""
        if options is not None:
            compression = getattr(options, "compression_type", options)
            compression = {0: "", 1: "ZLIB", 2: "GZIP", None: ""}.get(compression, compression)
        super().__init__(name, {"compression_type": str(compression or "")})


__all__ = ["ReaderBase", "WholeFileReader", "TextLineReader", "FixedLengthRecordReader",
           "TFRecordReader"]
