"""File-reading dataset sources: `tf.data.TFRecordDataset` and `tf.data.TextLineDataset`.

`TextLineDataset(filenames, compression_type=None, buffer_size=None, num_parallel_reads=None)`
yields each line of each text file as a scalar string without its line ending ("\n" or "\r\n"),
files in order, with the same `filenames` and compression forms as TFRecordDataset.

`TFRecordDataset(filenames, compression_type=None, buffer_size=None, num_parallel_reads=None)`
yields each record of each file as a scalar string, files in order; with `num_parallel_reads=k`
it reads k files at a time and takes one record from each in turn (a file that ends hands its turn
to the next file; the order can differ from TF's parallel interleave once files end). `filenames`
is a string, a list of strings, a string Tensor (scalar or vector, read when the pipeline starts)
or a Dataset of scalar strings. Records are checked as `fileformat/tfrecord.py` describes: a corrupt or
truncated file raises `tf.errors.DataLossError` from `get_next`.
"""

import numpy as np

from graphflow.fileformat import tfrecord
from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import core_ops
from graphflow.tf1.data.dataset import Dataset
from graphflow.tf1.data.nest import ComponentSpec


def _filenames(filenames):
    if isinstance(filenames, Dataset):
        spec = filenames.element_spec
        if not isinstance(spec, ComponentSpec) or spec.dtype != dtypes.string or \
                spec.shape.ndims not in (None, 0):
            raise TypeError(f"TFRecordDataset: a Dataset of filenames must have scalar string "
                            f"elements, got {filenames!r}")
        return filenames
    if isinstance(filenames, Tensor) or core_ops._contains_tensor(filenames):
        tensor = core_ops.convert_to_tensor(filenames, dtype=dtypes.string)
        if tensor.shape.ndims not in (None, 0, 1):
            raise ValueError(f"TFRecordDataset: filenames must be a scalar or a vector, got "
                             f"shape {tensor.shape}")
        return tensor
    if isinstance(filenames, (str, bytes)):
        return [filenames]
    names = list(np.asarray(filenames, dtype=object).reshape(-1))
    if not all(isinstance(n, (str, bytes)) for n in names):
        raise TypeError(f"TFRecordDataset: filenames must be strings, got {filenames!r}")
    return names


def _string_scalar(data):
    out = np.empty((), dtype=object)
    out[()] = data
    return out


class TFRecordDataset(Dataset):
    """`tf.data.TFRecordDataset`: the records of TFRecord files, as scalar strings."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None):
        self._filenames = _filenames(filenames)
        if isinstance(compression_type, Tensor):
            raise TypeError("TFRecordDataset: compression_type must be a Python string here "
                            "(None, '', 'ZLIB' or 'GZIP')")
        self._compression = tfrecord.compression_name(compression_type)
        if buffer_size is not None and not isinstance(buffer_size, Tensor) and int(buffer_size) < 0:
            raise ValueError(f"TFRecordDataset: buffer_size must be >= 0, got {buffer_size}")
        self._cycle = 1 if num_parallel_reads is None else int(num_parallel_reads)
        if self._cycle < 1:
            raise ValueError(f"TFRecordDataset: num_parallel_reads must be >= 1, got "
                             f"{num_parallel_reads}")
        from_dataset = isinstance(self._filenames, Dataset)
        super().__init__(ComponentSpec(dtypes.string, TensorShape([])),
                         inputs=[self._filenames] if from_dataset else (),
                         captures=[self._filenames] if isinstance(self._filenames, Tensor) else ())

    def _names(self, ctx):
        if isinstance(self._filenames, Dataset):
            upstream = self._filenames._iterate(ctx)
            try:
                for (name,) in upstream:
                    yield np.asarray(name, dtype=object)[()]
            finally:
                upstream.close()
            return
        yield from np.asarray(ctx.value(self._filenames), dtype=object).reshape(-1)

    def _iterate(self, ctx):
        pending = self._names(ctx)
        active = []
        while True:
            while len(active) < self._cycle:
                name = next(pending, None)
                if name is None:
                    break
                active.append(self._read(name))
            if not active:
                return
            for reader in list(active):
                record = next(reader, None)
                if record is None:
                    active.remove(reader)
                    continue
                yield (_string_scalar(record),)

    def _read(self, name):
        return tfrecord.read_records(name, self._compression)


class TextLineDataset(TFRecordDataset):
    """`tf.data.TextLineDataset`: the lines of text files, as scalar strings."""

    def _read(self, name):
        return _read_lines(name, self._compression)


def _read_lines(path, compression):
    f, source = tfrecord.open_source(path, compression)
    with f:
        pending = b""
        while True:
            chunk = source.read(1 << 20)
            if not chunk:
                break
            pending += chunk
            lines = pending.split(b"\n")
            pending = lines.pop()
            for line in lines:
                yield line[:-1] if line.endswith(b"\r") else line
        if pending:
            yield pending[:-1] if pending.endswith(b"\r") else pending
