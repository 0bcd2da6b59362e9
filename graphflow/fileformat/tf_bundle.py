"""TensorFlow's tensor bundle (the V2 checkpoint format): `<prefix>.index` and
`<prefix>.data-SSSSS-of-NNNNN`, read and written.

- The index is a table (`tf_table`): key "" holds a `BundleHeaderProto` (shard count, byte order,
  format version), then each tensor's name holds a `BundleEntryProto`: dtype, shape, the data
  shard, offset and size of its bytes there, and their masked CRC-32C.
- Data shards hold the tensors' bytes back to back: numbers as raw little-endian elements; a
  string tensor as the varint64 length of each element, the masked CRC-32C of those lengths
  (each as a little-endian uint32, or uint64 beyond 4 GiB), then the elements' bytes.
- A partitioned variable has an entry under its name with the full shape and the `slices` it
  was saved in (no data of its own); each slice's values are stored under a key made of the
  name and the slice (TensorFlow's `EncodeTensorNameSlice`, OrderedCode numbers and strings:
  `encode_slice_key`). `BundleReader.get_tensor(name)` assembles the slices.

`write_bundle` writes one shard (or one per group of tensors with `shard_of`): the data files and
the index are written to temp files and flushed to disk; only when all are complete is an older
index of the same prefix removed, the data files renamed into place, and the index last, so an
error while writing (a full disk) leaves the old bundle untouched, and a crash leaves the complete
old bundle, no index (no checkpoint), or the complete new one. On any error every file of the new
bundle is removed again: its temp files, and data files already renamed (their index is gone).

`BundleReader` treats the files as hostile: the header's version, byte order and shard count, every
entry's dtype, shape (rank and dims within `Limits`), shard, offset and size, and each slice, are
checked when the index is opened; a tensor's size must agree with its dtype and shape and lie
within its data file before anything is allocated; its bytes are read once, straight into the
array (`readinto`), and must match their checksum. Any fault is a `GraphFormatError` naming the
file and the tensor. Memory for a tensor is its size in the file (a string tensor also holds one
bytes object per element, and has at most one element per byte of its data).
"""

import contextlib
import math
import os
import struct

import numpy as np

from graphflow.fileformat import file_io, tf_table
from graphflow.fileformat.tfrecord import crc32c_extend, mask_crc32c
from graphflow.framework import dtypes
from graphflow.framework.errors import GraphFormatError

BUNDLE_VERSION = 1  # TensorFlow's kTensorBundleVersion
MAX_SHARDS = 1 << 16
HEADER_KEY = b""

_TF_DTYPES = {  # TensorFlow's DataType numbers (types.proto) of graphflow's dtypes
    1: dtypes.float32, 2: dtypes.float64, 3: dtypes.int32, 4: dtypes.uint8, 5: dtypes.int16,
    6: dtypes.int8, 7: dtypes.string, 8: dtypes.complex64, 9: dtypes.int64, 10: dtypes.bool_,
    17: dtypes.uint16, 18: dtypes.complex128, 19: dtypes.float16, 22: dtypes.uint32,
    23: dtypes.uint64,
}
_DTYPE_NUMBERS = {d: n for n, d in _TF_DTYPES.items()}
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


def data_filename(prefix, shard, num_shards):
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def index_filename(prefix):
    return f"{prefix}.index"


# ------------------------------------------------------------------------ slice keys
def _ordered_signed(value):
    """OrderedCode's WriteSignedNumIncreasing of the int64 `value`."""
    x = ~value if value < 0 else value
    if x < 64:
        return bytes([(0x80 ^ value) & 0xFF])
    length = x.bit_length() // 7 + 1  # 7 bits per byte hold the sign, length and payload
    raw = (value & ((1 << 80) - 1)).to_bytes(10, "big")[10 - length:]
    header = [(0, 0), (0x80, 0), (0xC0, 0), (0xE0, 0), (0xF0, 0), (0xF8, 0), (0xFC, 0),
              (0xFE, 0), (0xFF, 0), (0xFF, 0x80), (0xFF, 0xC0)][length]
    return bytes([raw[0] ^ header[0], raw[1] ^ header[1]]) + raw[2:]


