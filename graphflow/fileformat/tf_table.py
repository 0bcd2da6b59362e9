"""TensorFlow's sorted string table (LevelDB's table format): the `.index` file of a checkpoint.

A table maps byte-string keys, in increasing bytewise order, to byte-string values:

    [data block 0] ... [data block N-1] [metaindex block] [index block] [footer, 48 bytes]

- A block is a run of entries, each `varint32 shared | varint32 unshared | varint32 value length
  | key bytes after the shared prefix | value`, then the restart points (`uint32` offsets of the
  entries whose key is stored whole, one every 16 entries) and their count (`uint32`); a block
  is followed by a 5-byte trailer: its compression type (0: none, 1: snappy) and the masked
  CRC-32C of the block and that type byte.
- The index block has one entry per data block: a key >= every key of the block and < every key
  of the next one, whose value is the block's handle (`varint64 offset | varint64 size`).
- The metaindex block is empty (TensorFlow's tables hold no filters).
- The footer holds the metaindex and index handles, zero padding to 40 bytes, and the magic
  number 0xdb4775248b80fb57 (little-endian).

`write_table` writes uncompressed blocks with TensorFlow's block size and restart interval, and
TensorFlow's shortened index keys, so the same entries give the same bytes as TensorFlow's
`table::TableBuilder`. `read_table` treats the file as hostile: every handle is checked against
the file's size before anything is read, every block's checksum is verified, every entry is
bounded by its block, keys must be strictly increasing, and any fault is a `GraphFormatError`
naming the file and what is wrong. Memory is bounded by the file's size (read once, at most
`max_bytes`). A snappy-compressed block is refused with a clear error: TensorFlow writes
checkpoint indexes uncompressed, and graphflow depends on no snappy package.

Hand-written because no package ships this format without TensorFlow itself.
"""

import os
import struct

from graphflow.fileformat import file_io
from graphflow.fileformat.tfrecord import crc32c_extend, mask_crc32c
from graphflow.framework.errors import GraphFormatError

MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48
BLOCK_TRAILER_SIZE = 5
BLOCK_SIZE = 262144  # TensorFlow's table::Options defaults
RESTART_INTERVAL = 16
NO_COMPRESSION, SNAPPY_COMPRESSION = 0, 1
DEFAULT_MAX_BYTES = 1 << 30

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


# ------------------------------------------------------------------------------------ varints
def put_varint(out, value):
    """Append the varint encoding of the non-negative int `value` to the bytearray `out`."""
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def get_varint(data, pos, limit, max_bits=64):
    """(value, new position) of the varint at `data[pos:limit]`; ValueError if it is cut off or
    longer than `max_bits`."""
    result = shift = 0
    while True:
        if pos >= limit:
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if result >> max_bits:
                raise ValueError("varint overflows")
            return result, pos
        shift += 7
        if shift >= max_bits + 7:
            raise ValueError("varint too long")


# ------------------------------------------------------------------------------------ writing
def _shortest_separator(start, limit):
    """A short key k with start <= k < limit (LevelDB's bytewise FindShortestSeparator)."""
    n = min(len(start), len(limit))
    i = 0
    while i < n and start[i] == limit[i]:
        i += 1
    if i < n:
        byte = start[i]
        if byte < 0xFF and byte + 1 < limit[i]:
            return start[:i] + bytes([byte + 1])
    return start


def _short_successor(key):
    """A short key k >= key (LevelDB's bytewise FindShortSuccessor)."""
    for i, byte in enumerate(key):
        if byte != 0xFF:
            return key[:i] + bytes([byte + 1])
    return key


class _BlockBuilder:
    def __init__(self, restart_interval):
        self.interval = restart_interval
        self.reset()

    def reset(self):
        self.buf = bytearray()
        self.restarts = [0]
        self.counter = 0
        self.last_key = b""

    def add(self, key, value):
        shared = 0
        if self.counter < self.interval:
            n = min(len(key), len(self.last_key))
            while shared < n and key[shared] == self.last_key[shared]:
                shared += 1
        else:
            self.restarts.append(len(self.buf))
            self.counter = 0
        put_varint(self.buf, shared)
        put_varint(self.buf, len(key) - shared)
        put_varint(self.buf, len(value))
        self.buf += key[shared:]
        self.buf += value
        self.last_key = key
        self.counter += 1

    def finish(self):
        for r in self.restarts:
            self.buf += _U32.pack(r)
        self.buf += _U32.pack(len(self.restarts))
        return bytes(self.buf)

    def size_estimate(self):
        return len(self.buf) + 4 * len(self.restarts) + 4


