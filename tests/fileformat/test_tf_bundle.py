"""graphflow.fileformat.tf_bundle: TensorFlow's V2 checkpoint bundle. Every tensor of the fixtures
TensorFlow 2.21 wrote (MLP with Adam, CNN, partitioned, two shards, every dtype with strings)
reads as TensorFlow read it; graphflow writes the same bytes as TensorFlow for the same tensors;
round trips over every dtype; slice keys; hostile entries rejected before anything is allocated."""

import json
import math
import pathlib

import numpy as np
import pytest

from graphflow.fileformat import tf_bundle, tf_protos, tf_table
from graphflow.fileformat.tfrecord import crc32c, mask_crc32c
from graphflow.framework.errors import GraphFormatError

FIXTURES = pathlib.Path(__file__).parents[1] / "fixtures" / "tensorflow" / "checkpoints"
PREFIXES = {"mlp": "model-3", "cnn": "model", "partitioned": "model", "sharded": "model-5",
            "dtypes": "model"}


def expected_values():
    """{(fixture, tensor name): value} as TensorFlow read them when it wrote the fixtures."""
    info = json.loads((FIXTURES / "expected.json").read_text())
    out = {}
    with np.load(FIXTURES / "expected.npz") as npz:
        for key in npz.files:
            fixture, _, name = key.partition("/")
            if not name.startswith(":"):
                out[fixture, name] = npz[key]
    for key, items in info["strings"].items():
        fixture, _, name = key.partition("/")
        out[fixture, name] = np.array([bytes.fromhex(h) for h in items[:-1]] or [],
                                      dtype=object).reshape(items[-1])
    return out


def test_every_fixture_tensor_matches_what_tensorflow_read():
    expected = expected_values()
    seen = set()
    for fixture, prefix in PREFIXES.items():
        with tf_bundle.BundleReader(FIXTURES / fixture / prefix) as reader:
            for name in reader.names():
                value = reader.get_tensor(name)
                want = expected[fixture, name]
                assert value.dtype == want.dtype and value.shape == want.shape, (fixture, name)
                assert reader.shape(name) == want.shape
                if value.dtype == object:
                    assert value.tolist() == want.tolist()
                else:
                    np.testing.assert_array_equal(value, want)
                seen.add((fixture, name))
    assert seen == set(expected)
    assert len(seen) == 44


def test_partitioned_and_sharded_fixtures():
    with tf_bundle.BundleReader(FIXTURES / "partitioned" / "model") as reader:
        assert reader.names() == ["emb", "scope/big", "whole"]
        assert reader.shape("emb") == (10, 4) and len(reader.entry("emb").slices) == 2
        assert [b for b, _ in reader.entry("scope/big").slices] == [
            ((0, 3), (0, 3)), ((3, 5), (0, 3)), ((5, 7), (0, 3))]
    with tf_bundle.BundleReader(FIXTURES / "sharded" / "model-5") as reader:
        assert reader.num_shards == 2
        assert {reader.entry(n).shard for n in reader.names()} == {0, 1}


def test_slice_keys_are_tensorflows():
    keys = [k for k, _ in tf_table.read_table(FIXTURES / "partitioned" / "model.index")]
    assert tf_bundle.encode_slice_key("emb", [(0, 5), (0, 4)]) in keys
    assert tf_bundle.encode_slice_key("scope/big", [(5, 2), (0, 3)]) in keys
    # OrderedCode's signed numbers, from its documentation; strings escape \0 and \xff
    assert tf_bundle._ordered_signed(0x424242) == bytes.fromhex("f0424242")
    assert tf_bundle._ordered_signed(-0x800) == bytes.fromhex("3800")
    assert tf_bundle._ordered_signed(-1) == b"\x7f" and tf_bundle._ordered_signed(63) == b"\xbf"
    assert tf_bundle.encode_slice_key(b"a\x00\xff", []) == b"\x00a\x00\xff\xff\x00\x00\x01\x00"
    for value in (64, -65, 2**20, -(2**40), 2**62, -(2**63), 2**63 - 1):
        assert len(tf_bundle._ordered_signed(value)) <= 10


def test_writer_gives_tensorflows_bytes(tmp_path):
    for fixture in ("mlp", "cnn", "dtypes"):
        prefix = FIXTURES / fixture / PREFIXES[fixture]
        with tf_bundle.BundleReader(prefix) as reader:
            values = {n: reader.get_tensor(n) for n in reader.names()}
        tf_bundle.write_bundle(tmp_path / fixture, values)
        for suffix in (".index", ".data-00000-of-00001"):
            assert (tmp_path / (fixture + suffix)).read_bytes() == \
                pathlib.Path(f"{prefix}{suffix}").read_bytes(), (fixture, suffix)