def _ordered_unsigned(value):
    raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return bytes([len(raw)]) + raw


def _escape(name):
    out = bytearray()
    for byte in name:
        out += b"\x00\xff" if byte == 0 else b"\xff\x00" if byte == 0xFF else bytes([byte])
    return bytes(out)


def _slice_key(name, extents):
    return (_ordered_unsigned(0) + _escape(name) + b"\x00\x01" + _ordered_unsigned(len(extents))
            + b"".join(_ordered_signed(s) + _ordered_signed(n) for s, n in extents))


def encode_slice_key(name, extents):
    """The index key of one slice of tensor `name` (TensorFlow's EncodeTensorNameSlice):
    `extents` is [(start, length)] per dimension, length -1 for a whole dimension."""
    return _slice_key(name.encode("utf-8") if isinstance(name, str) else bytes(name), extents)


# ------------------------------------------------------------------------ entries
class Entry:
    """One tensor of the index: name (str), dtype, shape, shard, offset, size, crc (masked), and
    for a partitioned tensor its slices [((start, stop) per dim, entry key)]."""

    __slots__ = ("name", "dtype", "shape", "shard", "offset", "size", "crc", "slices")


def _protos():
    from graphflow.fileformat import tf_protos  # loaded only when a TensorFlow file is used
    return tf_protos


