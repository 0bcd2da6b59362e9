"""TFRecord files: `tf.python_io.TFRecordWriter` / `tf.io.TFRecordWriter`,
`tf.python_io.tf_record_iterator`, `TFRecordOptions`, `TFRecordCompressionType`, and the record
reader `tf.data.TFRecordDataset` runs on.

The format is TensorFlow's, byte for byte: each record is its length (uint64, little-endian), the
masked CRC-32C of those 8 bytes (uint32), the data, and the masked CRC-32C of the data; the whole
file may be a GZIP or ZLIB stream. CRC-32C comes from the `google-crc32c` package (C, with
`pip install 'graphflow[records]'`), else from a table-driven Python fallback that is correct but
slow (about 10 MB/s).

Files are untrusted input. A record's length is believed only once its CRC matches, and only if
it is at most `MAX_RECORD_BYTES` and the file can still hold it: a plain file must have that many
bytes left; a compressed one must have enough compressed bytes left to inflate to it (deflate
expands at most `MAX_INFLATE_RATIO`:1). The record is then read a bounded chunk at a time (its
CRC computed as it comes), so it never holds more than the bytes the stream really yields for it,
and a valid record costs at most twice its size. A length over a bound, a CRC mismatch or a file
ending inside a record raises `tf.errors.DataLossError` naming the file and the record's offset,
as TF1 does.
"""

import os
import struct
import zlib

from graphflow.framework.errors import DataLossError, NotFoundError

_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")
_MASK_DELTA = 0xA282EAD8
_CHUNK = 1 << 22  # compressed streams are read at most this many bytes at a time
_BLOCK = 1 << 20  # records are cut from blocks of at least this many bytes
MAX_RECORD_BYTES = 1 << 31  # a longer record is refused (a protobuf message is under 2 GiB)
MAX_INFLATE_RATIO = 1032  # zlib's bound on deflate's expansion (its technical FAQ)


# ------------------------------------------------------------------ CRC-32C
def _python_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = None


def _crc32c_python(data, crc=0):
    global _TABLE
    if _TABLE is None:
        _TABLE = _python_table()
    table, crc = _TABLE, crc ^ 0xFFFFFFFF
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


try:
    import google_crc32c as _google_crc32c
except ImportError:  # the optional compiled implementation is not installed
    _google_crc32c = None

CRC32C_IMPLEMENTATION = ("google-crc32c" if _google_crc32c is not None
                         and _google_crc32c.implementation == "c" else "python")


if CRC32C_IMPLEMENTATION == "google-crc32c":
    _crc32c_bytes = _google_crc32c.value
else:
    _crc32c_bytes = _crc32c_python


def crc32c(data):
    """The CRC-32C (Castagnoli) of `data` (bytes-like), as an int."""
    return _crc32c_bytes(data if isinstance(data, bytes) else bytes(data))


def masked_crc32c(data):
    """TFRecord's masked CRC: rotate the CRC-32C right by 15 bits and add a constant."""
    return mask_crc32c(_crc32c_bytes(data if isinstance(data, bytes) else bytes(data)))


