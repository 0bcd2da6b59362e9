"""Mutations of valid V2 checkpoints (TensorFlow's fixtures) for the checkpoint fuzz test.

`mutants(files, rng)` yields (kind, {filename: bytes}) variations of one checkpoint's files:

- raw: byte flips and truncations of the `.index` and of each `.data` shard, bytes appended;
- table-level (checksums recomputed, so the structure itself is what is wrong): byte flips inside
  a block, bad block handles in the footer and the index block, keys out of order, duplicated;
- entry-level (the index re-written around an edited `BundleEntryProto`): sizes larger than the
  file or disagreeing with dtype x shape, offsets beyond the file, unknown or unsupported dtypes,
  shards out of range, huge, negative or too many dimensions, wrong checksums, bad slice specs;
- header-level: huge, zero or negative shard counts, unknown byte orders, future versions;
- a missing data shard.

`outcome(prefix)` opens the checkpoint and reads every tensor: "loaded" or "rejected"
(GraphFormatError) are acceptable; anything else (another exception, more than `seconds`, more
than `max_bytes` of traced memory) is described and counted as a failure by the caller.
"""

import struct

from graphflow.fileformat import checkpoint_files, tf_protos, tf_table
from graphflow.fileformat.tfrecord import crc32c_extend, mask_crc32c
from graphflow.framework.errors import GraphFormatError
from tests.tooling import Bounds

_U32 = struct.Struct("<I")


def unchecked_table(items, block_size=256):
    """A table of `items` in the given order (not checked, unlike tf_table.write_table)."""
    out = bytearray()

    def block(builder):
        contents = builder.finish()
        start = len(out)
        out.extend(contents + b"\0")
        out.extend(_U32.pack(mask_crc32c(crc32c_extend(0, contents + b"\0"))))
        builder.reset()
        return tf_table._handle(start, len(contents))

    data, index = tf_table._BlockBuilder(16), tf_table._BlockBuilder(1)
    for key, value in items:
        data.add(key, value)
        if data.size_estimate() >= block_size:
            index.add(key + b"\xff", block(data))
    if data.buf:
        index.add(b"\xff" * 8, block(data))
    meta = block(tf_table._BlockBuilder(16))
    handle = block(index)
    out.extend((meta + handle).ljust(40, b"\0") + struct.pack("<Q", tf_table.MAGIC))
    return bytes(out)


def _blocks(index):
    """[(offset, size)] of every block of a valid table: data blocks, metaindex, index."""
    footer = index[-48:]
    meta_offset, pos = tf_table.get_varint(footer, 0, 40)
    meta_size, pos = tf_table.get_varint(footer, pos, 40)
    index_offset, pos = tf_table.get_varint(footer, pos, 40)
    index_size, pos = tf_table.get_varint(footer, pos, 40)
    blocks = []
    for _, handle in tf_table._entries(index, index_offset, index_offset + index_size, "index"):
        offset, n = tf_table.get_varint(handle, 0, len(handle))
        size, _ = tf_table.get_varint(handle, n, len(handle))
        blocks.append((offset, size))
    return blocks + [(meta_offset, meta_size), (index_offset, index_size)]


def _rechecksummed_flips(index, rng):
    out = bytearray(index)
    offset, size = _blocks(index)[int(rng.integers(0, len(_blocks(index))))]
    if size == 0:
        return bytes(out)
    for pos in rng.integers(offset, offset + size, int(rng.integers(1, 4))):
        out[pos] ^= int(rng.integers(1, 256))
    out[offset + size + 1:offset + size + 5] = _U32.pack(
        mask_crc32c(crc32c_extend(0, bytes(out[offset:offset + size + 1]))))
    return bytes(out)