def _handle(offset, size):
    out = bytearray()
    put_varint(out, offset)
    put_varint(out, size)
    return bytes(out)


def write_table(f, items, block_size=BLOCK_SIZE, restart_interval=RESTART_INTERVAL):
    """Write the (key, value) pairs `items` (bytes, keys strictly increasing) as a table to the
    binary file object `f`; returns the number of bytes written."""
    written = 0

    def write_block(contents):
        nonlocal written
        trailer = bytes([NO_COMPRESSION])
        crc = mask_crc32c(crc32c_extend(crc32c_extend(0, contents), trailer))
        f.write(contents)
        f.write(trailer + _U32.pack(crc))
        handle = _handle(written, len(contents))
        written += len(contents) + BLOCK_TRAILER_SIZE
        return handle

    data = _BlockBuilder(restart_interval)
    index = _BlockBuilder(1)
    pending = None  # the handle of the last data block, awaiting its index key
    last_key = None
    for key, value in items:
        key, value = bytes(key), bytes(value)
        if last_key is not None and key <= last_key:
            raise ValueError(f"table keys must be strictly increasing: {key!r} after {last_key!r}")
        if pending is not None:
            index.add(_shortest_separator(last_key, key), pending)
            pending = None
        data.add(key, value)
        last_key = key
        if data.size_estimate() >= block_size:
            pending = write_block(data.finish())
            data.reset()
    if data.buf:
        pending = write_block(data.finish())
    if pending is not None:
        index.add(_short_successor(last_key), pending)
    metaindex = write_block(_BlockBuilder(restart_interval).finish())
    index_handle = write_block(index.finish())
    footer = (metaindex + index_handle).ljust(FOOTER_SIZE - 8, b"\0") + _U64.pack(MAGIC)
    f.write(footer)
    return written + len(footer)


# ------------------------------------------------------------------------------------ reading
class _Fault(Exception):
    """A fault in the table's bytes; turned into GraphFormatError naming the file."""


def _block(data, handle_bytes, what):
    """The contents of the block whose handle is `handle_bytes`, checked and verified."""
    try:
        offset, pos = get_varint(handle_bytes, 0, len(handle_bytes))
        size, pos = get_varint(handle_bytes, pos, len(handle_bytes))
    except ValueError as exc:
        raise _Fault(f"{what} has a malformed block handle ({exc})") from None
    if pos != len(handle_bytes):
        raise _Fault(f"{what} has a block handle with {len(handle_bytes) - pos} trailing bytes")
    body_end = len(data) - FOOTER_SIZE
    if offset > body_end or size > body_end - offset - BLOCK_TRAILER_SIZE \
            or offset + size + BLOCK_TRAILER_SIZE > body_end:
        raise _Fault(f"{what} points at bytes {offset}..{offset + size + BLOCK_TRAILER_SIZE} "
                     f"beyond the table's {body_end} bytes of blocks")
    end = offset + size
    kind = data[end]
    stored = _U32.unpack_from(data, end + 1)[0]
    actual = mask_crc32c(crc32c_extend(0, data[offset:end + 1]))
    if stored != actual:
        raise _Fault(f"{what} at offset {offset} fails its checksum (stored {stored:#010x}, "
                     f"computed {actual:#010x})")
    if kind == SNAPPY_COMPRESSION:
        raise _Fault(f"{what} at offset {offset} is snappy-compressed; graphflow reads "
                     "uncompressed tables only (TensorFlow writes checkpoint indexes "
                     "uncompressed)")
    if kind != NO_COMPRESSION:
        raise _Fault(f"{what} at offset {offset} has unknown compression type {kind}")
    return offset, end


