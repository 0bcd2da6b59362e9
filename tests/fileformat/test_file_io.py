"""Safe file I/O: atomic writes, zip bombs (declared and lying sizes), pickled and malformed .npy
data (never unpickled, never allocated from a lying header), truncated and non-zip files."""

import io
import os
import stat
import struct
import zipfile

import numpy as np
import pytest

import graphflow as tf
from graphflow.fileformat import file_io
from graphflow.framework.errors import GraphFormatError
from tests.tooling import raised_within


def _graph_file(tmp_path):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.matmul(x, tf.constant(np.arange(40, dtype=np.float32).reshape(2, 20)), name="y")
    path = str(tmp_path / "m.gfz")
    tf.save(path, {"x": x}, {"y": y})
    return path


def _members(path):
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _zip(path, members, compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)


# ------------------------------------------------------------------------------ atomic writes
def test_atomic_write_replaces_only_on_success(tmp_path):
    path = tmp_path / "f.bin"
    with file_io.atomic_write(path) as f:
        f.write(b"first")
    with pytest.raises(RuntimeError):
        with file_io.atomic_write(path) as f:
            f.write(b"half of the sec")
            raise RuntimeError("crash while writing")
    assert path.read_bytes() == b"first"
    assert os.listdir(tmp_path) == ["f.bin"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_atomic_write_never_replaces_a_fifo_or_device(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OSError, match="not a regular file .* refusing to replace it"):
        with file_io.atomic_write(tmp_path / "fifo") as f:
            f.write(b"data")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)
    assert sorted(os.listdir(tmp_path)) == ["fifo"]
    (tmp_path / "link").symlink_to(tmp_path / "fifo")   # a link is replaced, never followed
    with file_io.atomic_write(tmp_path / "link") as f:
        f.write(b"data")
    assert (tmp_path / "link").read_bytes() == b"data" and not (tmp_path / "link").is_symlink()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_graph_files_that_are_fifos_or_devices_are_refused_without_reading(tmp_path):
    os.mkfifo(tmp_path / "fifo.gfz")
    (tmp_path / "zero.gfz").symlink_to("/dev/zero")
    for name in ("fifo.gfz", "zero.gfz"):
        path = str(tmp_path / name)
        for fn, *args in ((file_io.Archive, path, path, file_io.DEFAULT_LIMITS), (tf.load, path),
                          (file_io.check_regular_file, path, path, 1 << 30)):
            error = raised_within(20, fn, *args)
            assert isinstance(error, GraphFormatError), error
            assert "is not a regular file" in str(error)
    path = _graph_file(tmp_path)
    assert file_io.check_regular_file(path, path, 1 << 30) == os.path.getsize(path)
    with pytest.raises(GraphFormatError, match="more than the limit of 10"):
        file_io.check_regular_file(path, path, 10)