def _entry_edits(entry, rng, file_size):
    """(kind, function editing a BundleEntryProto) for one entry."""
    dims = [d.size for d in entry.shape.dim]

    def shape(*new):
        def edit(e):
            e.shape.ClearField("dim")
            for d in new:
                e.shape.dim.add(size=d)
        return edit

    def setter(field, value):
        return lambda e: setattr(e, field, value)

    def add_slice(extents):
        def edit(e):
            s = e.slices.add()
            for start, length in extents:
                ext = s.extent.add(start=start)
                if length is not None:
                    ext.length = length
        return edit

    yield "size x2", setter("size", entry.size * 2 + 1)
    yield "size beyond file", setter("size", file_size + 1)
    yield "size 2**62", setter("size", 2**62)
    yield "size - 1", setter("size", max(entry.size - 1, 0))
    yield "offset beyond file", setter("offset", file_size)
    yield "offset + 1", setter("offset", entry.offset + 1)
    yield "offset -1", setter("offset", -1)
    yield "offset 2**62", setter("offset", 2**62)
    for dtype in (0, 1, 2, 3, 7, 10, 14, 20, 21, 101, int(rng.integers(24, 200))):
        yield f"dtype {dtype}", setter("dtype", dtype)
    yield "shard 1", setter("shard_id", 1)
    yield "shard -1", setter("shard_id", -1)
    yield "shard 2**31-1", setter("shard_id", 2**31 - 1)
    yield "crc flip", setter("crc32c", entry.crc32c ^ (1 << int(rng.integers(0, 32))))
    yield "huge dims", shape(2**40, 2**40)
    yield "dim 2**63-1", shape(2**63 - 1)
    yield "negative dim", shape(-3)
    yield "rank 100", shape(*[1] * 100)
    yield "scalar", shape()
    yield "dims swapped", shape(*dims[::-1], 1)
    yield "unknown rank", lambda e: setattr(e.shape, "unknown_rank", True)
    yield "slice outside", add_slice([(0, 10**9)] * max(len(dims), 1))
    yield "slice negative", add_slice([(-1, 2)] * len(dims))
    yield "slice rank", add_slice([(0, 1)] * (len(dims) + 1))
    yield "slice whole", add_slice([(0, None)] * len(dims))
    yield "slice half", add_slice([(0, max(d // 2, 0)) for d in dims])
    yield "slices cleared", lambda e: e.ClearField("slices")


def _header_edits():
    def setter(field, value):
        return lambda h: setattr(h, field, value)
    yield "num_shards 2**31-1", setter("num_shards", 2**31 - 1)
    yield "num_shards 0", setter("num_shards", 0)
    yield "num_shards -1", setter("num_shards", -1)
    yield "num_shards 2", setter("num_shards", 2)
    yield "big endian", setter("endianness", 1)
    yield "endianness 9", setter("endianness", 9)
    yield "min_consumer 99", lambda h: setattr(h.version, "min_consumer", 99)
    yield "bad consumer", lambda h: h.version.bad_consumers.append(1)


def mutants(files, index_name, rng, byte_flips=60, truncations=30):
    """(kind, {filename: bytes or None}) mutants of the checkpoint `files` ({filename: bytes});
    None removes a file."""
    index = files[index_name]
    for name, data in files.items():
        label = "index" if name == index_name else "data"
        for _ in range(byte_flips if label == "index" else byte_flips // 2):
            flipped = bytearray(data)
            for pos in rng.integers(0, max(len(data), 1), int(rng.integers(1, 8))):
                if data:
                    flipped[pos] ^= int(rng.integers(1, 256))
            yield f"{label} byte flip", {**files, name: bytes(flipped)}
        for cut in rng.integers(0, max(len(data), 1), truncations):
            yield f"{label} truncated", {**files, name: data[:cut]}
        yield f"{label} extended", {**files, name: data + b"\0" * 64}
        if label == "data":
            yield "data shard missing", {**files, name: None}
    for _ in range(byte_flips):
        yield "block flip, re-checksummed", {**files, index_name: _rechecksummed_flips(index, rng)}
    items = tf_table.parse_table(index)
    reordered = items[:1] + items[1:][::-1]
    yield "keys out of order", {**files, index_name: unchecked_table(reordered)}
    yield "key duplicated", {**files, index_name: unchecked_table(items + items[-1:])}
    yield "header missing", {**files, index_name: unchecked_table(items[1:])}
    yield "header not first", {**files, index_name: unchecked_table(items[1:] + items[:1])}
    header = tf_protos.BundleHeaderProto.FromString(items[0][1])
    for kind, edit in _header_edits():
        h = tf_protos.BundleHeaderProto()
        h.CopyFrom(header)
        edit(h)
        yield f"header {kind}", {**files, index_name: tf_table_bytes(
            [(b"", h.SerializeToString())] + items[1:])}
    data_size = max((len(d) for n, d in files.items() if n != index_name), default=0)
    for i in range(1, len(items)):
        entry = tf_protos.BundleEntryProto.FromString(items[i][1])
        for kind, edit in _entry_edits(entry, rng, data_size):
            e = tf_protos.BundleEntryProto()
            e.CopyFrom(entry)
            edit(e)
            edited = list(items)
            edited[i] = (items[i][0], e.SerializeToString())
            yield f"entry {kind}", {**files, index_name: tf_table_bytes(edited)}
        yield "entry garbage", {**files, index_name: tf_table_bytes(
            items[:i] + [(items[i][0], bytes(rng.integers(0, 256, 12, dtype="uint8")))]
            + items[i + 1:])}
        yield "entry renamed", {**files, index_name: tf_table_bytes(sorted(
            items[:i] + [(b"\x00" + items[i][0] + b"\xff", items[i][1])] + items[i + 1:]))}


def tf_table_bytes(items):
    import io
    buf = io.BytesIO()
    tf_table.write_table(buf, items)
    return buf.getvalue()


def outcome(prefix, seconds=2.0, max_bytes=16 << 20):
    """'loaded' or 'rejected' for acceptable outcomes, else a description of what went wrong."""
    bounds = Bounds()
    try:
        reader = checkpoint_files.open_checkpoint(prefix)
        if reader is None:
            result = "rejected"  # no index: no checkpoint (e.g. an empty name)
        else:
            with reader:
                for name in reader.names():
                    reader.get_tensor(name)
            result = "loaded"
    except GraphFormatError:
        result = "rejected"
    except Exception as exc:  # anything else is a bug the fuzzer found
        result = f"{type(exc).__name__}: {exc}"
    finally:
        bounds.stop()
    return bounds.verdict(result, seconds, max_bytes)