def _entries(data, start, end, what):
    """[(key, value)] of the block data[start:end], every entry checked against the block."""
    if end - start < 4:
        raise _Fault(f"{what} at offset {start} is too short for its restart count")
    num_restarts = _U32.unpack_from(data, end - 4)[0]
    if num_restarts == 0 or num_restarts > (end - start - 4) // 4:
        raise _Fault(f"{what} at offset {start} declares {num_restarts} restart points, "
                     f"impossible in {end - start} bytes")
    limit = end - 4 - 4 * num_restarts
    restarts = struct.unpack_from(f"<{num_restarts}I", data, limit)
    previous = -1
    for r in restarts:
        if r <= previous or r >= max(limit - start, 1):
            raise _Fault(f"{what} at offset {start} has a restart point {r} out of order or "
                         f"beyond its {limit - start} bytes of entries")
        previous = r
    out = []
    key = b""
    pos = start
    try:
        while pos < limit:
            shared, pos = get_varint(data, pos, limit, 32)
            unshared, pos = get_varint(data, pos, limit, 32)
            length, pos = get_varint(data, pos, limit, 32)
            if shared > len(key):
                raise _Fault(f"{what} at offset {start}: an entry shares {shared} bytes of a "
                             f"{len(key)}-byte previous key")
            if unshared + length > limit - pos:
                raise _Fault(f"{what} at offset {start}: an entry of {unshared + length} bytes "
                             f"runs past the block's end")
            key = key[:shared] + data[pos:pos + unshared]
            pos += unshared
            out.append((key, data[pos:pos + length]))
            pos += length
    except ValueError as exc:
        raise _Fault(f"{what} at offset {start}: malformed entry ({exc})") from None
    return out


def parse_table(data, what="table"):
    """[(key, value)] of the table held in the bytes `data`, in key order; GraphFormatError
    (naming `what`) for any fault."""
    data = bytes(data)
    try:
        return _parse(data)
    except _Fault as exc:
        raise GraphFormatError(f"{what}: {exc}") from None


def _parse(data):
    if len(data) < FOOTER_SIZE:
        raise _Fault(f"{len(data)} bytes is too short for a table (a footer is {FOOTER_SIZE})")
    footer = data[-FOOTER_SIZE:]
    if _U64.unpack_from(footer, FOOTER_SIZE - 8)[0] != MAGIC:
        raise _Fault("not a TensorFlow table (bad magic number; not a checkpoint .index file?)")
    try:
        _, pos = get_varint(footer, 0, 40)
        _, pos = get_varint(footer, pos, 40)
        meta_end = pos
        _, pos = get_varint(footer, pos, 40)
        _, pos = get_varint(footer, pos, 40)
    except ValueError as exc:
        raise _Fault(f"footer has a malformed block handle ({exc})") from None
    _block(data, footer[:meta_end], "metaindex block")
    index_start, index_end = _block(data, footer[meta_end:pos], "index block")
    items = []
    last_separator = None
    for separator, handle in _entries(data, index_start, index_end, "index block"):
        if last_separator is not None and separator <= last_separator:
            raise _Fault("index block keys are not strictly increasing")
        last_separator = separator
        start, end = _block(data, handle, "data block")
        for key, value in _entries(data, start, end, "data block"):
            if items and key <= items[-1][0]:
                raise _Fault(f"keys are not strictly increasing: {key[:64]!r} after "
                             f"{items[-1][0][:64]!r}")
            if key > separator:
                raise _Fault(f"key {key[:64]!r} lies beyond its block's index key")
            items.append((key, value))
    return items


def read_table(path, max_bytes=DEFAULT_MAX_BYTES):
    """[(key, value)] of the table file at `path` (at most `max_bytes` long), in key order."""
    path = os.fspath(path)
    # a regular file only, opened without blocking (a FIFO is an error, never a hang)
    data = file_io.read_regular_file(path, f"table '{path}'", max_bytes)
    return parse_table(data, f"table '{path}'")


__all__ = ["write_table", "read_table", "parse_table", "MAGIC"]
