"""graphflow.fileformat.tf_table: TensorFlow's sorted string table (a checkpoint's `.index`).
Round trips over block sizes, restart points and shared prefixes; the same bytes as TensorFlow
writes (the fixtures' indexes rewritten); every structural fault a clear GraphFormatError."""

import io
import os
import pathlib
import struct

import pytest

from graphflow.fileformat import tf_table
from graphflow.fileformat.tfrecord import crc32c, mask_crc32c
from graphflow.framework.errors import GraphFormatError
from tests.tooling import raised_within

FIXTURES = pathlib.Path(__file__).parents[1] / "fixtures" / "tensorflow" / "checkpoints"


def _table(items, **kwargs):
    buf = io.BytesIO()
    size = tf_table.write_table(buf, items, **kwargs)
    assert size == len(buf.getvalue())
    return buf.getvalue()


@pytest.mark.parametrize("block_size", [1, 64, 4096, tf_table.BLOCK_SIZE])
def test_round_trip(block_size):
    items = [(b"", b"header")] + [(f"scope{i // 7}/var_{i:05d}".encode(), bytes([i % 256]) * (i % 90))
                                  for i in range(2000)]
    items += [(b"\x00\xff" * 3, b"binary key"), (b"\xff" * 4, b"")]
    items.sort()
    assert tf_table.parse_table(_table(items, block_size=block_size)) == items


def test_empty_table_and_single_entry():
    assert tf_table.parse_table(_table([])) == []
    assert tf_table.parse_table(_table([(b"k", b"v")])) == [(b"k", b"v")]


def test_writer_refuses_unsorted_or_duplicate_keys():
    with pytest.raises(ValueError, match="strictly increasing"):
        _table([(b"b", b""), (b"a", b"")])
    with pytest.raises(ValueError, match="strictly increasing"):
        _table([(b"a", b""), (b"a", b"")])


def test_tensorflow_indexes_are_rewritten_byte_for_byte():
    paths = sorted(FIXTURES.glob("*/*.index"))
    assert len(paths) == 7
    for path in paths:
        items = tf_table.read_table(path)
        assert items[0][0] == b""
        assert _table(items) == path.read_bytes(), path


def test_shortened_index_keys():
    assert tf_table._shortest_separator(b"abcdef", b"abzz") == b"abd"
    assert tf_table._shortest_separator(b"abc", b"abd") == b"abc"  # no room between
    assert tf_table._shortest_separator(b"ab", b"abc") == b"ab"
    assert tf_table._short_successor(b"abc") == b"b"
    assert tf_table._short_successor(b"\xff\xffa") == b"\xff\xffb"
    assert tf_table._short_successor(b"\xff") == b"\xff"


def _rechecksum(data, offset, size):
    """Fix the trailer of the block at data[offset:offset+size] after an edit."""
    data = bytearray(data)
    crc = mask_crc32c(crc32c(bytes(data[offset:offset + size + 1])))
    data[offset + size + 1:offset + size + 5] = struct.pack("<I", crc)
    return bytes(data)


def test_faults_are_graph_format_errors(tmp_path):
    good = _table([(b"", b"h"), (b"a", b"1"), (b"b", b"2")])
    cases = {
        "too short": good[:10],
        "bad magic": good[:-1] + b"\x00",
        "fails its checksum": bytes([good[0] ^ 1]) + good[1:],
        "beyond the table": good[:-48] + b"\x80\x80\x80\x80\x01\x05" + good[-42:],
        "malformed block handle": good[:-48] + b"\xff" * 40 + good[-8:],
    }
    # the data block at offset 0: entries "", "a", "b" (3 varints + key + value each), one
    # restart point and the restart count
    assert good.startswith(b"\x00\x00\x01h\x00\x01\x01a1\x00\x01\x01b2")
    first_block_size = 4 + 5 + 5 + 4 + 4
    snappy = bytearray(good)  # the type byte says snappy, with a valid checksum
    snappy[first_block_size] = 1
    cases["snappy-compressed"] = _rechecksum(bytes(snappy), 0, first_block_size)
    unsorted = good.replace(b"\x00\x01\x01b2", b"\x00\x01\x01a2")
    cases["not strictly increasing"] = _rechecksum(unsorted, 0, first_block_size)
    overlong = good.replace(b"\x00\x01\x01b2", b"\x00\x01\x09b2")
    cases["runs past the block"] = _rechecksum(overlong, 0, first_block_size)
    shares = good.replace(b"\x00\x01\x01b2", b"\x05\x01\x01b2")
    cases["shares 5 bytes"] = _rechecksum(shares, 0, first_block_size)
    restarts = bytearray(good)
    restarts[first_block_size - 4:first_block_size] = struct.pack("<I", 1000)
    cases["restart points"] = _rechecksum(bytes(restarts), 0, first_block_size)
    for match, data in cases.items():
        path = tmp_path / "t.index"
        path.write_bytes(data)
        with pytest.raises(GraphFormatError, match=match) as info:
            tf_table.read_table(path)
        assert "t.index" in str(info.value)


def test_size_limit(tmp_path):
    path = tmp_path / "big.index"
    path.write_bytes(_table([(b"k", b"v" * 1000)]))
    with pytest.raises(GraphFormatError, match="more than the limit of 100"):
        tf_table.read_table(path, max_bytes=100)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_a_fifo_or_device_is_refused_without_blocking(tmp_path):
    """A checkpoint's `.index` (e.g. in a SavedModel's variables/) that is a FIFO or /dev/zero."""
    os.mkfifo(tmp_path / "fifo.index")
    (tmp_path / "zero.index").symlink_to("/dev/zero")
    for name in ("fifo.index", "zero.index"):
        error = raised_within(20, tf_table.read_table, tmp_path / name)
        assert isinstance(error, GraphFormatError) and "is not a regular file" in str(error)