ALL_VALUES = {
    "f16": np.array([1.5, -2.0, np.inf], np.float16), "f32": np.float32(3.25),
    "f64": np.array([[np.nan, 1e300]]), "i8": np.array([-128, 127], np.int8),
    "i16": np.arange(6, dtype=np.int16).reshape(2, 3), "i32": np.array([2**31 - 1], np.int32),
    "i64": np.array([-(2**63)], np.int64), "u8": np.array([255], np.uint8),
    "u16": np.array([65535], np.uint16), "u32": np.array([2**32 - 1], np.uint32),
    "u64": np.array([2**64 - 1], np.uint64), "c64": np.array([1 - 1j], np.complex64),
    "c128": np.array([[2 + 0.5j]]), "b": np.array([True, False]),
    "empty": np.zeros((0, 2), np.float32), "fortran": np.asfortranarray(np.ones((3, 2))),
    "big_endian": np.arange(3, dtype=">i4"), "s": np.array([b"a", b"", b"\xff" * 200], object),
    "s0": np.array(b"text", dtype=object), "unicode": np.array(["é"], object),
    "ü/name": np.zeros(1),
}


def test_round_trip_every_dtype_and_shards(tmp_path):
    shards = {name: i % 3 for i, name in enumerate(sorted(ALL_VALUES))}
    for shard_of in (None, shards):
        prefix = tmp_path / ("sharded" if shard_of else "one")
        paths = tf_bundle.write_bundle(prefix, ALL_VALUES, shard_of)
        assert len(paths) == (4 if shard_of else 2)
        with tf_bundle.BundleReader(prefix) as reader:
            assert reader.names() == sorted(ALL_VALUES)
            for name, value in ALL_VALUES.items():
                got = reader.get_tensor(name)
                assert got.shape == np.shape(value)
                if name == "unicode":
                    assert got.tolist() == ["é".encode()]
                elif got.dtype == object:
                    assert got.tolist() == np.asarray(value).tolist()
                else:
                    assert got.dtype == np.asarray(value).dtype.newbyteorder("=")
                    np.testing.assert_array_equal(got, value)


def test_unsupported_values_are_refused(tmp_path):
    with pytest.raises(TypeError, match="'bad'"):
        tf_bundle.write_bundle(tmp_path / "x", {"bad": np.array([1], object)})
    with pytest.raises(TypeError, match="'dt'"):
        tf_bundle.write_bundle(tmp_path / "x", {"dt": np.array(["2020"], "datetime64[D]")})
    assert not list(tmp_path.iterdir())


# ------------------------------------------------------------------ hostile entries
def _bundle_with(tmp_path, edit, values=None, header_edit=None):
    """A bundle of `values` whose entries (and header) were edited, index re-written."""
    prefix = tmp_path / "h"
    tf_bundle.write_bundle(prefix, values or {"t": np.arange(6, dtype=np.float32).reshape(2, 3)})
    items = tf_table.read_table(f"{prefix}.index")
    out = []
    for key, value in items:
        if key == b"":
            header = tf_protos.BundleHeaderProto.FromString(value)
            if header_edit:
                header_edit(header)
            out.append((key, header.SerializeToString()))
        else:
            entry = tf_protos.BundleEntryProto.FromString(value)
            extra = edit(key, entry) or []
            out.append((key, entry.SerializeToString()))
            out.extend(extra)
    out.sort()
    with open(f"{prefix}.index", "wb") as f:
        tf_table.write_table(f, out)
    return prefix


def _shape(entry, *dims):
    entry.shape.ClearField("dim")
    for d in dims:
        entry.shape.dim.add(size=d)


@pytest.mark.parametrize("edit, match", [
    (lambda k, e: setattr(e, "size", 1 << 40), "needs 24 bytes but its entry declares"),
    (lambda k, e: _shape(e, 1 << 20, 1 << 20), "needs 4398046511104 bytes"),
    (lambda k, e: _shape(e, -1), "invalid dimension"),
    (lambda k, e: _shape(e, *([1] * 65)), "more than 64 dimensions"),
    (lambda k, e: setattr(e, "dtype", 14), "DT_BFLOAT16, which is not a graphflow dtype"),
    (lambda k, e: setattr(e, "dtype", 999), "unknown dtype number 999"),
    (lambda k, e: setattr(e, "shard_id", 3), "shard 3 \\(of 1\\)"),
    (lambda k, e: setattr(e, "offset", -5), "offset -5"),
    (lambda k, e: setattr(e, "offset", 1 << 40), "lies beyond its 24 bytes"),
    (lambda k, e: setattr(e, "crc32c", e.crc32c ^ 1), "fails its checksum"),
])
def test_hostile_entries(tmp_path, edit, match):
    prefix = _bundle_with(tmp_path, edit)
    with pytest.raises(GraphFormatError, match=match) as info:
        with tf_bundle.BundleReader(prefix) as reader:
            reader.get_tensor("t")
    assert "'t'" in str(info.value) or "h.index" in str(info.value)