def mask_crc32c(crc):
    """The masked form of a CRC-32C value (what TensorFlow's files store)."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def crc32c_extend(crc, data):
    """The CRC-32C of the bytes before (whose CRC is `crc`; 0 for none) followed by `data`:
    bytes, or a C-contiguous numpy array, whose memory is read in place (no copy) by
    google-crc32c."""
    if _google_crc32c is not None and _crc32c_bytes is _google_crc32c.value:
        if not isinstance(data, bytes) and type(data).__name__ != "ndarray":
            data = bytes(data)
        return _google_crc32c.extend(crc, data)
    view = memoryview(data)
    return _crc32c_python(view.cast("B") if view.format != "B" or view.ndim != 1 else view, crc)


# ------------------------------------------------------------------ options
class TFRecordCompressionType:
    """`tf.python_io.TFRecordCompressionType`."""
    NONE = 0
    ZLIB = 1
    GZIP = 2


_NAMES = {TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
          TFRecordCompressionType.GZIP: "GZIP"}


def compression_name(compression):
    """'' / 'ZLIB' / 'GZIP' from None, a string, a TFRecordCompressionType or TFRecordOptions."""
    if isinstance(compression, TFRecordOptions):
        return compression.get_compression_type_string(compression)
    if compression is None:
        return ""
    if isinstance(compression, bytes):
        compression = compression.decode()
    if isinstance(compression, str):
        if compression.upper() in ("", "NONE", "ZLIB", "GZIP"):
            return "" if compression.upper() == "NONE" else compression.upper()
    elif compression in _NAMES:
        return _NAMES[compression]
    raise ValueError(f"compression_type must be None, '', 'ZLIB' or 'GZIP', got {compression!r}")


class TFRecordOptions:
    """`tf.python_io.TFRecordOptions(compression_type, compression_level=...)`: how a TFRecord file
    is compressed (TF1's other zlib tuning arguments are accepted and do not change the format)."""

    compression_type_map = {"": TFRecordCompressionType.NONE, "ZLIB": TFRecordCompressionType.ZLIB,
                            "GZIP": TFRecordCompressionType.GZIP}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        self.compression_type = compression_name(compression_type)
        self.compression_level = -1 if compression_level is None else int(compression_level)
        if not -1 <= self.compression_level <= 9:
            raise ValueError(f"compression_level must be in [-1, 9], got {compression_level}")

    @classmethod
    def get_compression_type_string(cls, options):
        if options is None:
            return ""
        if isinstance(options, TFRecordOptions):
            return options.compression_type
        return compression_name(options)


def _options(options):
    if isinstance(options, TFRecordOptions):
        return options
    return TFRecordOptions(compression_name(options))


_WBITS = {"ZLIB": zlib.MAX_WBITS, "GZIP": 16 + zlib.MAX_WBITS}


# ------------------------------------------------------------------ writing
def encode_record(data):
    """One record's bytes: length, masked CRC of the length, data, masked CRC of the data."""
    header = _U64.pack(len(data))
    return header + _U32.pack(masked_crc32c(header)) + data + _U32.pack(masked_crc32c(data))


class TFRecordWriter:
    """`tf.python_io.TFRecordWriter(path, options=None)` / `tf.io.TFRecordWriter`: `write(record)`
    appends one record (bytes); `flush()`, `close()`; a context manager."""

    def __init__(self, path, options=None):
        options = _options(options)
        self._path = os.fspath(path)
        self._file = open(self._path, "wb")
        self._compressor = None
        if options.compression_type:
            self._compressor = zlib.compressobj(options.compression_level, zlib.DEFLATED,
                                                _WBITS[options.compression_type])

    def write(self, record):
        if self._file is None:
            raise ValueError(f"TFRecordWriter for {self._path} is closed")
        if isinstance(record, str):
            record = record.encode("utf-8")
        if not isinstance(record, (bytes, bytearray, memoryview)):
            raise TypeError(f"TFRecordWriter.write takes bytes, got {type(record).__name__}")
        data = encode_record(bytes(record))
        self._file.write(self._compressor.compress(data) if self._compressor else data)

    def flush(self):
        if self._compressor is not None:
            self._file.write(self._compressor.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self):
        if self._file is None:
            return
        if self._compressor is not None:
            self._file.write(self._compressor.flush(zlib.Z_FINISH))
        self._file.close()
        self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing more can be done
            pass


# ------------------------------------------------------------------ reading
class _RawSource:
    """An uncompressed file: reads bounded by the bytes the file still holds."""

    def __init__(self, f):
        self._f = f
        self._remaining = os.fstat(f.fileno()).st_size

    def read(self, n):
        data = self._f.read(n if n <= self._remaining else max(0, self._remaining))
        self._remaining -= len(data)
        return data

    def most_left(self):
        """The most bytes reads can still return."""
        return max(0, self._remaining)


class _InflateSource:
    """A GZIP or ZLIB stream, inflated a bounded chunk at a time (a small stream that inflates to
    gigabytes is never inflated further than the bytes a valid record asks for)."""

    def __init__(self, f, compression, path):
        self._f, self._path = f, path
        self._d = zlib.decompressobj(_WBITS[compression])
        self._buffer = bytearray()
        self._eof = False
        self._size = os.fstat(f.fileno()).st_size

    def most_left(self):
        """The most bytes reads can still return: what is inflated, plus the compressed bytes
        not yet inflated times deflate's largest expansion."""
        if self._eof:
            return len(self._buffer)
        compressed = max(0, self._size - self._f.tell()) + len(self._d.unconsumed_tail)
        return len(self._buffer) + MAX_INFLATE_RATIO * compressed + _CHUNK

    def read(self, n):
        while len(self._buffer) < n and not self._eof:
            pending = self._d.unconsumed_tail or self._f.read(_CHUNK)
            if not pending:  # (what inflate still holds: a few bytes of a match at most)
                try:
                    self._buffer += self._d.flush()
                except zlib.error:
                    pass
                self._eof = True  # a stream cut short: the record reader reports the truncation
                break
            try:  # (inflating no more than asked for: the buffer stays within n + _CHUNK)
                self._buffer += self._d.decompress(pending, min(_CHUNK, max(1, n - len(
                    self._buffer))))
            except zlib.error as exc:
                raise DataLossError(None, None, f"{self._path}: the compressed stream is "
                                    f"corrupt ({exc})") from None
            self._eof = self._d.eof
        out = bytes(self._buffer[:n])
        del self._buffer[:n]
        return out


def open_source(path, compression):
    """(the open file, a source of its bytes decompressed as `compression` says); NotFoundError
    when the file does not exist (TextLineDataset reads through this too)."""
    return _open_source(os.fsdecode(path), compression_name(compression))


def _open_source(path, compression):
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{path}; No such file or directory") from None
    return f, (_InflateSource(f, compression, path) if compression else _RawSource(f))


class _Blocks:
    """Bytes of a source served from blocks of about _BLOCK bytes (few reads for small records)."""

    def __init__(self, source):
        self._source = source
        self.buf, self.pos = b"", 0

    def most_left(self):
        return len(self.buf) - self.pos + self._source.most_left()

    def take(self, n):
        """Up to n bytes, read a block at a time; yields the pieces as they come (fewer than n
        bytes in all when the source ends first)."""
        left = n
        if self.pos < len(self.buf):
            piece = self.buf[self.pos:self.pos + left]
            self.pos += len(piece)
            left -= len(piece)
            yield piece
        while left:
            piece = self._source.read(min(left, _BLOCK))
            if not piece:
                return
            left -= len(piece)
            yield piece

    def fill(self, n):
        """Make n bytes available from `pos` if the source has them; True when it did."""
        avail = len(self.buf) - self.pos
        if avail >= n:
            return True
        parts = [self.buf[self.pos:]]
        while avail < n:
            chunk = self._source.read(max(n - avail, _BLOCK))
            if not chunk:
                break
            parts.append(chunk)
            avail += len(chunk)
        self.buf, self.pos = b"".join(parts), 0
        return avail >= n


def read_records(path, compression_type=None):
    """Yield the records of the TFRecord file `path` (bytes each), checking every length and CRC."""
    path = os.fsdecode(path)
    compression = compression_name(compression_type)
    f, source = _open_source(path, compression)
    blocks, offset = _Blocks(source), 0
    with f:
        while True:
            if not blocks.fill(12):
                left = len(blocks.buf) - blocks.pos
                if left == 0:
                    return
                raise DataLossError(None, None, f"{path}: truncated record at {offset} (the "
                                    f"file ends {left} bytes into the record's header)")
            buf, pos = blocks.buf, blocks.pos
            length, length_crc = _U64.unpack_from(buf, pos)[0], _U32.unpack_from(buf, pos + 8)[0]
            if masked_crc32c(buf[pos:pos + 8]) != length_crc:
                raise DataLossError(None, None, f"{path}: corrupted record at {offset} (the "
                                    "length's CRC does not match)")
            if length + 16 > blocks.most_left():
                raise DataLossError(None, None, f"{path}: truncated record at {offset} (a "
                                    f"record of {length} bytes, but the file cannot hold it)")
            if length > MAX_RECORD_BYTES:
                raise DataLossError(None, None, f"{path}: corrupted record at {offset} (a record "
                                    f"of {length} bytes, more than the {MAX_RECORD_BYTES} allowed)")
            if length <= _BLOCK:
                data = _small_record(blocks, length, path, offset)
            else:
                blocks.pos += 12
                data = _large_record(blocks, length, path, offset)
            offset += length + 16
            yield data


def _small_record(blocks, length, path, offset):
    """A record of at most _BLOCK bytes, cut from the block (its header checked)."""
    if not blocks.fill(length + 16):
        raise DataLossError(None, None, f"{path}: truncated record at {offset} (a record of "
                            f"{length} bytes, but the file ends before it does)")
    buf, start = blocks.buf, blocks.pos + 12
    data = buf[start:start + length]
    if masked_crc32c(data) != _U32.unpack_from(buf, start + length)[0]:
        raise DataLossError(None, None, f"{path}: corrupted record at {offset} (the data's CRC "
                            "does not match)")
    blocks.pos = start + length + 4
    return data


def _large_record(blocks, length, path, offset):
    """A record read a block at a time after its header, its CRC computed as it comes: only
    the bytes the file really holds for it are ever held."""
    pieces, crc, got = [], 0, 0
    for piece in blocks.take(length):
        crc = crc32c_extend(crc, piece)
        got += len(piece)
        pieces.append(piece)
    stored = b"".join(blocks.take(4)) if got == length else b""
    if len(stored) < 4:
        raise DataLossError(None, None, f"{path}: truncated record at {offset} (a record of "
                            f"{length} bytes, but the file ends before it does)")
    if mask_crc32c(crc) != _U32.unpack(stored)[0]:
        raise DataLossError(None, None, f"{path}: corrupted record at {offset} (the data's CRC "
                            "does not match)")
    return b"".join(pieces)


def tf_record_iterator(path, options=None):
    """`tf.python_io.tf_record_iterator(path, options=None)`: the records of a TFRecord file."""
    return read_records(path, TFRecordOptions.get_compression_type_string(options))


__all__ = ["TFRecordWriter", "tf_record_iterator", "TFRecordOptions", "TFRecordCompressionType"]
