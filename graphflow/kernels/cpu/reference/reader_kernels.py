"""CPU kernels of the reader ops (`graphflow.ops.reader_ops`) and the reader resource.

A session keeps one `ReaderResource` per reader (`SessionState.resource`): the file it is reading
(a generator of (key, value) records) and its counts. `read` takes the reader's lock, so runs on
several threads (TF1's `num_threads` preprocessing threads share one reader) each get a different
record; when the current file ends the reader dequeues the next file name from the queue (waiting
on the queue, which `Session.close` interrupts). Readers are not transactional (as in TF1): a record
read by a run that later fails is consumed.
"""

import os
import threading

import numpy as np

from graphflow.framework.errors import NotFoundError, OutOfRangeError
from graphflow.kernels.cpu import cpu_kernel


def _string(data):
    out = np.empty((), dtype=object)
    out[()] = data
    return out


def _open(path):
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{path}; No such file or directory") from None


def _whole_file(path, attrs):
    with _open(path) as f:
        yield path.encode(), f.read()


def _text_lines(path, attrs):
    skip = attrs["skip_header_lines"]
    with _open(path) as f:
        for number, line in enumerate(f, start=1):
            if number <= skip:
                continue
            if line.endswith(b"\n"):
                line = line[:-1]
                if line.endswith(b"\r"):
                    line = line[:-1]
            yield f"{path}:{number}".encode(), line


def _fixed_length(path, attrs):
    record, header, footer = attrs["record_bytes"], attrs["header_bytes"], attrs["footer_bytes"]
    hop = attrs["hop_bytes"] or record
    with _open(path) as f:
        data = f.read()
    end = len(data) - footer
    index, start = 0, header
    while start + record <= end:
        yield f"{path}:{index}".encode(), data[start:start + record]
        index += 1
        start += hop


def _tf_records(path, attrs):
    from graphflow.fileformat import tfrecord  # the TFRecord reading code tf.data uses (see the module)
    offset = 0
    for data in tfrecord.read_records(path, attrs["compression_type"]):
        yield f"{path}:{offset}".encode(), data
        offset += len(data) + 16


class ReaderResource:
    """One reader of a session: `records(path, attrs)` makes a file's (key, value) generator."""

    def __init__(self, records, attrs):
        self._records, self._attrs = records, attrs
        self._lock = threading.Lock()
        self._current = None
        self.produced = 0
        self.completed = 0

    def _next_file(self, queue):
        name = queue.dequeue()[0]
        name = np.asarray(name, dtype=object).item()
        path = os.fsdecode(name)
        self._current = self._records(path, self._attrs)

    def read(self, queue, limit):
        """Up to `limit` records (at least one, else OutOfRangeError from the queue)."""
        keys, values = [], []
        with self._lock:
            while len(keys) < limit:
                if self._current is None:
                    try:
                        self._next_file(queue)
                    except OutOfRangeError:
                        if keys:
                            break
                        raise
                record = next(self._current, None)
                if record is None:
                    self._current = None
                    self.completed += 1
                    continue
                keys.append(record[0])
                values.append(record[1])
            self.produced += len(keys)
        return keys, values

    def reset(self):
        with self._lock:
            current, self._current = self._current, None
            self.produced = self.completed = 0
        if current is not None:
            current.close()

    def close(self):
        self.reset()


_RECORDS = {"WholeFileReaderV2": _whole_file, "TextLineReaderV2": _text_lines,
            "FixedLengthRecordReaderV2": _fixed_length, "TFRecordReaderV2": _tf_records}


def _reader_builder(records):
    def build(node):
        attrs = node.attrs
        reader = node.state.resource(("reader", attrs["shared_name"]),
                                     lambda: ReaderResource(records, attrs))
        return lambda: reader
    return build


for _op_type, _records in _RECORDS.items():
    cpu_kernel(_op_type)(_reader_builder(_records))


@cpu_kernel("ReaderReadV2")
def _read(node):
    def reader_read(reader, queue):
        keys, values = reader.read(queue, 1)
        return _string(keys[0]), _string(values[0])
    return reader_read


@cpu_kernel("ReaderReadUpToV2")
def _read_up_to(node):
    def reader_read_up_to(reader, queue, num_records):
        n = int(num_records)
        if n <= 0:
            raise ValueError(f"read_up_to: num_records must be positive, got {n}")
        keys, values = reader.read(queue, n)
        return np.array(keys, dtype=object), np.array(values, dtype=object)
    return reader_read_up_to


@cpu_kernel("ReaderNumRecordsProducedV2")
def _num_records(node):
    return lambda reader: np.asarray(reader.produced, dtype=np.int64)


@cpu_kernel("ReaderNumWorkUnitsCompletedV2")
def _num_work_units(node):
    return lambda reader: np.asarray(reader.completed, dtype=np.int64)


@cpu_kernel("ReaderResetV2")
def _reset(node):
    return lambda reader: reader.reset()
