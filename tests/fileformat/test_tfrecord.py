"""TFRecord files: writing and reading back (plain, GZIP, ZLIB), the record format's bytes, CRC-32C,
and corrupt, truncated and hostile files raising DataLossError with the file and offset."""

import gzip
import os
import struct
import zlib

import numpy as np
import pytest

import graphflow as tf
from graphflow.fileformat import tfrecord

RECORDS = [b"", b"a", b"hello world" * 30, bytes(range(256)) * 5]


def _write(path, records=RECORDS, options=None):
    with tf.python_io.TFRecordWriter(str(path), options) as writer:
        for r in records:
            writer.write(r)
    return str(path)


@pytest.mark.parametrize("options", [None, "", "GZIP", "ZLIB",
                                     tf.python_io.TFRecordOptions("GZIP"),
                                     tf.python_io.TFRecordOptions(
                                         tf.python_io.TFRecordCompressionType.ZLIB,
                                         compression_level=9)])
def test_round_trip(tmp_path, options):
    path = _write(tmp_path / "r.tfrecord", options=options)
    assert list(tf.python_io.tf_record_iterator(path, options)) == RECORDS


def test_record_bytes_follow_the_format(tmp_path):
    path = _write(tmp_path / "r.tfrecord", [b"abc"])
    data = open(path, "rb").read()
    assert len(data) == 8 + 4 + 3 + 4
    assert struct.unpack("<Q", data[:8])[0] == 3
    assert data[12:15] == b"abc"
    crc = tfrecord.crc32c(b"abc")
    masked = ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
    assert struct.unpack("<I", data[15:])[0] == masked


def test_gzip_and_zlib_files_are_standard_streams(tmp_path):
    plain = open(_write(tmp_path / "p"), "rb").read()
    assert gzip.decompress(open(_write(tmp_path / "g", options="GZIP"), "rb").read()) == plain
    assert zlib.decompress(open(_write(tmp_path / "z", options="ZLIB"), "rb").read()) == plain


def test_crc32c_known_value_and_fallback_agree():
    assert tfrecord.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert tfrecord._crc32c_python(b"123456789") == 0xE3069283
    data = np.random.default_rng(0).integers(0, 256, 5000, dtype=np.uint8).tobytes()
    assert tfrecord._crc32c_python(data) == tfrecord.crc32c(data)


def _corrupt(path, offset, value=None):
    data = bytearray(open(path, "rb").read())
    data[offset] = (data[offset] ^ 0xFF) if value is None else value
    open(path, "wb").write(bytes(data))


def _second_record_offset():
    return 12 + len(RECORDS[0]) + 4


def test_corrupt_length_crc_is_data_loss_naming_file_and_offset(tmp_path):
    path = _write(tmp_path / "r.tfrecord")
    _corrupt(path, _second_record_offset() + 9)  # the length's CRC of record 1
    records = tf.python_io.tf_record_iterator(path)
    assert next(records) == RECORDS[0]
    with pytest.raises(tf.errors.DataLossError, match=f"{path}: corrupted record at 16 .*length"):
        next(records)


def test_corrupt_length_is_data_loss(tmp_path):
    path = _write(tmp_path / "r.tfrecord")
    _corrupt(path, _second_record_offset() + 7)  # high byte of the length: a huge length
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 16"):
        list(tf.python_io.tf_record_iterator(path))


def test_corrupt_data_is_data_loss(tmp_path):
    path = _write(tmp_path / "r.tfrecord")
    _corrupt(path, _second_record_offset() + 12)  # the data of record 1
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 16 .*data's CRC"):
        list(tf.python_io.tf_record_iterator(path))


@pytest.mark.parametrize("cut", [3, 12 + 5, -2])
def test_truncated_file_is_data_loss(tmp_path, cut):
    path = _write(tmp_path / "r.tfrecord")
    data = open(path, "rb").read()
    last = len(data) - (12 + len(RECORDS[-1]) + 4)
    open(path, "wb").write(data[:last + cut] if cut > 0 else data[:cut])
    with pytest.raises(tf.errors.DataLossError, match=f"truncated record at {last}"):
        list(tf.python_io.tf_record_iterator(path))