class BundleReader:
    """The tensors of the bundle at `prefix`: `names()`, `entry(name)`, `get_tensor(name)`.
    Use as a context manager (or call `close`) to close the data files."""

    def __init__(self, prefix, limits=None):
        self.prefix = os.fspath(prefix)
        self.limits = limits or file_io.DEFAULT_LIMITS
        self.index_path = index_filename(self.prefix)
        self._files = {}
        items = tf_table.read_table(self.index_path, max_bytes=min(
            self.limits.max_json_bytes, tf_table.DEFAULT_MAX_BYTES))
        self._what = f"checkpoint index '{self.index_path}'"
        protos = _protos()
        if not items or items[0][0] != HEADER_KEY:
            raise GraphFormatError(f"{self._what} has no header entry (not a tensor bundle)")
        header = self._parse(protos.BundleHeaderProto, items[0][1], "the header")
        self.num_shards = self._check_header(header, len(items))
        self.big_endian = header.endianness == 1
        raw = {}
        for key, value in items[1:]:
            raw[key] = self._parse(protos.BundleEntryProto, value, f"entry {key[:80]!r}")
        self._entries = {}
        sliced = set()
        for key, proto in raw.items():
            if proto.slices:
                sliced.update(self._slice_keys(key, proto))
        for key, proto in raw.items():
            if key in sliced:
                continue
            try:
                name = key.decode("utf-8")
            except UnicodeDecodeError:
                raise GraphFormatError(f"{self._what}: tensor name {key[:80]!r} is not UTF-8 "
                                       "and no partitioned tensor lists it as a slice") from None
            self._entries[name] = self._entry(name, proto, raw)

    # -------------------------------------------------------------- checking the index
    def _parse(self, cls, data, what):
        message = cls()
        try:
            message.ParseFromString(data)
        except Exception as exc:  # protobuf's DecodeError and friends
            raise GraphFormatError(f"{self._what}: {what} is not a valid {cls.__name__} "
                                   f"({type(exc).__name__}: {exc})") from None
        return message

    def _check_header(self, header, count):
        what = self._what
        if header.endianness not in (0, 1):
            raise GraphFormatError(f"{what}: unknown byte order {header.endianness}")
        version = header.version
        if version.min_consumer > BUNDLE_VERSION or BUNDLE_VERSION in version.bad_consumers:
            raise GraphFormatError(
                f"{what} needs a reader of tensor bundle version {version.min_consumer} or newer "
                f"(graphflow reads version {BUNDLE_VERSION}; written by producer "
                f"{version.producer})")
        n = header.num_shards
        if not 1 <= n <= min(MAX_SHARDS, max(count, 1)):
            raise GraphFormatError(f"{what} declares {n} data shards (at most one per entry, "
                                   f"and at most {MAX_SHARDS})")
        return n

    def _dtype(self, name, number):
        dtype = _TF_DTYPES.get(number)
        if dtype is None:
            try:
                label = _protos().DataType.Name(number)
            except ValueError:
                label = f"unknown dtype number {number}"
            raise GraphFormatError(f"{self._what}: tensor '{name}' has dtype {label}, which is "
                                   "not a graphflow dtype")
        return dtype

    def _shape(self, name, shape_proto):
        limits = self.limits
        if shape_proto.unknown_rank or len(shape_proto.dim) > limits.max_rank:
            raise GraphFormatError(f"{self._what}: tensor '{name}' has an unknown shape or more "
                                   f"than {limits.max_rank} dimensions")
        shape = tuple(d.size for d in shape_proto.dim)
        if any(d < 0 or d > limits.max_dim for d in shape):
            raise GraphFormatError(f"{self._what}: tensor '{name}' has an invalid dimension in "
                                   f"shape {list(shape)}")
        return shape

    def _slice_keys(self, key, proto):
        name = key
        for s in proto.slices:
            extents = [(e.start, e.length if e.HasField("length") else -1) for e in s.extent]
            yield _slice_key(name, extents)

    def _entry(self, name, proto, raw):
        e = Entry()
        e.name = name
        e.dtype = self._dtype(name, proto.dtype)
        e.shape = self._shape(name, proto.shape)
        e.shard, e.offset, e.size, e.crc = proto.shard_id, proto.offset, proto.size, proto.crc32c
        e.slices = []
        if proto.slices:
            e.slices = self._check_slices(e, proto, raw)
            return e
        if not 0 <= e.shard < self.num_shards or e.offset < 0 or e.size < 0:
            raise GraphFormatError(f"{self._what}: tensor '{name}' has shard {e.shard} (of "
                                   f"{self.num_shards}), offset {e.offset}, size {e.size}")
        if e.dtype is not dtypes.string:
            expected = math.prod(e.shape) * e.dtype.size
            if e.size != expected:
                raise GraphFormatError(
                    f"{self._what}: tensor '{name}' ({e.dtype.name}, shape {list(e.shape)}) "
                    f"needs {expected} bytes but its entry declares {e.size}")
        elif e.size < 4 + math.prod(e.shape):
            raise GraphFormatError(f"{self._what}: string tensor '{name}' of shape "
                                   f"{list(e.shape)} cannot fit in {e.size} bytes")
        if e.size > self.limits.max_tensor_bytes:
            raise GraphFormatError(f"{self._what}: tensor '{name}' declares {e.size} bytes, more "
                                   f"than the limit of {self.limits.max_tensor_bytes}")
        return e

    def _check_slices(self, e, proto, raw):
        what, name = self._what, e.name
        slices, volume = [], 0
        for s in proto.slices:
            if len(s.extent) != len(e.shape):
                raise GraphFormatError(f"{what}: a slice of '{name}' has {len(s.extent)} "
                                       f"dimensions, the tensor {len(e.shape)}")
            bounds, extents = [], []
            for ext, dim in zip(s.extent, e.shape, strict=True):
                length = ext.length if ext.HasField("length") else -1
                start = ext.start
                stop = dim if length == -1 and start == 0 else start + length
                if start < 0 or length < -1 or not start <= stop <= dim:
                    raise GraphFormatError(f"{what}: a slice of '{name}' has extent "
                                           f"({start}, {length}) outside dimension {dim}")
                bounds.append((start, stop))
                extents.append((start, length))
            key = _slice_key(e.name.encode("utf-8"), extents)
            part = raw.get(key)
            if part is None:
                raise GraphFormatError(f"{what}: slice {bounds} of '{name}' has no entry")
            if part.slices:
                raise GraphFormatError(f"{what}: slice {bounds} of '{name}' is itself sliced")
            sub = self._entry(f"{name}[{','.join(f'{a}:{b}' for a, b in bounds)}]", part, raw)
            if sub.dtype != e.dtype or sub.shape != tuple(b - a for a, b in bounds):
                raise GraphFormatError(f"{what}: slice {bounds} of '{name}' holds "
                                       f"{sub.dtype.name} {list(sub.shape)}, not {e.dtype.name} "
                                       "of the slice's shape")
            volume += math.prod(b - a for a, b in bounds)
            slices.append((tuple(bounds), sub))
        if volume != math.prod(e.shape):
            raise GraphFormatError(f"{what}: the slices of '{name}' hold {volume} elements, "
                                   f"its shape {list(e.shape)} {math.prod(e.shape)}")
        return slices

    # -------------------------------------------------------------- reading values
    def names(self):
        """The tensors' names (partitioned tensors by their full name), sorted."""
        return sorted(self._entries)

    def __contains__(self, name):
        return name in self._entries

    def entry(self, name):
        return self._entries[name]

    def dtype(self, name):
        """The graphflow DType of tensor `name`."""
        return self._entries[name].dtype

    def shape(self, name):
        """The shape (a tuple) of tensor `name`; a partitioned tensor's full shape."""
        return self._entries[name].shape

    def get_tensor(self, name):
        """The value of tensor `name` as a numpy array (KeyError if absent)."""
        e = self._entries[name]
        if e.slices:
            return self._assemble(e)
        return self._read(e)

    def _assemble(self, e):
        out = np.empty(e.shape, e.dtype.as_numpy_dtype)
        covered = np.zeros(e.shape, np.bool_)
        for bounds, sub in e.slices:
            region = tuple(slice(a, b) for a, b in bounds)
            if covered[region].any():
                raise GraphFormatError(f"{self._what}: slices of '{e.name}' overlap")
            out[region] = self._read(sub)
            covered[region] = True
        return out

    def _file(self, shard):
        f = self._files.get(shard)
        if f is None:
            path = data_filename(self.prefix, shard, self.num_shards)
            try:  # a regular file only, opened without blocking
                f, _ = file_io.open_regular_file(path, f"checkpoint data file '{path}'")
            except FileNotFoundError:
                raise GraphFormatError(f"checkpoint data file '{path}' (shard {shard} of "
                                       f"{self.num_shards} named by {self._what}) is "
                                       "missing") from None
            self._files[shard] = f
        return f

    def _read(self, e):
        f = self._file(e.shard)
        path = f.name
        file_size = os.fstat(f.fileno()).st_size
        if e.offset > file_size or e.size > file_size - e.offset:
            raise GraphFormatError(f"checkpoint data file '{path}': tensor '{e.name}' at bytes "
                                   f"{e.offset}..{e.offset + e.size} lies beyond its "
                                   f"{file_size} bytes")
        if e.dtype is dtypes.string:
            return self._read_strings(e, f, path)
        array = np.empty(e.shape, e.dtype.as_numpy_dtype)
        buffer = array.reshape(-1).view(np.uint8)
        self._read_into(f, e.offset, buffer, path, e.name)
        if mask_crc32c(crc32c_extend(0, buffer)) != e.crc:
            raise GraphFormatError(f"checkpoint data file '{path}': tensor '{e.name}' fails its "
                                   "checksum (the data is corrupted)")
        if self.big_endian:
            array.byteswap(inplace=True)
        if e.dtype is dtypes.bool_ and buffer.size and buffer.max() > 1:
            array = buffer.astype(np.bool_).reshape(e.shape)
        return array

    @staticmethod
    def _read_into(f, offset, buffer, path, name):
        f.seek(offset)
        view = memoryview(buffer)
        done = 0
        while done < len(view):
            n = f.readinto(view[done:])
            if not n:
                raise GraphFormatError(f"checkpoint data file '{path}' ended inside tensor "
                                       f"'{name}'")
            done += n

    def _read_strings(self, e, f, path):
        data = np.empty(e.size, np.uint8)
        self._read_into(f, e.offset, data, path, e.name)
        data = data.tobytes()
        count = math.prod(e.shape)
        what = f"checkpoint data file '{path}': string tensor '{e.name}'"
        lengths, pos = [], 0
        try:
            for _ in range(count):
                length, pos = tf_table.get_varint(data, pos, len(data) - 4)
                lengths.append(length)
        except ValueError as exc:
            raise GraphFormatError(f"{what} has malformed element lengths ({exc})") from None
        packed = b"".join(_U32.pack(n) if n <= 0xFFFFFFFF else _U64.pack(n) for n in lengths)
        crc = crc32c_extend(0, packed)
        stored = _U32.unpack_from(data, pos)[0]
        if stored != mask_crc32c(crc) or sum(lengths) != len(data) - pos - 4:
            raise GraphFormatError(f"{what}: its element lengths fail their checksum or do not "
                                   f"add up to its {len(data)} bytes")
        crc = crc32c_extend(crc32c_extend(crc, data[pos:pos + 4]), data[pos + 4:])
        if mask_crc32c(crc) != e.crc:
            raise GraphFormatError(f"{what} fails its checksum (the data is corrupted)")
        out = np.empty(count, object)
        pos += 4
        for i, n in enumerate(lengths):
            out[i] = data[pos:pos + n]
            pos += n
        return out.reshape(e.shape)

    def close(self):
        for f in self._files.values():
            f.close()
        self._files.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ------------------------------------------------------------------------ writing