# ------------------------------------------------------------------------------ damaged files
def test_truncated_files_are_format_errors(tmp_path):
    data = open(_graph_file(tmp_path), "rb").read()
    cut = tmp_path / "cut.gfz"
    for size in range(0, len(data), max(1, len(data) // 60)):
        cut.write_bytes(data[:size])
        with pytest.raises(GraphFormatError):
            tf.load(str(cut))


def test_non_zip_missing_and_foreign_files(tmp_path):
    (tmp_path / "text.gfz").write_text("hello, I am not a graph")
    with pytest.raises(GraphFormatError, match="not a valid zip archive"):
        tf.load(str(tmp_path / "text.gfz"))
    with pytest.raises(FileNotFoundError):
        tf.load(str(tmp_path / "absent.gfz"))
    _zip(tmp_path / "foreign.gfz", {"model.json": b"{}"})
    with pytest.raises(GraphFormatError, match="no graph.json"):
        tf.load(str(tmp_path / "foreign.gfz"))
    members = _members(_graph_file(tmp_path))
    _zip(tmp_path / "extra.gfz", {**members, "run_me.py": b"print('hi')"})
    with pytest.raises(GraphFormatError, match="unexpected entries \\['run_me.py'\\]"):
        tf.load(str(tmp_path / "extra.gfz"))


def test_duplicate_zip_entries_are_rejected(tmp_path):
    members = _members(_graph_file(tmp_path))
    path = tmp_path / "dup.gfz"
    with pytest.warns(UserWarning), zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        zf.writestr("graph.json", b"{}")
    with pytest.raises(GraphFormatError, match="'graph.json' twice"):
        tf.load(str(path))


# ------------------------------------------------------------------------------ zip bombs
def _patch_sizes(data, name, size, local=True):
    """Rewrite the uncompressed size of entry `name` in the central directory (and the local
    header): the archive now lies about how big the entry is."""
    data = bytearray(data)
    pos = data.find(b"PK\x01\x02")
    while pos != -1:
        name_len = struct.unpack_from("<H", data, pos + 28)[0]
        if bytes(data[pos + 46:pos + 46 + name_len]) == name.encode():
            struct.pack_into("<I", data, pos + 24, size)
            if local:
                header = struct.unpack_from("<I", data, pos + 42)[0]
                struct.pack_into("<I", data, header + 22, size)
        pos = data.find(b"PK\x01\x02", pos + 4)
    return bytes(data)


def test_declared_huge_entry_is_refused_before_decompressing(tmp_path):
    members = _members(_graph_file(tmp_path))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    path = tmp_path / "bomb.gfz"
    path.write_bytes(_patch_sizes(buf.getvalue(), "graph.json", 0xFFFFFFF0))
    with pytest.raises(GraphFormatError, match="zip bomb"):
        tf.load(str(path))


def test_entry_bigger_than_declared_is_caught(tmp_path):
    """A lying small size: reads stop at the declared size and the checksum exposes the lie."""
    members = _members(_graph_file(tmp_path))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    path = tmp_path / "liar.gfz"
    path.write_bytes(_patch_sizes(buf.getvalue(), "graph.json", 10))
    with pytest.raises(GraphFormatError, match="corrupted|not valid JSON"):
        tf.load(str(path))


def test_compression_ratio_and_size_limits(tmp_path):
    members = _members(_graph_file(tmp_path))
    members["graph.json"] = members["graph.json"] + b" " * 3_000_000  # valid JSON, 3 MB of space
    path = tmp_path / "padded.gfz"
    _zip(path, members)
    size = os.path.getsize(path)
    assert size < 30_000
    # default limits: the document may not be larger than its file (beyond 1 MiB), checked before
    # it is decompressed; given explicit limits, the same file loads
    assert file_io.default_limits_for(str(path)).max_json_bytes == max(1 << 20, size)
    with pytest.raises(GraphFormatError, match=r"'graph.json' declares \d+ bytes, more than"):
        tf.load(str(path))
    assert tf.load(str(path), limits=file_io.DEFAULT_LIMITS).graph.num_ops() == 3
    ratio = file_io.Limits(ratio_floor_bytes=1 << 20, max_ratio=100)
    with pytest.raises(GraphFormatError, match="more than 100x expansion"):
        tf.load(str(path), limits=ratio)
    small = file_io.Limits(max_json_bytes=1 << 20)
    with pytest.raises(GraphFormatError, match="more than the limit of 1048576"):
        tf.load(str(path), limits=small)
    with pytest.raises(GraphFormatError, match="more than the limit of 1"):
        tf.load(str(path), limits=file_io.Limits(max_members=1))
    with pytest.raises(GraphFormatError, match="3 ops, more than the limit of 2"):
        tf.load(str(path), limits=file_io.Limits(max_ops=2))


# ------------------------------------------------------------------------------ tensor data
class _Trap:
    """Unpickling this would create a file: proof that loading never unpickles."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _with_tensors(tmp_path, npz_bytes):
    members = _members(_graph_file(tmp_path))
    members["tensors.npz"] = npz_bytes
    path = tmp_path / "t.gfz"
    _zip(path, members)
    return str(path)


def test_pickled_arrays_are_refused_and_never_unpickled(tmp_path):
    marker = str(tmp_path / "pwned")
    buf = io.BytesIO()
    np.savez(buf, **{"attrs/Const/value": np.array([_Trap(marker)], dtype=object)})
    path = _with_tensors(tmp_path, buf.getvalue())
    with pytest.raises(GraphFormatError, match="never unpickles"):
        tf.load(path)
    assert not os.path.exists(marker)


def _npy(header_shape, data, dtype="<f4", version=b"\x01\x00"):
    header = f"{{'descr': '{dtype}', 'fortran_order': False, 'shape': {header_shape}, }}"
    header = header.ljust(118) + "\n"
    return b"\x93NUMPY" + version + struct.pack("<H", len(header)) + header.encode() + data


@pytest.mark.parametrize("npy, message", [
    (_npy("(10**12,)", b"\0" * 8), "invalid dimension|not valid .npy"),
    (_npy("(1000000000000,)", b"\0" * 8), "declares shape \\(1000000000000,\\)"),
    (_npy("(4,)", b"\0" * 8), "16 bytes\\) but the entry holds 8"),
    (_npy("(" + "1, " * 80 + ")", b"\0" * 4), "at most 64 dimensions"),
    (_npy("(2,)", b"\0" * 16, dtype="<M8[s]"), "not a graphflow dtype"),
    (_npy("(2,)", b"\0" * 8, version=b"\x07\x00"), "not valid .npy"),
    (b"PK\x03\x04 not npy at all", "not valid .npy"),
], ids=["expression", "absurd", "short", "rank", "datetime", "version", "garbage"])
def test_malformed_npy_headers_are_refused_before_allocation(tmp_path, npy, message):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("attrs/Const/value.npy", npy)
    with pytest.raises(GraphFormatError, match=message):
        tf.load(_with_tensors(tmp_path, buf.getvalue()))


def test_non_npy_entries_and_big_endian_data(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("notes.txt", b"hello")
    with pytest.raises(GraphFormatError, match="unexpected entry 'notes.txt'"):
        tf.load(_with_tensors(tmp_path, buf.getvalue()))
    arrays = file_io.read_npz(file_io.npz_bytes({"a": np.arange(3, dtype=">i4").astype("<i4")}),
                              "test", file_io.DEFAULT_LIMITS)
    assert arrays["a"].tolist() == [0, 1, 2]
    big_endian = io.BytesIO()
    np.savez(big_endian, a=np.arange(3, dtype=">f8"))
    arrays = file_io.read_npz(big_endian.getvalue(), "test", file_io.DEFAULT_LIMITS)
    assert arrays["a"].dtype == np.float64 and arrays["a"].tolist() == [0.0, 1.0, 2.0]
    assert not arrays["a"].flags.writeable


def test_only_graphflow_dtypes_are_written():
    with pytest.raises(TypeError, match="only arrays of graphflow dtypes"):
        file_io.npz_bytes({"c": np.zeros(2, "datetime64[s]")})
    with pytest.raises(TypeError, match="only arrays of graphflow dtypes"):
        file_io.npz_bytes({"o": np.array([None], dtype=object)})