def test_truncated_gzip_file_is_data_loss(tmp_path):
    path = _write(tmp_path / "r.tfrecord", options="GZIP")
    data = open(path, "rb").read()
    open(path, "wb").write(data[:len(data) // 2])
    with pytest.raises(tf.errors.DataLossError):
        list(tf.python_io.tf_record_iterator(path, "GZIP"))


def test_corrupt_gzip_stream_is_data_loss(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    open(path, "wb").write(b"\x1f\x8b\x08\x00" + b"\xff" * 64)
    with pytest.raises(tf.errors.DataLossError, match="compressed stream is corrupt"):
        list(tf.python_io.tf_record_iterator(path, "GZIP"))


def test_hostile_length_with_a_valid_crc_allocates_nothing_large(tmp_path):
    """A length of 2**40 whose CRC is right: the file is too short, so nothing is allocated."""
    header = struct.pack("<Q", 1 << 40)
    path = str(tmp_path / "r.tfrecord")
    open(path, "wb").write(header + struct.pack("<I", tfrecord.masked_crc32c(header)) + b"x" * 10)
    with pytest.raises(tf.errors.DataLossError, match="truncated record at 0"):
        list(tf.python_io.tf_record_iterator(path))
    gz = str(tmp_path / "r.gz")
    with open(gz, "wb") as f:
        f.write(gzip.compress(open(path, "rb").read()))
    with pytest.raises(tf.errors.DataLossError, match="truncated record at 0"):
        list(tf.python_io.tf_record_iterator(gz, "GZIP"))


def test_missing_file_is_not_found(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="No such file"):
        list(tf.python_io.tf_record_iterator(str(tmp_path / "absent")))


def test_writer_checks_its_input(tmp_path):
    writer = tf.io.TFRecordWriter(str(tmp_path / "w"))
    with pytest.raises(TypeError, match="bytes"):
        writer.write(3)
    writer.write("text is utf-8")
    writer.close()
    with pytest.raises(ValueError, match="closed"):
        writer.write(b"x")
    assert list(tf.python_io.tf_record_iterator(str(tmp_path / "w"))) == [b"text is utf-8"]


def test_bad_compression_type():
    with pytest.raises(ValueError, match="compression_type"):
        tf.python_io.TFRecordOptions("BZIP2")


def test_flush_makes_records_readable_before_close(tmp_path):
    path = str(tmp_path / "f")
    for options in (None, "GZIP"):
        writer = tf.python_io.TFRecordWriter(path, options)
        writer.write(b"one")
        writer.flush()
        if options is None:
            assert list(tf.python_io.tf_record_iterator(path)) == [b"one"]
        else:  # a sync-flushed gzip stream: the record is there, the stream is unfinished
            assert zlib.decompressobj(31).decompress(open(path, "rb").read())[12:15] == b"one"
        writer.close()
        assert os.path.getsize(path) > 0


def test_reading_with_the_python_crc_fallback(tmp_path, monkeypatch):
    path = _write(tmp_path / "r.tfrecord")
    monkeypatch.setattr(tfrecord, "_crc32c_bytes", tfrecord._crc32c_python)
    assert list(tf.python_io.tf_record_iterator(path)) == RECORDS
    _corrupt(path, _second_record_offset() + 12)
    with pytest.raises(tf.errors.DataLossError, match="data's CRC"):
        list(tf.python_io.tf_record_iterator(path))


def test_the_queue_based_tfrecord_reader_reads_what_the_writer_wrote(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        writer.write(b"a")
        writer.write(b"bc")
    names = tf.FIFOQueue(1, [tf.string], shapes=[[]])
    keys, values = tf.TFRecordReader().read_up_to(names, 5)
    with tf.Session() as sess:
        sess.run([names.enqueue([path]), names.close()])
        got_keys, got_values = sess.run([keys, values])
    assert list(got_values) == [b"a", b"bc"]
    assert list(got_keys) == [f"{path}:0".encode(), f"{path}:17".encode()]


@pytest.mark.parametrize("options", [None, "GZIP", "ZLIB"])
def test_records_larger_than_a_block_round_trip(tmp_path, options):
    rng = np.random.default_rng(0)
    records = [rng.bytes(3 << 20), bytes(5 << 20), b"x", rng.bytes((1 << 20) + 1),
               bytes(range(256)) * 9000]
    path = _write(tmp_path / "big.tfrecord", records, options)
    assert list(tf.python_io.tf_record_iterator(path, options)) == records


def _bomb(path, declared, zeros_mib=256):
    """A GZIP TFRecord file of ~260 KB: a record header declaring `declared` bytes (its CRC
    right), then `zeros_mib` MiB of zeros."""
    header = struct.pack("<Q", declared)
    c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [c.compress(header + struct.pack("<I", tfrecord.masked_crc32c(header)))]
    zero = bytes(1 << 20)
    parts += [c.compress(zero) for _ in range(zeros_mib)]
    parts.append(c.flush())
    with open(path, "wb") as f:
        f.write(b"".join(parts))
    return str(path)


def _peak_of(fn):
    import tracemalloc
    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize("declared", [1 << 40, 1 << 30])
def test_a_small_compressed_file_declaring_a_huge_record_allocates_nothing_large(tmp_path,
                                                                                 declared):
    """(It took 900 MB before failing: the stream was inflated whole and copied twice.) The
    length is checked against what the compressed bytes left can inflate to (1032:1)."""
    path = _bomb(tmp_path / "bomb.gz", declared)
    assert os.path.getsize(path) < 300_000

    def read():
        with pytest.raises(tf.errors.DataLossError, match="truncated record at 0 .*cannot hold"):
            list(tf.python_io.tf_record_iterator(path, "GZIP"))
    assert _peak_of(read) < 16 << 20


def test_a_compressed_record_is_held_only_as_far_as_the_stream_yields_it(tmp_path):
    """Declared within the bound but the stream ends sooner (or its CRC is wrong): what is held
    is the record's bytes read so far, once, not copies of the whole inflated stream."""
    path = _bomb(tmp_path / "short.gz", 200 << 20, zeros_mib=64)

    def read():
        with pytest.raises(tf.errors.DataLossError, match="truncated record at 0"):
            list(tf.python_io.tf_record_iterator(path, "GZIP"))
    assert _peak_of(read) < 80 << 20  # 64 MiB of zeros inflated


def test_a_record_longer_than_the_limit_is_refused(tmp_path, monkeypatch):
    path = _write(tmp_path / "r.tfrecord", [b"a" * 5000])
    monkeypatch.setattr(tfrecord, "MAX_RECORD_BYTES", 4096)
    with pytest.raises(tf.errors.DataLossError, match="5000 bytes, more than the 4096 allowed"):
        list(tf.python_io.tf_record_iterator(path))