def _sliced(key, entry, extents=((0, 1), (0, 3)), store=True):
    """Make tensor 't' a partitioned one whose only slice holds its data."""
    part = tf_protos.BundleEntryProto()
    part.CopyFrom(entry)
    _shape(part, *[n for _, n in extents])
    part.size = 4 * math.prod(max(n, 0) for _, n in extents)
    slice_proto = entry.slices.add()
    for start, length in extents:
        slice_proto.extent.add(start=start, length=length)
    entry.ClearField("size")
    entry.ClearField("crc32c")
    key = tf_bundle.encode_slice_key("t", list(extents))
    return [(key, part.SerializeToString())] if store else []


@pytest.mark.parametrize("edit, match", [
    (lambda k, e: _sliced(k, e), "hold 3 elements, its shape \\[2, 3\\] 6"),
    (lambda k, e: _sliced(k, e, ((0, 2), (0, 3)), store=False), "has no entry"),
    (lambda k, e: _sliced(k, e, ((1, 5), (0, 3))), "outside dimension 2"),
    (lambda k, e: _sliced(k, e, ((0, 2),)), "has 1 dimensions, the tensor 2"),
    (lambda k, e: _sliced(k, e, ((-1, 2), (0, 3))), "outside dimension"),
])
def test_hostile_slices(tmp_path, edit, match):
    prefix = _bundle_with(tmp_path, edit)
    with pytest.raises(GraphFormatError, match=match):
        with tf_bundle.BundleReader(prefix) as reader:
            reader.get_tensor("t")


def test_a_whole_slice_reads(tmp_path):
    prefix = _bundle_with(tmp_path, lambda k, e: _sliced(k, e, ((0, 2), (0, 3))))
    with tf_bundle.BundleReader(prefix) as reader:
        assert reader.names() == ["t"]
        np.testing.assert_array_equal(reader.get_tensor("t"), np.arange(6).reshape(2, 3))


@pytest.mark.parametrize("edit, match", [
    (lambda h: setattr(h, "num_shards", 1 << 30), "declares 1073741824 data shards"),
    (lambda h: setattr(h, "num_shards", 0), "declares 0 data shards"),
    (lambda h: setattr(h, "endianness", 7), "unknown byte order"),
    (lambda h: setattr(h.version, "min_consumer", 5), "version 5 or newer"),
    (lambda h: h.version.bad_consumers.append(1), "version"),
])
def test_hostile_headers(tmp_path, edit, match):
    prefix = _bundle_with(tmp_path, lambda k, e: None, header_edit=edit)
    with pytest.raises(GraphFormatError, match=match):
        tf_bundle.BundleReader(prefix)


def test_strings_with_bad_lengths_and_missing_shards(tmp_path):
    prefix = tmp_path / "s"
    tf_bundle.write_bundle(prefix, {"s": np.array([b"abc", b"de"], object)})
    data = bytearray((tmp_path / "s.data-00000-of-00001").read_bytes())
    data[0] = 0x7F  # a length of 127: the lengths' checksum fails
    (tmp_path / "s.data-00000-of-00001").write_bytes(bytes(data))
    with pytest.raises(GraphFormatError, match="lengths fail their checksum"):
        tf_bundle.BundleReader(prefix).get_tensor("s")
    (tmp_path / "s.data-00000-of-00001").unlink()
    with pytest.raises(GraphFormatError, match="shard 0 of 1 .* is missing"):
        tf_bundle.BundleReader(prefix).get_tensor("s")


def test_big_endian_bundle_reads(tmp_path):
    value = np.arange(4, dtype=">f8")
    prefix = tmp_path / "be"
    raw = value.tobytes()
    with open(tmp_path / "be.data-00000-of-00001", "wb") as f:
        f.write(raw)
    header = tf_protos.BundleHeaderProto(num_shards=1, endianness=1)
    entry = tf_protos.BundleEntryProto(dtype=2, size=len(raw), crc32c=mask_crc32c(crc32c(raw)))
    entry.shape.dim.add(size=4)
    with open(tmp_path / "be.index", "wb") as f:
        tf_table.write_table(f, [(b"", header.SerializeToString()),
                                 (b"v", entry.SerializeToString())])
    with tf_bundle.BundleReader(prefix) as reader:
        np.testing.assert_array_equal(reader.get_tensor("v"), [0.0, 1.0, 2.0, 3.0])


def test_reads_straight_into_the_array():
    """One allocation of the tensor's size: the bytes are read into the array itself."""
    import tracemalloc
    values = {"w": np.ones((512, 1024), np.float32)}  # 2 MiB
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        tf_bundle.write_bundle(f"{tmp}/m", values)
        with tf_bundle.BundleReader(f"{tmp}/m") as reader:
            tracemalloc.start()
            value = reader.get_tensor("w")
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    assert value.sum() == 512 * 1024
    assert peak < 2 ** 21 + 2 ** 16, peak
    assert math.prod(value.shape) * 4 == 2 ** 21