def _string_bytes(name, array):
    items = []
    for item in array.reshape(-1):
        if isinstance(item, str):
            item = item.encode("utf-8")
        if not isinstance(item, (bytes, np.bytes_)):
            raise TypeError(f"Cannot save string tensor '{name}': element {item!r} is not bytes "
                            "or str")
        items.append(bytes(item))
    lengths = bytearray()
    for item in items:
        tf_table.put_varint(lengths, len(item))
    packed = b"".join(_U32.pack(len(i)) if len(i) <= 0xFFFFFFFF else _U64.pack(len(i))
                      for i in items)
    length_crc = mask_crc32c(crc32c_extend(0, packed))
    body = _U32.pack(length_crc) + b"".join(items)
    crc = crc32c_extend(crc32c_extend(0, packed), body)
    return bytes(lengths) + body, mask_crc32c(crc)


def _dtype_number(name, array):
    if array.dtype.kind in "OSU":
        return 7
    dtype = array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" else array.dtype
    try:
        return _DTYPE_NUMBERS[dtypes.as_dtype(dtype)]
    except (TypeError, KeyError):
        raise TypeError(f"Cannot save tensor '{name}' of dtype {array.dtype} in a TensorFlow "
                        "checkpoint") from None


def write_bundle(prefix, tensors, shard_of=None, num_shards=None, slices=None):
    """Write {name: array} as the bundle `prefix` (the files `prefix.index` and
    `prefix.data-*`); `shard_of` maps a name to its data shard (default: all in shard 0).
    `slices`: {name: (full shape, [(extents, array)])}, tensors saved as slices (a partitioned
    variable's parts; extents: (start, length) per dimension), written as TensorFlow's
    `BundleWriter::AddSlice` does: each slice's values under its slice key, and an entry under
    `name` with the full shape and the slices' extents. Returns the paths written, data files
    first."""
    protos = _protos()
    prefix = os.fspath(prefix)
    shard_of = shard_of or {}
    slices = slices or {}
    overlap = set(slices) & set(tensors)
    if overlap:
        raise ValueError(f"tensors {sorted(overlap)} are given both whole and as slices")
    num_shards = num_shards or (max(shard_of.values(), default=0) + 1)
    entries = {}  # index key (bytes) -> BundleEntryProto
    stored = []  # (index key, display name, array, shard) of every tensor with data
    for name in tensors:
        stored.append((name.encode("utf-8"), name, tensors[name], shard_of.get(name, 0)))
    for name, (full_shape, parts) in slices.items():
        first = None
        full = protos.BundleEntryProto()
        full.shape.SetInParent()
        for d in full_shape:
            full.shape.dim.add(size=int(d))
        for extents, array in parts:
            extents = [(int(a), int(n)) for a, n in extents]
            if len(extents) != len(full_shape) or np.shape(array) != tuple(n for _, n in extents):
                raise ValueError(f"slice {extents} of '{name}' does not fit its array of shape "
                                 f"{np.shape(array)} or the full shape {list(full_shape)}")
            key = _slice_key(name.encode("utf-8"), extents)
            stored.append((key, f"{name}{extents}", array, shard_of.get(name, 0)))
            proto = full.slices.add()
            for start, length in extents:
                proto.extent.add(start=start, length=length)
            first = array if first is None else first
        full.dtype = _dtype_number(name, np.asarray(first))
        entries[name.encode("utf-8")] = full
    by_shard = [[] for _ in range(num_shards)]
    for item in sorted(stored, key=lambda t: t[0]):
        by_shard[item[3]].append(item)
    paths = [data_filename(prefix, s, num_shards) for s in range(num_shards)]
    index_path = index_filename(prefix)
    staged = [file_io.StagedFile(p) for p in paths]
    index = file_io.StagedFile(index_path)
    replacing = False
    try:
        for shard, items in enumerate(by_shard):
            f = staged[shard].open()
            offset = 0
            for key, name, array, _ in items:
                array = np.asarray(array)
                number = _dtype_number(name, array)
                if number == 7:
                    data, crc = _string_bytes(name, array)
                else:
                    if not array.flags.c_contiguous:  # (np.ascontiguousarray makes 0-d 1-d)
                        array = array.copy(order="C")
                    if array.dtype.byteorder == ">":
                        array = array.astype(array.dtype.newbyteorder("<"))
                    data = array.reshape(-1).view(np.uint8)
                    crc = mask_crc32c(crc32c_extend(0, data))
                f.write(data)
                entry = protos.BundleEntryProto(dtype=number, shard_id=shard, offset=offset,
                                                size=len(data), crc32c=crc)
                entry.shape.SetInParent()
                for d in array.shape:
                    entry.shape.dim.add(size=d)
                entries[key] = entry
                offset += len(data)
            staged[shard].finish()
        header = protos.BundleHeaderProto(num_shards=num_shards, endianness=0)
        header.version.producer = BUNDLE_VERSION
        items = [(HEADER_KEY, header.SerializeToString())]
        items += [(k, entries[k].SerializeToString()) for k in sorted(entries)]
        tf_table.write_table(index.open(), items)
        index.finish()
        # Everything is on disk. An older index of this prefix goes before new data files
        # replace its data, so a crash during the renames leaves no index (no checkpoint) rather
        # than one naming the wrong bytes; the index is renamed last.
        replacing = True
        with contextlib.suppress(FileNotFoundError):
            os.remove(index_path)
        for s in staged:
            s.commit()
        index.commit()
    except BaseException:
        # nothing of this bundle stays: its temp files, and data files already renamed into
        # place (their index is gone or never came), which no checkpoint could name
        for s in staged + [index]:
            s.discard()
        for path in paths if replacing else ():
            with contextlib.suppress(OSError):
                os.remove(path)
        raise
    file_io.fsync_directory(os.path.dirname(os.path.abspath(index_path)))
    return paths + [index_path]


__all__ = ["BundleReader", "write_bundle", "encode_slice_key", "data_filename", "index_filename"]
