"""Cases for the reader ops (`graphflow/ops/reader_ops.py`): each writes a small file, queues its
name and reads from it within one run. Several files, epochs and threads:
tests/tf1/data/test_readers_queued.py."""

import os
import tempfile

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase

_TEXT = b"header\nfirst line\r\nsecond line\n"
_RECORDS = b"HH" + b"abcdefgh" + b"F"


def _file(name, data):
    path = os.path.join(tempfile.mkdtemp(), name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _read(reader, path, up_to=None):
    """Read from `path`, queued by the same run (`up_to`: the file's number of records, so the
    read needs no other file; a second run reads on, then the file queued again)."""
    names = tf.FIFOQueue(2, [tf.string], shapes=[[]])
    with tf.control_dependencies([names.enqueue([path])]):
        if up_to is None:
            return reader.read(names)
        return reader.read_up_to(names, up_to)


_PATHS = {}


def _path(name, data):
    if name not in _PATHS:
        _PATHS[name] = _file(name, data)
    return _PATHS[name]


def _whole():
    return _read(tf.WholeFileReader(), _path("whole.txt", _TEXT))


def _lines():
    return _read(tf.TextLineReader(skip_header_lines=1), _path("lines.txt", _TEXT))


def _fixed():
    return _read(tf.FixedLengthRecordReader(4, header_bytes=2, footer_bytes=1),
                 _path("fixed.bin", _RECORDS), up_to=2)


def _tf_records():
    path = os.path.join(tempfile.mkdtemp(), "data.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        writer.write(b"one")
        writer.write(b"three")
    _PATHS["tfrecord"] = path
    return _read(tf.TFRecordReader(), path, up_to=2)


def _counts():
    reader = tf.TextLineReader()
    key, _ = _read(reader, _path("lines.txt", _TEXT))
    with tf.control_dependencies([key]):
        return reader.num_records_produced(), reader.num_work_units_completed()


CASES = [
    OpCase("WholeFileReaderV2", _whole, [], lambda: (_PATHS["whole.txt"].encode(), _TEXT),
           grad=False),
    OpCase("ReaderReadV2", _lines, [], lambda: (f"{_PATHS['lines.txt']}:2".encode(),
                                                b"first line"), grad=False),
    OpCase("TextLineReaderV2", _lines, [], lambda: (f"{_PATHS['lines.txt']}:2".encode(),
                                                    b"first line"), grad=False),
    OpCase("FixedLengthRecordReaderV2", _fixed, [], lambda: (
        np.array([f"{_PATHS['fixed.bin']}:0".encode(), f"{_PATHS['fixed.bin']}:1".encode()],
                 dtype=object), np.array([b"abcd", b"efgh"], dtype=object)), grad=False),
    OpCase("ReaderReadUpToV2", _fixed, [], lambda: (
        np.array([f"{_PATHS['fixed.bin']}:0".encode(), f"{_PATHS['fixed.bin']}:1".encode()],
                 dtype=object), np.array([b"abcd", b"efgh"], dtype=object)), grad=False),
    OpCase("TFRecordReaderV2", _tf_records, [], lambda: (
        np.array([f"{_PATHS['tfrecord']}:0".encode(), f"{_PATHS['tfrecord']}:19".encode()],
                 dtype=object), np.array([b"one", b"three"], dtype=object)), grad=False),
    OpCase("ReaderNumRecordsProducedV2", _counts, [], lambda: (np.int64(1), np.int64(0)),
           grad=False),
    OpCase("ReaderNumWorkUnitsCompletedV2", _counts, [], lambda: (np.int64(1), np.int64(0)),
           grad=False),
]
